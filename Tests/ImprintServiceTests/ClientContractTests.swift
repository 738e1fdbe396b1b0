// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: what a backend integrating `imprint serve` relies on beyond each route's
// bytes: the server's version on every answer (`Server`) and in /metrics, JSON bodies read as
// UTF-8 alone (another charset refused 415, naming it), HEAD on a job and its files (the GET's
// headers, no body) and a job file's Content-Disposition; against a service in this process.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintTestSupport
import Testing

@testable import ImprintService

private let samples = repositoryRoot + "/assets/samples/"

@Suite("service routes: what a backend relies on", .liveHandlesChecked, .onTestThreads)
struct ClientContractTests {
  @Test("every answer says Server: imprint/VERSION, /metrics has imprint_build_info")
  func serverVersion() async throws {
    let server = try InProcessService()
    // The version `imprint --version` prints, read from the executable itself.
    let printed = try runTool(imprintExecutable, ["--version"])
    let version = try #require(
      printed.stdout.hasPrefix("imprint ") ? String(printed.stdout.dropFirst(8).dropLast()) : nil,
      "\(printed.stdout)")
    #expect(version == ImprintVersion.current)
    // Answered on the event thread, by a worker, an error, an unknown route, a refusal from the
    // head, HEAD.
    let answers = [
      try await server.get("/healthz"),
      try await server.request("POST", "/v1/qr?payload=x"),
      try await server.request("POST", "/v1/qr?level=H"),
      try await server.get("/v2/none"),
      try await server.get("/v1/qr"),
      try await server.request("HEAD", "/openapi.json"),
    ]
    #expect(answers.map(\.status) == [200, 200, 400, 404, 405, 200])
    for answer in answers {
      #expect(answer.headers["server"] == "imprint/\(version)", "\(answer.headers)")
    }
    // No CORS: a browser's preflight is a method the routes do not take, and nothing allows it.
    let preflight = try await server.request(
      "OPTIONS", "/v1/qr",
      headers: ["Origin: https://shop.example", "Access-Control-Request-Method: POST"])
    #expect(preflight.status == 405)
    #expect(preflight.errorCode == "http.methodNotAllowed")
    #expect(!preflight.headers.keys.contains { $0.hasPrefix("access-control-") })
    let metrics = try await server.get("/metrics")
    #expect(try PrometheusText(metrics.text).value("imprint_build_info", ["version": version]) == 1)
    #expect(metrics.text.contains("# TYPE imprint_build_info gauge\n"))
    #expect(await server.stop().isComplete)
  }

  @Test("a JSON body in another charset is 415 http.unsupportedCharset naming it; utf-8 is read")
  func charset() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let profile = samples + "profiles/sora-park.json"
    // Latin-1 bytes (Caf\xE9) a client declared as such: refused for the charset, not read as
    // a profile that is not UTF-8.
    let latin1 = folder.file("profile-latin1.json")
    try Data(#"{"name": "caf"#.utf8 + [0xE9] + #""}"#.utf8).write(to: URL(fileURLWithPath: latin1))
    for (route, body, type) in [
      ("/v1/card", latin1, "application/json; charset=ISO-8859-1"),
      ("/v1/card", profile, "application/json;charset=\"windows-1252\""),
      ("/v1/qr", nil, "application/json; charset=utf-16"),
    ] {
      let bytes = try body.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
      let answer = try await server.request(
        "POST", route, headers: ["Content-Type: \(type)"],
        body: bytes ?? Array(#"{"payload": "x"}"#.utf8))
      #expect(answer.status == 415, "\(type): \(answer.text)")
      #expect(answer.errorCode == "http.unsupportedCharset", "\(answer.text)")
      let message = (answer.json?["error"] as? [String: Any])?["message"] as? String ?? ""
      let named = type.split(separator: "=").last.map {
        $0.replacingOccurrences(of: "\"", with: "")
      }
      #expect(message.contains("'\(named?.lowercased() ?? "-")'"), "\(message)")
      #expect(message.contains("'\(route)' reads JSON in UTF-8"), "\(message)")
      #expect(!message.contains("profile.json"), "\(message)")
    }
    // UTF-8 declared, in any case and quoted, or no charset: read.
    for type in [
      "application/json; charset=utf-8", "application/json; charset=\"UTF-8\"", "application/json",
    ] {
      let card = try await server.request(
        "POST", "/v1/card", headers: ["Content-Type: \(type)"], file: profile)
      #expect(card.status == 200, "\(type): \(card.text)")
      #expect(card.body.starts(with: Array("%PDF-".utf8)))
    }
    #expect(await server.stop().isComplete)
  }

  @Test(
    "a + in the query is a space and %2B a plus, as docs/service.md warns (zbarimg reads them back)"
  )
  func plusInQuery() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    for (query, payload) in [
      ("a+b", "a b"), ("a%2Bb", "a+b"),
      ("https%3A%2F%2Fexample.com%2F%3Fa%3D1%26b%3D2", "https://example.com/?a=1&b=2"),
    ] {
      let code = try await server.request("POST", "/v1/qr?payload=\(query)")
      #expect(code.status == 200, "\(query): \(code.text)")
      let path = folder.file("code.png")
      try Data(code.body).write(to: URL(fileURLWithPath: path))
      let read = try runTool("zbarimg", ["-q", "--raw", "--nodbus", path])
      #expect(read.stdout == payload + "\n", "\(query): \(read.stdout)")
    }
    #expect(await server.stop().isComplete)
  }

  @Test("HEAD on a job and its files gives GET's headers without a body; files are attachments")
  func headAndDisposition() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let manifest = folder.file("orders.jsonl")
    try Data(#"{"id": "W-1", "kind": "qr", "payload": "head"}"#.utf8 + [0x0A]).write(
      to: URL(fileURLWithPath: manifest))
    let accepted = try await server.request(
      "POST", "/v1/batch", form: [.file("manifest", path: manifest)])
    let id = try #require(accepted.json?["job"] as? String, "\(accepted.text)")
    #expect(try await waitForJob(id, on: server).json?["state"] as? String == "done")
    for path in ["/v1/jobs/\(id)", "/v1/jobs/\(id)/files/qr/W-1.png"] {
      let got = try await server.get(path)
      let head = try await server.request("HEAD", path)
      #expect(head.status == 200, "\(path): \(head.headers)")
      for name in ["content-type", "content-length", "content-disposition", "server"] {
        #expect(head.headers[name] == got.headers[name], "\(path): \(name)")
      }
      #expect(head.headers["content-length"] == "\(got.body.count)")
      // No body follows the headers: the server closes the connection after them
      // (Connection: close) and nothing comes between (read raw, up to the close).
      let port = server.port
      let raw = try await onOwnThread {
        try rawExchange(
          port: port,
          Array("HEAD \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
          seconds: 20, bodiless: true)
      }
      #expect(raw.answers.map(\.status) == [200], "\(path)")
      #expect(raw.closed && raw.rest.isEmpty, "\(path): \(raw.rest.count) bytes after the head")
    }
    let file = try await server.get("/v1/jobs/\(id)/files/qr%2FW-1.png")
    #expect(file.headers["content-disposition"] == "attachment; filename=\"W-1.png\"")
    #expect(file.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    // The report is no attachment; a missing file is 404 to HEAD too.
    #expect(try await server.get("/v1/jobs/\(id)").headers["content-disposition"] == nil)
    #expect(try await server.request("HEAD", "/v1/jobs/\(id)/files/none.pdf").status == 404)
    #expect(await server.stop().isComplete)
  }

  @Test("Content-Disposition: ASCII names as they are, others in filename* (RFC 6266, 8187)")
  func dispositionNames() throws {
    #expect(ImprintService.attachment("A-1.pdf") == "attachment; filename=\"A-1.pdf\"")
    // Python reads filename* back as the name (RFC 8187: UTF-8, percent-encoded).
    let names = ["Café menu.pdf", "서울 order.pdf", "say \"hi\".pdf", "50%.png", "back\\slash.pdf"]
    let values = names.map(ImprintService.attachment)
    let encoded = String(decoding: try JSONEncoder().encode(values), as: UTF8.self)
    let decoded = try runTool(
      "python3", [fixturesFolder + "/Python/filename_star.py", encoded])
    #expect(decoded.status == 0, "\(decoded.stderr)")
    let read = try JSONSerialization.jsonObject(with: Data(decoded.stdoutBytes)) as? [String]
    #expect(read == names, "\(values)")
    for value in values {
      // The fallback is printable ASCII without a quote or backslash inside the quotes.
      #expect(value.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }, "\(value)")
      #expect(value.hasPrefix("attachment; filename=\""))
      #expect(value.contains("; filename*=UTF-8''"), "\(value)")
    }
    #expect(values[0].hasPrefix("attachment; filename=\"Caf_ menu.pdf\""))
  }
}
