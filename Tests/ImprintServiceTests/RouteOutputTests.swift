// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: every route's output checked with the tools the CLI's are (zbarimg,
// pdfinfo) and against the CLI's own bytes, every status code provoked, a hostile upload, and
// two requests on one kept-alive connection; against a service in this process.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

private let profiles = repositoryRoot + "/assets/samples/profiles/"
private let documents = fixturesFolder + "/Documents/"
private let json = "Content-Type: application/json"

/// Posts the fixture document `name` to `/v1/inspect` as a PDF, naming it when `named`.
private func upload(_ name: String, named: Bool, to server: InProcessService) async throws
  -> HTTPExchange
{
  try await server.request(
    "POST", "/v1/inspect" + (named ? "?name=\(name)" : ""),
    headers: ["Content-Type: application/pdf"], file: documents + name)
}

@Suite("service routes: answers checked as the CLI's are", .liveHandlesChecked, .onTestThreads)
struct RouteOutputTests {
  @Test("healthz and readyz answer JSON; two requests share one kept-alive connection")
  func health() async throws {
    let server = try InProcessService()
    let health = try await server.request("GET", "/healthz")
    #expect(health.status == 200)
    #expect(health.contentType == "application/json")
    #expect(health.json?["status"] as? String == "ok")
    let ready = try await server.request("GET", "/readyz")
    #expect(ready.status == 200)
    #expect(ready.json?["status"] as? String == "ready")
    // One connection, two requests: the second is answered on the connection the first left
    // open (no new connect), as a client that keeps connections alive sends them.
    let port = server.port
    let (first, second) = try await onOwnThread {
      let connection = try RawHTTPConnection(port: port)
      connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      let first = connection.read(seconds: 60, settle: 0)
      connection.send("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      return (first, connection.read(seconds: 60, settle: 0))
    }
    #expect(first.answers.map(\.status) == [200] && !first.closed, "\(first)")
    #expect(second.answers.map(\.status) == [200] && !second.closed, "\(second)")
    #expect(HTTPExchange(try #require(second.answers.first)).json?["status"] as? String == "ready")
    #expect(await server.stop().isComplete)
  }

  @Test("qr: a PNG from query parameters and an SVG from a JSON body decode to the payload")
  func qr() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let png = try await server.request(
      "POST", "/v1/qr?payload=hello%20print%20shop&level=H&module=4")
    #expect(png.status == 200)
    #expect(png.contentType == "image/png")
    let pngPath = folder.file("code.png")
    try Data(png.body).write(to: URL(fileURLWithPath: pngPath))
    #expect(try zbarDecode(pngPath) == "hello print shop")
    // 4 px modules: the width is (modules + 8) × 4 for a 4-module quiet zone.
    let header = try #require(pngHeader(png.body))
    #expect(header.width % 4 == 0 && header.width == header.height)

    let svg = try await server.request(
      "POST", "/v1/qr", headers: [json],
      body: Array(
        (#"{"payload": "https://example.com/o/17", "format": "svg", "quietZone": 2}"#).utf8))
    #expect(svg.status == 200)
    #expect(svg.contentType == "image/svg+xml")
    let svgPath = folder.file("code.svg")
    try Data(svg.body).write(to: URL(fileURLWithPath: svgPath))
    #expect(try zbarDecode(try rasteriseSVG(svgPath)) == "https://example.com/o/17")

    // The same bytes as `imprint qr` with the same options.
    let cli = try runTool(
      imprintExecutable,
      ["qr", "--level", "H", "--module", "4", "--format", "png", "-o", "-", "hello print shop"])
    #expect(cli.stdoutBytes == png.body)
    #expect(await server.stop().isComplete)
  }

  @Test("qr: an Ethereum address whose checksum fails is 422 with the CLI's error")
  func qrRefused() async throws {
    let server = try InProcessService()
    // EIP-55's example address with one letter's case flipped.
    let address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".replacingOccurrences(
      of: "0x5aAe", with: "0x5AAe")
    let refused = try await server.request(
      "POST", "/v1/qr", headers: [json],
      body: Array((#"{"payload": "\#(address)", "payloadType": "eth"}"#).utf8))
    #expect(refused.status == 422)
    #expect(refused.errorCode == "eth.badChecksum")
    let message = (refused.json?["error"] as? [String: Any])?["message"] as? String
    let cli = try runTool(imprintExecutable, ["qr", "--eth", "-o", "-", address])
    #expect(cli.status == 1)
    #expect(cli.stderr.hasPrefix("error: \(message ?? "-")\n"))
    #expect(await server.stop().isComplete)
  }

  @Test("card: a PDF of both sides and a PNG back whose QR code links the account")
  func card() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let pdf = try await server.request(
      "POST", "/v1/card", headers: [json], file: profiles + "sora-park.json")
    #expect(pdf.status == 200)
    #expect(pdf.contentType == "application/pdf")
    let pdfPath = folder.file("card.pdf")
    try Data(pdf.body).write(to: URL(fileURLWithPath: pdfPath))
    let info = try pdfInfo(pdfPath)
    #expect(info["Pages"] == "2")
    // What `imprint card` makes of the same profile: the same bytes (the server draws the card
    // in memory, the CLI writes the file), so the same pages and page size.
    let cliPath = folder.file("cli.pdf")
    let cli = try runTool(imprintExecutable, ["card", profiles + "sora-park.json", "-o", cliPath])
    #expect(cli.status == 0, "\(cli.stderr)")
    #expect(try pdfInfo(cliPath)["Page size"] == info["Page size"])
    #expect(pdf.body == [UInt8](try Data(contentsOf: URL(fileURLWithPath: cliPath))))

    let png = try await server.request(
      "POST", "/v1/card?format=png&side=back&dpi=200", headers: [json],
      file: profiles + "sora-park.json")
    #expect(png.status == 200)
    #expect(png.contentType == "image/png")
    let pngPath = folder.file("back.png")
    try Data(png.body).write(to: URL(fileURLWithPath: pngPath))
    #expect(try zbarDecode(pngPath) == "https://steemit.com/@sora-park")
    // 200 dpi: the pixels-per-metre field says so (7874).
    #expect(pngHeader(png.body)?.pixelsPerMetre == 7874)
    let cliPNG = folder.file("cli-back.png")
    let cliBack = try runTool(
      imprintExecutable,
      [
        "card", profiles + "sora-park.json", "--format", "png", "--side", "back", "--dpi", "200",
        "-o", cliPNG,
      ])
    #expect(cliBack.status == 0, "\(cliBack.stderr)")
    #expect(png.body == [UInt8](try Data(contentsOf: URL(fileURLWithPath: cliPNG))))
    #expect(await server.stop().isComplete)
  }

  @Test("inspect: the JSON of imprint inspect --json for the uploaded file")
  func inspect() async throws {
    let server = try InProcessService()
    let answer = try await upload("mixed.pdf", named: true, to: server)
    #expect(answer.status == 200)
    let files = try #require(answer.json?["files"] as? [[String: Any]])
    #expect(files.count == 1)
    #expect(files[0]["file"] as? String == "mixed.pdf")
    #expect(files[0]["status"] as? String == "ok")
    let info = try #require(files[0]["info"] as? [String: Any])
    #expect(info["pages"] as? Int == Int(try pdfInfo(documents + "mixed.pdf")["Pages"] ?? ""))
    // The CLI's report of the same file, but for the file's name.
    let cli = try runTool(imprintExecutable, ["inspect", "--json", documents + "mixed.pdf"])
    let cliFiles =
      (try JSONSerialization.jsonObject(with: Data(cli.stdoutBytes)) as? [String: Any])?["files"]
      as? [[String: Any]]
    var cliInfo = try #require(cliFiles?.first?["info"] as? [String: Any])
    cliInfo["file"] = "mixed.pdf"
    func canonical(_ object: [String: Any]) throws -> String {
      String(
        decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys),
        as: UTF8.self)
    }
    #expect(try canonical(cliInfo) == canonical(info))
    #expect(await server.stop().isComplete)
  }

  @Test("a truncated PDF is 422 pdf.damaged, and the next upload is inspected")
  func hostileUpload() async throws {
    let server = try InProcessService()
    let bad = try await upload("truncated.pdf", named: true, to: server)
    #expect(bad.status == 422)
    #expect(bad.errorCode == "pdf.damaged")
    #expect(bad.text.contains("truncated.pdf"))
    let good = try await upload("mixed.pdf", named: false, to: server)
    #expect(good.status == 200)
    #expect(await server.stop().isComplete)
  }

  @Test("status codes: 400, 404, 405, 413, 415 and 422, each with its error object")
  func statusCodes() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService(settings: { $0.maxBody = 100_000 })
    func expectError(_ exchange: HTTPExchange, _ status: Int, _ code: String) {
      #expect(exchange.status == status, "\(exchange.text)")
      #expect(exchange.contentType == "application/json")
      #expect(exchange.errorCode == code)
      let error = exchange.json?["error"] as? [String: Any]
      #expect((error?["message"] as? String)?.isEmpty == false)
    }
    expectError(
      try await server.request(
        "POST", "/v1/qr", headers: [json], body: Array(("{\"payload\": ").utf8)),
      400, "json.syntax")
    expectError(
      try await server.request("POST", "/v1/qr?payload=x&colour=red"), 400,
      "http.invalidParameter")
    expectError(
      try await server.request("POST", "/v1/card", headers: [json], body: Array(("not json").utf8)),
      400, "profile.notJSON")
    expectError(try await server.request("GET", "/v2/qr"), 404, "http.notFound")
    expectError(
      try await server.request(
        "POST", "/v1/card?template=no-such-design", headers: [json],
        file: profiles + "sora-park.json"),
      404, "template.notFound")
    let wrongMethod = try await server.request("GET", "/v1/inspect")
    expectError(wrongMethod, 405, "http.methodNotAllowed")
    #expect(wrongMethod.headers["allow"] == "POST")
    // 200 000 bytes against a limit of 100 000: refused from Content-Length, before the body
    // is sent (no 100 Continue comes: the one answer read is the 413).
    let big = folder.file("big.bin")
    try Data(repeating: 0x25, count: 200_000).write(to: URL(fileURLWithPath: big))
    let tooLarge = try await server.request(
      "POST", "/v1/inspect", headers: ["Content-Type: application/pdf", "Expect: 100-continue"],
      file: big)
    expectError(tooLarge, 413, "http.bodyTooLarge")
    #expect(tooLarge.headers["connection"] == "close")
    expectError(
      try await server.request(
        "POST", "/v1/card", headers: ["Content-Type: text/plain"], file: profiles + "sora-park.json"
      ),
      415, "http.unsupportedMediaType")
    expectError(
      try await server.request("POST", "/v1/qr?payload=x&foreground=%23EEEEEE"),
      422, "qr.lowContrast")
    // Options that do not apply to the payload, refused as imprint qr refuses them
    // (QRSettings.conflict), naming the request's own key.
    for (query, key) in [
      ("payload=x&token=0xdAC17F958D2ee523a2206206994597C13D831ec7", "token"),
      ("payload=x&amount=1", "amount"),
      ("payloadType=eth&payload=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&label=a", "label"),
      ("payloadType=eth&payload=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&decimals=6", "decimals"),
      ("payload=x&captionAddress=true", "captionAddress"),
    ] {
      let refused = try await server.request("POST", "/v1/qr?" + query)
      expectError(refused, 400, "http.invalidParameter")
      #expect(refused.text.contains("'\(key)'"), "\(query): \(refused.text)")
    }
    // The server is still there.
    #expect(try await server.request("GET", "/healthz").status == 200)
    #expect(await server.stop().isComplete)
  }
}
