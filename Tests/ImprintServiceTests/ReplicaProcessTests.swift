// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `imprint serve` processes sharing their long jobs through a real
// PostgreSQL (`--jobs-db`): the replica running a batch killed (SIGKILL) mid-way, another takes
// the job over once its lease expires and ends it with the files of an undisturbed run; five
// replicas started at once on an empty database apply its schema once.

import Foundation
import ImprintCore
import ImprintJobsDB
import ImprintTestSupport
import Testing

/// `imprint serve` arguments of a replica on database `url` and jobs folder `jobs`, leases of
/// 2 s; `whole`: batches run whole (not in shards), each on one replica.
private func replicaArguments(_ url: String, _ jobs: String, whole: Bool = false) -> [String] {
  ["--jobs-dir", jobs, "--jobs-db", url, "--job-lease", "2"]
    + (whole ? ["--job-shard-items", "0"] : [])
}

/// The attempts of each shard of job `id`, in order, and whether each is done.
private func shardRows(_ id: String, _ db: borrowing JobsDBConnection) throws -> [(Int, Bool)] {
  try db.query(
    "SELECT attempts, state = 'done' AS done FROM job_shards WHERE job_id = $1 ORDER BY shard",
    [id]
  ).rows.map { (try $0.int("attempts") ?? 0, try $0.bool("done") ?? false) }
}

/// A manifest of `count` QR items in `folder`.
private func manifest(_ count: Int, in folder: TemporaryFolder) throws -> String {
  try writeManifest(
    (0..<count).map {
      #"{"id": "Q-\#($0)", "kind": "qr", "payload": "https://example.com/o/\#($0)"}"#
    }, in: folder, name: "qr-\(count).jsonl")
}

/// The output files of manifest `qr` run as a batch by a server of its own (no database).
private func undisturbedOutput(_ qr: String) async throws -> [String: Data] {
  let alone = TemporaryFolder()
  let single = try ServiceProcess(["--jobs-dir", alone.file("jobs")])
  let reference = try acceptedID(try await postBatch(qr, on: single))
  #expect(try await waitForJob(reference, on: single).json?["state"] as? String == "done")
  let expected = try batchOutputFiles(alone.file("jobs") + "/\(reference)/output")
  #expect(single.stop().status == 0)
  return expected
}

/// Waits for job `id` on `server`, which must end done with its `items` items all made.
///
/// - Returns: how many were made now (ok) and before (skipped); none may have failed.
private func madeAll(_ id: String, _ items: Int, on server: ServiceProcess) async throws -> (
  ok: Int, skipped: Int
) {
  let done = try await waitForJob(id, on: server)
  #expect(done.json?["state"] as? String == "done", "\(done.text)")
  let summary = try #require(done.json?["summary"] as? [String: Any], "\(done.text)")
  let ok = summary["ok"] as? Int ?? 0
  let skipped = summary["skipped"] as? Int ?? 0
  #expect(summary["failed"] as? Int == 0 && ok + skipped == items, "\(id): \(summary)")
  return (ok, skipped)
}

/// How many items of job `id` under `jobs` have ended (their resume records).
private func ended(_ id: String, in jobs: String) -> Int {
  ((try? FileManager.default.contentsOfDirectory(atPath: jobs + "/\(id)/output/.state")) ?? [])
    .filter { $0.hasSuffix(".json") }.count
}

@Suite(
  "imprint serve replicas sharing jobs (PostgreSQL, processes)", .tags(.slow), .skippedWhenQuick,
  .liveHandlesChecked, .onTestThreads, .serialized)
struct ReplicaProcessTests {
  @Test("the replica running a batch killed: another ends it with an undisturbed run's files")
  func killedMidBatch() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let qr = try manifest(3000, in: folder)

    let expected = try await undisturbedOutput(qr)
    #expect(expected.count == 3000)

