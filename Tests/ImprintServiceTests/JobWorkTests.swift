// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: a job's work is data in its record (`job.json`'s `work`): what the
// request sent is kept there, and the work made again from the job's folder and that record
// alone (as a replica taking the job over makes it) writes the same files as the first run.

import Foundation
import ImprintCore
import ImprintPrinting
import ImprintTestSupport
import Testing

@testable import ImprintService

private let samples = repositoryRoot + "/assets/samples/"

/// The regular files under `folder` with their bytes' SHA-256, by relative path; `.state/` and
/// `results.jsonl` (its lines carry the seconds each item took) left out.
private func outputs(_ folder: String) throws -> [String: String] {
  var found: [String: String] = [:]
  let walker = try #require(FileManager.default.enumerator(atPath: folder))
  while let relative = walker.nextObject() as? String {
    if relative.hasPrefix(".state") || relative == "results.jsonl" { continue }
    var isFolder: ObjCBool = false
    FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isFolder)
    if isFolder.boolValue { continue }
    let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + relative))
    found[relative] = SHA256.hex(Array(bytes))
  }
  return found
}

/// The lines of a batch's `results.jsonl` without their `seconds`, by item (items end in any
/// order).
private func results(_ path: String) throws -> [String: String] {
  var found: [String: String] = [:]
  for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
    var object = try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    object["seconds"] = nil
    found[try #require(object["id"] as? String)] = String(
      decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys),
      as: UTF8.self)
  }
  return found
}

/// `job.json` of job `id` under `jobs`, decoded.
private func record(_ id: String, in jobs: String) throws -> JobFile {
  try JSONDecoder().decode(
    JobFile.self, from: Data(contentsOf: URL(fileURLWithPath: jobs + "/\(id)/job.json")))
}

/// A copy of job folder `folder` without its outputs, at `copy`.
private func inputsOnly(_ folder: String, to copy: String) throws {
  try FileManager.default.copyItem(atPath: folder, toPath: copy)
  try FileManager.default.removeItem(atPath: copy + "/output")
}

@Suite("service jobs: the work made again from a job's folder", .liveHandlesChecked, .onTestThreads)
struct JobWorkTests {
  @Test("a batch's record keeps its manifest, inputs and lines; made again, the same files")
  func batchRebuilt() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let server = try InProcessService(settings: { $0.jobsDir = jobs })
    let manifest = folder.file("orders.csv")
    try Data(
      """
      id,kind,payload,file
      Q-1,qr,https://example.com/o/1,
      Q-2,qr,ethereum:0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed,
      T-1,thumb,,notes.pdf
      T-2,thumb,,missing.pdf

      """.utf8
    ).write(to: URL(fileURLWithPath: manifest))
    let posted = try await server.request(
      "POST", "/v1/batch",
      form: [
        .file("manifest", path: manifest),
        .file("notes.pdf", path: samples + "documents/course-notes.pdf"),
      ])
    let id = try acceptedID(posted)
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")

    let file = try record(id, in: jobs)
    #expect(
      file.work
        == .batch(
          BatchWork(
            manifest: "manifest.csv", manifestName: "orders.csv", sentInputs: ["notes.pdf"],
            lines: 4, uniqueIDs: true)))
    let first = try outputs(jobs + "/\(id)/output")
    #expect(first.keys.contains("qr/Q-2.png") && first.keys.contains("thumbs/T-1.png"), "\(first)")

    let copy = folder.file("copy")
    try inputsOnly(jobs + "/\(id)", to: copy)
    let work = try #require(file.work)
    let outcome = await server.service.work(for: work, id: id, folder: copy)(copy)
    #expect(outcome.error == nil)
    #expect(outcome.complete)
    #expect(outcome.summary == JobSummary(total: 4, ok: 3, skipped: 0, failed: 1))
    #expect(try outputs(copy + "/output") == first)
    let again = try results(copy + "/output/results.jsonl")
    let before = try results(jobs + "/\(id)/output/results.jsonl")
    #expect(again == before, "\(again) against \(before)")
    _ = await server.stop()
  }

  @Test("a prepare job's record keeps the request's options; made again, the same files")
  func prepareRebuilt() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let config = folder.file("serve.json")
    try Data(
      #"{"priceLists": {"booster": "\#(samples)prices-booster.json"}, "jobsDir": "jobs"}"#.utf8
    ).write(to: URL(fileURLWithPath: config))
    let server = try InProcessService(try ServiceSettings.load(config))
    let documents = [
      "documents/course-notes.pdf", "documents/handout.pdf", "documents/poster-photo.jpg",
    ]
    let posted = try await server.request(
      "POST", "/v1/prepare?prices=booster&previews=true&previewSize=64&splitColor=true",
      form: [.file("order", path: samples + "order-booster.json")]
        + documents.map { .file($0, path: samples + $0) })
    let id = try acceptedID(posted)
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")

    let file = try record(id, in: jobs)
    var asked = PrepareRequest()
    asked.previews = true
    asked.previewSize = 64
    asked.splitColor = true
    asked.wait = false
    #expect(file.work == .prepare(PrepareWork(request: asked, printer: nil)))
    let first = try outputs(jobs + "/\(id)/output")
    #expect(first.keys.contains("report.json") && first.count > 4, "\(first.keys.sorted())")

    let copy = folder.file("copy")
    try inputsOnly(jobs + "/\(id)", to: copy)
    let work = try #require(file.work)
    let outcome = await server.service.work(for: work, id: id, folder: copy)(copy)
    #expect(outcome.error == nil)
    #expect(try outputs(copy + "/output") == first)

    // A printer the configuration does not have (a replica configured otherwise) fails the
    // work with the request's own error, nothing written.
    let other = folder.file("other")
    try inputsOnly(jobs + "/\(id)", to: other)
    var printing = asked
    printing.printer = true
    let refused = await server.service.work(
      for: .prepare(PrepareWork(request: printing, printer: "front")), id: id, folder: other)(
        other)
    #expect(refused.error?.code == "http.unknownPrinter", "\(String(describing: refused.error))")
    #expect(!FileManager.default.fileExists(atPath: other + "/output"))
    _ = await server.stop()
  }
}
