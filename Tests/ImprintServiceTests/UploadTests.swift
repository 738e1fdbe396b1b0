// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: multipart bodies against a real `imprint serve` (curl -F and bodies
// built byte by byte in Python): card photos, thumbnails, hostile uploads and every limit of
// the multipart reader.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

private let profiles = repositoryRoot + "/assets/samples/profiles/"
private let photos = repositoryRoot + "/assets/samples/photos/"
private let documents = fixturesFolder + "/Documents/"

/// Writes `body` (a multipart body whose boundary is `boundary`) to a file and posts it.
private func postMultipart(
  _ body: [UInt8], boundary: String, to url: String, in folder: TemporaryFolder
) throws -> HTTPExchange {
  let path = folder.file(UUID().uuidString + ".multipart")
  try Data(body).write(to: URL(fileURLWithPath: path))
  return try curlRequest(
    "POST", url, body: path,
    headers: ["Content-Type: multipart/form-data; boundary=\(boundary)"], in: folder)
}

/// One part of a hand-made multipart body: its header lines and its bytes.
private func part(_ headers: [String], _ bytes: [UInt8], boundary: String) -> [UInt8] {
  Array(("--\(boundary)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n").utf8) + bytes
    + Array("\r\n".utf8)
}

private func closing(_ boundary: String) -> [UInt8] { Array("--\(boundary)--\r\n".utf8) }

