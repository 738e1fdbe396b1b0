// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: how a job's files are kept and served, against `imprint serve` (its
// temporary folders, killed servers): links, hard
// links and FIFOs planted in a job's output folder are never followed, served or waited on; the
// temporary jobs folder of a server killed is removed by the next start, a live server's kept; a
// file truncated while it is sent ends its answer at once.

import Foundation
import ImprintTestSupport
import Testing

/// `GET target`, given at most `seconds` without a byte: a hang fails the test (status 0)
/// instead of holding it.
private func fetch(_ target: String, on server: ServiceProcess, within seconds: Double)
  async throws -> HTTPExchange
{
  try await server.request("GET", target, seconds: seconds)
}

@Suite("imprint serve: job files kept and served", .liveHandlesChecked, .onTestThreads, .serialized)
struct JobFileTests {
  @Test("links, hard links and FIFOs planted in a job's output are never served nor waited on")
  func plantedLinks() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let server = try ServiceProcess(["--jobs-dir", jobs])
    let manifest = try writeManifest(
      [
        #"{"id": "W-1", "kind": "qr", "payload": "https://example.com/o/17"}"#,
        #"{"id": "T-1", "kind": "thumb", "file": "missing.pdf"}"#,
      ], in: folder)
    let first = try acceptedID(try await postBatch(manifest, on: server))
    #expect(try await waitForJob(first, on: server).json?["state"] as? String == "done")
    let other = try acceptedID(try await postBatch(manifest, on: server))
    #expect(try await waitForJob(other, on: server).json?["state"] as? String == "done")

    // What someone with write access to the jobs folder plants in the first job's outputs.
    let output = jobs + "/\(first)/output"
    let states = try FileManager.default.contentsOfDirectory(atPath: output + "/.state")
    let state = try #require(states.first { $0.hasSuffix(".json") }, "\(states)")
    let links = [
      "state.json": ".state/" + state,
      "record.json": "../job.json",
      "manifest.jsonl": "../manifest.jsonl",
      "keys.jsonl": "../../.idempotency-keys.jsonl",
      "lock": "../../.lock",
      "passwd": "/etc/passwd",
      "other.jsonl": "../../\(other)/output/results.jsonl",
      "same.png": "qr/W-1.png",
      "elsewhere": "../../\(other)/output",
      "hidden": ".state",
      "inside": "qr",
    ]
    for (name, target) in links {
      try FileManager.default.createSymbolicLink(
        atPath: output + "/" + name, withDestinationPath: target)
    }
    // A link in the place of a folder on the way, and in the place of the results file.
    try FileManager.default.createDirectory(
      atPath: output + "/deep/er", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: output + "/deep/er/up", withDestinationPath: "../../qr")
    #expect(mkfifo(output + "/pipe", 0o600) == 0)
    #expect(link(jobs + "/\(first)/job.json", output + "/hard.json") == 0)
    let results = output + "/results.jsonl"
    let genuine = try Data(contentsOf: URL(fileURLWithPath: results))
    try FileManager.default.moveItem(atPath: results, toPath: output + "/real-results.jsonl")
    try FileManager.default.createSymbolicLink(
      atPath: results, withDestinationPath: "../../\(other)/output/results.jsonl")

    let refused =
      links.keys.sorted()
      + [
        "elsewhere/results.jsonl", "hidden/" + state, "inside/W-1.png", "deep/er/up/W-1.png",
        "pipe", "hard.json", "results.jsonl", "deep", "deep/er",
      ]
    for path in refused {
      let answer = try await fetch("/v1/jobs/\(first)/files/\(path)", on: server, within: 20)
      #expect(answer.status != 0, "\(path): no answer within 20 s: a hang")
      #expect(answer.status == 404, "\(path): \(String(decoding: answer.body, as: UTF8.self))")
      #expect(answer.errorCode == "http.unknownJobFile", "\(path)")
      let text = String(decoding: answer.body, as: UTF8.self)
      #expect(!text.contains("root:") && !text.contains("\"state\""), "\(path): \(text)")
    }
    // The report lists no link, and gives no results read through one.
    let report = try await server.request("GET", "/v1/jobs/\(first)")
    let files = try #require(report.json?["files"] as? [String])
    #expect(files == ["qr/W-1.png", "real-results.jsonl"], "\(files)")
    #expect(report.json?["results"] == nil, "\(report.text)")

