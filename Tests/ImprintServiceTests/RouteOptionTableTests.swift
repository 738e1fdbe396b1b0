// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the document routes read their options from the library's tables
// (`PrepareOption`, `QuoteOption`, `InspectOption`): the parameters a route names in the hint
// of one it does not know are exactly the table's, so that no route reads a name of its own.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

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
}
