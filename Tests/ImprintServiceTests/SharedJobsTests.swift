// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: replicas of the service sharing their long jobs through a real
// PostgreSQL (`--jobs-db`) and one jobs folder: a job posted to one replica is run once and
// answered, fetched, canceled and removed through another; a replica that stops hands its
// running batch back and another finishes it with the same files; a database away makes the
// replicas unready and the job routes 503 with Retry-After while the stateless routes answer.

import Foundation
import ImprintJobsDB
import ImprintTestSupport
import Testing

@testable import ImprintService

/// A manifest of `count` QR items (`Q-0`...) in `folder`.
private func qrManifest(_ count: Int, in folder: TemporaryFolder) throws -> String {
  try writeManifest(
    (0..<count).map {
      #"{"id": "Q-\#($0)", "kind": "qr", "payload": "https://example.com/o/\#($0)"}"#
    },
    in: folder, name: "qr-\(count).jsonl")
}

/// A replica on database `url` and jobs folder `jobs`, with `change` made to its settings.
private func replica(
  _ url: String, _ jobs: String, _ change: (inout ServiceSettings) -> Void = { _ in },
  adjust: (inout ServiceConfiguration) -> Void = { _ in }
) throws -> InProcessService {
  try InProcessService(
    settings: {
      $0.jobsDir = jobs
      $0.jobsDb = url
      $0.jobLease = 3
      change(&$0)
    }, adjust: adjust)
}

/// The row of job `id` in the jobs database at `url`.
private func row(_ id: String, _ url: String) throws -> JobsDBJob? {
  let db = try JobsDBConnection(url: url, migrate: false)
  return try db.job(id: id)
}

/// The files of a batch's output folder with their bytes, `.state/` and `results.jsonl` left
/// out (a run taken over or resumed writes the same files; the results' seconds differ).
func batchOutputFiles(_ folder: String) throws -> [String: Data] {
  var found: [String: Data] = [:]
  let walker = try #require(FileManager.default.enumerator(atPath: folder))
  while let relative = walker.nextObject() as? String {
    if relative.hasPrefix(".state") || relative == "results.jsonl" { continue }
    let path = folder + "/" + relative
    var isFolder: ObjCBool = false
    FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
    if !isFolder.boolValue { found[relative] = try Data(contentsOf: URL(fileURLWithPath: path)) }
  }
  return found
}

@Suite(
  "service jobs shared by replicas (PostgreSQL)", .tags(.slow), .skippedWhenQuick,
  .liveHandlesChecked, .onTestThreads)
struct SharedJobsTests {
  @Test("a batch posted to one replica runs once; the other answers, serves and removes it")
  func anyReplicaAnswers() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let first = try replica(database.url(), jobs)
    let second = try replica(database.url(), jobs)
    let manifest = try qrManifest(12, in: folder)

    let id = try acceptedID(try await postBatch(manifest, on: first))
    let done = try await waitForJob(id, on: second)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let summary = done.json?["summary"] as? [String: Any]
    #expect(summary?["total"] as? Int == 12 && summary?["ok"] as? Int == 12, "\(done.text)")
    let again = try await first.get("/v1/jobs/\(id)")
    #expect(again.json?["state"] as? String == "done")
    #expect(again.json?["finished"] as? String == done.json?["finished"] as? String)

    // Run once, by one replica, its lease let go.
    let ran = try #require(try row(id, database.url()))
    #expect(ran.attempts == 1 && ran.state == .done && ran.leaseOwner == nil)

    // Its files from either replica, the same bytes as on the shared storage.
    let onDisk = try Data(contentsOf: URL(fileURLWithPath: jobs + "/\(id)/output/qr/Q-7.png"))
    for server in [first, second] {
      let fetched = try await server.get("/v1/jobs/\(id)/files/qr/Q-7.png")
      #expect(fetched.status == 200 && Data(fetched.body) == onDisk)
    }