    // The genuine files are still served, byte for byte, and the server still answers.
    let image = try await fetch("/v1/jobs/\(first)/files/qr/W-1.png", on: server, within: 20)
    #expect(image.status == 200)
    let onDisk = try Data(contentsOf: URL(fileURLWithPath: output + "/qr/W-1.png"))
    #expect(image.body == [UInt8](onDisk))
    let moved = try await fetch(
      "/v1/jobs/\(first)/files/real-results.jsonl", on: server, within: 20)
    #expect(moved.status == 200 && moved.body == [UInt8](genuine))
    let otherResults = try await fetch(
      "/v1/jobs/\(other)/files/results.jsonl", on: server, within: 20)
    #expect(otherResults.status == 200 && !otherResults.body.isEmpty)
    #expect(try await server.request("GET", "/healthz").status == 200)
    let stopped = server.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
  }

  @Test("a killed server's temporary jobs folder is removed by the next start, a live one's kept")
  func abandonedFolders() async throws {
    let folder = TemporaryFolder()
    let temporary = folder.file("tmp")
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
    var environment = ProcessInfo.processInfo.environment
    environment["TMPDIR"] = temporary
    func jobsFolders() -> Set<String> {
      Set(
        ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter {
          $0.hasPrefix("imprint-serve-jobs-")
        })
    }
    let manifest = try writeManifest(
      [#"{"id": "T-1", "kind": "thumb", "file": "documents/course-notes.pdf"}"#], in: folder)
    let live = try ServiceProcess(environment: environment)
    let liveFolder = try #require(jobsFolders().first)
    let liveJob = try acceptedID(try await postBatch(manifest, on: live))
    #expect(try await waitForJob(liveJob, on: live).json?["state"] as? String == "done")

    let killed = try ServiceProcess(environment: environment)
    let killedFolder = try #require(jobsFolders().subtracting([liveFolder]).first)
    let upload = temporary + "/" + killedFolder
    let id = try acceptedID(
      try await postBatch(manifest, inputs: ["documents/course-notes.pdf"], on: killed))
    #expect(try await waitForJob(id, on: killed).json?["state"] as? String == "done")
    #expect(
      FileManager.default.fileExists(atPath: upload + "/\(id)/inputs/documents/course-notes.pdf"))
    let killedPID = killed.pid
    kill(killedPID, SIGKILL)
    _ = killed.waitForExit()
    #expect(
      FileManager.default.fileExists(atPath: upload + "/\(id)/inputs/documents/course-notes.pdf"))

    // Beside them: a folder of a server that wrote no owner (an older one), left alone; a
    // folder whose owner is gone holding links out, removed without following them; a link
    // with such a name to a folder elsewhere, never followed.
    let outside = folder.file("outside")
    try FileManager.default.createDirectory(
      atPath: outside + "/owned", withIntermediateDirectories: true)
    try Data("keep".utf8).write(to: URL(fileURLWithPath: outside + "/keep.txt"))
    try Data("4242\n".utf8).write(to: URL(fileURLWithPath: outside + "/owned/.owner"))
    let older = temporary + "/imprint-serve-jobs-older1"
    try FileManager.default.createDirectory(atPath: older, withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: older + "/job.json"))
    let stale = temporary + "/imprint-serve-jobs-stale1"
    try FileManager.default.createDirectory(
      atPath: stale + "/job/output", withIntermediateDirectories: true)
    try Data("4242\n".utf8).write(to: URL(fileURLWithPath: stale + "/.owner"))
    try FileManager.default.createSymbolicLink(
      atPath: stale + "/job/output/out", withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(
      atPath: stale + "/job/keep.txt", withDestinationPath: outside + "/keep.txt")
    try FileManager.default.createSymbolicLink(
      atPath: temporary + "/imprint-serve-jobs-link01", withDestinationPath: outside + "/owned")

    let next = try ServiceProcess(environment: environment)
    #expect(!FileManager.default.fileExists(atPath: upload), "\(upload) is still there")
    #expect(!FileManager.default.fileExists(atPath: stale))
    #expect(FileManager.default.fileExists(atPath: older + "/job.json"))
    #expect(FileManager.default.fileExists(atPath: outside + "/owned/.owner"))
    #expect(try String(contentsOfFile: outside + "/keep.txt", encoding: .utf8) == "keep")
    let planted = Set(["imprint-serve-jobs-older1", "imprint-serve-jobs-link01"])
    // The live server's folder and jobs are untouched: its job is served as before.
    #expect(jobsFolders().subtracting(planted).count == 2, "\(jobsFolders())")
    #expect(FileManager.default.fileExists(atPath: temporary + "/" + liveFolder + "/\(liveJob)"))
    let results = try await live.request("GET", "/v1/jobs/\(liveJob)/files/results.jsonl")
    #expect(results.status == 200 && results.text.contains("T-1"), "\(results.text)")

    let nextStopped = next.stop()
    #expect(nextStopped.status == 0)
    let removed = nextStopped.stderr.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }.filter { $0["event"] as? String == "jobs.abandoned" }
    let reasons = Dictionary(
      removed.map { ($0["path"] as? String ?? "", $0["reason"] as? String ?? "") },
      uniquingKeysWith: { first, _ in first })
    #expect(Set(reasons.keys) == [upload, stale], "\(nextStopped.stderr)")
    #expect(
      reasons[upload]
        == "the private jobs folder of a server (process \(killedPID)) that ended without stopping: "
        + "removed with its jobs' files")
    #expect(reasons[stale]?.contains("(process 4242)") == true)
    #expect(!nextStopped.stderr.contains(liveFolder), "\(nextStopped.stderr)")
    #expect(live.stop().status == 0)
    // Each stopped server removed its own.
    #expect(jobsFolders() == planted, "\(jobsFolders())")
  }

  @Test("a file truncated while a slow client reads it: the connection closes at once, cut short")
  func truncatedWhileSent() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    // An idle connection would be closed after 60 s: far past the client's 20 s wait.
    let server = try ServiceProcess(
      ["--jobs-dir", jobs, "--connection-timeout", "60", "--access-log"])
    let manifest = try writeManifest(
      [#"{"id": "W-1", "kind": "qr", "payload": "https://example.com/o/17"}"#], in: folder)
    let id = try acceptedID(try await postBatch(manifest, on: server))
    #expect(try await waitForJob(id, on: server).json?["state"] as? String == "done")
    let big = jobs + "/\(id)/output/big.bin"
    let size = 20_000_000
    #expect(FileManager.default.createFile(atPath: big, contents: Data(count: size)))

    // A client with a small receive buffer reads 2 MB slowly; meanwhile another client fetches
    // the job's results whole; then the file is cut to 1 MB and the first client reads on.
    let script = pythonFixture("slow_reader.py")
    let run = try runTool(
      "python3",
      [
        "-c", script, "\(server.port)", "/v1/jobs/\(id)/files/big.bin", big,
        "/v1/jobs/\(id)/files/results.jsonl",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let outcome = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
      "\(run.stdout) \(run.stderr)")
    #expect(outcome["status"] as? Int == 200)
    #expect(outcome["length"] as? Int == size)
    // Ended by the server, not by the client's patience: fewer bytes than announced.
    #expect(["closed", "reset"].contains(outcome["ended"] as? String), "\(outcome)")
    let received = try #require(outcome["received"] as? Int)
    #expect(received >= 2_000_000 && received < size, "\(outcome)")
    #expect(outcome["otherSame"] as? Bool == true)

    // The server goes on serving, whole files byte for byte.
    let image = try await server.request("GET", "/v1/jobs/\(id)/files/qr/W-1.png")
    #expect(image.status == 200)
    #expect(
      image.body
        == [UInt8](try Data(contentsOf: URL(fileURLWithPath: jobs + "/\(id)/output/qr/W-1.png"))))
    let stopped = server.stop()
    #expect(stopped.status == 0)
    #expect(
      stopped.stderr.contains(
        "serve: job '\(id)': its file 'big.bin' ended at byte "), "\(stopped.stderr)")
    #expect(
      stopped.stderr.contains(
        " of the 20000000 announced (it was made shorter while it was sent); the connection was closed"
      ))
    let cut = stopped.stderr.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }.filter { ($0["path"] as? String)?.hasSuffix("/big.bin") == true }
    #expect(cut.count == 1, "\(stopped.stderr)")
    #expect(cut.first?["errorCode"] as? String == "http.fileShortened")
    #expect(cut.first?["status"] as? Int == 200)
    let sent = try #require(cut.first?["bytesOut"] as? Int)
    #expect(sent >= 1_000_000 && sent < size, "\(sent)")
  }
}
