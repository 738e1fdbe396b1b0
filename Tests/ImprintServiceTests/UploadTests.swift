// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: multipart bodies against the service in this process (form parts and
// bodies built byte by byte): card photos, thumbnails, hostile uploads and every limit of
// the multipart reader.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

private let profiles = repositoryRoot + "/assets/samples/profiles/"
private let photos = repositoryRoot + "/assets/samples/photos/"
private let documents = fixturesFolder + "/Documents/"

/// Posts `body`, a multipart body whose boundary is `boundary`, made by hand.
private func postMultipart(
  _ body: [UInt8], boundary: String, to target: String, on server: InProcessService
) async throws -> HTTPExchange {
  try await server.request(
    "POST", target, headers: ["Content-Type: multipart/form-data; boundary=\(boundary)"],
    body: body)
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

@Suite("service routes: multipart uploads", .liveHandlesChecked, .onTestThreads)
struct UploadTests {
  @Test("thumbnail: every byte value and near-misses of the boundary reach the worker unchanged")
  func bytesUnchanged() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let boundary = "imprint-test-boundary-7f3a"
    // A 64 x 64 grey PNG whose pixels, stored without compression, are every byte value and
    // near-misses of the boundary: a byte changed on the way breaks the IDAT checksum or
    // changes the thumbnail.
    let image = folder.file("bytes.png")
    let made = try runTool(
      "python3", [fixturesFolder + "/Python/boundary_png.py", image, boundary])
    #expect(made.status == 0, "\(made.stderr)")
    let body =
      part(
        [
          "Content-Disposition: form-data; name=\"file\"; filename=\"bytes.png\"",
          "Content-Type: image/png",
        ], try read(image), boundary: boundary) + closing(boundary)
    let answer = try await postMultipart(
      body, boundary: boundary, to: "/v1/thumbnail?size=64", on: server)
    #expect(answer.status == 200, "\(answer.text)")
    let cliPath = folder.file("cli.png")
    let cli = try runTool(imprintExecutable, ["thumb", "--size", "64", image, cliPath])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try read(cliPath) == answer.body)
    #expect(await server.stop().isComplete)
  }

  @Test("card: profile and photo parts give the PNG front imprint card --photo makes")
  func cardPhotoAsCLI() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let answer = try await server.request(
      "POST", "/v1/card?format=png&side=front&dpi=150",
      form: [
        .file("profile", path: "\(profiles)harbor-lamp.json", type: "application/json"),
        .file("photo", path: "\(photos)sora-park.png"),
      ])
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
    let placeholder = try await server.request(
      "POST", "/v1/card?format=png&side=front&dpi=150",
      form: [.file("profile", path: "\(profiles)harbor-lamp.json", type: "application/json")])
    #expect(placeholder.status == 200)
    #expect(placeholder.body != answer.body)
    #expect(pngHeader(placeholder.body)?.width == pngHeader(answer.body)?.width)
    #expect(await server.stop().isComplete)
  }

  @Test("card: a HEIF photo whose header lies is refused by a worker (422), the next card is made")
  func hostilePhoto() async throws {
    let server = try InProcessService()
    let refused = try await server.request(
      "POST", "/v1/card",
      form: [
        .file("profile", path: "\(profiles)harbor-lamp.json", type: "application/json"),
        .file("photo", path: "\(fixturesFolder)/Images/heif/lying-size.heic"),
      ])
    #expect(refused.status == 422, "\(refused.text)")
    // The worker's verdict: the stream is not the size the header gives, or its memory limit;
    // or, on a machine loaded enough for the 3.5 s decode to pass the worker's 60 s wall-clock
    // limit (seen in a whole run on the 2-core machine), that limit.
    #expect(
      ["card.photo", "document.memoryLimit", "document.timeout"].contains(
        refused.errorCode ?? ""), "\(refused.text)")
    #expect(refused.text.contains("lying-size.heic"))
    let made = try await server.request(
      "POST", "/v1/card",
      form: [
        .file("profile", path: "\(profiles)harbor-lamp.json", type: "application/json"),
        .file("photo", path: "\(photos)harbor-lamp.jpg"),
      ])
    #expect(made.status == 200)
    #expect(made.contentType == "application/pdf")
    #expect(await server.stop().isComplete)
  }

  @Test("thumbnail: a raw body and a multipart file give imprint thumb's bytes")
  func thumbnail() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let raw = try await server.request(
      "POST", "/v1/thumbnail", headers: ["Content-Type: application/pdf"],
      file: documents + "mixed.pdf")
    #expect(raw.status == 200, "\(raw.text)")
    #expect(raw.contentType == "image/png")
    let cliPNG = folder.file("cli.png")
    let cli = try runTool(imprintExecutable, ["thumb", documents + "mixed.pdf", cliPNG])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try read(cliPNG) == raw.body)
    #expect(pngHeader(raw.body).map { max($0.width, $0.height) } == 256)

    let jpeg = try await server.request(
      "POST", "/v1/thumbnail?page=2&size=100&format=jpeg",
      form: [.file("file", path: "\(documents)mixed.pdf")])
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
    #expect(await server.stop().isComplete)
  }

  @Test("thumbnail: a page past the end and a damaged PDF fail with the CLI's codes (422)")
  func thumbnailErrors() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let past = try await server.request(
      "POST", "/v1/thumbnail?page=9", form: [.file("file", path: "\(documents)mixed.pdf")])
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
    let damaged = try await server.request(
      "POST", "/v1/thumbnail", form: [.file("file", path: "\(documents)truncated.pdf")])
    #expect(damaged.status == 422)
    #expect(damaged.errorCode == "pdf.damaged")
    #expect(damaged.text.contains("truncated.pdf"))
    #expect(await server.stop().isComplete)
  }

  @Test("a CPU bomb kills its worker (422 document.cpuLimit) while other requests are answered")
  func workerKilled() async throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    let server = try InProcessService(settings: {
      $0.cpuLimit = 1
      $0.jobs = 2
    })
    // The bomb and a good file at once; the good one does not wait for it.
    func post(_ name: String, _ path: String) async throws -> HTTPExchange {
      try await server.request(
        "POST", "/v1/thumbnail?name=\(name)", headers: ["Content-Type: application/pdf"],
        file: path)
    }
    async let bombed = post("bomb", bomb)
    async let good = post("good", documents + "mixed.pdf")
    let report = ["bomb": try await bombed, "good": try await good]
    #expect(report["bomb"]?.status == 422)
    #expect(report["bomb"]?.errorCode == "document.cpuLimit")
    #expect(report["good"]?.status == 200)
    #expect(report["good"]?.contentType == "image/png")
    // And after it: the pool has a worker for the next request.
    let after = try await server.request(
      "POST", "/v1/inspect", form: [.file("file", path: "\(documents)mixed.pdf")])
    #expect(after.status == 200)
    #expect(
      ((after.json?["files"] as? [[String: Any]])?.first?["file"] as? String) == "mixed.pdf")
    #expect(await server.stop().isComplete)
  }

  @Test("multipart rules: 400, 413 and 415 with their codes; the server stays up")
  func multipartErrors() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService(settings: { $0.maxPart = 100_000 })
    func expectError(_ exchange: HTTPExchange, _ status: Int, _ code: String, _ words: String) {
      #expect(exchange.status == status, "\(exchange.text)")
      #expect(exchange.errorCode == code, "\(exchange.text)")
      let message = (exchange.json?["error"] as? [String: Any])?["message"] as? String ?? ""
      #expect(message.contains(words), "\(message)")
    }
    let thumbnail = "/v1/thumbnail"
    let boundary = "b0undary"
    let file = part(
      ["Content-Disposition: form-data; name=\"file\"; filename=\"a.pdf\""],
      try read(documents + "mixed.pdf"), boundary: boundary)
    expectError(
      try await server.request(
        "POST", thumbnail, headers: ["Content-Type: multipart/form-data"], body: Array(("x").utf8)),
      400, "http.malformedMultipart", "no usable boundary")
    expectError(
      try await postMultipart(file, boundary: boundary, to: thumbnail, on: server), 400,
      "http.malformedMultipart", "ends before its closing boundary")
    expectError(
      try await postMultipart(closing(boundary), boundary: boundary, to: thumbnail, on: server),
      400,
      "http.malformedMultipart", "holds no part")
    let unnamed = part(["Content-Disposition: form-data"], [1, 2], boundary: boundary)
    expectError(
      try await postMultipart(
        unnamed + closing(boundary), boundary: boundary, to: thumbnail, on: server),
      400, "http.malformedMultipart", "a part has no name")
    let control = part(
      ["Content-Disposition: form-data; name=\"fi\u{1}le\""], [1], boundary: boundary)
    expectError(
      try await postMultipart(
        control + closing(boundary), boundary: boundary, to: thumbnail, on: server),
      400, "http.invalidPartName", "without control characters")
    let base64 = part(
      [
        "Content-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"",
        "Content-Transfer-Encoding: base64",
      ], Array("JVBERi0=".utf8), boundary: boundary)
    expectError(
      try await postMultipart(
        base64 + closing(boundary), boundary: boundary, to: thumbnail, on: server),
      415, "http.unsupportedPartEncoding", "'base64'")
    expectError(
      try await server.request(
        "POST", thumbnail,
        form: [.file("file", path: "\(documents)mixed.pdf"), .field("colour", "red")]),
      400, "http.unknownPart", "'colour'")
    expectError(
      try await server.request(
        "POST", thumbnail,
        form: [
          .file("file", path: "\(documents)mixed.pdf"),
          .file("file", path: "\(documents)mixed.pdf"),
        ]),
      400, "http.duplicatePart", "'file'")
    expectError(
      try await server.request(
        "POST", "/v1/card", form: [.file("photo", path: "\(photos)harbor-lamp.jpg")]),
      400, "http.missingPart", "'profile'")
    let many = (0...64).map { FormItem.field("f\($0)", "x") }
    expectError(
      try await server.request("POST", thumbnail, form: many), 413, "http.tooManyParts",
      "more than 64 parts")
    let big = folder.file("big.pdf")
    try Data(repeating: 0x25, count: 100_001).write(to: URL(fileURLWithPath: big))
    expectError(
      try await server.request("POST", thumbnail, form: [.file("file", path: big)]), 413,
      "http.partTooLarge", "limit of 100000 bytes")
    // A part of exactly the limit is read (and refused for what it is: not a document).
    let exact = folder.file("exact.pdf")
    try Data(repeating: 0x25, count: 100_000).write(to: URL(fileURLWithPath: exact))
    let read = try await server.request("POST", thumbnail, form: [.file("file", path: exact)])
    #expect(read.status == 422, "\(read.text)")
    #expect(read.text.contains("exact.pdf"))
    #expect(try await server.request("GET", "/healthz").status == 200)
    #expect(await server.stop().isComplete)
  }
}

