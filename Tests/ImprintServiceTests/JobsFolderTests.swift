// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `imprint serve --jobs-dir`, jobs kept across restarts, against real
// servers: a finished batch's report and files after SIGTERM and a restart (sha256sum), a job
// running when the server was killed (SIGKILL) found failed with service.interrupted, an
// Idempotency-Key answered with its job after a crash while its order was at the printer
// (ippeveprinter: printed once), the keys of jobs removed (DELETE, --jobs-kept) still refused
// after a restart, damaged and hostile contents of the folder skipped and logged, and two
// servers on one folder.

import Foundation
import ImprintTestSupport
import Testing

private let profile = repositoryRoot + "/assets/samples/profiles/harbor-lamp.json"

/// A server on the jobs folder `jobs`, with `extra` arguments.
private func server(_ jobs: String, _ extra: [String] = []) throws -> ServiceProcess {
  try ServiceProcess(["--jobs-dir", jobs] + extra)
}

/// The JSON log lines of `stderr` whose `event` is `event`.
private func events(_ event: String, in stderr: String) -> [[String: Any]] {
  stderr.split(separator: "\n").compactMap {
    (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
  }.filter { $0["event"] as? String == event }
}

/// `sha256sum`'s digest of `path`.
private func sha256(_ path: String) throws -> String {
  let run = try runTool("sha256sum", [path])
  #expect(run.status == 0, "\(run.stderr)")
  return String(run.stdout.prefix { $0 != " " })
}

/// Fetches each of job `id`'s `files` into `folder` and returns their sha256sum digests.
private func digests(
  _ files: [String], of id: String, on server: ServiceProcess, in folder: TemporaryFolder,
  tag: String
) async throws -> [String: String] {
  var found: [String: String] = [:]
  for file in files {
    let fetched = try await server.request("GET", "/v1/jobs/\(id)/files/\(file)")
    #expect(fetched.status == 200, "\(file): \(fetched.text)")
    let path = folder.file(tag + "-" + file.replacingOccurrences(of: "/", with: "_"))
    try Data(fetched.body).write(to: URL(fileURLWithPath: path))
    found[file] = try sha256(path)
  }
  return found
}

/// The regular files under `folder`, relative, sorted.
private func regularFiles(_ folder: String) -> [String] {
  let walker = FileManager.default.enumerator(atPath: folder)
  var found: [String] = []
  while let name = walker?.nextObject() as? String {
    var status = stat()
    if lstat(folder + "/" + name, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG {
      found.append(name)
    }
  }
  return found.sorted()
}

/// A shop in `folder` for prepare jobs: `prices.json` (store `S`), `serve.json` (that list as
/// `shop`, the printer at `uri` as `front`, the jobs folder `jobs`), a 3-page `a.pdf` and
/// `order.json` ordering it.
///
/// - Returns: a function POSTing that order to `/v1/prepare` with a query and, when given, an
///   `Idempotency-Key` header's value.
func printShop(in folder: TemporaryFolder, printer uri: String) throws -> (
  _ query: String, _ key: String?, _ server: ServiceProcess
) async throws -> HTTPExchange {
  try Data(priceListFixture("usd-a4.json").utf8).write(
    to: URL(fileURLWithPath: folder.file("prices.json")))
  try Data(
    #"{"priceLists": {"shop": "prices.json"}, "printers": {"front": {"uri": "\#(uri)"}}, "jobsDir": "jobs"}"#
      .utf8
  ).write(to: URL(fileURLWithPath: folder.file("serve.json")))
  try HostileDocuments.write(
    NumberedPages.written(Array(repeating: .a4, count: 3)), to: folder.file("a.pdf"))
  let order = folder.file("order.json")
  try Data(#"{"schemaVersion":1,"store":"S","files":[{"path":"a.pdf"}]}"#.utf8).write(
    to: URL(fileURLWithPath: order))
  return { query, key, server in
    try await server.request(
      "POST", "/v1/prepare" + query, headers: key.map { ["Idempotency-Key: \($0)"] } ?? [],
      form: [.file("order", path: order), .file("a.pdf", path: "\(folder.file("a.pdf"))")])
  }
}

@Suite(
  "imprint serve: jobs kept across restarts (--jobs-dir)", .liveHandlesChecked, .onTestThreads,
  .serialized,
  .tags(.slow), .skippedWhenQuick)
struct JobsFolderTests {
  @Test("a finished batch after SIGTERM and a restart: the same report, the same files' bytes")
  func finishedBatchRestarted() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let first = try server(jobs)
    let manifest = try writeManifest(
      [
        #"{"id": "A-1", "kind": "card", "profile": "p.json"}"#,
        #"{"id": "W-1", "kind": "qr", "payload": "https://example.com/o/17"}"#,
        #"{"id": "T-1", "kind": "thumb", "file": "missing.pdf"}"#,
      ], in: folder)
    let id = try acceptedID(
      try await postBatch(manifest, files: [.file("p.json", path: profile)], on: first))
    let done = try await waitForJob(id, on: first)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let files = try #require(done.json?["files"] as? [String])
    #expect(files.contains("cards/A-1.pdf") && files.contains("qr/W-1.png"), "\(files)")
    let before = try await digests(files, of: id, on: first, in: folder, tag: "before")
    let stopped = first.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    // Kept on disk: the job's record says it is done.
    let record = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: jobs + "/\(id)/job.json"))) as? [String: Any])
    #expect(record["state"] as? String == "done" && record["job"] as? String == id)

    let second = try server(jobs)
    let again = try await second.request("GET", "/v1/jobs/\(id)")
    #expect(again.status == 200, "\(again.text)")
    #expect(again.body == done.body, "the report changed across the restart:\n\(again.text)")
    #expect(try await digests(files, of: id, on: second, in: folder, tag: "after") == before)
    #expect(try zbarDecode(folder.file("after-qr_W-1.png")) == "https://example.com/o/17")
    #expect(try pdfInfo(folder.file("after-cards_A-1.pdf"))["Pages"] == "2")
    let metrics = try PrometheusText(
      try await second.request("GET", "/metrics").text)
    #expect(metrics.value("imprint_jobs", ["state": "finished"]) == 1)
    #expect((metrics.value("imprint_jobs_bytes")) ?? 0 > 10_000)
    // New jobs go on beside it.
    let qr = try writeManifest([#"{"id": "W-2", "kind": "qr", "payload": "x"}"#], in: folder)
    let next = try acceptedID(try await postBatch(qr, on: second))
    #expect(try await waitForJob(next, on: second).json?["state"] as? String == "done")
    let restarted = second.stop()
    #expect(restarted.status == 0)
    #expect(events("jobs.loaded", in: restarted.stderr).first?["jobs"] as? Int == 1)

    // Retention applies to the jobs loaded: one kept, the oldest removed with its files.
    let third = try server(jobs, ["--jobs-kept", "1"])
    #expect(try await third.request("GET", "/v1/jobs/\(id)").status == 404)
    #expect(try await third.request("GET", "/v1/jobs/\(next)").status == 200)
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(id)"))
    // DELETE removes a loaded job's folder from the jobs folder.
    #expect(try await third.request("DELETE", "/v1/jobs/\(next)").status == 200)
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(next)"))
    let ended = third.stop()
    #expect(ended.status == 0)
    let removed = events("jobs.removed", in: ended.stderr)
    #expect(removed.map { $0["path"] as? String } == [jobs + "/\(id)"], "\(ended.stderr)")
    #expect((removed.first?["reason"] as? String)?.contains("--jobs-kept (1)") == true)
  }

  @Test(
    "SIGKILL while a batch runs: after a restart it is failed, service.interrupted, outputs kept")
  func killedWhileRunning() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let first = try server(jobs, ["-j", "1"])
    let slow = try writeManifest(
      (0..<3000).map { #"{"id": "C-\#($0)", "kind": "card", "profile": "p.json"}"# },
      in: folder, name: "slow.jsonl")
    let running = try acceptedID(
      try await postBatch(slow, files: [.file("p.json", path: profile)], on: first))
    let queued = try acceptedID(
      try await postBatch(slow, files: [.file("p.json", path: profile)], on: first))
    // Killed once some cards are written.
    let cards = jobs + "/\(running)/output/cards"
    #expect(waitFor(tries: 30_000) { regularFiles(cards).filter { !$0.hasPrefix(".") }.count >= 3 })
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()
    let written = regularFiles(cards).filter { !$0.hasPrefix(".") && $0.hasSuffix(".pdf") }
    // The items recorded as ended (BatchRunner's resume records), read here from the disk.
    let recorded = regularFiles(jobs + "/\(running)/output/.state").count

    let second = try server(jobs)
    let report = try #require(
      try await second.request("GET", "/v1/jobs/\(running)").json)
    #expect(report["state"] as? String == "failed", "\(report)")
    let error = try #require(report["error"] as? [String: Any])
    #expect(error["code"] as? String == "service.interrupted")
    let message = try #require(error["message"] as? String)
    #expect(message.contains("job '\(running)' was running when the server stopped"), "\(message)")
    #expect(message.hasSuffix("; \(recorded) of its items had ended"), "\(message)")
    #expect(report["finished"] is String)
    // What it wrote before the kill is listed and served.
    let files = try #require(report["files"] as? [String])
    #expect(written.allSatisfy { files.contains("cards/" + $0) }, "\(written) \(files)")
    #expect(!files.isEmpty && files.count < 3000)
    let card = try #require(files.first { $0.hasPrefix("cards/") })
    let fetched = try await second.request("GET", "/v1/jobs/\(running)/files/\(card)")
    #expect(fetched.status == 200 && fetched.body.starts(with: Array("%PDF-".utf8)))
    let waiting = try #require(
      try await second.request("GET", "/v1/jobs/\(queued)").json)
    #expect(waiting["state"] as? String == "failed")
    #expect(
      ((waiting["error"] as? [String: Any])?["message"] as? String)?.contains(
        "was queued when the server stopped") == true, "\(waiting)")
    // Nothing runs again.
    let metrics = try PrometheusText(
      try await second.request("GET", "/metrics").text)
    #expect(metrics.value("imprint_jobs", ["state": "running"]) == 0)
    #expect(metrics.value("imprint_jobs", ["state": "finished"]) == 2)
    let stopped = second.stop()
    #expect(stopped.status == 0)
    let interrupted = events("jobs.interrupted", in: stopped.stderr).compactMap {
      $0["path"] as? String
    }
    #expect(Set(interrupted) == [jobs + "/\(running)", jobs + "/\(queued)"], "\(stopped.stderr)")
    // Recorded as failed: the next start finds nothing interrupted.
    let third = try server(jobs)
    #expect(
      try await third.request("GET", "/v1/jobs/\(running)").json?["state"]
        as? String == "failed")
    #expect(events("jobs.interrupted", in: third.stop().stderr).isEmpty)
  }

  @Test(
    "an Idempotency-Key after a crash while its order was at the printer: the same job, printed once"
  )
  func idempotencyAcrossRestart() async throws {
    let folder = TemporaryFolder()
    // Each print job stays processing for 4 s: the server is killed while it waits for it.
    let printer = try TestPrinter(folder: folder, hook: "sleep 4")
    let post = try printShop(in: folder, printer: printer.uri)
    let key = "\"\(UUID().uuidString)\""
    let query = "?prices=shop&printer=front&wait=true"
    let jobs = folder.file("jobs")
    let first = try ServiceProcess(["--config", folder.file("serve.json")])
    let id = try acceptedID(try await post(query, key, first))
    // The printer has the order (its hook runs): the server dies while it waits.
    #expect(printer.jobs(count: 1).count == 1)
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()
    #expect(FileManager.default.fileExists(atPath: jobs + "/\(id)/print-journal.json"))

    let second = try ServiceProcess(["--config", folder.file("serve.json")])
    let retried = try await post(query, key, second)
    #expect(retried.status == 202, "\(retried.text)")
    #expect(retried.json?["job"] as? String == id)
    #expect(retried.json?["state"] as? String == "failed")
    let error = try #require(retried.json?["error"] as? [String: Any])
    #expect(error["code"] as? String == "service.interrupted")
    #expect((error["hint"] as? String)?.contains("print-journal.json") == true, "\(error)")
    // The key with another request is still refused, naming the job.
    let other = try await post("?prices=shop&printer=front", key, second)
    #expect(other.status == 422, "\(other.text)")
    #expect(other.errorCode == "http.idempotencyKeyReused")
    // A request without a key is a new job, printed; the retry sent nothing (jobs run in
    // order: had the retry made a job, it would have printed before this one).
    let fresh = try acceptedID(try await post(query, nil, second))
    #expect(fresh != id)
    #expect(try await waitForJob(fresh, on: second).json?["state"] as? String == "done")
    let spooled = ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? [])
      .filter { $0.hasSuffix(".pdf") }
    #expect(spooled.count == 2, "\(spooled)")
    #expect(second.stop().status == 0)
  }

  @Test(
    "an Idempotency-Key whose job was removed (DELETE, --jobs-kept, at the start) is not made again after a restart"
  )
  func removedJobKeysAcrossRestart() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let post = try printShop(in: folder, printer: printer.uri)
    let query = "?prices=shop&printer=front&wait=true"
    func spooled() -> Int {
      ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? [])
        .filter { $0.hasSuffix(".pdf") }.count
    }
    let jobs = folder.file("jobs")
    let keys = (1...4).map { "order-\($0)-" + UUID().uuidString }
    let first = try ServiceProcess(["--config", folder.file("serve.json"), "--jobs-kept", "2"])
    var ids: [String] = []
    for (index, key) in keys.enumerated() {
      let id = try acceptedID(try await post(query, key, first))
      #expect(try await waitForJob(id, on: first).json?["state"] as? String == "done")
      ids.append(id)
      // The first removed by DELETE; the second by --jobs-kept 2 once the fourth ended.
      if index == 0 {
        #expect(try await first.request("DELETE", "/v1/jobs/\(id)").status == 200)
      }
    }
    #expect(try await first.request("GET", "/v1/jobs/\(ids[1])").status == 404)
    #expect(spooled() == 4)
    #expect(first.stop().status == 0)
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(ids[0])"))
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(ids[1])"))

    // The third removed at the next start (--jobs-kept 1), the fourth kept.
    let second = try ServiceProcess(["--config", folder.file("serve.json"), "--jobs-kept", "1"])
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(ids[2])"))
    for (key, id) in zip(keys, ids).prefix(3) {
      let retried = try await post(query, key, second)
      #expect(retried.status == 410, "\(key): \(retried.text)")
      #expect(retried.errorCode == "http.idempotentJobGone")
      #expect(retried.text.contains(id), "\(retried.text)")
    }
    // Another request with a removed job's key is still refused, naming its job.
    let other = try await post("?prices=shop&printer=front", keys[0], second)
    #expect(other.status == 422, "\(other.text)")
    #expect(other.errorCode == "http.idempotencyKeyReused")
    #expect(other.text.contains(ids[0]))
    // The kept job's key is its job, as before.
    let kept = try await post(query, keys[3], second)
    #expect(kept.status == 202 && kept.json?["job"] as? String == ids[3], "\(kept.text)")
    #expect(kept.json?["state"] as? String == "done")
    // Nothing was printed again; jobs run in order, so a job made by a retry would have
    // printed before this one.
    let fresh = try acceptedID(try await post(query, UUID().uuidString, second))
    #expect(try await waitForJob(fresh, on: second).json?["state"] as? String == "done")
    #expect(spooled() == 5)
    let stopped = second.stop()
    #expect(stopped.status == 0)
    #expect(
      events("jobs.removed", in: stopped.stderr).map { $0["path"] as? String } == [
        jobs + "/\(ids[2])"
      ])
    #expect(events("jobs.skipped", in: stopped.stderr).isEmpty, "\(stopped.stderr)")
  }

  @Test("damaged and hostile contents of the folder are skipped and logged; the good jobs load")
  func hostileContents() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let first = try server(jobs)
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "kept"}"#], in: folder)
    let good = try acceptedID(try await postBatch(qr, on: first))
    #expect(try await waitForJob(good, on: first).json?["state"] as? String == "done")
    #expect(first.stop().status == 0)

    let manager = FileManager.default
    let goodRecord = try String(contentsOfFile: jobs + "/\(good)/job.json", encoding: .utf8)
    // A copy of the good job under another id, each damaged in its own way.
    func copy(as id: String, record: String?) throws -> String {
      let path = jobs + "/" + id
      try manager.copyItem(atPath: jobs + "/\(good)", toPath: path)
      try manager.removeItem(atPath: path + "/job.json")
      if let record {
        try Data(record.replacingOccurrences(of: good, with: id).utf8).write(
          to: URL(fileURLWithPath: path + "/job.json"))
      }
      return path
    }
    let truncated = try copy(
      as: "11111111-1111-4111-8111-111111111111", record: String(goodRecord.prefix(40)))
    let future = try copy(
      as: "22222222-2222-4222-8222-222222222222",
      record: goodRecord.replacingOccurrences(
        of: #""schemaVersion" : 1"#, with: #""schemaVersion" : 2"#))
    let missing = try copy(as: "33333333-3333-4333-8333-333333333333", record: nil)
    // A job's output leading out of the folder: never served.
    let outside = folder.file("outside")
    try manager.createDirectory(atPath: outside + "/qr", withIntermediateDirectories: true)
    try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/qr/W-1.png"))
    let linkedOutput = try copy(as: "44444444-4444-4444-8444-444444444444", record: goodRecord)
    try manager.removeItem(atPath: linkedOutput + "/output")
    try manager.createSymbolicLink(atPath: linkedOutput + "/output", withDestinationPath: outside)
    // A job's folder that is a link to a whole job elsewhere.
    let elsewhere = folder.file("elsewhere")
    try manager.copyItem(atPath: jobs + "/\(good)", toPath: elsewhere)
    let link = jobs + "/55555555-5555-4555-8555-555555555555"
    try Data(
      goodRecord.replacingOccurrences(of: good, with: "55555555-5555-4555-8555-555555555555").utf8
    ).write(to: URL(fileURLWithPath: elsewhere + "/job.json"))
    try manager.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
    // A record naming another job, a stray folder and a stray file.
    let misnamed = try copy(as: "66666666-6666-4666-8666-666666666666", record: nil)
    try Data(goodRecord.utf8).write(to: URL(fileURLWithPath: misnamed + "/job.json"))
    try manager.createDirectory(atPath: jobs + "/lost+found", withIntermediateDirectories: true)
    try Data("notes".utf8).write(to: URL(fileURLWithPath: jobs + "/README"))
    // A webhook in a state this server never writes: never called.
    var hooked = try #require(
      try JSONSerialization.jsonObject(with: Data(goodRecord.utf8)) as? [String: Any])
    hooked["callback"] = "http://127.0.0.1:9/hook"
    hooked["webhook"] = ["url": "http://127.0.0.1:9/hook", "state": "sent", "attempts": 0]
    let strangeHook = try copy(
      as: "77777777-7777-4777-8777-777777777777",
      record: String(
        decoding: try JSONSerialization.data(withJSONObject: hooked), as: UTF8.self))

    let second = try server(jobs)
    let report = try await second.request("GET", "/v1/jobs/\(good)")
    #expect(report.status == 200 && report.json?["state"] as? String == "done", "\(report.text)")
    let png = try await second.request("GET", "/v1/jobs/\(good)/files/qr/W-1.png")
    try Data(png.body).write(to: URL(fileURLWithPath: folder.file("kept.png")))
    #expect(try zbarDecode(folder.file("kept.png")) == "kept")
    for path in [truncated, future, missing, linkedOutput, link, misnamed, strangeHook] {
      let id = (path as NSString).lastPathComponent
      #expect(try await second.request("GET", "/v1/jobs/\(id)").status == 404)
      let leaked = try await second.request("GET", "/v1/jobs/\(id)/files/qr/W-1.png")
      #expect(leaked.status == 404 && !leaked.text.contains("secret"), "\(id)")
    }
    let stopped = second.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    var reasons: [String: String] = [:]
    for event in events("jobs.skipped", in: stopped.stderr) {
      reasons[event["path"] as? String ?? ""] = event["reason"] as? String
    }
    #expect(reasons[truncated]?.hasPrefix("its job.json is damaged") == true, "\(reasons)")
    #expect(
      reasons[future] == "its job.json has schemaVersion 2; this server reads 1", "\(reasons)")
    #expect(reasons[missing]?.hasPrefix("has no job.json") == true, "\(reasons)")
    #expect(reasons[linkedOutput]?.hasPrefix("its output is not a folder") == true, "\(reasons)")
    #expect(reasons[link]?.hasPrefix("is a symbolic link") == true, "\(reasons)")
    #expect(reasons[misnamed]?.contains("it names job '\(good)'") == true, "\(reasons)")
    #expect(reasons[jobs + "/lost+found"]?.hasPrefix("is not a job") == true, "\(reasons)")
    #expect(reasons[jobs + "/README"]?.hasPrefix("is not a job") == true, "\(reasons)")
    #expect(
      reasons[strangeHook]
        == "its job.json is damaged (webhook state 'sent'; expected pending, delivered or "
        + "failed)", "\(reasons)")
    #expect(reasons.count == 9, "\(reasons)")
    #expect(events("jobs.loaded", in: stopped.stderr).first?["jobs"] as? Int == 1)
    // Nothing skipped was removed or changed, nor anything outside.
    for path in [
      truncated, future, missing, linkedOutput, misnamed, strangeHook, jobs + "/lost+found",
    ] {
      #expect(manager.fileExists(atPath: path), "\(path)")
    }
    #expect(
      try String(contentsOfFile: future + "/job.json", encoding: .utf8).contains(
        #""schemaVersion" : 2"#))
    #expect(try String(contentsOfFile: outside + "/qr/W-1.png", encoding: .utf8) == "secret")
    #expect(regularFiles(elsewhere) == regularFiles(jobs + "/\(good)"))
  }

  @Test("two servers on one jobs folder: the second refuses to start; after the first, it starts")
  func twoServers() async throws {
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let first = try server(jobs)
    let second = try runTool(
      imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--jobs-dir", jobs])
    #expect(second.status == 1, "\(second.stderr)")
    #expect(
      second.stderr.contains(
        "error: jobs folder '\(jobs)' is in use by another server ('\(jobs)/.lock' is locked)"),
      "\(second.stderr)")
    #expect(second.stderr.contains("hint: give each server its own --jobs-dir"))
    // The first is unharmed.
    #expect(try await first.request("GET", "/healthz").status == 200)
    #expect(first.stop().status == 0)
    let third = try server(jobs)
    #expect(third.stop().status == 0)
    // A jobs folder that is a file, and an empty path: refused at the start (an empty jobsDir
    // in --config: ConfigurationTests).
    try Data().write(to: URL(fileURLWithPath: folder.file("plain")))
    let file = try runTool(
      imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--jobs-dir", folder.file("plain")])
    #expect(file.status == 1 && file.stderr.contains("it is not a folder"), "\(file.stderr)")
    let empty = try runTool(
      imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--jobs-dir", ""])
    #expect(empty.status == 2, "\(empty.stderr)")
  }
}
