// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint batch` over a manifest with wrong-typed fields: each such line fails
// alone (batch.invalidField), the others are made (the reader's cases: ImprintBatchTests).

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint batch: manifest fields", .liveHandlesChecked)
struct BatchManifestFieldTests {
  @Test("imprint batch: each wrong-typed line fails alone, the rest are made, exit 1")
  func batch() async throws {
    let folder = TemporaryFolder()
    let lines = [
      #"{"id":"first","kind":"qr","payload":"one"}"#,
      #"{"id":"text","kind":"qr","payload":"two","copies":"2"}"#,
      #"{"id":"number","kind":"qr","payload":"three","format":1}"#,
      #"{"id":"list","kind":"qr","payload":["four"]}"#,
      #"{"id":"flag","kind":"qr","payload":"five","copies":true}"#,
      #"{"id":"last","kind":"qr","payload":"six"}"#,
    ]
    try Data(lines.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1, "\(run.stderr)")
    let results = try results(folder.file("out/results.jsonl"))
    #expect(
      results.map { $0["status"] as? String } == [
        "ok", "failed", "failed", "failed", "failed", "ok",
      ])
    #expect(
      results.map { ($0["error"] as? [String: Any])?["code"] as? String } == [
        nil, "batch.invalidField", "batch.invalidField", "batch.invalidField",
        "batch.invalidField", nil,
      ])
    let made = try FileManager.default.contentsOfDirectory(atPath: folder.file("out/qr")).sorted()
    #expect(made == ["first.png", "last.png"])
  }
}