@Suite("service routes: quotes", .liveHandlesChecked, .onTestThreads)
struct QuoteRouteTests {
  static let samples = repositoryRoot + "/assets/samples/"
  static let files = [
    "documents/course-notes.pdf", "documents/handout.pdf", "documents/poster-photo.jpg",
  ]

  /// A service with the price lists `lists` (name to file).
  static func server(lists: [String: String]) throws -> InProcessService {
    try InProcessService(settings: { $0.priceLists = lists })
  }

  /// The order and each of its files as parts, less `leaving` and plus `adding`.
  static func form(leaving: String? = nil, adding: [FormItem] = []) -> [FormItem] {
    [.file("order", path: samples + "order-booster.json", type: "application/json")]
      + files.filter { $0 != leaving }.map { .file($0, path: samples + $0) } + adding
  }

  @Test("quote: the order and its files as parts give imprint quote's JSON and receipt")
  func quote() async throws {
    let server = try Self.server(
      lists: ["booster": Self.samples + "prices-booster.json"])
    let answer = try await server.request("POST", "/v1/quote?prices=booster", form: Self.form())
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
    let receipt = try await server.request(
      "POST", "/v1/quote?format=receipt&locale=ko", form: Self.form())
    #expect(receipt.status == 200, "\(receipt.text)")
    #expect(receipt.contentType == "text/plain; charset=utf-8")
    let cliReceipt = try runTool(
      imprintExecutable,
      [
        "quote", "--locale", "ko", Self.samples + "order-booster.json", "--prices",
        Self.samples + "prices-booster.json",
      ])
    #expect(cliReceipt.stdoutBytes == receipt.body)
    #expect(await server.stop().isComplete)
  }

