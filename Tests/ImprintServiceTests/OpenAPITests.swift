// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the OpenAPI document served at /openapi.json: valid for
// openapi-spec-validator, describing exactly the routes the router answers (read from
// `ImprintService.routes`), and every route's real responses, a success and an error each,
// checked against it by openapi-core.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintService
import ImprintTestSupport
import Testing

private let resource = repositoryRoot + "/Sources/ImprintService/Resources/openapi.json"

/// The operations (`METHOD path`) a parsed OpenAPI document describes.
private func operations(in document: [String: Any]) -> Set<String> {
  let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
  var found: Set<String> = []
  for case (let path, let item as [String: Any]) in document["paths"] as? [String: Any] ?? [:] {
    for key in item.keys where methods.contains(key) { found.insert(key.uppercased() + " " + path) }
  }
  return found
}

/// One request sent to the server and checked against the document by `checker`.
private struct APICase: Encodable {
  var name: String
  var method: String
  var target: String
  /// A file whose bytes are the body.
  var file: String?
  /// Text sent as the body.
  var data: String?
  /// The request's Content-Type.
  var type: String?
  /// Send the head only, declaring this Content-Length (a body the server refuses unread).
  var declaredLength: Int?
  /// The status the server must answer (a success's request must match the document too; the
  /// requests meant to be refused do not).
  var expect: Int
  /// The route-table path a case with a job's id is for (`/v1/jobs/{id}`); nil: its own path.
  var route: String? = nil
  /// Further request headers (`Idempotency-Key`).
  var headers: [String: String]? = nil

  /// The path without the query.
  var path: String { String(target.prefix { $0 != "?" }) }
  /// The route-table path the case is for.
  var routePath: String { route ?? path }
}

/// The checker: sends each case with http.client and checks the answer with openapi-core.
///
/// Status documented for the operation, content type, JSON bodies against their schemas; a
/// success's request is checked too. 404 and 405 belong to no operation: their body is checked
/// against the document's ErrorDocument schema with jsonschema. Prints one result a case, as
/// JSON.
private let checker = fixturesFolder + "/Python/openapi_check.py"

/// Sends `cases` to `server` with the checker and expects each to get its status and to match
/// the document.
private func expectDocumented(
  _ cases: [APICase], server: InProcessService, in folder: TemporaryFolder
) async throws {
  let casesPath = folder.file("cases.json")
  try JSONEncoder().encode(cases).write(to: URL(fileURLWithPath: casesPath))
  let port = server.port
  let run = try await onOwnThread {
    try runTool("python3", [checker, "\(port)", resource, casesPath])
  }
  #expect(run.status == 0, "\(run.stderr)")
  let results = try #require(
    try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [[String: Any]])
  #expect(results.count == cases.count)
  for (sent, result) in zip(cases, results) {
    #expect(result["status"] as? Int == sent.expect, "\(sent.name): \(result)")
    #expect(
      (result["problems"] as? [String])?.isEmpty == true,
      "\(sent.name): \(result["problems"] ?? "-")")
  }
}

