// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: webhook deliveries shared by replicas, against a real PostgreSQL: added in
// the same transaction as the job's end, held under a lease, taken over once it expires with the
// calls counted so far, fenced (the old holder's calls are no longer recorded), handed back,
// and outliving their job.

import Foundation
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintJobsDB

@Suite("Jobs database webhook deliveries", .tags(.slow), .skippedWhenQuick, .liveHandlesChecked)
struct JobsDBWebhookTests {
  /// A job `id` enqueued and claimed by `owner`.
  static func running(_ id: String, by owner: String, on db: borrowing JobsDBConnection) throws {
    try db.enqueue(id: id, kind: "batch")
    let job = try #require(try db.claim(owner: owner, lease: .seconds(60)))
    #expect(job.id == id)
  }

  /// Waits until job `id`'s delivery lease has expired by the database's clock (at most 10 s).
  static func expired(_ db: borrowing JobsDBConnection, _ id: String) throws -> Bool {
    try waitFor(tries: 1000) {
      try db.query(
        "SELECT lease_until < now() AS gone FROM webhook_deliveries WHERE job_id = $1", [id]
      ).rows.first?.bool("gone") == true
    }
  }

  @Test("a job's end adds its delivery in the same transaction, its body made from the end")
  func addedWithTheEnd() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try Self.running("j-1", by: "a", on: db)
    let body = "{\"job\": \"j-1\", \"naïve\": \"카드\"}"
    let (job, hook) = try db.finish(
      id: "j-1", owner: "a", as: .done, record: #"{"ok": true}"#, lease: .seconds(60)
    ) { ended in
      // The closure sees the job as ended, its finish time the database's.
      #expect(ended.state == .done && ended.finished != nil)
      return ("https://shop.example/hook?t=1", body)
    }
    #expect(job.state == .done)
    let added = try #require(hook)
    #expect(added.job == "j-1" && added.url == "https://shop.example/hook?t=1")
    #expect(added.body == body && added.attempts == 0 && added.leaseOwner == "a")
    #expect(try db.webhook(job: "j-1") == added)
    // Held by its owner: no other replica claims it.
    #expect(try db.claimWebhook(owner: "b", lease: .seconds(60)) == nil)