  @Test("quote: unknown list 404, missing or stray parts 400, a path leading out 422")
  func quoteErrors() async throws {
    let folder = TemporaryFolder()
    let server = try Self.server(
      lists: [
        "booster": Self.samples + "prices-booster.json",
        "copy": Self.samples + "prices-booster.json",
      ])
    let url = "/v1/quote?prices=booster"
    let unknown = try await server.request("POST", "/v1/quote?prices=nope", form: Self.form())
    #expect(unknown.status == 404)
    #expect(unknown.errorCode == "http.unknownPriceList")
    #expect(unknown.text.contains("booster, copy"))
    // Two lists: the name is needed.
    let unnamed = try await server.request("POST", "/v1/quote", form: Self.form())
    #expect(unnamed.status == 400)
    #expect(unnamed.errorCode == "http.missingParameter")
    let missing = try await server.request(
      "POST", url, form: Self.form(leaving: "documents/handout.pdf"))
    #expect(missing.status == 400)
    #expect(missing.errorCode == "http.missingPart")
    #expect(missing.text.contains("'documents/handout.pdf'"))
    let stray = try await server.request(
      "POST", url, form: Self.form(adding: [.file("extra.pdf", path: documents + "mixed.pdf")]))
    #expect(stray.status == 400)
    #expect(stray.errorCode == "http.unknownPart")
    let escaping = folder.file("escaping.json")
    try Data(
      #"{"schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "files": [{"path": "../../etc/passwd"}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: escaping))
    let out = try await server.request(
      "POST", url,
      form: [
        .file("order", path: escaping), .file("../../etc/passwd", path: "\(documents)mixed.pdf"),
      ])
    #expect(out.status == 422, "\(out.text)")
    #expect(out.errorCode == "file.escapesFolder")
    let damaged = folder.file("damaged.json")
    try Data(
      #"{"schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "files": [{"path": "t.pdf"}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: damaged))
    let refused = try await server.request(
      "POST", url,
      form: [.file("order", path: damaged), .file("t.pdf", path: "\(documents)truncated.pdf")])
    #expect(refused.status == 422)
    #expect(refused.errorCode == "pdf.damaged")
    #expect(refused.text.contains("t.pdf"))
    let notJSON = try await server.request(
      "POST", url, form: [.file("order", path: "\(documents)mixed.pdf")])
    #expect(notJSON.status == 400, "\(notJSON.text)")
    #expect(await server.stop().isComplete)
  }
}

@Suite("imprint serve: Office uploads", .tags(.slow), .skippedWhenQuick)
struct OfficeUploadRouteTests {
  @Test("a DOCX posted raw or as a part is inspected and thumbnailed as its conversion")
  func officeRoutes() async throws {
    let folder = TemporaryFolder()
    // A server process of its own: the conversions' cache is found through XDG_CACHE_HOME, an
    // environment variable of the whole process.
    let server = try ServiceProcess(environment: ["XDG_CACHE_HOME": folder.file("cache")])
    defer { _ = server.stop() }
    let docx = try officeFixture("docx-pages", ["3"], in: folder)
    let word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    let raw = try await server.request(
      "POST", "/v1/inspect?name=report.docx", headers: ["Content-Type: \(word)"], file: docx)
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
    let misdeclared = try await server.request(
      "POST", "/v1/inspect", headers: ["Content-Type: application/pdf"], file: docx)
    #expect(misdeclared.status == 200)
    let misdeclaredType = inspected(misdeclared)?["type"] as? String
    #expect(misdeclaredType == "docx")
    let thumbnail = try await server.request(
      "POST", "/v1/thumbnail?size=128", form: [.file("file", path: docx)])
    #expect(thumbnail.status == 200 && thumbnail.contentType == "image/png", "\(thumbnail.text)")
    let header = try #require(pngHeader(thumbnail.body))
    #expect(max(header.width, header.height) == 128)
    // /v1/convert answers that PDF: its pages and digest, the bytes the report named.
    let pdf = try await server.request(
      "POST", "/v1/convert", headers: ["Content-Type: \(word)"], file: docx)
    #expect(pdf.status == 200 && pdf.contentType == "application/pdf")
    #expect(pdf.headers["x-imprint-pages"] == "3")
    let digest = SHA256.hash(pdf.body).map { String(format: "%02x", $0) }.joined()
    #expect(pdf.headers["x-imprint-pdf-sha256"] == digest)
    #expect(conversion["pdfSHA256"] as? String == digest)
    // A PDF is not converted: it is read as it is.
    let notOffice = try await server.request(
      "POST", "/v1/convert", headers: ["Content-Type: application/pdf"],
      file: documents + "mixed.pdf")
    #expect(notOffice.status == 422 && notOffice.errorCode == "document.notOffice")
    // The conversion was made once and kept: one PDF in the server's cache.
    let cached = try FileManager.default.contentsOfDirectory(
      atPath: folder.file("cache") + "/imprint/converted")
    #expect(cached.filter { $0.hasSuffix(".pdf") }.count == 1, "\(cached)")
  }
}
