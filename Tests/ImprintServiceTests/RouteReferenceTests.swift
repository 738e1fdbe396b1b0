// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the route reference of docs/service.md against the OpenAPI document. The
// table under "## Route reference" lists each operation once, as a method and a path; the test
// reads both and fails when a route is added, removed or renamed in one and not the other.

import Foundation
import ImprintTestSupport
import Testing

@Suite("docs/service.md's route reference")
struct RouteReferenceTests {
  /// The operations of Sources/ImprintService/Resources/openapi.json, as "METHOD /path".
  func documentedOperations() throws -> [String] {
    let path = repositoryRoot + "/Sources/ImprintService/Resources/openapi.json"
    let object = try JSONSerialization.jsonObject(
      with: Data(contentsOf: URL(fileURLWithPath: path)))
    let paths = try #require((object as? [String: Any])?["paths"] as? [String: Any])
    let methods: Set = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    var operations: [String] = []
    for (route, item) in paths {
      let item = try #require(item as? [String: Any], "\(route)")
      for method in item.keys where methods.contains(method) {
        operations.append("\(method.uppercased()) \(route)")
      }
    }
    return operations.sorted()
  }

  /// The rows of the route reference's table, as "METHOD /path", in the order written.
  func referenceRows() throws -> [String] {
    let text = try String(contentsOfFile: repositoryRoot + "/docs/service.md", encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let start = try #require(lines.firstIndex(of: "## Route reference"), "no route reference")
    let table = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
    try #require(table.count > 2, "no table under the route reference")
    let header = try #require(table.first).split(separator: "|").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    #expect(Array(header.prefix(2)) == ["method", "path"], "\(header)")
    var rows: [String] = []
    for line in table.dropFirst(2) {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count >= 2,
        let method = cells[0].wholeMatch(of: /`([A-Z]+)`/)?.output.1,
        let route = cells[1].wholeMatch(of: /`(\/[^`]*)`/)?.output.1
      else {
        Issue.record("a row of the route reference is not `METHOD` | `/path`: \(line)")
        continue
      }
      rows.append("\(method) \(route)")
    }
    return rows
  }

  @Test("the route table lists exactly the operations of openapi.json, each once")
  func tableMatchesOpenAPI() throws {
    let operations = try documentedOperations()
    let rows = try referenceRows()
    #expect(operations.count >= 20, "\(operations)")
    #expect(Set(rows).count == rows.count, "a route listed twice: \(rows)")
    let missing = Set(operations).subtracting(rows).sorted()
    let extra = Set(rows).subtracting(operations).sorted()
    #expect(
      missing.isEmpty, "in openapi.json, not in docs/service.md's route reference: \(missing)")
    #expect(extra.isEmpty, "in docs/service.md's route reference, not in openapi.json: \(extra)")
  }

  @Test("each route of the table has its section in the guide")
  func everyRouteDetailed() throws {
    let text = try String(contentsOfFile: repositoryRoot + "/docs/service.md", encoding: .utf8)
    for row in try referenceRows() {
      // HEAD shares its GET's section; /v1/jobs/{id} is written /v1/jobs/ID in the prose.
      let route = row.replacing("HEAD ", with: "GET ").replacing("{id}", with: "ID")
        .replacing("{path}", with: "PATH")
      #expect(text.contains("\n### `\(route)`\n"), "no section '### `\(route)`' for \(row)")
    }
  }
}