    // Removed through the first: gone for both, its folder too.
    let removed = try await first.request("DELETE", "/v1/jobs/\(id)")
    #expect(removed.status == 200 && removed.json?["removed"] as? Bool == true, "\(removed.text)")
    #expect(try await second.get("/v1/jobs/\(id)").status == 404)
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(id)"))
    #expect(try row(id, database.url()) == nil)
    _ = await first.stop()
    _ = await second.stop()
  }

  @Test(
    "a batch in shards with a repeated id, bad lines and comments: the results of a run whole",
    arguments: [false, true])
  func shardsAsWhole(repeated: Bool) async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    // 13 items in shards of 3 (5 shards); with `repeated`, item 9 has item 2's id (the later
    // fails `batch.duplicateId` in whichever shard owns it, as in a run whole), and the shards
    // read every line; without, they pass over the others' lines unread.
    var lines = ["# QR codes"]
    for index in 0..<13 {
      let id = repeated && index == 9 ? "Q-2" : "Q-\(index)"
      switch index {
      case 4: lines.append(#"{"id": "\#(id)", "kind": "qr"}"#)
      case 7: lines += ["", #"{"id": "\#(id)", "kind": "qr", "payload": "x", "colour": 1}"#]
      case 11: lines.append(#"{"id": "\#(id)""#)
      default: lines.append(#"{"id": "\#(id)", "kind": "qr", "payload": "p\#(index)"}"#)
      }
    }
    let manifest = try writeManifest(lines, in: folder, name: "mixed.jsonl")
    /// Each result's id, line, status and error code, from `server`'s report of the job it made.
    func results(on server: InProcessService) async throws -> [String] {
      let id = try acceptedID(try await postBatch(manifest, on: server))
      let done = try await waitForJob(id, on: server)
      #expect(done.json?["state"] as? String == "done", "\(done.text)")
      let results = try #require(done.json?["results"] as? [[String: Any]], "\(done.text)")
      return results.map { result in
        let error = (result["error"] as? [String: Any])?["code"] as? String ?? ""
        return "\(result["id"] ?? "") \(result["line"] ?? "") \(result["status"] ?? "") \(error)"
      }
    }
    let alone = try InProcessService(settings: { $0.jobsDir = folder.file("alone") })
    let whole = try await results(on: alone)
    _ = await alone.stop()
    let jobs = folder.file("jobs")
    let replicas = try (0..<2).map { _ in
      try replica(database.url(), jobs) { $0.jobShardItems = 3 }
    }
    let sharded = try await results(on: replicas[0])
    #expect(whole.count == 13 && sharded == whole, "\(sharded)")
    #expect(whole.filter { $0.hasSuffix("batch.duplicateId") }.count == (repeated ? 1 : 0))
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    let shards = try db.query("SELECT count(*) AS n FROM job_shards").rows.first?.int("n")
    #expect(shards == 5)
    let work = try db.query("SELECT record #> '{work,batch,_0,uniqueIDs}' AS u FROM jobs").rows
    #expect(work.first?.string("u") == (repeated ? "false" : "true"))
    for server in replicas { _ = await server.stop() }
  }

  @Test("twenty batches over three replicas: each runs once, every item made once")
  func manyJobs() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let replicas = try (0..<3).map { _ in try replica(database.url(), jobs) { $0.jobQueue = 40 } }
    let manifest = try qrManifest(5, in: folder)
    var ids: [String] = []
    for index in 0..<20 {
      ids.append(try acceptedID(try await postBatch(manifest, on: replicas[index % 3])))
    }
    for (index, id) in ids.enumerated() {
      let done = try await waitForJob(id, on: replicas[(index + 1) % 3])
      #expect(done.json?["state"] as? String == "done", "\(done.text)")
      let ran = try #require(try row(id, database.url()))
      #expect(
        ran.attempts == 1,
        "job \(id) claimed \(ran.attempts) times: \(replicas.map { $0.log.joined(separator: "\n") })"
      )
      let results = try String(
        contentsOfFile: jobs + "/\(id)/output/results.jsonl", encoding: .utf8)
      #expect(results.split(separator: "\n").count == 5, "\(results)")
    }
    let owners = try Set(
      ids.compactMap { id -> String? in
        let db = try JobsDBConnection(url: database.url(), migrate: false)
        return try db.query("SELECT lease_owner FROM jobs WHERE id = $1", [id]).rows.first?
          .string("lease_owner")
      })
    #expect(owners.isEmpty, "leases left: \(owners)")
    for server in replicas { _ = await server.stop() }
  }

  @Test("a running batch canceled through another replica ends canceled, its items kept")
  func cancelFromAnother() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let first = try replica(database.url(), jobs)
    let manifest = try qrManifest(3000, in: folder)
    let id = try acceptedID(try await postBatch(manifest, on: first))
    #expect(
      try await eventually {
        try await first.get("/v1/jobs/\(id)").json?["state"] as? String == "running"
      })
    let second = try replica(database.url(), jobs)
    let canceling = try await second.request("DELETE", "/v1/jobs/\(id)")
    #expect(canceling.status == 202, "\(canceling.text)")
    let ended = try await waitForJob(id, on: second)
    #expect(ended.json?["state"] as? String == "canceled", "\(ended.text)")
    let error = ended.json?["error"] as? [String: Any]
    #expect(error?["code"] as? String == "service.jobCanceled", "\(ended.text)")
    let total = (ended.json?["summary"] as? [String: Any])?["total"] as? Int ?? -1
    #expect(total >= 0 && total < 3000, "\(ended.text)")
    // Its results are the items its shards ended (the summary's), in the manifest's order; the
    // shards' own files are gone.
    let results = ended.json?["results"] as? [[String: Any]] ?? []
    let ids = results.compactMap { $0["id"] as? String }
    #expect(ids.count == total, "\(ended.text)")
    let order = ids.compactMap { Int($0.dropFirst(2)) }
    #expect(order == order.sorted() && Set(order).count == order.count)
    #expect((error?["message"] as? String)?.contains("after \(total) of its items") == true)
    let files = ended.json?["files"] as? [String] ?? []
    #expect(!files.contains { $0.hasPrefix("results-") }, "\(files)")
    _ = await first.stop()
    _ = await second.stop()
    // Once every shard has stopped, none of their results is left in the folder (a shard
    // still stopping when the job ended writes its own after, then removes it).
    let left = try FileManager.default.contentsOfDirectory(atPath: jobs + "/\(id)/output")
    #expect(!left.contains { $0.hasPrefix("results-") }, "\(left)")
  }

  @Test("a replica stopping hands its running batch back; another ends it with the same files")
  func drainHandsBack() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let manifest = try qrManifest(3000, in: folder)

    // The files of an undisturbed run, on a replica of its own.
    let alone = TemporaryFolder()
    let single = try InProcessService(settings: { $0.jobsDir = alone.file("jobs") })
    let reference = try acceptedID(try await postBatch(manifest, on: single))
    #expect(try await waitForJob(reference, on: single).json?["state"] as? String == "done")
    let expected = try batchOutputFiles(alone.file("jobs") + "/\(reference)/output")
    _ = await single.stop()
    #expect(expected.count == 3000)

    // The batch whole (not in shards of 250, each of which ends within the drain time): the
    // replica stopping hands it back part-way.
    let first = try replica(database.url(), jobs) {
      $0.drainTimeout = 1
      $0.jobShardItems = 0
    }
    let id = try acceptedID(try await postBatch(manifest, on: first))
    #expect(
      try await eventually {
        (try await first.get("/v1/jobs/\(id)").json?["state"] as? String) == "running"
      })
    let second = try replica(database.url(), jobs) { $0.jobShardItems = 0 }
    _ = await first.stop()
    let done = try await waitForJob(id, on: second)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let summary = done.json?["summary"] as? [String: Any]
    // Resumed as `imprint batch` resumes: the items the first replica made are skipped (made
    // by an earlier run), none made twice, none failed.
    let ok = summary?["ok"] as? Int ?? 0
    let skipped = summary?["skipped"] as? Int ?? 0
    #expect(summary?["total"] as? Int == 3000 && summary?["failed"] as? Int == 0, "\(done.text)")
    #expect(ok + skipped == 3000 && skipped > 0 && ok > 0, "ok \(ok), skipped \(skipped)")
    let ran = try #require(try row(id, database.url()))
    #expect(ran.attempts == 2, "claimed \(ran.attempts) times")
    #expect(try batchOutputFiles(jobs + "/\(id)/output") == expected)
    _ = await second.stop()
  }

  @Test("the database away: not ready, job routes 503 with Retry-After, QR codes answered")
  func databaseAway() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let server = try replica(database.url(), jobs)
    let manifest = try qrManifest(2, in: folder)
    let before = try acceptedID(try await postBatch(manifest, on: server))
    #expect(try await waitForJob(before, on: server).json?["state"] as? String == "done")
    #expect(try await server.get("/readyz").status == 200)
    let quiet = try await server.get("/metrics").text
    #expect(quiet.contains("# TYPE imprint_jobs_database_errors_total counter\n"))
    #expect(!quiet.contains("imprint_jobs_database_errors_total{"), "\(quiet)")

    try database.stop()
    #expect(try await eventually { try await server.get("/readyz").status == 503 })
    let refused = try await postBatch(manifest, on: server)
    #expect(refused.status == 503 && refused.errorCode == "jobsdb.unreachable", "\(refused.text)")
    #expect(refused.headers["retry-after"] == "5")
    let poll = try await server.get("/v1/jobs/\(before)")
    #expect(poll.status == 503, "\(poll.text)")
    let qr = try await server.request("POST", "/v1/qr?payload=hello")
    #expect(qr.status == 200 && qr.contentType == "image/png", "\(qr.status) \(qr.text)")
    // The claim loop's failed connections are counted; none before the stop.
    let metrics = try await server.get("/metrics").text
    let unreachable = metrics.split(separator: "\n").first {
      $0.hasPrefix("imprint_jobs_database_errors_total{code=\"jobsdb.unreachable\"} ")
    }
    #expect((unreachable?.split(separator: " ").last).flatMap { Int($0) } ?? 0 >= 1, "\(metrics)")

    try database.start()
    #expect(try await eventually { try await server.get("/readyz").status == 200 })
    let after = try acceptedID(try await postBatch(manifest, on: server))
    #expect(try await waitForJob(after, on: server).json?["state"] as? String == "done")
    #expect(try await server.get("/v1/jobs/\(before)").json?["state"] as? String == "done")
    _ = await server.stop()
  }

  @Test("a record this server cannot read: the job ends failed, service.jobUnreadable, polled")
  func unreadableRecord() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let server = try replica(database.url(), folder.file("jobs"))
    let id = UUID().uuidString.lowercased()
    // Written by another (newer) server: a record without the fields this one reads.
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    try db.enqueue(id: id, kind: "batch", record: #"{"schemaVersion": 9, "job": "\#(id)"}"#)
    let ended = try await waitForJob(id, on: server)
    #expect(ended.status == 200, "\(ended.text)")
    #expect(ended.json?["state"] as? String == "failed", "\(ended.text)")
    let error = ended.json?["error"] as? [String: Any]
    #expect(error?["code"] as? String == "service.jobUnreadable", "\(ended.text)")
    #expect(
      (error?["message"] as? String)?.contains("cannot be run by this server") == true,
      "\(ended.text)")
    // An ended job whose record no server can read is still answered, from its columns.
    let other = UUID().uuidString.lowercased()
    try db.query(
      "INSERT INTO jobs (id, kind, state, finished_at, record) VALUES ($1, 'batch', 'done', now(), '[]')",
      [other])
    let plain = try await server.get("/v1/jobs/\(other)")
    #expect(plain.status == 200 && plain.json?["state"] as? String == "done", "\(plain.text)")
    _ = await server.stop()
  }
}

