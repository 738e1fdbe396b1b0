// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the OpenAPI document's schemas of what a backend sends and reads (an
// order, a quote, a manifest line, a profile) against the real documents: the samples and
// `imprint quote --json`'s answer validate (jsonschema, Draft 2020-12), and documents the library
// refuses or never writes are refused by the schemas too (each order mutation also refused by
// `imprint quote`), so a schema too loose or too strict fails here.

import Foundation
import ImprintTestSupport
import Testing

private let resource = repositoryRoot + "/Sources/ImprintService/Resources/openapi.json"
private let samples = repositoryRoot + "/assets/samples/"

/// Validates each `[schema, document]` of `cases` against the document's schema of that name;
/// prints one list of problems (empty: valid) a case, as JSON.
private let validator = pythonFixture("schema_validator.py")

/// The problems jsonschema finds in each document against its schema.
private func problems(_ cases: [(String, Any)], in folder: TemporaryFolder) throws -> [[String]] {
  let path = folder.file(UUID().uuidString + ".json")
  try JSONSerialization.data(withJSONObject: cases.map { [$0.0, $0.1] }).write(
    to: URL(fileURLWithPath: path))
  let run = try runTool("python3", ["-c", validator, resource, path])
  #expect(run.status == 0, "\(run.stderr)")
  return try #require(
    try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [[String]])
}

private func json(_ path: String) throws -> Any {
  try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
}

/// `object` with `value` at `keys` (nil removes it).
private func changed(_ object: Any, _ keys: [String], _ value: Any?) -> Any {
  guard let key = keys.first else { return value as Any }
  if let index = Int(key), var array = object as? [Any] {
    array[index] = changed(array[index], Array(keys.dropFirst()), value)
    return array
  }
  var dictionary = object as? [String: Any] ?? [:]
  if keys.count == 1 {
    dictionary[key] = value
  } else {
    dictionary[key] = changed(dictionary[key] as Any, Array(keys.dropFirst()), value)
  }
  return dictionary
}

/// `imprint quote --json` of order `path` with the sample price list, its files read from the
/// samples' folder.
private func quote(_ path: String, filesRoot: String? = nil) throws -> ToolResult {
  try runTool(
    imprintExecutable,
    ["quote", "--json", "--prices", samples + "prices-booster.json"]
      + (filesRoot.map { ["--files-root", $0] } ?? []) + [path])
}

@Suite("OpenAPI schemas against real documents", .liveHandlesChecked, .onTestThreads)
struct OpenAPISchemaTests {
  @Test("the samples, imprint quote's answer and the document's examples validate")
  func realDocumentsValidate() throws {
    let folder = TemporaryFolder()
    let answer = try quote(samples + "order-booster.json")
    #expect(answer.status == 0, "\(answer.stderr)")
    let quoted = try JSONSerialization.jsonObject(with: Data(answer.stdoutBytes))
    var cases: [(String, Any)] = [
      ("Order", try json(samples + "order-booster.json")), ("Quote", quoted),
    ]
    let manifest = try String(contentsOfFile: samples + "orders.jsonl", encoding: .utf8)
    for line in manifest.split(separator: "\n") where !line.contains("\"poster\"") {
      cases.append(("ManifestLine", try JSONSerialization.jsonObject(with: Data(line.utf8))))
    }
    for name in ["sora-park", "harbor-lamp", "kenji.hive", "layla-h"] {
      cases.append(("Profile", try json(samples + "profiles/\(name).json")))
    }
    let document = try #require(try json(resource) as? [String: Any])
    let schemas = try #require(
      (document["components"] as? [String: Any])?["schemas"] as? [String: Any])
    for (name, schema) in schemas {
      for example in (schema as? [String: Any])?["examples"] as? [Any] ?? [] {
        cases.append((name, example))
      }
    }
    #expect(cases.count >= 20)
    for (sent, found) in zip(cases, try problems(cases, in: folder)) {
      #expect(found.isEmpty, "\(sent.0): \(found)")
    }
  }

  @Test("documents the library refuses or never writes are refused by the schemas")
  func wrongDocumentsRefused() throws {
    let folder = TemporaryFolder()
    let order = try json(samples + "order-booster.json")
    let answer = try quote(samples + "order-booster.json")
    let quoted = try JSONSerialization.jsonObject(with: Data(answer.stdoutBytes))
    // Orders `imprint quote` refuses (checked below), each refused by the schema.
    let orders: [Any] = [
      changed(order, ["files", "0", "copies"], 0),
      changed(order, ["files", "0", "nUp"], 3),
      changed(order, ["files", "0", "paper"], "A0"),
      changed(order, ["files", "0", "color"], "grey"),
      changed(order, ["files", "0", "path"], nil),
      changed(order, ["urgent"], true),
      changed(order, ["schemaVersion"], 2),
      changed(order, ["cards", "sides"], "back"),
      changed(changed(order, ["files"], [Any]()), ["cards"], nil),
    ]
    var cases: [(String, Any)] = orders.map { ("Order", $0) }
    // What the quote encoder never writes.
    cases += [
      changed(quoted, ["total"], nil), changed(quoted, ["discounts"], [String: Any]()),
      changed(quoted, ["total", "minor"], 1.5), changed(quoted, ["currency"], "won"),
      changed(quoted, ["files", "0", "colorMode"], "grey"),
      changed(quoted, ["files", "0", "sheets"], nil),
    ].map { ("Quote", $0) }
    // Manifest lines the batch refuses.
    cases += [
      ["id": "P-1", "kind": "poster"], ["id": "Q-1", "kind": "qr"],
      ["id": "C-1", "kind": "card", "profile": "p.json", "wait": true],
      ["id": "C-2", "kind": "card", "profile": "p.json", "colour": "red"],
      ["id": "../C-3", "kind": "qr", "payload": "x"],
      ["id": "T-1", "kind": "quote", "file": "order.json"],
      ["id": "C-4", "kind": "card", "profile": "p.json", "copies": 0],
    ].map { ("ManifestLine", $0 as Any) }
    cases.append(("Profile", ["json_metadata": "{}"]))
    for (sent, found) in zip(cases, try problems(cases, in: folder)) {
      #expect(!found.isEmpty, "\(sent.0) accepted: \(sent.1)")
    }
    // The orders are refused by `imprint quote` too: the schema says what the parser reads.
    for (index, mutated) in orders.enumerated() {
      let path = folder.file("order-\(index).json")
      try JSONSerialization.data(withJSONObject: mutated).write(to: URL(fileURLWithPath: path))
      let run = try quote(path, filesRoot: samples)
      #expect(run.status == 1, "order \(index): \(run.stdout)")
    }
    // The same way, the sample order itself is quoted: the refusals are the mutations'.
    let path = folder.file("order.json")
    try JSONSerialization.data(withJSONObject: order).write(to: URL(fileURLWithPath: path))
    let sample = try quote(path, filesRoot: samples)
    #expect(sample.status == 0, "\(sample.stderr)")
  }
}