private func read(_ path: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

@Suite("imprint serve: multipart uploads", .liveHandlesChecked, .serialized)
struct UploadTests {
  @Test("thumbnail: every byte value and near-misses of the boundary reach the worker unchanged")
  func bytesUnchanged() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let boundary = "imprint-test-boundary-7f3a"
    // A 64 x 64 grey PNG whose pixels, stored without compression, are every byte value and
    // near-misses of the boundary: a byte changed on the way breaks the IDAT checksum or
    // changes the thumbnail.
    let image = folder.file("bytes.png")
    let script = """
      import struct, sys, zlib
      path, boundary = sys.argv[1], sys.argv[2].encode()
      pattern = bytes(range(256)) + b"\\r\\n--" + boundary[:-1] + b"\\r\\n--\\r\\n\\r\\n--"
      data = (pattern * 20)[:64 * 64]
      raw = b"".join(b"\\x00" + data[row * 64:(row + 1) * 64] for row in range(64))
      def chunk(kind, body):
          return (struct.pack(">I", len(body)) + kind + body
                  + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
      png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 0, 0, 0, 0))
             + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b""))
      assert b"\\r\\n--" + boundary[:-1] in png
      open(path, "wb").write(png)
      """
    let made = try runTool("python3", ["-c", script, image, boundary])
    #expect(made.status == 0, "\(made.stderr)")
    let body =
      part(
        [
          "Content-Disposition: form-data; name=\"file\"; filename=\"bytes.png\"",
          "Content-Type: image/png",
        ], try read(image), boundary: boundary) + closing(boundary)
    let answer = try postMultipart(
      body, boundary: boundary, to: server.url("/v1/thumbnail?size=64"), in: folder)
    #expect(answer.status == 200, "\(answer.text)")
    let cliPath = folder.file("cli.png")
    let cli = try runTool(imprintExecutable, ["thumb", "--size", "64", image, cliPath])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try read(cliPath) == answer.body)
    #expect(server.stop().status == 0)
  }

  @Test("card: curl -F profile and photo give the PNG front imprint card --photo makes")
  func cardPhotoAsCLI() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let answer = try curlRequest(
      "POST", server.url("/v1/card?format=png&side=front&dpi=150"),
      form: [
        "profile=@\(profiles)harbor-lamp.json;type=application/json",
        "photo=@\(photos)sora-park.png",
      ], in: folder)
    #expect(answer.status == 200, "\(answer.text)")
    #expect(answer.contentType == "image/png")
    let cliPath = folder.file("cli.png")
    let cli = try runTool(
      imprintExecutable,
      [
        "card", profiles + "harbor-lamp.json", "--photo", photos + "sora-park.png", "--side",
        "front", "--dpi", "150", "-o", cliPath,
      ])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try read(cliPath) == answer.body)
    // Without the photo part the placeholder is drawn: another front.
    let placeholder = try curlRequest(
      "POST", server.url("/v1/card?format=png&side=front&dpi=150"),
      form: ["profile=@\(profiles)harbor-lamp.json;type=application/json"], in: folder)
    #expect(placeholder.status == 200)
    #expect(placeholder.body != answer.body)
    #expect(pngHeader(placeholder.body)?.width == pngHeader(answer.body)?.width)
    #expect(server.stop().status == 0)
  }

  @Test("card: a HEIF photo whose header lies is refused by a worker (422), the next card is made")
  func hostilePhoto() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let refused = try curlRequest(
      "POST", server.url("/v1/card"),
      form: [
        "profile=@\(profiles)harbor-lamp.json;type=application/json",
        "photo=@\(fixturesFolder)/Images/heif/lying-size.heic",
      ], in: folder)
    #expect(refused.status == 422, "\(refused.text)")
    #expect(["card.photo", "document.memoryLimit"].contains(refused.errorCode ?? ""))
    #expect(refused.text.contains("lying-size.heic"))
    let made = try curlRequest(
      "POST", server.url("/v1/card"),
      form: [
        "profile=@\(profiles)harbor-lamp.json;type=application/json",
        "photo=@\(photos)harbor-lamp.jpg",
      ], in: folder)
    #expect(made.status == 200)
    #expect(made.contentType == "application/pdf")
    #expect(server.stop().status == 0)
  }

  @Test("thumbnail: a raw body and a multipart file give imprint thumb's bytes")
  func thumbnail() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let raw = try curlRequest(
      "POST", server.url("/v1/thumbnail"), body: documents + "mixed.pdf",
      headers: ["Content-Type: application/pdf"], in: folder)
    #expect(raw.status == 200, "\(raw.text)")
    #expect(raw.contentType == "image/png")
    let cliPNG = folder.file("cli.png")
    let cli = try runTool(imprintExecutable, ["thumb", documents + "mixed.pdf", cliPNG])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try read(cliPNG) == raw.body)
    #expect(pngHeader(raw.body).map { max($0.width, $0.height) } == 256)

    let jpeg = try curlRequest(
      "POST", server.url("/v1/thumbnail?page=2&size=100&format=jpeg"),
      form: ["file=@\(documents)mixed.pdf"], in: folder)
    #expect(jpeg.status == 200, "\(jpeg.text)")
    #expect(jpeg.contentType == "image/jpeg")
    let out = folder.file("out")
    let cliJPEG = try runTool(
      imprintExecutable,
      [
        "thumb", "--pages", "2", "--size", "100", "--format", "jpeg", "-o", out,
        documents + "mixed.pdf",
      ])
    #expect(cliJPEG.status == 0, "\(cliJPEG.stderr)")
    #expect(try read(out + "/mixed-2.jpg") == jpeg.body)
    #expect(server.stop().status == 0)
  }

  @Test("thumbnail: a page past the end and a damaged PDF fail with the CLI's codes (422)")
  func thumbnailErrors() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let past = try curlRequest(
      "POST", server.url("/v1/thumbnail?page=9"), form: ["file=@\(documents)mixed.pdf"],
      in: folder)
    let cli = try runTool(
      imprintExecutable,
      ["thumb", "--json", "--pages", "9", "-o", folder.file("out"), documents + "mixed.pdf"])
    #expect(cli.status == 1)
    let cliFiles =
      (try JSONSerialization.jsonObject(with: Data(cli.stdoutBytes)) as? [String: Any])?["files"]
      as? [[String: Any]]
    let cliCode = (cliFiles?.first?["error"] as? [String: Any])?["code"] as? String
    #expect(past.status == 422, "\(past.text)")
    #expect(cliCode != nil && past.errorCode == cliCode)
    let damaged = try curlRequest(
      "POST", server.url("/v1/thumbnail"), form: ["file=@\(documents)truncated.pdf"], in: folder)
    #expect(damaged.status == 422)
    #expect(damaged.errorCode == "pdf.damaged")
    #expect(damaged.text.contains("truncated.pdf"))
    #expect(server.stop().status == 0)
  }

  @Test("a CPU bomb kills its worker (422 document.cpuLimit) while other requests are answered")
  func workerKilled() throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    let server = try ServiceProcess(["--cpu-limit", "1", "-j", "2"])
    // The bomb and a good file at once, from two threads; the good one does not wait for it.
    let script = """
      import json, sys, threading, urllib.request, urllib.error
      port, bomb, good = sys.argv[1], sys.argv[2], sys.argv[3]
      results = {}
      def post(name, path):
          request = urllib.request.Request(
              "http://127.0.0.1:%s/v1/thumbnail?name=%s" % (port, name),
              data=open(path, "rb").read(), headers={"Content-Type": "application/pdf"})
          try:
              with urllib.request.urlopen(request) as answer:
                  results[name] = [answer.status, answer.headers["Content-Type"], ""]
          except urllib.error.HTTPError as error:
              results[name] = [error.code, error.headers["Content-Type"],
                               json.load(error)["error"]["code"]]
      threads = [threading.Thread(target=post, args=a) for a in [("bomb", bomb), ("good", good)]]
      for t in threads: t.start()
      for t in threads: t.join()
      print(json.dumps(results))
      """
    let result = try runTool(
      "python3", ["-c", script, "\(server.port)", bomb, documents + "mixed.pdf"])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: [Any]])
    #expect(report["bomb"]?[0] as? Int == 422)
    #expect(report["bomb"]?[2] as? String == "document.cpuLimit")
    #expect(report["good"]?[0] as? Int == 200)
    #expect(report["good"]?[1] as? String == "image/png")
    // And after it: the pool has a worker for the next request.
    let after = try curlRequest(
      "POST", server.url("/v1/inspect"), form: ["file=@\(documents)mixed.pdf"], in: folder)
    #expect(after.status == 200)
    #expect(
      ((after.json?["files"] as? [[String: Any]])?.first?["file"] as? String) == "mixed.pdf")
    #expect(server.stop().status == 0)
  }

  @Test("multipart rules: 400, 413 and 415 with their codes; the server stays up")
  func multipartErrors() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["--max-part", "100000"])
    func expectError(_ exchange: HTTPExchange, _ status: Int, _ code: String, _ words: String) {
      #expect(exchange.status == status, "\(exchange.text)")
      #expect(exchange.errorCode == code, "\(exchange.text)")
      let message = (exchange.json?["error"] as? [String: Any])?["message"] as? String ?? ""
      #expect(message.contains(words), "\(message)")
    }
    let thumbnail = server.url("/v1/thumbnail")
    let boundary = "b0undary"
    let file = part(
      ["Content-Disposition: form-data; name=\"file\"; filename=\"a.pdf\""],
      try read(documents + "mixed.pdf"), boundary: boundary)
    expectError(
      try curlRequest(
        "POST", thumbnail, data: "x", headers: ["Content-Type: multipart/form-data"], in: folder),
      400, "http.malformedMultipart", "no usable boundary")
    expectError(
      try postMultipart(file, boundary: boundary, to: thumbnail, in: folder), 400,
      "http.malformedMultipart", "ends before its closing boundary")
    expectError(
      try postMultipart(closing(boundary), boundary: boundary, to: thumbnail, in: folder), 400,
      "http.malformedMultipart", "holds no part")
    let unnamed = part(["Content-Disposition: form-data"], [1, 2], boundary: boundary)
    expectError(
      try postMultipart(unnamed + closing(boundary), boundary: boundary, to: thumbnail, in: folder),
      400, "http.malformedMultipart", "a part has no name")
    let control = part(
      ["Content-Disposition: form-data; name=\"fi\u{1}le\""], [1], boundary: boundary)
    expectError(
      try postMultipart(control + closing(boundary), boundary: boundary, to: thumbnail, in: folder),
      400, "http.invalidPartName", "without control characters")
    let base64 = part(
      [
        "Content-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"",
        "Content-Transfer-Encoding: base64",
      ], Array("JVBERi0=".utf8), boundary: boundary)
    expectError(
      try postMultipart(base64 + closing(boundary), boundary: boundary, to: thumbnail, in: folder),
      415, "http.unsupportedPartEncoding", "'base64'")
    expectError(
      try curlRequest(
        "POST", thumbnail, form: ["file=@\(documents)mixed.pdf", "colour=red"], in: folder),
      400, "http.unknownPart", "'colour'")
    expectError(
      try curlRequest(
        "POST", thumbnail, form: ["file=@\(documents)mixed.pdf", "file=@\(documents)mixed.pdf"],
        in: folder),
      400, "http.duplicatePart", "'file'")
    expectError(
      try curlRequest(
        "POST", server.url("/v1/card"), form: ["photo=@\(photos)harbor-lamp.jpg"], in: folder),
      400, "http.missingPart", "'profile'")
    let many = (0...64).map { "f\($0)=x" }
    expectError(
      try curlRequest("POST", thumbnail, form: many, in: folder), 413, "http.tooManyParts",
      "more than 64 parts")
    let big = folder.file("big.pdf")
    try Data(repeating: 0x25, count: 100_001).write(to: URL(fileURLWithPath: big))
    expectError(
      try curlRequest("POST", thumbnail, form: ["file=@\(big)"], in: folder), 413,
      "http.partTooLarge", "limit of 100000 bytes")
    // A part of exactly the limit is read (and refused for what it is: not a document).
    let exact = folder.file("exact.pdf")
    try Data(repeating: 0x25, count: 100_000).write(to: URL(fileURLWithPath: exact))
    let read = try curlRequest("POST", thumbnail, form: ["file=@\(exact)"], in: folder)
    #expect(read.status == 422, "\(read.text)")
    #expect(read.text.contains("exact.pdf"))
    #expect(try curlRequest("GET", server.url("/healthz"), in: folder).status == 200)
    #expect(server.stop().status == 0)
  }
}

