// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the document routes read their options from the library's tables
// (`PrepareOption`, `QuoteOption`, `InspectOption`): the parameters a route names in the hint
// of one it does not know are exactly the table's, so that no route reads a name of its own.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintService
import ImprintTestSupport
import Testing

/// The query parameters `openapi.json` gives the `POST` of `route`, by name.
private func documented(_ route: String) throws -> [String: [String: Any]] {
  let document = try #require(
    try JSONSerialization.jsonObject(with: Data(ImprintService.openAPIDocument()))
      as? [String: Any])
  let paths = try #require(document["paths"] as? [String: Any])
  let operation = try #require((paths[route] as? [String: Any])?["post"] as? [String: Any])
  let shared = (document["components"] as? [String: Any])?["parameters"] as? [String: Any]
  var found: [String: [String: Any]] = [:]
  for case var parameter as [String: Any] in operation["parameters"] as? [Any] ?? [] {
    if let reference = parameter["$ref"] as? String {
      let name = String(reference.split(separator: "/").last ?? "")
      parameter = try #require(shared?[name] as? [String: Any])
    }
    guard parameter["in"] as? String == "query", let name = parameter["name"] as? String
    else { continue }
    found[name] = parameter["schema"] as? [String: Any] ?? [:]
  }
  return found
}

/// The parameters the hint of an unknown one names (`the route's parameters are a, b`).
private func parameters(_ answer: HTTPExchange) -> [String]? {
  let error = answer.json?["error"] as? [String: Any]
  guard let hint = error?["hint"] as? String else { return nil }
  let prefix = "the route's parameters are "
  guard hint.hasPrefix(prefix) else { return nil }
  return hint.dropFirst(prefix.count).components(separatedBy: ", ")
}

@Suite(
  "document routes: their options are the library's tables", .liveHandlesChecked, .onTestThreads)
struct RouteOptionTableTests {
  @Test("/v1/prepare, /v1/quote and /v1/inspect read the table's names and no other")
  func routesReadTheTables() async throws {
    let server = try InProcessService()
    let form: [FormItem] = [.field("order", "{}")]
    let pdf = ["Content-Type: application/pdf"]
    let document = fixturesFolder + "/Documents/mixed.pdf"
    let prepare = try await server.request("POST", "/v1/prepare?zzz=1", form: form)
    let quote = try await server.request("POST", "/v1/quote?zzz=1", form: form)
    let inspect = try await server.request(
      "POST", "/v1/inspect?zzz=1", headers: pdf, file: document)
    let convert = try await server.request(
      "POST", "/v1/convert?zzz=1", headers: pdf, file: document)
    let thumbnail = try await server.request(
      "POST", "/v1/thumbnail?zzz=1", headers: pdf, file: document)
    for answer in [prepare, quote, inspect, convert, thumbnail] {
      #expect(answer.status == 400 && answer.errorCode == "http.invalidParameter", "\(answer.text)")
    }
    // A prepare job's `callback` is the service's own (every job takes it).
    #expect(
      parameters(prepare)
        == (["prices", "callback"] + PrepareOption.request.map(\.names.key)).sorted())
    #expect(parameters(quote) == QuoteOption.request.map(\.names.key).sorted())
    let documentKeys = InspectOption.request.map(\.names.key)
    #expect(parameters(inspect) == documentKeys.sorted())
    #expect(parameters(convert) == documentKeys.sorted())
    // A thumbnail's page and its own table (`ThumbnailOption`) besides the document's.
    #expect(
      parameters(thumbnail)
        == (documentKeys + ["page"] + ThumbnailOption.allCases.map(\.names.key)).sorted())
    #expect(await server.stop().isComplete)
  }

  @Test("openapi.json documents each route's table: the same names, ranges and choices")
  func openAPIDocumentsTheTables() throws {
    let routes: [(String, [OptionEntry], own: [String])] = [
      (
        "/v1/prepare", [QuoteOption.prices.entry] + PrepareOption.request.map(\.entry),
        ["callback"]
      ),
      ("/v1/quote", QuoteOption.request.map(\.entry), []),
      ("/v1/inspect", InspectOption.request.map(\.entry), []),
      ("/v1/convert", InspectOption.request.map(\.entry), []),
    ]
    for (route, entries, own) in routes {
      let parameters = try documented(route)
      #expect(Set(parameters.keys) == Set(entries.map(\.names.key) + own), "\(route)")
      for entry in entries {
        let schema = parameters[entry.names.key] ?? [:]
        let bounds = (schema["minimum"] as? NSNumber, schema["maximum"] as? NSNumber)
        switch entry.type {
        case .integer(let range):
          #expect(bounds.0?.intValue == range.lowerBound, "\(route) \(entry.names.key)")
          #expect(bounds.1?.intValue == range.upperBound, "\(route) \(entry.names.key)")
        case .number(let range):
          #expect(bounds.0?.doubleValue == range.lowerBound, "\(route) \(entry.names.key)")
          #expect(bounds.1?.doubleValue == range.upperBound, "\(route) \(entry.names.key)")
        case .choice(let words):
          #expect(schema["enum"] as? [String] == words, "\(route) \(entry.names.key)")
        case .flag:
          #expect(
            schema["enum"] as? [String] == ["true", "false", ""], "\(route) \(entry.names.key)")
        case .text, .file, .directory:
          #expect(schema["type"] as? String == "string", "\(route) \(entry.names.key)")
        }
      }
    }
    // The defaults the document states are the library's.
    let prepare = try documented("/v1/prepare")
    #expect(
      (prepare["previewSize"]?["default"] as? NSNumber)?.intValue
        == OrderPreparer.defaultPreviewSize)
    #expect(
      (prepare["waitTimeout"]?["default"] as? NSNumber)?.doubleValue
        == PrintTarget.defaultWaitSeconds)
  }
}