    // A job ended without a webhook adds none; an end refused (not the lease's owner) adds
    // none either and changes nothing.
    try Self.running("j-2", by: "a", on: db)
    let (_, none) = try db.finish(
      id: "j-2", owner: "a", as: .failed, record: nil, lease: .seconds(60)
    ) { _ in nil }
    #expect(none == nil)
    #expect(try db.webhook(job: "j-2") == nil)
    try Self.running("j-3", by: "a", on: db)
    #expect(throws: JobsDBError.leaseLost(job: "j-3", owner: "b")) {
      _ = try db.finish(id: "j-3", owner: "b", as: .done, record: nil, lease: .seconds(60)) { _ in
        ("https://shop.example/hook", "{}")
      }
    }
    #expect(try db.webhook(job: "j-3") == nil)
    #expect(try db.job(id: "j-3")?.state == .running)
  }

  @Test("an expired delivery is taken over with its calls; the old holder's calls are refused")
  func takeover() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try Self.running("j-1", by: "a", on: db)
    _ = try db.finish(
      id: "j-1", owner: "a", as: .done, record: #"{"webhook": {"state": "pending"}}"#,
      lease: .milliseconds(400)
    ) { _ in ("https://shop.example/hook", #"{"id": "j-1"}"#) }
    // Two calls refused by the receiver, recorded by the holder with the job's record.
    for attempt in 1...2 {
      let held = try db.recordWebhookCall(
        job: "j-1", owner: "a", state: .pending, attempts: attempt, status: 503,
        error: "HTTP 503", report: #"{"state": "pending", "attempts": \#(attempt)}"#)
      #expect(held)
    }
    #expect(try Self.expired(db, "j-1"))
    // Expired, not yet taken over: its holder's calls are no longer recorded, nor renewed.
    #expect(
      try !db.recordWebhookCall(
        job: "j-1", owner: "a", state: .pending, attempts: 3, status: 503, error: "HTTP 503",
        report: nil))
    #expect(try db.renewWebhooks(owner: "a", jobs: ["j-1"], lease: .seconds(60)) == 0)
    let taken = try #require(try db.claimWebhook(owner: "b", lease: .seconds(60)))
    #expect(taken.attempts == 2 && taken.lastStatus == 503 && taken.lastError == "HTTP 503")
    #expect(taken.body == #"{"id": "j-1"}"# && taken.leaseOwner == "b")
    // The old holder's next call is not recorded, nor is its renewal of it.
    #expect(
      try !db.recordWebhookCall(
        job: "j-1", owner: "a", state: .delivered, attempts: 3, status: 204, error: nil,
        report: #"{"state": "delivered"}"#))
    #expect(try db.renewWebhooks(owner: "a", jobs: ["j-1"], lease: .seconds(60)) == 0)
    #expect(try db.webhook(job: "j-1")?.leaseOwner == "b")
    #expect(try db.job(id: "j-1")?.record.contains(#""attempts": 2"#) == true)
    // The new holder's delivery ends it: the row goes, the record says so.
    #expect(
      try db.recordWebhookCall(
        job: "j-1", owner: "b", state: .delivered, attempts: 3, status: 204, error: nil,
        report: #"{"state": "delivered", "attempts": 3}"#))
    #expect(try db.webhook(job: "j-1") == nil)
    let record = try #require(try db.job(id: "j-1")?.record)
    #expect(record.contains(#""state": "delivered""#) && record.contains(#""attempts": 3"#))
    #expect(try db.claimWebhook(owner: "c", lease: .seconds(60)) == nil)
  }

  @Test("a failed call's backoff holds for a replica taking the delivery over")
  func backoffKeptOnTakeover() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    for id in ["j-1", "j-2"] {
      try Self.running(id, by: "a", on: db)
      _ = try db.finish(id: id, owner: "a", as: .done, record: nil, lease: .milliseconds(300)) {
        _ in ("https://shop.example/hook", "{}")
      }
    }
    // j-1's next call is due in 60 s; j-2's call recorded without a time (due at once).
    #expect(
      try db.recordWebhookCall(
        job: "j-1", owner: "a", state: .pending, attempts: 1, status: 503, error: "HTTP 503",
        report: nil, nextCallIn: .seconds(60)))
    #expect(
      try db.recordWebhookCall(
        job: "j-2", owner: "a", state: .pending, attempts: 1, status: 503, error: "HTTP 503",
        report: nil))
    let due = try db.query(
      "SELECT (next_attempt_at - now()) > interval '50 seconds' AS later "
        + "FROM webhook_deliveries WHERE job_id = 'j-1'")
    #expect(try due.rows.first?.bool("later") == true)
    #expect(try Self.expired(db, "j-1") && (try Self.expired(db, "j-2")))
    // Both leases expired: j-2 is taken over at once, j-1 not before its call is due.
    #expect(try db.claimWebhook(owner: "b", lease: .seconds(60))?.job == "j-2")
    #expect(try db.claimWebhook(owner: "b", lease: .seconds(60)) == nil)
    // Its time come (moved to now rather than waited for): claimed, its attempts counted.
    try db.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE job_id = 'j-1'")
    #expect(try db.claimWebhook(owner: "b", lease: .seconds(60))?.job == "j-1")
    #expect(try db.webhook(job: "j-1")?.attempts == 1)
  }

  @Test("deliveries handed back are claimed at once, each by one replica of six at once")
  func handedBackAndClaimedOnce() throws {
    let server = try PostgresServer()
    let url = server.url()
    let db = try JobsDBConnection(url: url)
    let count = 40
    for index in 0..<count {
      try Self.running("j-\(index)", by: "a", on: db)
      _ = try db.finish(
        id: "j-\(index)", owner: "a", as: .done, record: nil, lease: .seconds(600)
      ) { _ in ("https://shop.example/\(index)", "{}") }
    }
    let ids = (0..<count).map { "j-\($0)" }
    // Renewed: those it calls, only.
    #expect(try db.renewWebhooks(owner: "a", jobs: Array(ids.prefix(5)), lease: .seconds(600)) == 5)
    #expect(try db.renewWebhooks(owner: "a", jobs: ids, lease: .seconds(600)) == count)
    #expect(try db.renewWebhooks(owner: "a", jobs: [], lease: .seconds(600)) == 0)
    // Handed back but one whose call is under way; then that one too.
    #expect(try db.releaseWebhooks(owner: "a", except: ["j-3"]) == count - 1)
    #expect(try db.webhook(job: "j-3")?.leaseOwner == "a")
    let listener = try JobsDBConnection(url: url, migrate: false)
    try listener.listenForWebhooks()
    #expect(try db.releaseWebhooks(owner: "a") == 1)
    let woken = try listener.notification(within: .seconds(5))
    #expect(woken?.channel == JobsDBConnection.webhookChannel)
    let claims = JobsDBQueueTests.atOnce(6) { replica in
      Result { () throws(JobsDBError) -> [String] in
        let own = try JobsDBConnection(url: url, migrate: false)
        var jobs: [String] = []
        while let hook = try own.claimWebhook(owner: "r-\(replica)", lease: .seconds(600)) {
          jobs.append(hook.job)
        }
        return jobs
      }
    }
    let all = try claims.flatMap { try $0.get() }
    #expect(all.count == count && Set(all).count == count)
  }

  @Test("a delivery outlives its job's removal and is still claimed; a failed one is gone")
  func outlivesItsJob() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    for id in ["j-1", "j-2"] {
      try Self.running(id, by: "a", on: db)
      _ = try db.finish(id: id, owner: "a", as: .done, record: nil, lease: .seconds(60)) { _ in
        ("https://shop.example/" + id, "{}")
      }
    }
    #expect(try db.remove(id: "j-1").removed)
    #expect(try db.removeEnded(keeping: 0) == ["j-2"])
    #expect(try db.webhook(job: "j-1")?.url == "https://shop.example/j-1")
    // Recorded with a report for a job no longer kept: the delivery alone changes.
    #expect(
      try db.recordWebhookCall(
        job: "j-1", owner: "a", state: .pending, attempts: 1, status: nil,
        error: "connection refused", report: #"{"state": "pending"}"#))
    #expect(try db.webhook(job: "j-1")?.attempts == 1)
    #expect(
      try db.recordWebhookCall(
        job: "j-2", owner: "a", state: .failed, attempts: 3, status: 500, error: "HTTP 500",
        report: nil))
    #expect(try db.webhook(job: "j-2") == nil)
    #expect(try db.releaseWebhooks(owner: "a") == 1)
    #expect(try db.claimWebhook(owner: "b", lease: .seconds(60))?.job == "j-1")
  }
}