@Suite("imprint serve: quotes", .liveHandlesChecked, .serialized)
struct QuoteRouteTests {
  static let samples = repositoryRoot + "/assets/samples/"
  static let files = [
    "documents/course-notes.pdf", "documents/handout.pdf", "documents/poster-photo.jpg",
  ]

  /// `imprint serve --config` with a settings file naming `lists` (name to file).
  static func server(lists: [String: String], in folder: TemporaryFolder) throws -> ServiceProcess {
    let config = folder.file("serve.json")
    try JSONSerialization.data(withJSONObject: ["priceLists": lists]).write(
      to: URL(fileURLWithPath: config))
    return try ServiceProcess(["--config", config])
  }

  /// The order and each of its files as curl -F parts, less `leaving` and plus `adding`.
  static func form(leaving: String? = nil, adding: [String] = []) -> [String] {
    ["order=@\(samples)order-booster.json;type=application/json"]
      + files.filter { $0 != leaving }.map { "\($0)=@\(samples)\($0)" } + adding
  }

  @Test("quote: the order and its files as parts give imprint quote's JSON and receipt")
  func quote() throws {
    let folder = TemporaryFolder()
    let server = try Self.server(
      lists: ["booster": Self.samples + "prices-booster.json"], in: folder)
    let answer = try curlRequest(
      "POST", server.url("/v1/quote?prices=booster"), form: Self.form(), in: folder)
    #expect(answer.status == 200, "\(answer.text)")
    #expect(answer.contentType == "application/json")
    let cli = try runTool(
      imprintExecutable,
      [
        "quote", "--json", Self.samples + "order-booster.json", "--prices",
        Self.samples + "prices-booster.json",
      ])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(cli.stdoutBytes == answer.body)
    // One list configured: the name may be left out. The receipt in Korean, as the CLI's.
    let receipt = try curlRequest(
      "POST", server.url("/v1/quote?format=receipt&locale=ko"), form: Self.form(), in: folder)
    #expect(receipt.status == 200, "\(receipt.text)")
    #expect(receipt.contentType == "text/plain; charset=utf-8")
    let cliReceipt = try runTool(
      imprintExecutable,
      [
        "quote", "--locale", "ko", Self.samples + "order-booster.json", "--prices",
        Self.samples + "prices-booster.json",
      ])
    #expect(cliReceipt.stdoutBytes == receipt.body)
    #expect(server.stop().status == 0)
  }

