// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint batch` over a manifest with wrong-typed fields: each such line fails
// alone (batch.invalidField), the others are made (the reader's cases: ImprintBatchTests).

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint batch: manifest fields", .liveHandlesChecked)
struct BatchManifestFieldTests {
  @Test(
    "imprint batch: each wrong-typed or foreign-key line fails alone, the rest are made, exit 1")
  func batch() async throws {
    let folder = TemporaryFolder()
    let lines = [
      #"{"id":"first","kind":"qr","payload":"one"}"#,
      #"{"id":"text","kind":"card","profile":"p.json","copies":"2"}"#,
      #"{"id":"number","kind":"qr","payload":"three","format":1}"#,
      #"{"id":"list","kind":"qr","payload":["four"]}"#,
      #"{"id":"flag","kind":"card","profile":"p.json","copies":true}"#,
      // A key of another kind would be ignored: refused instead.
      #"{"id":"foreign","kind":"qr","payload":"seven","copies":2}"#,
      #"{"id":"last","kind":"qr","payload":"six"}"#,
    ]
    try Data(lines.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1, "\(run.stderr)")
    let results = try results(folder.file("out/results.jsonl"))
    #expect(
      results.map { $0["status"] as? String } == [
        "ok", "failed", "failed", "failed", "failed", "failed", "ok",
      ])
    #expect(
      results.map { ($0["error"] as? [String: Any])?["code"] as? String } == [
        nil, "batch.invalidField", "batch.invalidField", "batch.invalidField",
        "batch.invalidField", "batch.badLine", nil,
      ])
    let made = try FileManager.default.contentsOfDirectory(atPath: folder.file("out/qr")).sorted()
    #expect(made == ["first.png", "last.png"])
  }
}
