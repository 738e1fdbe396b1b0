// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: the job queue against a real PostgreSQL (PostgresServer): claims by
// replicas at once, leases by the database's clock, takeover, idempotency keys, NOTIFY.

import Foundation
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintJobsDB

@Suite("Jobs database queue", .tags(.slow), .skippedWhenQuick, .liveHandlesChecked)
struct JobsDBQueueTests {
  /// Runs `body` on `count` threads at once (libpq blocks its thread), each with its index,
  /// and returns what each returned, in index order.
  static func atOnce<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = Mutex<[Int: T]>([:])
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
      done.enter()
      Thread {
        start.wait()
        let result = body(index)
        results.withLock { $0[index] = result }
        done.leave()
      }.start()
    }
    for _ in 0..<count { start.signal() }
    done.wait()
    return results.withLock { results in (0..<count).compactMap { results[$0] } }
  }

  /// Waits until job `id`'s lease has expired by the database's clock (at most 10 s).
  static func expired(_ db: borrowing JobsDBConnection, _ id: String) throws -> Bool {
    try waitFor(tries: 1000) {
      try db.query("SELECT lease_until < now() AS gone FROM jobs WHERE id = $1", [id]).rows
        .first?.bool("gone") == true
    }
  }

  @Test("six replicas claiming at once from 150 jobs claim each exactly once, oldest first")
  func concurrentClaims() throws {
    let server = try PostgresServer()
    let url = server.url()
    let db = try JobsDBConnection(url: url)
    let count = 150
    for index in 0..<count { try db.enqueue(id: "job-\(index)", kind: "batch") }
    let claims = Self.atOnce(6) { replica in
      Result { () throws(JobsDBError) -> [String] in
        let own = try JobsDBConnection(url: url, migrate: false)
        var ids: [String] = []
        while let job = try own.claim(owner: "replica-\(replica)", lease: .seconds(60)) {
          #expect(job.state == .running && job.attempts == 1)
          #expect(job.leaseOwner == "replica-\(replica)")
          ids.append(job.id)
          try own.complete(id: job.id, owner: "replica-\(replica)", record: #"{"by": \#(replica)}"#)
        }
        return ids
      }
    }
    let ids = try claims.map { try $0.get() }
    let all = ids.flatMap { $0 }
    #expect(all.count == count && Set(all).count == count)
    // Each replica took its jobs in the queue's order.
    for own in ids {
      let numbers = own.compactMap { Int($0.dropFirst(4)) }
      #expect(numbers == numbers.sorted())
    }
    #expect(try db.depth() == JobsDBDepth(queued: 0, running: 0, expired: 0))
    let done = try db.query(
      "SELECT count(*) AS n FROM jobs WHERE state = 'done' AND attempts = 1 AND lease_owner IS NULL"
    )
    #expect(try done.rows.first?.int("n") == count)
    #expect(try db.claim(owner: "late", lease: .seconds(60)) == nil)
  }

  @Test("an expired lease is taken over; the old owner can neither renew nor end the job")
  func takeover() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    let other = try JobsDBConnection(url: server.url(), migrate: false)
    try db.enqueue(id: "j1", kind: "batch", record: #"{"items": 3}"#)
    let first = try #require(try db.claim(owner: "a", lease: .seconds(1)))
    #expect(first.id == "j1" && first.attempts == 1 && first.leaseOwner == "a")
    // Held: no one else gets it.
    #expect(try other.claim(owner: "b", lease: .seconds(60)) == nil)
    #expect(try Self.expired(db, "j1"))
    #expect(try db.depth() == JobsDBDepth(queued: 0, running: 0, expired: 1))
    let taken = try #require(try other.claim(owner: "b", lease: .seconds(60)))
    #expect(taken.id == "j1" && taken.attempts == 2 && taken.leaseOwner == "b")
    #expect(taken.record == #"{"items": 3}"#)
    let lost = JobsDBError.leaseLost(job: "j1", owner: "a")
    #expect(lost.code == "jobsdb.leaseLost" && lost.status == 409)
    #expect(lost.message == "job 'j1' is not leased to 'a'; another replica may have taken it over")
    #expect(throws: lost) { try db.complete(id: "j1", owner: "a", record: #"{"by": "a"}"#) }
    #expect(throws: lost) { try db.fail(id: "j1", owner: "a") }
    #expect(throws: lost) { try db.renew(id: "j1", owner: "a", lease: .seconds(60)) }
    #expect(throws: lost) { try db.release(id: "j1", owner: "a") }
    let done = try other.complete(id: "j1", owner: "b", record: #"{"by": "b"}"#)
    #expect(done.state == .done && done.leaseOwner == nil && done.leaseUntil == nil)
    #expect(try db.job(id: "j1")?.record == #"{"by": "b"}"#)
    // Ended: no one claims it, its owner cannot end it again.
    #expect(try db.claim(owner: "a", lease: .seconds(60)) == nil)
    #expect(throws: JobsDBError.leaseLost(job: "j1", owner: "b")) {
      try other.fail(id: "j1", owner: "b")
    }
  }

  @Test("a renewal extends the lease by the database's clock, only its holder's, only while held")
  func renewal() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "j1", kind: "order")
    try db.enqueue(id: "j2", kind: "order")
    let job = try #require(try db.claim(owner: "a", lease: .seconds(5)))
    let renewed = try db.renew(id: "j1", owner: "a", lease: .seconds(120))
    let now = try db.now()
    #expect(
      try #require(renewed.leaseUntil) > now + 110 && renewed.leaseUntil! <= now + 120,
      "\(renewed) at \(now)")
    #expect(try #require(renewed.leaseUntil) > job.leaseUntil!)
    #expect(renewed.attempts == 1 && renewed.state == .running)
    #expect(throws: JobsDBError.leaseLost(job: "j1", owner: "b")) {
      try db.renew(id: "j1", owner: "b", lease: .seconds(60))
    }
    // Past the first lease's end, by the database's clock, the renewed one holds.
    #expect(try waitFor(tries: 1000) { try db.now() > job.leaseUntil! })
    #expect(try db.claim(owner: "b", lease: .seconds(60))?.id == "j2")
    #expect(try db.claim(owner: "b", lease: .seconds(60)) == nil)
    // A lease that expired cannot be renewed, though no one took it over yet.
    try db.renew(id: "j2", owner: "b", lease: .milliseconds(100))
    #expect(try Self.expired(db, "j2"))
    #expect(throws: JobsDBError.leaseLost(job: "j2", owner: "b")) {
      try db.renew(id: "j2", owner: "b", lease: .seconds(60))
    }
    // Its owner may still end it: the work was done, and no other replica has it.
    #expect(try db.complete(id: "j2", owner: "b").state == .done)
  }

  @Test("a lease is the database's now() plus its length: no replica's clock is read")
  func databaseClock() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "j1", kind: "batch")
    let claimed = try #require(try db.claim(owner: "a", lease: .milliseconds(45_500)))
    // The claim's statement wrote started_at and lease_until from the same now().
    let written = try db.query(
      "SELECT extract(epoch FROM lease_until - started_at)::float8 AS s FROM jobs")
    #expect(try written.rows.first?.double("s") == 45.5)
    // A renewal inside a transaction: its now() is the transaction's, which the next
    // statement reads too.
    try db.query("BEGIN")
    let renewed = try db.renew(id: "j1", owner: "a", lease: .seconds(90))
    let length = try db.query(
      "SELECT extract(epoch FROM lease_until - now())::float8 AS s FROM jobs")
    try db.query("COMMIT")
    #expect(try length.rows.first?.double("s") == 90)
    #expect(try #require(renewed.leaseUntil) > claimed.leaseUntil!)
    // The lease's end is the database's epoch, whatever this process's clock says: it is only
    // ever compared with now() in SQL (`claim`, `renew`, `depth`).
    #expect(abs(renewed.leaseUntil! - (try db.now()) - 90) < 5)
    // A replica's clock a minute ahead or behind changes nothing, since the module never reads
    // one: no wall clock in its sources (ContinuousClock, for a wait's timeout, is monotonic).
    let folder = repositoryRoot + "/Sources/ImprintJobsDB"
    for file in try FileManager.default.contentsOfDirectory(atPath: folder) {
      let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
      for wall in ["Date(", "Date.now", "timeIntervalSince1970", "gettimeofday", "clock_gettime"] {
        #expect(!text.contains(wall), "\(file) reads the replica's clock (\(wall))")
      }
    }
  }

  @Test("an Idempotency-Key makes one job: the same request gets it, another is refused")
  func idempotency() throws {
    let server = try PostgresServer()
    let url = server.url()
    let db = try JobsDBConnection(url: url)
    let key = JobsDBIdempotency(key: "k-1", fingerprint: "sha256:aaa")
    let made = try db.enqueue(id: "j1", kind: "batch", record: #"{"n": 1}"#, idempotency: key)
    #expect(!made.replayed && made.job.id == "j1" && made.job.state == .queued)
    let again = try db.enqueue(id: "j2", kind: "batch", idempotency: key)
    #expect(again.replayed && again.job == made.job)
    #expect(try db.job(id: "j2") == nil)
    let other = JobsDBIdempotency(key: "k-1", fingerprint: "sha256:bbb")
    let reused = #expect(throws: JobsDBError.self) {
      try db.enqueue(id: "j3", kind: "batch", idempotency: other)
    }
    #expect(reused == .idempotencyKeyReused(key: "k-1", job: "j1") && reused?.status == 422)
    #expect(
      reused?.message == "Idempotency-Key 'k-1' was sent with another request, which made job 'j1'")
    #expect(try db.job(id: "j3") == nil)
    // The key outlives its job; its retry is not made again.
    try db.query("DELETE FROM jobs WHERE id = 'j1'")
    let gone = #expect(throws: JobsDBError.self) {
      try db.enqueue(id: "j4", kind: "batch", idempotency: key)
    }
    #expect(gone == .idempotentJobGone(key: "k-1", job: "j1") && gone?.status == 410)
    // A key whose request is still being accepted (no job yet).
    try db.query("INSERT INTO idempotency_keys (key, fingerprint) VALUES ('k-2', 'f')")
    let inUse = #expect(throws: JobsDBError.self) {
      try db.enqueue(id: "j5", kind: "batch", idempotency: .init(key: "k-2", fingerprint: "f"))
    }
    #expect(inUse == .idempotencyKeyInUse(key: "k-2") && inUse?.status == 409)
    #expect(try db.query("SELECT id FROM jobs").rows.isEmpty)
    // Four replicas with the same request at once: one job, three replays.
    let shared = JobsDBIdempotency(key: "k-3", fingerprint: "f")
    let outcomes = Self.atOnce(4) { replica in
      Result { () throws(JobsDBError) -> JobsDBEnqueued in
        try JobsDBConnection(url: url, migrate: false).enqueue(
          id: "r\(replica)", kind: "batch", idempotency: shared)
      }
    }
    let enqueued = try outcomes.map { try $0.get() }
    #expect(enqueued.filter { !$0.replayed }.count == 1)
    #expect(Set(enqueued.map(\.job.id)).count == 1)
    #expect(try db.depth().queued == 1)
  }

  @Test("NOTIFY wakes a listening replica within its timeout; without one, the wait times out")
  func notifications() throws {
    let server = try PostgresServer()
    let url = server.url()
    let waiter = try JobsDBConnection(url: url)
    try waiter.listen()
    let own = try waiter.query("SELECT pg_backend_pid() AS pid").rows.first?.int("pid")
    let pid = try #require(own)
    let clock = ContinuousClock()
    var started = clock.now
    #expect(try waiter.notification(within: .milliseconds(300)) == nil)
    #expect(clock.now - started >= .milliseconds(300))
    #expect(try waiter.notification(within: .zero) == nil)
    let sender = Thread {
      Thread.sleep(forTimeInterval: 0.3)
      _ = try? JobsDBConnection(url: url, migrate: false).enqueue(id: "j1", kind: "batch")
    }
    started = clock.now
    sender.start()
    let woken = try waiter.notification(within: .seconds(10))
    let waited = clock.now - started
    #expect(woken?.channel == JobsDBConnection.queueChannel && woken?.payload == "j1")
    #expect(woken.map { $0.sender != pid } == true)
    #expect(waited >= .milliseconds(250) && waited < .seconds(5), "\(waited)")
    #expect(try waiter.claim(owner: "w", lease: .seconds(60))?.id == "j1")
    // A notification sent while the waiter was busy (by itself here) is kept for its next
    // wait; a hand-back notifies too.
    try waiter.release(id: "j1", owner: "w")
    let handedBack = try waiter.notification(within: .seconds(5))
    #expect(handedBack?.payload == "j1" && handedBack?.sender == pid)
    // No notification of a rolled-back enqueue (its id taken).
    #expect(throws: JobsDBError.self) { try waiter.enqueue(id: "j1", kind: "batch") }
    #expect(try waiter.notification(within: .milliseconds(200)) == nil)
    // A job's end notifies with an empty payload, from another session too (the replica that
    // ran it takes its next job at once); an end refused (the lease not held) does not.
    #expect(try waiter.claim(owner: "w", lease: .seconds(60))?.id == "j1")
    let other = try JobsDBConnection(url: url, migrate: false)
    #expect(throws: JobsDBError.self) { try other.complete(id: "j1", owner: "someone else") }
    #expect(try waiter.notification(within: .milliseconds(200)) == nil)
    try other.complete(id: "j1", owner: "w")
    let ended = try waiter.notification(within: .seconds(5))
    #expect(ended?.channel == JobsDBConnection.queueChannel && ended?.payload == "")
    #expect(ended.map { $0.sender != pid } == true)
    #expect(try waiter.job(id: "j1")?.state == .done)
    #expect(try waiter.notification(within: .milliseconds(200)) == nil)
    // A connection lost while waiting.
    let killer = try JobsDBConnection(url: url, migrate: false)
    try killer.query("SELECT pg_terminate_backend($1)", [pid])
    let lost = #expect(throws: JobsDBError.self) {
      _ = try waiter.notification(within: .seconds(10))
    }
    #expect(lost?.code == "jobsdb.unreachable" && lost?.status == 503)
  }

  @Test("cancels, hand-backs and the queue's depth, read from the database")
  func cancelAndDepth() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    #expect(try db.depth() == JobsDBDepth(queued: 0, running: 0, expired: 0))
    for id in ["j1", "j2", "j3", "j4"] { try db.enqueue(id: id, kind: "batch") }
    #expect(try db.depth() == JobsDBDepth(queued: 4, running: 0, expired: 0))
    _ = try db.claim(owner: "a", lease: .seconds(60))
    _ = try db.claim(owner: "a", lease: .milliseconds(200))
    #expect(try Self.expired(db, "j2"))
    #expect(try db.depth() == JobsDBDepth(queued: 2, running: 1, expired: 1))
    // A queued job is canceled at once and never claimed.
    let canceled = try db.cancel(id: "j3")
    #expect(canceled.state == .canceled && canceled.cancelRequested)
    #expect(try db.depth() == JobsDBDepth(queued: 1, running: 1, expired: 1))
    // A running one is marked for its owner, who sees it when it renews.
    #expect(try db.cancel(id: "j1").state == .running)
    #expect(try db.renew(id: "j1", owner: "a", lease: .seconds(60)).cancelRequested)
    #expect(try db.finish(id: "j1", owner: "a", as: .canceled).state == .canceled)
    // An ended job is left as it is; no job, an error.
    let again = try db.cancel(id: "j1")
    #expect(again.state == .canceled)
    let missing = #expect(throws: JobsDBError.self) { try db.cancel(id: "nope") }
    #expect(missing == .jobNotFound(id: "nope") && missing?.status == 404)
    #expect(missing?.message == "jobs database has no job 'nope'")
    // The expired j2 first (older), then j4; j2 handed back is claimable again.
    let next = try #require(try db.claim(owner: "b", lease: .seconds(60)))
    #expect(next.id == "j2" && next.attempts == 2)
    let handed = try db.release(id: "j2", owner: "b")
    #expect(handed.state == .queued && handed.leaseOwner == nil && handed.attempts == 2)
    #expect(try db.depth() == JobsDBDepth(queued: 2, running: 0, expired: 0))
    #expect(try db.claim(owner: "c", lease: .seconds(60))?.id == "j2")
    #expect(try db.claim(owner: "c", lease: .seconds(60))?.id == "j4")
    #expect(try db.claim(owner: "c", lease: .seconds(60)) == nil)
    // A record that is not JSON is refused, and the job keeps its lease.
    let bad = #expect(throws: JobsDBError.self) {
      try db.complete(id: "j4", owner: "c", record: "not json")
    }
    #expect(bad?.sqlState == "22P02")
    #expect(try db.job(id: "j4")?.leaseOwner == "c")
  }
}