    let first = try ServiceProcess(
      replicaArguments(database.url(), jobs, whole: true) + ["-j", "1"])
    let id = try acceptedID(try await postBatch(qr, on: first))
    #expect(waitFor(tries: 30_000) { ended(id, in: jobs) >= 50 })
    let second = try ServiceProcess(replicaArguments(database.url(), jobs, whole: true))
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()
    let before = ended(id, in: jobs)
    #expect(before < 3000, "the batch ended before the kill")

    let (ok, skipped) = try await madeAll(id, 3000, on: second)
    #expect(skipped >= before - 1 && ok > 0, "\(ok), \(skipped): \(before) ended before the kill")
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    #expect(try db.job(id: id)?.attempts == 2)
    #expect(try batchOutputFiles(jobs + "/\(id)/output") == expected)
    #expect(second.stop().status == 0)
  }

  @Test("a batch in 12 shards over two replicas: both run shards, the files an undisturbed run's")
  func shardedBatch() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let qr = try manifest(3000, in: folder)
    let expected = try await undisturbedOutput(qr)
    let replicas = try (0..<2).map { _ in
      try ServiceProcess(replicaArguments(database.url(), jobs) + ["-j", "1"])
    }
    let id = try acceptedID(try await postBatch(qr, on: replicas[0]))
    // Who holds a shard, sampled from the database while the job runs.
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    var owners = Set<String>()
    var state = JobsDBJobState.queued
    let started = Date()
    while !state.isFinal && Date().timeIntervalSince(started) < 300 {
      for row in try db.query(
        "SELECT lease_owner FROM job_shards WHERE job_id = $1 AND lease_owner IS NOT NULL", [id]
      ).rows {
        owners.insert(row.string("lease_owner") ?? "")
      }
      state = try #require(try db.job(id: id)).state
      try await Task.sleep(for: .milliseconds(20))
    }
    let done = try await waitForJob(id, on: replicas[1])
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let summary = try #require(done.json?["summary"] as? [String: Any])
    #expect(summary["ok"] as? Int == 3000 && summary["total"] as? Int == 3000, "\(summary)")
    #expect(summary["failed"] as? Int == 0 && summary["skipped"] as? Int == 0, "\(summary)")
    #expect(owners.count == 2, "shards held by \(owners)")
    let job = try #require(try db.job(id: id))
    #expect(job.shards == 12 && job.attempts == 1 && job.leaseOwner == nil)
    let rows = try shardRows(id, db)
    #expect(rows.count == 12 && rows.allSatisfy { $0 == (1, true) }, "\(rows)")
    // The files of a run whole on one server; the results merged in the manifest's order, the
    // shards' own removed once merged.
    let output = jobs + "/\(id)/output"
    #expect(try batchOutputFiles(output) == expected)
    let results = try String(contentsOfFile: output + "/results.jsonl", encoding: .utf8)
      .split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }
    #expect(results.map { $0["id"] as? String ?? "" } == (0..<3000).map { "Q-\($0)" })
    #expect(results.allSatisfy { $0["status"] as? String == "ok" })
    let files = done.json?["files"] as? [String] ?? []
    #expect(files.contains("results.jsonl") && !files.contains { $0.hasPrefix("results-") })
    let hidden = try FileManager.default.contentsOfDirectory(atPath: output + "/.state")
    #expect(!hidden.contains { $0.hasPrefix(".shard-") }, "\(hidden.filter { $0.hasPrefix(".") })")
    for server in replicas { #expect(server.stop().status == 0) }
  }

  @Test("the replica running a shard killed: the other runs it again, the files undisturbed")
  func killedMidShard() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let qr = try manifest(3000, in: folder)
    let expected = try await undisturbedOutput(qr)

    // Three shards of 1000 items: killed inside its second.
    let arguments = replicaArguments(database.url(), jobs) + ["--job-shard-items", "1000"]
    let first = try ServiceProcess(arguments + ["-j", "1"])
    let id = try acceptedID(try await postBatch(qr, on: first))
    #expect(waitFor(tries: 30_000) { ended(id, in: jobs) >= 1100 })
    let second = try ServiceProcess(arguments)
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()
    let before = ended(id, in: jobs)
    #expect(before < 3000, "the batch ended before the kill")
    // The shard it held when killed (none if it was between two).
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    let held = try db.query(
      """
      SELECT shard FROM job_shards WHERE job_id = $1 AND state = 'running'
        AND lease_owner LIKE '%/' || $2 || '/%'
      """, [id, Int(first.pid)]
    ).rows.compactMap { try $0.int("shard") }
    #expect(held.count <= 1, "\(held)")

    let (_, skipped) = try await madeAll(id, 3000, on: second)
    // Skipped: the items of the shard it held that it had made (its other shard's results
    // stand as they were, ok).
    #expect(held.isEmpty ? skipped == 0 : (1..<1000).contains(skipped), "\(skipped), \(held)")
    // The killed replica's shard ran again (its items ended before the kill skipped), once;
    // every other once.
    let rows = try shardRows(id, db)
    #expect(rows.count == 3 && rows.allSatisfy(\.1), "\(rows)")
    for (shard, row) in rows.enumerated() {
      #expect(row.0 == (held.contains(shard) ? 2 : 1), "\(rows), held \(held), \(before) ended")
    }
    #expect(try db.job(id: id)?.attempts == (held.isEmpty ? 1 : 2))
    #expect(try batchOutputFiles(jobs + "/\(id)/output") == expected)
    #expect(second.stop().status == 0)
  }

  @Test("a replica's clock a minute ahead: its leases are the database's, taken over in time")
  func clockAhead() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    // libfaketime moves the replica's clocks (time, gettimeofday, clock_gettime) a minute
    // ahead. Its monotonic clock moves by the same constant, which intervals do not see
    // (FAKETIME_DONT_FAKE_MONOTONIC, which would leave it alone, makes Dispatch's timers spin
    // at 100% CPU under libfaketime 0.9.10).
    var environment = ProcessInfo.processInfo.environment
    environment["LD_PRELOAD"] = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
    environment["FAKETIME"] = "+60s"
    // Started through a shell that execs it (the same process): loaded first into imprint,
    // libfaketime sets FAKETIME_SHARED in the environment at start, which moves `environ` and
    // leaves Swift's CommandLine.arguments empty; loaded into the shell, it is set already.
    let ahead = try ServiceProcess(
      replicaArguments(database.url(), jobs, whole: true) + ["-j", "1"],
      launcher: ["/bin/sh", "-c", #"exec "$@""#, "sh"], environment: environment)
    // Its clock is ahead: the Date of its answers says so.
    let answer = try await ahead.request("GET", "/healthz")
    let format = DateFormatter()
    format.locale = Locale(identifier: "en_US_POSIX")
    format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    let said = try #require(answer.headers["date"].flatMap(format.date(from:)))
    #expect((50...70).contains(said.timeIntervalSinceNow), "Date: \(answer.headers["date"] ?? "")")

    // 10 000 QR codes (the most a job takes): about six seconds of work on one core.
    let id = try acceptedID(try await postBatch(try manifest(10_000, in: folder), on: ahead))
    #expect(waitFor(tries: 30_000) { ended(id, in: jobs) >= 50 })
    // Its lease ends 2 s after the database's now, not a minute later.
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    let left = try db.query(
      "SELECT extract(epoch FROM lease_until - now())::float8 AS left FROM jobs WHERE id = $1",
      [id]
    ).rows.first?.double("left")
    #expect(left.map { $0 > 0 && $0 <= 2.5 } == true, "lease ends in \(left ?? -1) s")
    // Renewed by it while it runs: a replica with the right time does not take it over.
    let second = try ServiceProcess(replicaArguments(database.url(), jobs, whole: true))
    let watched = Date()
    var running = try #require(try db.job(id: id))
    while Date().timeIntervalSince(watched) < 3 && running.state == .running {
      #expect(running.attempts == 1, "\(running)")
      try await Task.sleep(for: .milliseconds(100))
      running = try #require(try db.job(id: id))
    }
    #expect(running.attempts == 1 && running.state == .running, "\(running)")

    // Killed: the other takes the job over once the database's lease ends (2 s), not after
    // the minute the replica's clock was ahead.
    let owner = running.leaseOwner
    kill(ahead.pid, SIGKILL)
    _ = ahead.waitForExit()
    let killed = Date()
    #expect(
      waitFor(tries: 3000) { (try? db.job(id: id))?.leaseOwner.map { $0 != owner } == true })
    let after = Date().timeIntervalSince(killed)
    #expect(after < 15, "taken over \(after) s after the kill")
    let done = try await waitForJob(id, on: second)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    // The job's times are the database's: its acceptance, by the replica a minute ahead, is
    // not in the future.
    let iso = ISO8601DateFormatter()
    iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    let text = done.json?["accepted"] as? String ?? ""
    let accepted = try #require(iso.date(from: text), "accepted \(text)")
    #expect(accepted.timeIntervalSinceNow < 5, "accepted \(accepted)")
    print(
      "clock a minute ahead: lease ended \(left ?? -1) s after the database's now; "
        + "taken over \(after) s after the kill")
    #expect(second.stop().status == 0)
  }

  @Test("PostgreSQL stopped and started under load: QR codes answered, every batch done once")
  func databaseRestartedUnderLoad() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let qr = try manifest(400, in: folder)
    let expected = try await undisturbedOutput(qr)

    let replicas = try (0..<2).map { _ in
      try ServiceProcess(replicaArguments(database.url(), jobs) + ["-j", "1"])
    }
    var ids: [String] = []
    for index in 0..<4 {
      ids.append(try acceptedID(try await postBatch(qr, on: replicas[index % 2])))
    }
    #expect(waitFor(tries: 30_000) { ended(ids[0], in: jobs) >= 20 })
    try database.stop()
    // Away past two thirds of a lease: the running batches are stopped where they are; QR
    // codes are answered all along, job routes 503.
    let away = Date()
    var answered = 0
    while Date().timeIntervalSince(away) < 3 {
      for server in replicas {
        let code = try await server.request("POST", "/v1/qr?payload=away-\(answered)")
        #expect(code.status == 200, "\(code.status) \(code.text)")
        answered += 1
      }
    }
    let refused = try await replicas[1].request("GET", "/v1/jobs/\(ids[0])")
    #expect(refused.status == 503 && refused.headers["retry-after"] == "5", "\(refused.text)")
    #expect(try await replicas[0].request("GET", "/readyz").status == 503)
    try database.start()
    // Each connects again within its pause (at most 5 s).
    for server in replicas {
      #expect(try await eventually { try await server.request("GET", "/readyz").status == 200 })
    }

    for (index, id) in ids.enumerated() {
      _ = try await madeAll(id, 400, on: replicas[(index + 1) % 2])
      #expect(try batchOutputFiles(jobs + "/\(id)/output") == expected)
    }
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    let attempts = try ids.map { try db.job(id: $0)?.attempts ?? 0 }
    print(
      "database restarted under load: \(answered) QR codes answered while away; attempts \(attempts)"
    )
    for server in replicas { #expect(server.stop().status == 0) }
  }

  @Test("five replicas started at once on an empty database: one migration, all ready")
  func fiveAtOnce() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let arguments = replicaArguments(database.url(), jobs)
    let started = try await withThrowingTaskGroup(of: ServiceProcess.self) { group in
      for _ in 0..<5 {
        group.addTask { try await onOwnThread { try ServiceProcess(arguments) } }
      }
      var all: [ServiceProcess] = []
      for try await replica in group { all.append(replica) }
      return all
    }
    #expect(started.count == 5)
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    let versions = try db.query("SELECT version FROM schema_migrations ORDER BY version").rows
      .map { try $0.int("version") }
    #expect(versions == JobsDBSchema.migrations.map(\.version))
    for replica in started {
      #expect(try await replica.get("/readyz").status == 200)
    }
    let posted = try acceptedID(try await postBatch(try manifest(3, in: folder), on: started[0]))
    #expect(try await waitForJob(posted, on: started[4]).json?["state"] as? String == "done")
    for replica in started { #expect(replica.stop().status == 0) }
  }

  @Test("the replica printing an order killed: another ends it, no file sent to the printer twice")
  func killedWhilePrinting() async throws {
    let database = try PostgresServer()
    let (printer, order, first, id) = try await PrintOrder.posted(database)
    let names = order.names
    let arguments = order.arguments
    // Killed once the printer has the first document.
    #expect(waitFor(tries: 30_000) { !printer.jobs(count: 0).isEmpty || !spooled(printer).isEmpty })
    let second = try ServiceProcess(arguments)
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()

    let ended = try await waitForJob(id, on: second)
    let state = ended.json?["state"] as? String
    #expect(state == "done" || state == "failed", "\(ended.text)")
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    #expect(try db.job(id: id)?.attempts == 2)
    // No document reached the printer twice: each printed page count at most once.
    let received = printer.jobs(count: names.count)
    let pages = received.values.compactMap { $0.attributes["job-name"] }
    #expect(Set(pages).count == pages.count, "sent twice: \(pages.sorted())")
    #expect(received.count <= names.count)
    print(
      "killed while printing: \(state ?? "?"), \(received.count) of \(names.count) documents "
        + "received, each once; \(ended.json?["error"] ?? "no error")")
    if state == "done" { #expect(received.count == names.count, "\(pages.sorted())") }
    #expect(second.stop().status == 0)
  }

  @Test("the replica calling a webhook killed between calls: another goes on once its lease ends")
  func killedBetweenWebhookCalls() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let receiver = try WebhookReceiver(folder: folder)
    let arguments = replicaArguments(database.url(), jobs) + ["--webhook-allow-private"]
    try receiver.closeGate()
    // Its retry 8 s after a refused call (a due time the second replica keeps): it is killed
    // between the two however slow the machine (with the default 1 s, a loaded one may not be).
    let first = try ServiceProcess(arguments + ["-j", "1", "--webhook-backoff", "8"])
    let id = try acceptedID(
      try await postBatch(
        try manifest(2, in: folder), on: first,
        query: "?callback="
          + (receiver.url("/gated").addingPercentEncoding(withAllowedCharacters: .alphanumerics)
            ?? "")))
    func webhook(on server: ServiceProcess) async throws -> [String: Any] {
      try await server.request("GET", "/v1/jobs/\(id)").json?["webhook"] as? [String: Any] ?? [:]
    }
    let second = try ServiceProcess(arguments)
    // Killed once its first call was refused, 8 s before its next one.
    #expect(try await eventually { try await webhook(on: first)["attempts"] as? Int == 1 })
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()
    try receiver.openGate()
    var status: [String: Any] = [:]
    #expect(
      try await eventually(tries: 6000) {
        status = try await webhook(on: second)
        return status["state"] as? String == "delivered"
      }, "\(status)")
    // Each call the receiver took is an attempt the report counts: the first replica's one,
    // then the second's, with the same id and body.
    let calls = receiver.calls.filter { $0.path == "/gated" }
    #expect(calls.count == 2 && status["attempts"] as? Int == 2, "\(calls.count) calls, \(status)")
    #expect(calls.allSatisfy { $0.id == id && $0.body == calls[0].body })
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    #expect(try db.webhook(job: id) == nil)
    #expect(second.stop().status == 0)
  }

  @Test(
    "the lease taken from the replica printing an order: it sends nothing more, the next run ends it"
  )
  func leaseTakenWhilePrinting() async throws {
    let database = try PostgresServer()
    let (printer, order, first, id) = try await PrintOrder.posted(database)
    #expect(waitFor(tries: 30_000) { !printer.jobs(count: 0).isEmpty || !spooled(printer).isEmpty })
    // As if the replica had been cut off past its lease and another had claimed the job: the
    // replica still runs, and may not send any further part.
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    try db.query(
      "UPDATE jobs SET lease_owner = 'elsewhere', lease_until = now() + interval '1 hour' "
        + "WHERE id = $1", [id])
    // What it claimed and made printer's jobs for by then is what the printer gets from it:
    // the part under way ends, no other starts.
    try await Task.sleep(for: .seconds(4))
    let claimed = try db.printClaims(job: id)
    let created = claimed.filter { $0.printerJob != nil }
    #expect(!created.isEmpty && created.count < order.names.count, "\(claimed)")
    #expect(Set(claimed.map(\.run)).count == 1)
    let received = printer.jobs(count: created.count)
    #expect(received.count == created.count, "\(received.count) received, \(claimed)")
    try await Task.sleep(for: .seconds(2))
    #expect(printer.jobs(count: 0).count == created.count)

    // The lease let go: a second replica claims the job and ends it; no document twice.
    try db.query("UPDATE jobs SET lease_until = now() WHERE id = $1", [id])
    let second = try ServiceProcess(order.arguments)
    let ended = try await waitForJob(id, on: second)
    let state = ended.json?["state"] as? String
    #expect(state == "done" || state == "failed", "\(ended.text)")
    let all = printer.jobs(count: order.names.count)
    let pages = all.values.compactMap { $0.attributes["job-name"] }
    #expect(Set(pages).count == pages.count, "sent twice: \(pages.sorted())")
    if state == "done" { #expect(all.count == order.names.count, "\(pages.sorted())") }
    print(
      "lease taken while printing: \(created.count) sent before, \(state ?? "?"), "
        + "\(all.count) of \(order.names.count) received, each once")
    _ = first.stop()
    #expect(second.stop().status == 0)
  }
}

