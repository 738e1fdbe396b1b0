// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint batch` with its outputs flushed together: resume records wait for a
// checkpoint that makes the outputs they name durable, and are all written by the run's end.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintBatch

@Suite("imprint batch: resume records follow durable outputs", .liveHandlesChecked)
struct BatchDurabilityTests {
  func job(_ id: String) -> ManifestItem {
    ManifestItem(
      line: 1, id: id, work: .qr(QRItem(payload: "p-\(id)")), source: "{\"id\":\"\(id)\"}")
  }

  @Test("with outputs flushed together a job leaves its resume record to the runner")
  func deferredRecord() async throws {
    let folder = TemporaryFolder()
    var options = BatchOptions(outputFolder: folder.path, placeholder: ([], "none"))
    options.jobs = 1
    for sub in ["/.state", "/qr"] { try FileIO.makeFolder(folder.path + sub) }
    let templates = TemplateCache(folder: nil)
    let deferred = try await AtomicFile.withDeferredFlush(syncing: folder.path) {
      await BatchRunner.execute(job("a"), options: options, templates: templates, impose: false)
    }
    #expect(deferred.result.status == .ok)
    #expect(FileManager.default.fileExists(atPath: folder.file("qr/a.png")))
    // The record waits for a checkpoint's sync: none written by the job.
    #expect(!FileManager.default.fileExists(atPath: folder.file(".state/a.json")))
    #expect(deferred.state?.path == folder.file(".state/a.json"))
    let flushed = await BatchRunner.execute(
      job("b"), options: options, templates: templates, impose: false)
    #expect(flushed.state == nil)
    #expect(FileManager.default.fileExists(atPath: folder.file(".state/b.json")))
  }

  @Test("records go out at a checkpoint: the first at once, later ones after a second or 1024")
  func checkpoints() throws {
    let folder = TemporaryFolder()
    // An hour between timed checkpoints: on a loaded machine a second can pass between two
    // adds, and this test is about the first record and the count.
    let records = StateRecords(folder: folder.path, interval: 3600)
    let record = BatchRunner.ItemState(fingerprint: "f", outputs: ["qr/x.png"])
    try records.add((folder.file("first.json"), record))
    #expect(folder.contents() == ["first.json"])
    for index in 0..<10 { try records.add((folder.file("r\(index).json"), record)) }
    #expect(folder.contents() == ["first.json"])
    try records.checkpoint()
    #expect(folder.contents().count == 11)
    #expect(BatchRunner.readState(folder.file("r9.json"))?.outputs == ["qr/x.png"])
    for index in 0..<1024 { try records.add((folder.file("m\(index).json"), record)) }
    #expect(folder.contents().count == 11 + 1024)
  }

  @Test("a record waits no longer than the interval: the next add after it makes a checkpoint")
  func timedCheckpoint() throws {
    let folder = TemporaryFolder()
    let records = StateRecords(folder: folder.path, interval: 0.2)
    let record = BatchRunner.ItemState(fingerprint: "f", outputs: ["qr/x.png"])
    try records.add((folder.file("first.json"), record))
    usleep(300_000)
    try records.add((folder.file("late.json"), record))
    #expect(folder.contents().sorted() == ["first.json", "late.json"])
  }

  @Test("a deferred-flush run writes every record by its end: the rerun skips every job")
  func rerunSkips() async throws {
    let folder = TemporaryFolder()
    let lines = (0..<40).map { #"{"id":"q\#($0)","kind":"qr","payload":"x\#($0)"}"# }
    try write(lines.joined(separator: "\n"), to: folder.file("m.jsonl"))
    let first = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out")])
    #expect(first.code == 0, "\(first.stderr)")
    let states = try FileManager.default.contentsOfDirectory(atPath: folder.file("out/.state"))
    #expect(states.count == 40)
    let second = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out")])
    #expect(second.code == 0 && second.stderr.contains("40 skipped"), "\(second.stderr)")
  }

  @Test("a quote job is made again when a file its order names changes, skipped while none does")
  func quoteFilesFingerprinted() async throws {
    let folder = TemporaryFolder()
    let documents = fixturesFolder + "/Documents/"
    try FileManager.default.copyItem(
      atPath: documents + "mixed.pdf", toPath: folder.file("doc.pdf"))
    try write(
      #"{"schemaVersion":1,"version":"v","currency":"USD","rates":{"default":{"mono":{"simplex":10}}},"paper":{"A4":{"plain":0}}}"#,
      to: folder.file("prices.json"))
    try write(#"{"schemaVersion":1,"files":[{"path":"doc.pdf"}]}"#, to: folder.file("order.json"))
    try write(
      #"{"id":"q","kind":"quote","file":"order.json","prices":"prices.json"}"#,
      to: folder.file("m.jsonl"))
    func run() async throws -> (status: String?, total: Any?) {
      let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
      #expect(run.code == 0, "\(run.stderr)")
      let quote = try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: folder.file("out/quotes/q.json"))))
      return (
        try results(folder.file("out/results.jsonl")).first?["status"] as? String,
        (quote as? [String: Any])?["total"]
      )
    }
    let first = try await run()
    #expect(first.status == "ok")
    #expect(try await run().status == "skipped")
    // Same order and price list, the upload replaced by a one-page document.
    try FileManager.default.removeItem(atPath: folder.file("doc.pdf"))
    try FileManager.default.copyItem(
      atPath: documents + "hyperlink.pdf", toPath: folder.file("doc.pdf"))
    let third = try await run()
    #expect(third.status == "ok")
    #expect("\(first.total ?? "")" != "\(third.total ?? "")", "\(String(describing: third.total))")
  }
}