@Suite("OpenAPI document", .liveHandlesChecked, .onTestThreads)
struct OpenAPITests {
  @Test("GET /openapi.json serves the module's resource, and openapi-spec-validator accepts it")
  func valid() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let served = try await server.request("GET", "/openapi.json")
    #expect(served.status == 200)
    #expect(served.contentType == "application/json")
    let shipped = try ImprintService.openAPIDocument()
    #expect(served.body == shipped)
    #expect(served.body == [UInt8](try Data(contentsOf: URL(fileURLWithPath: resource))))
    let path = folder.file("openapi.json")
    try Data(served.body).write(to: URL(fileURLWithPath: path))
    let checked = try runTool("openapi-spec-validator", [path])
    #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
    #expect(checked.stdout.hasSuffix("OK\n"))
    // The validator is not vacuous: the same document with a response lacking its required
    // description is refused.
    var broken = try #require(served.json)
    var paths = try #require(broken["paths"] as? [String: Any])
    paths["/healthz"] = ["get": ["responses": ["200": [:] as [String: Any]]]]
    broken["paths"] = paths
    let brokenPath = folder.file("broken.json")
    try JSONSerialization.data(withJSONObject: broken).write(to: URL(fileURLWithPath: brokenPath))
    #expect(try runTool("openapi-spec-validator", [brokenPath]).status != 0)
    #expect(await server.stop().isComplete)
  }

  @Test("the routes the router answers are exactly the operations the document describes")
  func routesDocumented() async throws {
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(try ImprintService.openAPIDocument()))
        as? [String: Any])
    let documented = operations(in: document)
    let routed = Set(
      ImprintService.routes.flatMap { path, methods in methods.map { $0 + " " + path } })
    #expect(routed.count >= 6)
    #expect(
      routed.subtracting(documented).isEmpty,
      "routes missing from openapi.json: \(routed.subtracting(documented).sorted())")
    #expect(
      documented.subtracting(routed).isEmpty,
      "openapi.json describes routes the router lacks: \(documented.subtracting(routed).sorted())"
    )
    // The live server agrees: every documented path exists (a method it does not take is 405,
    // not 404), and a path outside the table is 404.
    let server = try InProcessService()
    for path in Set(documented.map { String($0.split(separator: " ")[1]) }) {
      // A method the path does not take (a job's path takes DELETE).
      let method = ImprintService.routes[path]?.contains("DELETE") == true ? "PUT" : "DELETE"
      let exchange = try await server.request(method, path)
      #expect(exchange.status == 405, "\(method) \(path): \(exchange.text)")
      #expect(exchange.errorCode == "http.methodNotAllowed")
    }
    let unknown = try await server.request("GET", "/v1/unknown")
    #expect(unknown.status == 404)
    #expect(unknown.text.contains("/openapi.json"))
    #expect(await server.stop().isComplete)
  }

  @Test("every route's responses, a success and an error each, match the document")
  func responsesMatch() async throws {
    let folder = TemporaryFolder()
    let samples = repositoryRoot + "/assets/samples/"
    let config = folder.file("serve.json")
    try JSONSerialization.data(
      withJSONObject: ["priceLists": ["booster": samples + "prices-booster.json"]]
    ).write(to: URL(fileURLWithPath: config))
    // `--config` and `--max-body` (the command line wins over the file).
    var settings = try ServiceSettings.load(config)
    settings.maxBody = 100_000
    let server = try InProcessService(settings)
    let profile = samples + "profiles/sora-park.json"
    let documents = fixturesFolder + "/Documents/"
    let json = "application/json"
    // A multipart body: an order of one file, and the file.
    let boundary = "openapi-case-boundary"
    let order =
      #"{"schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "files": [{"path": "doc.pdf", "copies": 2}]}"#
    let docx = try officeFixture("docx-pages", ["2"], in: folder)
    let quoteBody = folder.file("quote.multipart")
    let multipart =
      Array(
        ("--\(boundary)\r\nContent-Disposition: form-data; name=\"order\"\r\n"
          + "Content-Type: application/json\r\n\r\n\(order)\r\n--\(boundary)\r\n"
          + "Content-Disposition: form-data; name=\"doc.pdf\"; filename=\"doc.pdf\"\r\n"
          + "Content-Type: application/octet-stream\r\n\r\n").utf8)
      + [UInt8](try Data(contentsOf: URL(fileURLWithPath: documents + "mixed.pdf")))
      + Array("\r\n--\(boundary)--\r\n".utf8)
    try Data(multipart).write(to: URL(fileURLWithPath: quoteBody))
    let multipartType = "multipart/form-data; boundary=\(boundary)"
    // A batch of one QR code, and two finished jobs to read and remove.
    let batchBody = folder.file("batch.multipart")
    try Data(
      ("--\(boundary)\r\nContent-Disposition: form-data; name=\"manifest\"; "
        + "filename=\"manifest.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n"
        + #"{"id": "W-1", "kind": "qr", "payload": "hello"}"# + "\r\n--\(boundary)--\r\n").utf8
    ).write(to: URL(fileURLWithPath: batchBody))
    var finished: [String] = []
    for _ in 0..<2 {
      let accepted = try await server.request(
        "POST", "/v1/batch", headers: ["Content-Type: \(multipartType)"], file: batchBody)
      let id = try #require(accepted.json?["job"] as? String, "\(accepted.text)")
      #expect(try await waitForJob(id, on: server).json?["state"] as? String == "done")
      finished.append(id)
    }
    let unknownJob = UUID().uuidString.lowercased()
    let jobCases = [
      APICase(
        name: "batch", method: "POST", target: "/v1/batch", file: batchBody, type: multipartType,
        expect: 202),
      APICase(
        name: "batch callback refused", method: "POST",
        target: "/v1/batch?callback=http%3A%2F%2F127.0.0.1%2Fhook", file: batchBody,
        type: multipartType, expect: 422),
      APICase(
        name: "batch JSON body", method: "POST", target: "/v1/batch", data: "{}", type: json,
        expect: 415),
      APICase(
        name: "job", method: "GET", target: "/v1/jobs/\(finished[0])", expect: 200,
        route: "/v1/jobs/{id}"),
      APICase(
        name: "job HEAD", method: "HEAD", target: "/v1/jobs/\(finished[0])", expect: 200,
        route: "/v1/jobs/{id}"),
      APICase(
        name: "job file HEAD", method: "HEAD",
        target: "/v1/jobs/\(finished[0])/files/qr%2FW-1.png", expect: 200,
        route: "/v1/jobs/{id}/files/{path}"),
      APICase(
        name: "job unknown", method: "GET", target: "/v1/jobs/\(unknownJob)", expect: 404,
        route: "/v1/jobs/{id}"),
      APICase(
        name: "job file", method: "GET", target: "/v1/jobs/\(finished[0])/files/results.jsonl",
        expect: 200, route: "/v1/jobs/{id}/files/{path}"),
      APICase(
        name: "job file PNG", method: "GET", target: "/v1/jobs/\(finished[0])/files/qr%2FW-1.png",
        expect: 200, route: "/v1/jobs/{id}/files/{path}"),
      APICase(
        name: "job file unknown", method: "GET", target: "/v1/jobs/\(finished[0])/files/none.pdf",
        expect: 404, route: "/v1/jobs/{id}/files/{path}"),
      APICase(
        name: "job file leading out", method: "GET",
        target: "/v1/jobs/\(finished[0])/files/%2E%2E%2Fmanifest.jsonl", expect: 422,
        route: "/v1/jobs/{id}/files/{path}"),
      APICase(
        name: "job remove", method: "DELETE", target: "/v1/jobs/\(finished[1])", expect: 200,
        route: "/v1/jobs/{id}"),
      APICase(
        name: "job remove unknown", method: "DELETE", target: "/v1/jobs/\(finished[1])",
        expect: 404, route: "/v1/jobs/{id}"),
    ]
    let cases =
      [
        APICase(name: "healthz", method: "GET", target: "/healthz", expect: 200),
        APICase(name: "healthz HEAD", method: "HEAD", target: "/healthz", expect: 200),
        APICase(name: "healthz POST", method: "POST", target: "/healthz", expect: 405),
        APICase(name: "readyz", method: "GET", target: "/readyz", expect: 200),
        APICase(name: "readyz HEAD", method: "HEAD", target: "/readyz", expect: 200),
        APICase(name: "readyz PUT", method: "PUT", target: "/readyz", expect: 405),
        APICase(name: "metrics", method: "GET", target: "/metrics", expect: 200),
        APICase(name: "metrics HEAD", method: "HEAD", target: "/metrics", expect: 200),
        APICase(name: "metrics DELETE", method: "DELETE", target: "/metrics", expect: 405),
        APICase(name: "openapi", method: "GET", target: "/openapi.json", expect: 200),
        APICase(name: "openapi HEAD", method: "HEAD", target: "/openapi.json", expect: 200),
        APICase(name: "openapi POST", method: "POST", target: "/openapi.json", expect: 405),
        APICase(
          name: "qr png (query)", method: "POST", target: "/v1/qr?payload=hello&level=H&module=4",
          expect: 200),
        APICase(
          name: "qr svg (JSON)", method: "POST", target: "/v1/qr",
          data: #"{"payload": "hello", "format": "svg"}"#,
          type: json, expect: 200),
        APICase(
          name: "qr pdf", method: "POST", target: "/v1/qr?payload=hello&format=pdf&size=30",
          expect: 200),
        APICase(
          name: "qr eps", method: "POST", target: "/v1/qr?payload=hello&format=eps", expect: 200),
        APICase(
          name: "qr eth", method: "POST",
          target: "/v1/qr?payloadType=eth&request=true&amount=0.1"
            + "&payload=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", expect: 200),
        APICase(
          name: "qr not JSON", method: "POST", target: "/v1/qr", data: "{\"payload\": ", type: json,
          expect: 400),
        APICase(
          name: "qr unknown parameter", method: "POST", target: "/v1/qr?payload=x&colour=red",
          expect: 400),
        APICase(name: "qr missing payload", method: "POST", target: "/v1/qr?level=H", expect: 400),
        APICase(
          name: "qr low contrast", method: "POST", target: "/v1/qr?payload=x&foreground=%23EEEEEE",
          expect: 422),
        APICase(
          name: "qr text body", method: "POST", target: "/v1/qr", data: "payload=x",
          type: "text/plain", expect: 415),
        APICase(
          name: "qr too large", method: "POST", target: "/v1/qr", type: json,
          declaredLength: 200_000,
          expect: 413),
        APICase(name: "qr GET", method: "GET", target: "/v1/qr?payload=x", expect: 405),
        APICase(
          name: "card pdf", method: "POST", target: "/v1/card", file: profile, type: json,
          expect: 200
        ),
        APICase(
          name: "card png back", method: "POST", target: "/v1/card?format=png&side=back&dpi=150",
          file: profile,
          type: json, expect: 200),
        APICase(
          name: "card share", method: "POST", target: "/v1/card?format=share", file: profile,
          type: json, expect: 200),
        APICase(
          name: "card not JSON", method: "POST", target: "/v1/card", data: "not json", type: json,
          expect: 400),
        APICase(
          name: "card unknown template", method: "POST", target: "/v1/card?template=no-such-design",
          file: profile,
          type: json, expect: 404),
        APICase(
          name: "card no account", method: "POST", target: "/v1/card", data: "{}", type: json,
          expect: 422),
        APICase(
          name: "card text body", method: "POST", target: "/v1/card", file: profile,
          type: "text/plain", expect: 415),
        APICase(
          name: "card too large", method: "POST", target: "/v1/card", type: json,
          declaredLength: 200_000, expect: 413),
        APICase(
          name: "inspect pdf", method: "POST", target: "/v1/inspect?name=mixed.pdf",
          file: documents + "mixed.pdf",
          type: "application/pdf", expect: 200),
        APICase(
          name: "inspect damaged", method: "POST", target: "/v1/inspect?name=truncated.pdf",
          file: documents + "truncated.pdf", type: "application/pdf", expect: 422),
        APICase(
          name: "inspect text body", method: "POST", target: "/v1/inspect", data: "hello",
          type: "text/plain",
          expect: 415),
        APICase(
          name: "inspect too large", method: "POST", target: "/v1/inspect", type: "application/pdf",
          declaredLength: 200_000, expect: 413),
        APICase(
          name: "thumbnail png", method: "POST", target: "/v1/thumbnail?size=64",
          file: documents + "mixed.pdf", type: "application/pdf", expect: 200),
        APICase(
          name: "thumbnail damaged", method: "POST", target: "/v1/thumbnail",
          file: documents + "truncated.pdf", type: "application/pdf", expect: 422),
        APICase(
          name: "thumbnail text body", method: "POST", target: "/v1/thumbnail", data: "hello",
          type: "text/plain", expect: 415),
        APICase(
          name: "convert docx", method: "POST", target: "/v1/convert?name=report.docx",
          file: docx,
          type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
          expect: 200),
        APICase(
          name: "convert a pdf", method: "POST", target: "/v1/convert",
          file: documents + "mixed.pdf", type: "application/pdf", expect: 422),
        APICase(
          name: "quote", method: "POST", target: "/v1/quote?prices=booster", file: quoteBody,
          type: multipartType, expect: 200),
        APICase(
          name: "quote unknown list", method: "POST", target: "/v1/quote?prices=nope",
          file: quoteBody, type: multipartType, expect: 404),
        APICase(
          name: "quote JSON body", method: "POST", target: "/v1/quote", data: order, type: json,
          expect: 415),
        APICase(
          name: "prepare", method: "POST", target: "/v1/prepare?prices=booster&previews=true",
          file: quoteBody, type: multipartType, expect: 202,
          headers: ["Idempotency-Key": "\"openapi-prepare\""]),
        APICase(
          name: "prepare retried", method: "POST",
          target: "/v1/prepare?prices=booster&previews=true", file: quoteBody, type: multipartType,
          expect: 202, headers: ["Idempotency-Key": "\"openapi-prepare\""]),
        APICase(
          name: "prepare key reused", method: "POST", target: "/v1/prepare?prices=booster",
          file: quoteBody, type: multipartType, expect: 422,
          headers: ["Idempotency-Key": "\"openapi-prepare\""]),
        APICase(
          name: "prepare key malformed", method: "POST", target: "/v1/prepare?prices=booster",
          file: quoteBody, type: multipartType, expect: 400,
          headers: ["Idempotency-Key": "\"open"]),
        APICase(
          name: "prepare unknown printer", method: "POST", target: "/v1/prepare?printer=front",
          file: quoteBody, type: multipartType, expect: 404),
        APICase(
          name: "prepare printer address", method: "POST",
          target: "/v1/prepare?printer=ipp%3A%2F%2F10.0.0.1%2Fipp%2Fprint", file: quoteBody,
          type: multipartType, expect: 422),
        APICase(name: "unknown route", method: "GET", target: "/v2/qr", expect: 404),
      ] + jobCases
    // Every route in the router's table has a case for each method it takes, and at least one
    // success and one error: a route added later without cases fails here.
    for (path, methods) in ImprintService.routes {
      let mine = cases.filter { $0.routePath == path }
      for method in methods {
        #expect(mine.contains { $0.method == method }, "no case for \(method) \(path)")
      }
      #expect(mine.contains { (200..<300).contains($0.expect) }, "no success case for \(path)")
      #expect(mine.contains { $0.expect >= 400 }, "no error case for \(path)")
    }
    try await expectDocumented(cases, server: server, in: folder)
    // The checker is not vacuous: against a document that requires a field /healthz lacks,
    // documents no PNG for /v1/qr and wants another schemaVersion in errors, each case fails.
    var altered = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: resource)))
        as? [String: Any])
    var components = try #require(altered["components"] as? [String: Any])
    var schemas = try #require(components["schemas"] as? [String: Any])
    schemas["Status"] = [
      "type": "object", "required": ["status", "uptime"],
      "properties": ["status": ["type": "string"], "uptime": ["type": "number"]],
    ]
    schemas["ErrorDocument"] = [
      "type": "object", "required": ["error"], "properties": ["schemaVersion": ["const": 2]],
    ]
    components["schemas"] = schemas
    altered["components"] = components
    var paths = try #require(altered["paths"] as? [String: Any])
    var qr = try #require(paths["/v1/qr"] as? [String: Any])
    var post = try #require(qr["post"] as? [String: Any])
    var responses = try #require(post["responses"] as? [String: Any])
    responses["200"] = [
      "description": "SVG only", "content": ["image/svg+xml": ["schema": ["type": "string"]]],
    ]
    post["responses"] = responses
    qr["post"] = post
    paths["/v1/qr"] = qr
    altered["paths"] = paths
    let alteredPath = folder.file("altered.json")
    try JSONSerialization.data(withJSONObject: altered).write(
      to: URL(fileURLWithPath: alteredPath))
    let probes = cases.filter {
      ["healthz", "qr png (query)", "qr unknown parameter", "unknown route"].contains($0.name)
    }
    #expect(probes.count == 4)
    let probesPath = folder.file("probes.json")
    try JSONEncoder().encode(probes).write(to: URL(fileURLWithPath: probesPath))
    let port = server.port
    let refused = try await onOwnThread {
      try runTool("python3", [checker, "\(port)", alteredPath, probesPath])
    }
    let refusals = try #require(
      try JSONSerialization.jsonObject(with: Data(refused.stdoutBytes)) as? [[String: Any]])
    #expect(refusals.count == probes.count)
    for result in refusals {
      #expect((result["problems"] as? [String])?.isEmpty == false, "\(result)")
    }
    #expect(await server.stop().isComplete)
  }

  @Test("with --token-file the 401 answers match the document, and the probes need no token")
  func unauthorizedDocumented() async throws {
    let folder = TemporaryFolder()
    let token = folder.file("token")
    try Data("0123456789abcdef0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: token))
    chmod(token, 0o600)
    let server = try InProcessService(settings: { $0.tokenFile = token })
    // Every documented operation, without the token (the checker sends no Authorization
    // header): the probes answer, the rest are 401 from their head (a body is declared, never
    // sent).
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(try ImprintService.openAPIDocument()))
        as? [String: Any])
    let cases = operations(in: document).sorted().map { operation in
      let method = String(operation.prefix { $0 != " " })
      let path = String(operation.dropFirst(method.count + 1))
      let body = method == "POST"
      return APICase(
        name: operation, method: method, target: path,
        type: body ? "application/octet-stream" : nil, declaredLength: body ? 2000 : nil,
        expect: ["/healthz", "/readyz"].contains(path) ? 200 : 401)
    }
    #expect(cases.filter { $0.expect == 401 }.count >= 7)
    try await expectDocumented(cases, server: server, in: folder)
    #expect(await server.stop().isComplete)
  }
}
