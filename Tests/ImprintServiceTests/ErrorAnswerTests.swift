// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: what a client reads in an error answer of the service (in this process): its
// own names (parts, the order's files, a printer's configured name), never the server's
// folders or a printer's address; what was found in a header without mangling it; a request
// refused the same way wherever a name is given. Every answer is also held to
// `expectClientView` by `request` itself.

import Foundation
import ImprintCore
import ImprintService
import ImprintTestSupport
import Testing

private let samples = repositoryRoot + "/assets/samples/"

/// USD rates for mono and colour on A4.
private let prices = priceListFixture("usd-a4.json")

private func write(_ text: String, to path: String) throws {
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// A service with the price list `shop` and `printers` (name → its JSON object), read from a
/// settings file as `imprint serve --config` reads it.
private func server(_ folder: TemporaryFolder, printers: String = "{}") throws -> InProcessService {
  try write(prices, to: folder.file("prices.json"))
  try write(
    #"{"priceLists": {"shop": "prices.json"}, "printers": \#(printers)}"#,
    to: folder.file("serve.json"))
  return try InProcessService(try ServiceSettings.load(folder.file("serve.json")))
}

/// An order of the files at `paths` (one copy each), written to `folder`.
private func order(_ paths: [String], in folder: TemporaryFolder) throws -> String {
  let files = paths.map { #"{"path": "\#($0)", "copies": 1}"# }
  let path = folder.file(UUID().uuidString + "-order.json")
  try write(
    #"{"schemaVersion":1,"store":"S","files":[\#(files.joined(separator: ","))]}"#, to: path)
  return path
}

/// The first `count` bytes of `source`, written to `folder` as `name`.
private func cut(_ source: String, to count: Int, as name: String, in folder: TemporaryFolder)
  throws -> String
{
  let bytes = try Data(contentsOf: URL(fileURLWithPath: source)).prefix(count)
  let path = folder.file(name)
  try bytes.write(to: URL(fileURLWithPath: path))
  return path
}

private func message(_ answer: HTTPExchange) -> String {
  ((answer.json?["error"] as? [String: Any])?["message"] as? String) ?? ""
}

/// Sends `head` (request line and headers, without the blank line) as it is over a socket and
/// returns the status (the raw bytes, which a client library may tidy: a header's trailing
/// blanks).
private func rawStatus(_ head: String, port: Int) async throws -> Int {
  try await onOwnThread {
    try rawExchange(port: port, Array((head + "\r\nConnection: close\r\n\r\n").utf8))
  }.answers.first?.status ?? 0
}

@Suite(
  "service routes: error answers in the client's terms", .liveHandlesChecked, .onTestThreads)
struct ErrorAnswerTests {
  @Test("quote, batch and job files: errors name what the client sent, never the server's folders")
  func clientNames() async throws {
    let folder = TemporaryFolder()
    let server = try server(folder)
    // A damaged file of the order is named by its path in the order.
    let damaged = try cut(
      samples + "documents/handout.pdf", to: 400, as: "bad.pdf", in: folder)
    let quote = try await server.request(
      "POST", "/v1/quote",
      form: [
        .file("order", path: try order(["docs/bad.pdf"], in: folder)),
        .file("docs/bad.pdf", path: damaged),
      ])
    #expect(quote.status == 422, "\(quote.text)")
    #expect(quote.errorCode == "pdf.damaged")
    #expect(message(quote).hasPrefix("pdf 'docs/bad.pdf' is damaged"), "\(quote.text)")
    expectClientView(quote)
    // A path of the order leading out of its folder.
    let escaping = try await server.request(
      "POST", "/v1/quote",
      form: [
        .file("order", path: try order(["../up.pdf"], in: folder)),
        .file("../up.pdf", path: damaged),
      ])
    #expect(escaping.status == 422, "\(escaping.text)")
    #expect(escaping.errorCode == "file.escapesFolder")
    #expect(message(escaping).contains("'../up.pdf'"), "\(escaping.text)")
    expectClientView(escaping)

    // A batch's part named out of the job's folder.
    let manifest = try writeManifest([#"{"id": "Q-1", "kind": "qr", "payload": "x"}"#], in: folder)
    let evil = try await postBatch(
      manifest, files: [.file("../../evil.json", path: manifest)], on: server)
    #expect(evil.status == 422, "\(evil.text)")
    #expect(evil.errorCode == "file.escapesFolder")
    #expect(message(evil).contains("'../../evil.json'"), "\(evil.text)")
    expectClientView(evil)

    // A job's file out of its outputs.
    let id = try acceptedID(try await postBatch(manifest, on: server))
    #expect(try await waitForJob(id, on: server).json?["state"] as? String == "done")
    for path in ["%2E%2E/manifest.jsonl", "%2E%2E", "qr/%2E%2E/%2E%2E/%2E%2E"] {
      let out = try await server.request("GET", "/v1/jobs/\(id)/files/\(path)")
      #expect(out.status == 422, "\(path): \(out.text)")
      #expect(out.errorCode == "file.escapesFolder")
      #expect(!message(out).contains("/output"), "\(path): \(out.text)")
      expectClientView(out)
    }
    #expect(await server.stop().isComplete)
  }

  @Test("an empty batch manifest is 422 http.emptyManifest at POST time, and no job is made")
  func emptyManifest() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let blank = folder.file("blank.jsonl")
    try write("\n\n", to: blank)
    let header = folder.file("header.csv")
    try write("id,kind,payload\n", to: header)
    for manifest in [blank, header] {
      let answer = try await postBatch(manifest, on: server)
      #expect(answer.status == 422, "\(answer.text)")
      #expect(answer.errorCode == "http.emptyManifest")
      let name = (manifest as NSString).lastPathComponent
      #expect(message(answer).contains("'\(name)'"), "\(answer.text)")
    }
    let metrics = try await server.request("GET", "/metrics").text
    for state in ["queued", "running", "finished"] {
      #expect(metrics.contains("imprint_jobs{state=\"\(state)\"} 0\n"), "\(metrics)")
    }
    // One line is a job.
    let one = try writeManifest([#"{"id": "Q-1", "kind": "qr", "payload": "x"}"#], in: folder)
    let id = try acceptedID(try await postBatch(one, on: server))
    let done = try await waitForJob(id, on: server)
    #expect((done.json?["summary"] as? [String: Any])?["total"] as? Int == 1)
    #expect(await server.stop().isComplete)
  }

  @Test("a failed prepare job names its printer as configured, never the printer's URI")
  func printerByName() async throws {
    let folder = TemporaryFolder()
    // Nothing listens on the discard port: the printer cannot be reached.
    let uri = "ipp://127.0.0.1:9/ipp/print"
    let server = try server(folder, printers: #"{"front": {"uri": "\#(uri)"}}"#)
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 2)), to: folder.file("a.pdf"))
    let answer = try await server.request(
      "POST", "/v1/prepare?printer=front",
      form: [
        .file("order", path: try order(["a.pdf"], in: folder)),
        .file("a.pdf", path: "\(folder.file("a.pdf"))"),
      ])
    let id = try acceptedID(answer)
    let ended = try await waitForJob(id, on: server)
    #expect(ended.json?["state"] as? String == "failed", "\(ended.text)")
    let error = try #require(ended.json?["error"] as? [String: Any])
    #expect(error["code"] as? String == "print.unreachable")
    let text = "\(error["message"] ?? "") \(error["hint"] ?? "")"
    #expect(text.contains("'front'"), "\(text)")
    #expect(!text.contains("127.0.0.1:9") && !text.contains("ipp://"), "\(text)")
    #expect(!text.contains("imprint-serve-"), "\(text)")
    #expect(await server.stop().isComplete)
  }

  @Test("an Idempotency-Key outside ASCII is refused saying where, without echoing its bytes")
  func idempotencyKeyBytes() async throws {
    let folder = TemporaryFolder()
    let server = try server(folder)
    let orderPath = try order(["a.pdf"], in: folder)
    for (key, position) in [("ab\u{e9}cd", 3), ("\u{2603}", 1), ("\u{e9}", 1)] {
      let answer = try await server.request(
        "POST", "/v1/prepare", headers: ["Idempotency-Key: \(key)"],
        form: [.file("order", path: orderPath)])
      #expect(answer.status == 400, "\(answer.text)")
      #expect(answer.errorCode == "http.invalidIdempotencyKey")
      let text = message(answer)
      #expect(text.contains("at position \(position) "), "\(text)")
      #expect(!text.contains("\u{FFFD}") && !text.contains("\\u{"), "\(text)")
    }
    // A control character in any header value is refused before any route reads it.
    let bell = try await server.request(
      "POST", "/v1/prepare", headers: ["Idempotency-Key: abc\u{7}"],
      form: [.file("order", path: orderPath)])
    #expect(bell.status == 400 && bell.errorCode == "http.malformedRequest", "\(bell.text)")
    #expect(await server.stop().isComplete)
  }

  @Test("name: control characters and overlong names are refused as a part's file name is")
  func nameParameter() async throws {
    let server = try InProcessService()
    let pdf = samples + "documents/handout.pdf"
    let long = String(repeating: "n", count: 256)
    for name in ["a%01b.pdf", "tab%09.pdf", "del%7F.pdf", long] {
      for route in ["/v1/inspect", "/v1/thumbnail"] {
        let answer = try await server.request(
          "POST", "\(route)?name=\(name)", headers: ["Content-Type: application/pdf"], file: pdf)
        #expect(answer.status == 400, "\(route) \(name): \(answer.text)")
        #expect(answer.errorCode == "http.invalidParameter")
        #expect(message(answer).hasPrefix("parameter 'name' "), "\(answer.text)")
      }
    }
    // The multipart file name is refused the same way.
    let part = try await server.request(
      "POST", "/v1/inspect", form: [.file("file", path: pdf, filename: "a\u{1}b.pdf")])
    #expect(part.status == 400, "\(part.text)")
    #expect(part.errorCode == "http.invalidPartName")
    let named = try await server.request(
      "POST", "/v1/inspect?name=h%C3%A4ndout.pdf", headers: ["Content-Type: application/pdf"],
      file: pdf)
    #expect(named.status == 200, "\(named.text)")
    let files = named.json?["files"] as? [[String: Any]]
    #expect(files?.first?["file"] as? String == "h\u{e4}ndout.pdf", "\(named.text)")
    #expect(await server.stop().isComplete)
  }

  @Test("Authorization: Bearer with blanks after the token (OWS) or several spaces is admitted")
  func bearerWhitespace() async throws {
    let folder = TemporaryFolder()
    let token = "7d1c6f0e9b2a4c3d8e5f60718293a4b5"
    try write(token + "\n", to: folder.file("token"))
    chmod(folder.file("token"), 0o600)
    let server = try InProcessService(settings: { $0.tokenFile = folder.file("token") })
    let line = "POST /v1/qr?payload=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0"
    for (value, status) in [
      ("Bearer \(token)", 200), ("Bearer \(token) ", 200), ("Bearer \(token)\t \t", 200),
      ("bearer   \(token)", 200), ("Bearer \(token) x", 401), ("Bearer \(token)0 ", 401),
      ("Bearer  ", 401), ("Bearer", 401),
    ] {
      #expect(
        try await rawStatus(line + "\r\nAuthorization: " + value, port: server.port) == status,
        "'\(value)'")
    }
    #expect(await server.stop().isComplete)
  }

  @Test("hints name what an HTTP client sends (password, level=L), the CLI keeps its flags")
  func httpHints() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let encrypted = fixturesFolder + "/Documents/encrypted.pdf"
    let locked = try await server.request(
      "POST", "/v1/inspect", headers: ["Content-Type: application/pdf"], file: encrypted)
    #expect(locked.errorCode == "pdf.encrypted")
    let lockedHint = (locked.json?["error"] as? [String: Any])?["hint"] as? String ?? ""
    #expect(lockedHint.contains("'password'") && !lockedHint.contains("--"), "\(lockedHint)")
    let long = String(repeating: "x", count: 2000)
    let large = try await server.request("POST", "/v1/qr?level=H&payload=\(long)")
    #expect(large.errorCode == "qr.payloadTooLarge", "\(large.text)")
    let largeHint = (large.json?["error"] as? [String: Any])?["hint"] as? String ?? ""
    #expect(largeHint.contains("level=L") && !largeHint.contains("--"), "\(largeHint)")
    // A caption past its limit is named as the request names it, by its length alone.
    let caption = String(repeating: "ab", count: 150)
    let captioned = try await server.request("POST", "/v1/qr?payload=x&caption=\(caption)")
    #expect(captioned.status == 422 && captioned.errorCode == "qr.invalidOption")
    let captionMessage = (captioned.json?["error"] as? [String: Any])?["message"] as? String ?? ""
    #expect(
      captionMessage.hasPrefix("caption '300 characters'")
        && captionMessage.contains("at most 256 characters") && !captionMessage.contains("abab"),
      "\(captionMessage)")
    #expect(await server.stop().isComplete)
    // The command line keeps its options.
    let cli = try runTool(imprintExecutable, ["inspect", encrypted])
    #expect(cli.stderr.contains("hint: pass --password"), "\(cli.stderr)")
    let qr = try runTool(
      imprintExecutable, ["qr", "--level", "H", "-o", folder.file("q.png"), long])
    #expect(qr.stderr.contains("(--level L)"), "\(qr.stderr)")
    let cliCaption = try runTool(
      imprintExecutable, ["qr", "--caption", caption, "-o", folder.file("c.png"), "x"])
    #expect(cliCaption.status != 0 && !FileManager.default.fileExists(atPath: folder.file("c.png")))
    #expect(cliCaption.stderr.contains("--caption '300 characters'"), "\(cliCaption.stderr)")
  }

  @Test("truncated images are image.damaged in inspect and quote, as in thumbnails")
  func truncatedImages() async throws {
    let folder = TemporaryFolder()
    let server = try server(folder)
    try CodecFixtures.make(in: folder)
    let photos = samples + "photos/"
    // Real files cut short: half a PNG, a third of a JPEG, 500 bytes of a WebP, and half of
    // each other format.
    var cutFiles: [(name: String, path: String)] = []
    for (source, name, keep) in [
      (photos + "sora-park.png", "half.png", 0.5), (photos + "harbor-lamp.jpg", "third.jpg", 1 / 3),
      (folder.file("alpha.webp"), "cut.webp", -500), (folder.file("marker.gif"), "half.gif", 0.5),
      (folder.file("three.tif"), "half.tif", 0.5),
      (CodecFixtures.heic(orientation: 1), "half.heic", 0.5),
    ] {
      let size = try Data(contentsOf: URL(fileURLWithPath: source)).count
      let count = keep < 0 ? min(Int(-keep), size / 2) : Int(Double(size) * keep)
      #expect(count < size, "\(name)")
      cutFiles.append((name, try cut(source, to: count, as: name, in: folder)))
    }
    for (name, path) in cutFiles {
      for route in ["/v1/inspect", "/v1/thumbnail"] {
        let answer = try await server.request("POST", route, form: [.file("file", path: path)])
        #expect(answer.status == 422, "\(route) \(name): \(answer.text)")
        #expect(answer.errorCode == "image.damaged", "\(route) \(name): \(answer.text)")
        #expect(message(answer).contains(name), "\(answer.text)")
      }
      let run = try runTool(imprintExecutable, ["inspect", "--json", path])
      #expect(run.status == 1, "\(name): \(run.stdout)")
      #expect(run.stdout.contains("\"image.damaged\""), "\(name): \(run.stdout)")
    }
    // A quote of an order with a truncated photo prices nothing.
    let quote = try await server.request(
      "POST", "/v1/quote",
      form: [
        .file("order", path: try order(["p/half.png"], in: folder)),
        .file("p/half.png", path: "\(cutFiles[0].path)"),
      ])
    #expect(quote.status == 422, "\(quote.text)")
    #expect(quote.errorCode == "image.damaged")
    #expect(message(quote).contains("p/half.png"), "\(quote.text)")
    // The whole files are still inspected.
    let whole = try await server.request(
      "POST", "/v1/inspect", form: [.file("file", path: "\(photos)sora-park.png")])
    #expect(whole.status == 200, "\(whole.text)")
    #expect(await server.stop().isComplete)
  }
}