  @Test("quote: unknown list 404, missing or stray parts 400, a path leading out 422")
  func quoteErrors() throws {
    let folder = TemporaryFolder()
    let server = try Self.server(
      lists: [
        "booster": Self.samples + "prices-booster.json",
        "copy": Self.samples + "prices-booster.json",
      ], in: folder)
    let url = server.url("/v1/quote?prices=booster")
    let unknown = try curlRequest(
      "POST", server.url("/v1/quote?prices=nope"), form: Self.form(), in: folder)
    #expect(unknown.status == 404)
    #expect(unknown.errorCode == "http.unknownPriceList")
    #expect(unknown.text.contains("booster, copy"))
    // Two lists: the name is needed.
    let unnamed = try curlRequest("POST", server.url("/v1/quote"), form: Self.form(), in: folder)
    #expect(unnamed.status == 400)
    #expect(unnamed.errorCode == "http.missingParameter")
    let missing = try curlRequest(
      "POST", url, form: Self.form(leaving: "documents/handout.pdf"), in: folder)
    #expect(missing.status == 400)
    #expect(missing.errorCode == "http.missingPart")
    #expect(missing.text.contains("'documents/handout.pdf'"))
    let stray = try curlRequest(
      "POST", url, form: Self.form(adding: ["extra.pdf=@\(documents)mixed.pdf"]), in: folder)
    #expect(stray.status == 400)
    #expect(stray.errorCode == "http.unknownPart")
    let escaping = folder.file("escaping.json")
    try Data(
      #"{"schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "files": [{"path": "../../etc/passwd"}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: escaping))
    let out = try curlRequest(
      "POST", url,
      form: ["order=@\(escaping)", "../../etc/passwd=@\(documents)mixed.pdf"], in: folder)
    #expect(out.status == 422, "\(out.text)")
    #expect(out.errorCode == "file.escapesFolder")
    let damaged = folder.file("damaged.json")
    try Data(
      #"{"schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "files": [{"path": "t.pdf"}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: damaged))
    let refused = try curlRequest(
      "POST", url, form: ["order=@\(damaged)", "t.pdf=@\(documents)truncated.pdf"], in: folder)
    #expect(refused.status == 422)
    #expect(refused.errorCode == "pdf.damaged")
    #expect(refused.text.contains("t.pdf"))
    let notJSON = try curlRequest(
      "POST", url, form: ["order=@\(documents)mixed.pdf"], in: folder)
    #expect(notJSON.status == 400, "\(notJSON.text)")
    #expect(server.stop().status == 0)
  }
}

@Suite("imprint serve: Office uploads", .serialized, .tags(.slow), .skippedWhenQuick)
struct OfficeUploadRouteTests {
  @Test("a DOCX posted raw or as a part is inspected and thumbnailed as its conversion")
  func officeRoutes() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(environment: ["XDG_CACHE_HOME": folder.file("cache")])
    defer { _ = server.stop() }
    let docx = try officeFixture("docx-pages", ["3"], in: folder)
    let word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    let raw = try curlRequest(
      "POST", server.url("/v1/inspect?name=report.docx"), body: docx,
      headers: ["Content-Type: \(word)"], in: folder)
    #expect(raw.status == 200, "\(raw.text)")
    func inspected(_ exchange: HTTPExchange) -> [String: Any]? {
      ((exchange.json?["files"] as? [[String: Any]])?.first)?["info"] as? [String: Any]
    }
    let info = try #require(inspected(raw), "\(raw.text)")
    #expect(info["type"] as? String == "docx", "\(raw.text)")
    #expect(info["pages"] as? Int == 3)
    let conversion = try #require(info["conversion"] as? [String: Any])
    #expect((conversion["pdfSHA256"] as? String)?.count == 64)
    // The declared type is not trusted: the same bytes declared a PDF are still a DOCX.
    let misdeclared = try curlRequest(
      "POST", server.url("/v1/inspect"), body: docx,
      headers: ["Content-Type: application/pdf"], in: folder)
    #expect(misdeclared.status == 200)
    let misdeclaredType = inspected(misdeclared)?["type"] as? String
    #expect(misdeclaredType == "docx")
    let thumbnail = try curlRequest(
      "POST", server.url("/v1/thumbnail?size=128"), form: ["file=@\(docx)"], in: folder)
    #expect(thumbnail.status == 200 && thumbnail.contentType == "image/png", "\(thumbnail.text)")
    let header = try #require(pngHeader(thumbnail.body))
    #expect(max(header.width, header.height) == 128)
    // /v1/convert answers that PDF: its pages and digest, the bytes the report named.
    let pdf = try curlRequest(
      "POST", server.url("/v1/convert"), body: docx, headers: ["Content-Type: \(word)"],
      in: folder)
    #expect(pdf.status == 200 && pdf.contentType == "application/pdf")
    #expect(pdf.headers["x-imprint-pages"] == "3")
    let digest = SHA256.hash(pdf.body).map { String(format: "%02x", $0) }.joined()
    #expect(pdf.headers["x-imprint-pdf-sha256"] == digest)
    #expect(conversion["pdfSHA256"] as? String == digest)
    // A PDF is not converted: it is read as it is.
    let notOffice = try curlRequest(
      "POST", server.url("/v1/convert"), body: documents + "mixed.pdf",
      headers: ["Content-Type: application/pdf"], in: folder)
    #expect(notOffice.status == 422 && notOffice.errorCode == "document.notOffice")
    // The conversion was made once and kept: one PDF in the server's cache.
    let cached = try FileManager.default.contentsOfDirectory(
      atPath: folder.file("cache") + "/imprint/converted")
    #expect(cached.filter { $0.hasSuffix(".pdf") }.count == 1, "\(cached)")
  }
}