/// An order of six A4 documents (1 to 6 pages) for printer `front`, with the price list and the
/// configuration of replicas on `database`, in `folder`.
private struct PrintOrder {
  let folder: TemporaryFolder
  let names = (0..<6).map { "doc-\($0).pdf" }
  let arguments: [String]

  init(folder: TemporaryFolder, printer: TestPrinter, database: PostgresServer) throws {
    self.folder = folder
    try Data(priceListFixture("usd-a4.json").utf8).write(
      to: URL(fileURLWithPath: folder.file("prices.json")))
    try Data(
      #"{"priceLists": {"shop": "prices.json"}, "printers": {"front": {"uri": "\#(printer.uri)"}}, "jobsDir": "jobs"}"#
        .utf8
    ).write(to: URL(fileURLWithPath: folder.file("serve.json")))
    for (index, name) in names.enumerated() {
      try HostileDocuments.write(
        NumberedPages.written(Array(repeating: .a4, count: index + 1)), to: folder.file(name))
    }
    let entries = names.map { #"{"path":"\#($0)"}"# }.joined(separator: ",")
    try Data(#"{"schemaVersion":1,"store":"S","files":[\#(entries)]}"#.utf8).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    arguments = [
      "--config", folder.file("serve.json"), "--jobs-db", database.url(), "--job-lease", "2",
    ]
  }

  /// A printer holding each document a second (the order is at it for a while), the order,
  /// a replica on `database` and the job that prepares and prints the order, posted to it.
  static func posted(_ database: PostgresServer) async throws -> (
    TestPrinter, PrintOrder, ServiceProcess, String
  ) {
    let printer = try TestPrinter(folder: TemporaryFolder(), hook: "sleep 1")
    let order = try PrintOrder(folder: TemporaryFolder(), printer: printer, database: database)
    let first = try ServiceProcess(order.arguments)
    return (printer, order, first, try await order.post(to: first))
  }

  /// The order posted to `server` to be prepared and printed: the job's id.
  func post(to server: ServiceProcess) async throws -> String {
    let posted = try await server.request(
      "POST", "/v1/prepare?prices=shop&printer=front&wait=true",
      form: [.file("order", path: folder.file("order.json"))]
        + names.map { .file($0, path: folder.file($0)) })
    return try acceptedID(posted)
  }
}

/// The documents `printer` has spooled so far.
private func spooled(_ printer: TestPrinter) -> [String] {
  ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? []).filter {
    !$0.hasSuffix(".env") && !$0.hasSuffix(".tmp")
  }
}
