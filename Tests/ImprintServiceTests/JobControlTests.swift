// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: long jobs under control, against a real `imprint serve`: a running job
// canceled by DELETE, a job past its time, its lines or the disk left to it, a request past its
// deadline that must not start its job, and SIGTERM while a job runs.

import Foundation
import ImprintTestSupport
import Testing

private let profile = repositoryRoot + "/assets/samples/profiles/harbor-lamp.json"

/// A manifest of `count` card lines of one profile (`p.json`): a job slow enough to be
/// watched while it runs (each card is drawn and written as a PDF).
private func cardManifest(_ count: Int, in folder: TemporaryFolder, name: String) throws
  -> String
{
  try writeManifest(
    (0..<count).map { #"{"id": "C-\#($0)", "kind": "card", "profile": "p.json"}"# }, in: folder,
    name: name)
}

/// Posts a card manifest with its profile and returns the new job's id.
private func postCards(_ manifest: String, on server: ServiceProcess, in folder: TemporaryFolder)
  throws -> String
{
  try acceptedID(try postBatch(manifest, inputs: ["p.json=@\(profile)"], on: server, in: folder))
}

/// `/metrics`' value of `name` (with `labels`).
private func metric(
  _ server: ServiceProcess, _ name: String, _ labels: [String: String] = [:],
  in folder: TemporaryFolder
) throws -> Double? {
  try PrometheusText(try curlRequest("GET", server.url("/metrics"), in: folder).text).value(
    name, labels)
}

/// Waits until job `id` runs.
private func waitUntilRunning(_ id: String, on server: ServiceProcess, in folder: TemporaryFolder)
  throws
{
  let running = try waitFor(tries: 30_000) {
    try curlRequest("GET", server.url("/v1/jobs/\(id)"), in: folder).json?["state"] as? String
      == "running"
  }
  #expect(running, "job \(id) never ran")
}

/// Checks that a job stopped part-way kept what it reported: its summary counts its results,
/// each ended well, and each result's outputs are served.
private func expectKeptItems(
  _ report: [String: Any], of id: String, on server: ServiceProcess, in folder: TemporaryFolder,
  fewerThan lines: Int
) throws {
  let summary = try #require(report["summary"] as? [String: Any])
  let total = try #require(summary["total"] as? Int)
  #expect(total < lines, "\(summary)")
  let results = try #require(report["results"] as? [[String: Any]])
  #expect(results.count == total)
  #expect(results.allSatisfy { $0["status"] as? String == "ok" }, "\(results.prefix(3))")
  let files = try #require(report["files"] as? [String])
  for output in results.compactMap({ ($0["outputs"] as? [String])?.first }).prefix(3) {
    #expect(files.contains(output))
    let fetched = try curlRequest(
      "GET", server.url("/v1/jobs/\(id)/files/\(output)"), in: folder)
    #expect(fetched.status == 200 && fetched.body.starts(with: Array("%PDF-".utf8)), "\(output)")
  }
}

@Suite("imprint serve: long jobs canceled and limited", .liveHandlesChecked, .serialized)
struct JobControlTests {
  @Test(
    "DELETE cancels a running job (202, then canceled, its ended items kept); a queued one goes")
  func cancel() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["-j", "1"])
    let lines = 3000
    let slow = try cardManifest(lines, in: folder, name: "slow.jsonl")
    let running = try postCards(slow, on: server, in: folder)
    let queued = try postCards(slow, on: server, in: folder)
    try waitUntilRunning(running, on: server, in: folder)

    // A queued job is removed at once: it never runs.
    let dropped = try curlRequest("DELETE", server.url("/v1/jobs/\(queued)"), in: folder)
    #expect(dropped.status == 200, "\(dropped.text)")
    #expect(dropped.json?["removed"] as? Bool == true)
    #expect(dropped.json?["state"] as? String == "queued")
    #expect(try curlRequest("GET", server.url("/v1/jobs/\(queued)"), in: folder).status == 404)

    let canceling = try curlRequest("DELETE", server.url("/v1/jobs/\(running)"), in: folder)
    #expect(canceling.status == 202, "\(canceling.text)")
    #expect(canceling.json?["removed"] as? Bool == false)
    #expect(canceling.json?["state"] as? String == "running")
    #expect(canceling.headers["location"] == "/v1/jobs/\(running)")
    let ended = try waitForJob(running, on: server, in: folder)
    let report = try #require(ended.json)
    #expect(report["state"] as? String == "canceled", "\(ended.text)")
    let error = try #require(report["error"] as? [String: Any])
    #expect(error["code"] as? String == "service.jobCanceled")
    try expectKeptItems(report, of: running, on: server, in: folder, fewerThan: lines)
    let total = (report["summary"] as? [String: Any])?["total"] as? Int ?? -1
    #expect(
      (error["message"] as? String)?.contains("canceled after \(total) of its items ended")
        == true, "\(error)")
    // The results file holds the ended items only, as imprint batch writes it.
    let resultsFile = try curlRequest(
      "GET", server.url("/v1/jobs/\(running)/files/results.jsonl"), in: folder)
    #expect(resultsFile.text.split(separator: "\n").count == total)

    // Once ended, it is removed like any finished job.
    let removed = try curlRequest("DELETE", server.url("/v1/jobs/\(running)"), in: folder)
    #expect(removed.status == 200, "\(removed.text)")
    #expect(removed.json?["removed"] as? Bool == true)
    #expect(removed.json?["state"] as? String == "canceled")
    #expect(try curlRequest("GET", server.url("/v1/jobs/\(running)"), in: folder).status == 404)
    #expect(server.stop().status == 0)
  }

  @Test("--job-lines: a longer manifest 413 with no job; --job-timeout: failed, ended items kept")
  func linesAndTime() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["--job-lines", "3", "--job-timeout", "2", "-j", "1"])
    let four = try writeManifest(
      (1...4).map { #"{"id": "W-\#($0)", "kind": "qr", "payload": "x"}"# }, in: folder,
      name: "four.jsonl")
    let refused = try postBatch(four, on: server, in: folder)
    #expect(refused.status == 413, "\(refused.text)")
    #expect(refused.errorCode == "http.tooManyLines")
    #expect(refused.text.contains("more than 3 lines; a job may have 3"), "\(refused.text)")
    #expect(try metric(server, "imprint_jobs", ["state": "queued"], in: folder) == 0)
    #expect(try metric(server, "imprint_jobs_bytes", in: folder) == 0)
    let three = try writeManifest(
      (1...3).map { #"{"id": "W-\#($0)", "kind": "qr", "payload": "x"}"# }, in: folder,
      name: "three.jsonl")
    let fits = try acceptedID(try postBatch(three, on: server, in: folder))
    #expect(try waitForJob(fits, on: server, in: folder).json?["state"] as? String == "done")
    #expect(server.stop().status == 0)

    // Many cards, a 2-second limit.
    let timed = try ServiceProcess(["--job-timeout", "2", "-j", "1"])
    let lines = 3000
    let id = try postCards(
      try cardManifest(lines, in: folder, name: "slow.jsonl"), on: timed, in: folder)
    let ended = try waitForJob(id, on: timed, in: folder)
    let report = try #require(ended.json)
    #expect(report["state"] as? String == "failed", "\(ended.text)")
    let error = try #require(report["error"] as? [String: Any])
    #expect(error["code"] as? String == "service.jobTimeLimit")
    #expect(
      (error["message"] as? String)?.contains("ran longer than its limit of 2 s") == true,
      "\(error)")
    try expectKeptItems(report, of: id, on: timed, in: folder, fewerThan: lines)
    #expect(timed.stop().status == 0)
  }

  @Test("--jobs-disk: a running job's outputs count as written; past the limit it is stopped")
  func diskWhileRunning() throws {
    let folder = TemporaryFolder()
    // Room for some 1 300 card PDFs past the first megabyte: the job is still running, seconds
    // later, when the test's next upload arrives, however loaded the machine (with 4 MB, a busy
    // test run saw the job reach the limit, and end, first).
    let limit = 40_000_000
    let server = try ServiceProcess([
      "--jobs-disk", "\(limit)", "-j", "1", "--max-part", "\(limit)", "--max-body", "\(limit * 2)",
    ])
    let lines = 3000
    let id = try postCards(
      try cardManifest(lines, in: folder, name: "slow.jsonl"), on: server, in: folder)
    let accepted = try #require(try metric(server, "imprint_jobs_bytes", in: folder))
    // The bytes grow while it runs (card PDFs of some 30 KB each).
    let grown = try waitFor(tries: 30_000) {
      (try metric(server, "imprint_jobs_bytes", in: folder) ?? 0) > accepted + 1_000_000
    }
    #expect(grown, "the job's bytes stayed at \(accepted) while it ran")
    // A job that fits beside the running one's uploads but not beside what it wrote since.
    let padding = folder.file("padding.bin")
    try Data(repeating: 0x41, count: limit - Int(accepted) - 500_000).write(
      to: URL(fileURLWithPath: padding))
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "x"}"#], in: folder)
    let late = try postBatch(qr, inputs: ["padding.bin=@\(padding)"], on: server, in: folder)
    #expect(late.status == 507, "\(late.text)")
    #expect(late.errorCode == "http.jobStorageFull")

    let ended = try waitForJob(id, on: server, in: folder)
    let report = try #require(ended.json)
    #expect(report["state"] as? String == "failed", "\(ended.text)")
    let error = try #require(report["error"] as? [String: Any])
    #expect(error["code"] as? String == "service.jobDiskLimit")
    #expect((error["message"] as? String)?.contains("may hold \(limit)") == true, "\(error)")
    try expectKeptItems(report, of: id, on: server, in: folder, fewerThan: lines)
    #expect(server.stop().status == 0)
  }

  @Test("a batch whose deadline passed before its job could start starts none")
  func deadlineBeforeStart() throws {
    let folder = TemporaryFolder()
    // Checking 100 000 lines takes the handler well past a 1-second deadline (5 000 lines took
    // under a second on a loaded machine, and the job was made); the body itself (5 MB on
    // loopback) arrives well within it.
    let server = try ServiceProcess([
      "--request-timeout", "1", "--job-lines", "1000000", "--max-part", "64000000",
      "--max-body", "64000000",
    ])
    let manifest = try writeManifest(
      (0..<100_000).map { #"{"id": "Q-\#($0)", "kind": "qr", "payload": "x"}"# }, in: folder,
      name: "long.jsonl")
    let late = try postBatch(manifest, on: server, in: folder)
    #expect(late.status == 503, "\(late.text)")
    #expect(late.errorCode == "http.deadlineExceeded")
    // Once the handler is done, no job was made.
    let settled = try waitFor(tries: 30_000) {
      try metric(server, "imprint_http_requests_running", in: folder) == 0
    }
    #expect(settled)
    for state in ["queued", "running", "finished"] {
      #expect(try metric(server, "imprint_jobs", ["state": state], in: folder) == 0, "\(state)")
    }
    #expect(try metric(server, "imprint_jobs_bytes", in: folder) == 0)
    #expect(server.stop().status == 0)
  }

  @Test("a large output is streamed from its file: the server's peak memory stays, bytes equal")
  func streamedFile() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    // 1 000 qr lines without a payload, each with a 4 000-character id: every line fails, and
    // results.jsonl (the id and a message naming it, a line each) is some 8 MB.
    let long = String(repeating: "x", count: 4000)
    let manifest = try writeManifest(
      (0..<1000).map { #"{"id": "\#(long)-\#($0)", "kind": "qr"}"# }, in: folder,
      name: "long.jsonl")
    let id = try acceptedID(try postBatch(manifest, on: server, in: folder))
    let done = try waitForJob(id, on: server, in: folder)
    #expect(done.json?["state"] as? String == "done", "\(done.text.prefix(500))")
    // Over the 1 MiB inlined in the report: the report does not read it.
    #expect(done.json?["results"] == nil)
    let stored = try #require(jobFolder(id)) + "/output/results.jsonl"
    let size = try #require(try FileManager.default.attributesOfItem(atPath: stored)[.size] as? Int)
    #expect(size > 8_000_000)

    /// A `/proc/PID/status` figure, in kB.
    func status(_ key: String) -> Int? {
      (procText("/proc/\(server.pid)/status") ?? "").split(separator: "\n")
        .first { $0.hasPrefix(key + ":") }
        .flatMap {
          Int(
            $0.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
              ?? "")
        }
    }
    // The peak resident size reset to the current one (clear_refs 5), then the file fetched.
    try "5".write(toFile: "/proc/\(server.pid)/clear_refs", atomically: false, encoding: .utf8)
    let before = try #require(status("VmHWM"))
    let fetched = try curlRequest(
      "GET", server.url("/v1/jobs/\(id)/files/results.jsonl"), in: folder)
    let after = try #require(status("VmHWM"))
    #expect(fetched.status == 200)
    #expect(fetched.contentType == "application/jsonl")
    #expect(fetched.body.count == size)
    // Read whole, the file would have cost its size at least once (twice with libmicrohttpd's
    // copy).
    #expect(after - before < size / 1024 / 2, "VmHWM \(before) -> \(after) kB for \(size) bytes")
    let copy = folder.file("fetched.jsonl")
    try Data(fetched.body).write(to: URL(fileURLWithPath: copy))
    let sums = try runTool(
      "python3",
      [
        "-c",
        "import hashlib, sys\nfor p in sys.argv[1:]: print(hashlib.sha256(open(p, 'rb').read()).hexdigest())",
        stored, copy,
      ]
    ).stdout.split(separator: "\n")
    #expect(sums.count == 2 && sums[0] == sums[1], "\(sums)")
    #expect(server.stop().status == 0)
  }

  @Test("SIGTERM while a job runs: it is canceled within the drain time, a queued one dropped")
  func stopWhileRunning() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["--drain-timeout", "2", "-j", "1"])
    let slow = try cardManifest(3000, in: folder, name: "slow.jsonl")
    let running = try postCards(slow, on: server, in: folder)
    let queued = try postCards(slow, on: server, in: folder)
    try waitUntilRunning(running, on: server, in: folder)
    let stopped = server.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    let lines = stopped.stderr.split(separator: "\n").map(String.init)
    #expect(
      lines.contains(
        "serve: job '\(queued)' was canceled after 0 of its items ended: the server stopped"),
      "\(stopped.stderr)")
    let canceled = lines.first { $0.hasPrefix("serve: job '\(running)' was canceled after ") }
    #expect(canceled?.hasSuffix(" of its items ended: the server stopped") == true, "\(lines)")
    #expect(lines.last == "serve: stopped")
  }
}