/// `url` escaped as a query parameter's value.
private func escapedForQuery(_ url: String) -> String {
  url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
}

/// Job `id`'s webhook as `server` reports it.
private func webhookStatus(_ id: String, on server: InProcessService) async throws -> [String: Any]
{
  try await server.get("/v1/jobs/\(id)").json?["webhook"] as? [String: Any] ?? [:]
}

/// The webhook deliveries pending in the jobs database at `url`.
private func pendingDeliveries(_ url: String) throws -> Int {
  let db = try JobsDBConnection(url: url, migrate: false)
  return try db.query("SELECT count(*) AS n FROM webhook_deliveries").rows.first?.int("n") ?? -1
}

@Suite(
  "service webhooks shared by replicas (PostgreSQL)", .tags(.slow), .skippedWhenQuick,
  .liveHandlesChecked, .onTestThreads)
struct SharedWebhookTests {
  @Test("eight jobs over three replicas: each job's webhook called once, its report the same")
  func calledOnce() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let receiver = try WebhookReceiver(folder: folder)
    let replicas = try (0..<3).map { _ in
      try replica(database.url(), jobs) { $0.webhookAllowPrivate = true }
    }
    let manifest = try qrManifest(3, in: folder)
    let query = "?callback=" + escapedForQuery(receiver.url("/hook"))
    var ids: [String] = []
    for index in 0..<8 {
      ids.append(
        try acceptedID(try await postBatch(manifest, on: replicas[index % 3], query: query)))
    }
    for (index, id) in ids.enumerated() {
      let other = replicas[(index + 2) % 3]
      #expect(try await waitForJob(id, on: other).json?["state"] as? String == "done")
      #expect(
        try await eventually {
          try await webhookStatus(id, on: other)["state"] as? String == "delivered"
        })
      let status = try await webhookStatus(id, on: other)
      #expect(status["attempts"] as? Int == 1 && status["status"] as? Int == 204, "\(status)")
    }
    // Once each, by whichever replica ended it; the body is the job's report then.
    let calls = receiver.calls
    #expect(calls.map(\.id).sorted() == ids.sorted(), "\(calls.map(\.id))")
    for call in calls {
      let report = try #require(
        try JSONSerialization.jsonObject(with: Data(call.body.utf8)) as? [String: Any])
      #expect(report["job"] as? String == call.id && report["state"] as? String == "done")
      let polled = try #require(try await replicas[0].get("/v1/jobs/\(call.id)").json)
      #expect(report["finished"] as? String == polled["finished"] as? String)
    }
    #expect(try pendingDeliveries(database.url()) == 0)
    for server in replicas { _ = await server.stop() }
  }

  @Test("a replica stopped between a webhook's calls: another goes on, same body, no call lost")
  func takenOver() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let receiver = try WebhookReceiver(folder: folder)
    // The first replica's retries wait 8 s (the default waits 1 s, then 2): long enough for the
    // second replica to start and the first to stop before its second call, however loaded the
    // machine. The second replica keeps that due time when it takes the delivery over.
    let first = try replica(
      database.url(), jobs, { $0.webhookAllowPrivate = true }, adjust: { $0.webhooks.backoff = 8 })
    try receiver.closeGate()
    let id = try acceptedID(
      try await postBatch(
        try qrManifest(2, in: folder), on: first,
        query: "?callback=" + escapedForQuery(receiver.url("/gated"))))
    #expect(
      try await eventually { try await webhookStatus(id, on: first)["attempts"] as? Int == 1 })
    let second = try replica(database.url(), jobs) { $0.webhookAllowPrivate = true }
    // The first stops while it waits to call again: the delivery is handed back, and the second
    // replica claims it at once.
    _ = await first.stop()
    try receiver.openGate()
    var status: [String: Any] = [:]
    #expect(
      try await eventually {
        status = try await webhookStatus(id, on: second)
        return status["state"] as? String == "delivered"
      }, "\(status)")
    #expect(second.log.contains { $0.contains("job '\(id)': its webhook taken over after") })
    // Every call counted, none made twice at once: the calls the receiver took are the
    // attempts the report gives, each with the job's id and the same body.
    let calls = receiver.calls.filter { $0.path == "/gated" }
    #expect(calls.count == status["attempts"] as? Int, "\(calls.count) calls, \(status)")
    #expect(calls.count >= 2 && calls.allSatisfy { $0.id == id && $0.body == calls[0].body })
    #expect(try pendingDeliveries(database.url()) == 0)
    // Delivered: nothing more is called, however long it waits.
    try await Task.sleep(for: .seconds(2))
    #expect(receiver.calls.count == calls.count)
    _ = await second.stop()
  }
}
