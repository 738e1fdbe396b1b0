// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `imprint serve` started on a free port and talked to with curl and
// Python: every route's output checked with the tools the CLI's are (zbarimg, pdfinfo), every
// status code provoked, a hostile upload, and SIGTERM with a request in flight.

import Foundation
import ImprintTestSupport
import Testing

private let profiles = repositoryRoot + "/assets/samples/profiles/"
private let documents = fixturesFolder + "/Documents/"
private let json = "Content-Type: application/json"

/// Posts the fixture document `name` to `/v1/inspect` as a PDF, naming it when `named`.
private func upload(_ name: String, named: Bool, to server: ServiceProcess) async throws
  -> HTTPExchange
{
  try await server.request(
    "POST", "/v1/inspect" + (named ? "?name=\(name)" : ""),
    headers: ["Content-Type: application/pdf"], file: documents + name)
}

@Suite("imprint serve", .liveHandlesChecked, .onTestThreads, .serialized)
struct ServeTests {
  @Test("healthz and readyz answer JSON; two requests share one kept-alive connection")
  func health() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let health = try await server.request("GET", "/healthz")
    #expect(health.status == 200)
    #expect(health.contentType == "application/json")
    #expect(health.json?["status"] as? String == "ok")
    let ready = try await server.request("GET", "/readyz")
    #expect(ready.status == 200)
    #expect(ready.json?["status"] as? String == "ready")
    // One curl, two URLs: the second reuses the first's connection (no new connect).
    let both = try runTool(
      "curl",
      [
        "-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects}\n",
        server.url("/healthz"), server.url("/readyz"),
      ])
    #expect(both.stdout.split(separator: "\n") == ["1", "0"])
    let stopped = server.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
  }

  @Test("qr: a PNG from query parameters and an SVG from a JSON body decode to the payload")
  func qr() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
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
    _ = server.stop()
  }

  @Test("qr: an Ethereum address whose checksum fails is 422 with the CLI's error")
  func qrRefused() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
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
    _ = server.stop()
  }

  @Test("card: a PDF of both sides and a PNG back whose QR code links the account")
  func card() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
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
    _ = server.stop()
  }

  @Test("inspect: the JSON of imprint inspect --json for the uploaded file")
  func inspect() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
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
    _ = server.stop()
  }

  @Test("a truncated PDF is 422 pdf.damaged, and the next upload is inspected")
  func hostileUpload() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    let bad = try await upload("truncated.pdf", named: true, to: server)
    #expect(bad.status == 422)
    #expect(bad.errorCode == "pdf.damaged")
    #expect(bad.text.contains("truncated.pdf"))
    let good = try await upload("mixed.pdf", named: false, to: server)
    #expect(good.status == 200)
    _ = server.stop()
  }

  @Test("status codes: 400, 404, 405, 413, 415 and 422, each with its error object")
  func statusCodes() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["--max-body", "100000"])
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
    // is sent (curl waits for 100 Continue, which never comes).
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
    #expect(server.stop().status == 0)
  }

  @Test(
    "a malformed --listen is a usage error (2); a port already taken fails with service.listen (1)")
  func listenErrors() async throws {
    let malformed = try runTool(imprintExecutable, ["serve", "--listen", "300.1.1.1:80"])
    #expect(malformed.status == 2)
    #expect(malformed.stderr.hasPrefix("error: '300.1.1.1:80' is not an address to listen on"))
    let server = try ServiceProcess()
    let taken = try runTool(imprintExecutable, ["serve", "--listen", "127.0.0.1:\(server.port)"])
    #expect(taken.status == 1)
    #expect(
      taken.stderr.hasPrefix(
        "error: cannot listen on 127.0.0.1:\(server.port): bind failed (Address already in use)"))
    #expect(server.stop().status == 0)
  }

  @Test("SIGTERM with a request in flight: it is answered, new connections refused, exit 0")
  func gracefulStop() async throws {
    let server = try ServiceProcess()
    // The request's head is sent with Expect: 100-continue; once 100 Continue came back the
    // server is reading it. Then SIGTERM, then the body: the answer must still come.
    let script = pythonFixture("expect_continue_client.py")
    let result = try runTool(
      "python3",
      ["-c", script, "\(server.pid)", "\(server.port)", documents + "mixed.pdf"])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
    #expect(report["status"] as? Int == 200)
    #expect(report["refused"] as? Bool == true)
    #expect(report["connection"] as? String == "close")
    let files = (report["body"] as? [String: Any])?["files"] as? [[String: Any]]
    #expect((files?.first?["info"] as? [String: Any])?["pages"] as? Int == 3)
    let exit = server.waitForExit()
    #expect(exit.status == 0)
    #expect(exit.stderr.hasSuffix("serve: stopped\n"))
  }
}
