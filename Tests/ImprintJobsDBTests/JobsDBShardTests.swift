// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: jobs run in shards against a real PostgreSQL (PostgresServer): each shard
// claimed once under a lease of its own, in the queue's order; one last shard of two ending at
// once; takeover, cancel, hand-back and the queue's depth with shards.

import Foundation
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintJobsDB

@Suite("Jobs database shards", .tags(.slow), .skippedWhenQuick, .liveHandlesChecked)
struct JobsDBShardTests {
  /// Shard `shard` of `id`'s lease has expired by the database's clock (at most 10 s).
  static func expired(_ db: borrowing JobsDBConnection, _ id: String, _ shard: Int) throws
    -> Bool
  {
    try waitFor(tries: 1000) {
      try db.query(
        "SELECT lease_until < now() AS gone FROM job_shards WHERE job_id = $1 AND shard = $2",
        [id, shard]
      ).rows.first?.bool("gone") == true
    }
  }

  /// The states of `id`'s shards, in order.
  static func states(_ db: borrowing JobsDBConnection, _ id: String) throws -> [String] {
    let rows = try db.query("SELECT state FROM job_shards WHERE job_id = $1 ORDER BY shard", [id])
    return rows.rows.map { $0.string("state") ?? "?" }
  }

  @Test("a job's shards are claimed in the queue's order, each once, among whole jobs")
  func order() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "a", kind: "batch")
    let b = try db.enqueue(id: "b", kind: "batch", shards: 3).job
    #expect(b.shards == 3 && b.shard == nil && b.state == .queued)
    try db.enqueue(id: "c", kind: "batch", shards: 1)
    #expect(try db.job(id: "c")?.shards == 0)
    #expect(try Self.states(db, "b") == ["queued", "queued", "queued"])
    var claimed: [String] = []
    while let job = try db.claim(owner: "r", lease: .seconds(60)) {
      claimed.append(job.shard.map { "\(job.id)\($0)" } ?? job.id)
      #expect(job.state == .running && job.leaseOwner == "r" && job.leaseUntil != nil)
      #expect(job.attempts == 1)
    }
    #expect(claimed == ["a", "b0", "b1", "b2", "c"])
    // The shards' job holds no lease of its own; its shards do.
    let row = try #require(try db.job(id: "b"))
    #expect(row.state == .running && row.leaseOwner == nil && row.started != nil)
    #expect(try Self.states(db, "b") == ["running", "running", "running"])
    #expect(try db.depth() == JobsDBDepth(queued: 0, running: 3, expired: 0))
  }

  @Test("six replicas at once over 40 shards of 4 jobs: each shard run once, one last a job")
  func concurrent() throws {
    let server = try PostgresServer()
    let url = server.url()
    let db = try JobsDBConnection(url: url)
    for index in 0..<4 { try db.enqueue(id: "job-\(index)", kind: "batch", shards: 10) }
    let runs = JobsDBQueueTests.atOnce(6) { replica in
      Result { () throws(JobsDBError) -> [String] in
        let own = try JobsDBConnection(url: url, migrate: false)
        let owner = "replica-\(replica)"
        var ran: [String] = []
        while let job = try own.claim(owner: owner, lease: .seconds(60)) {
          guard let shard = job.shard else { return ["whole \(job.id)"] }
          ran.append("\(job.id)/\(shard)")
          if try own.endShard(id: job.id, shard: shard, owner: owner) {
            ran.append("last \(job.id)")
            try own.finish(id: job.id, owner: owner, as: .done, record: "{}", shard: shard)
          }
        }
        return ran
      }
    }
    let all = try runs.flatMap { try $0.get() }
    let shards = all.filter { !$0.hasPrefix("last") }
    #expect(shards.count == 40 && Set(shards).count == 40, "\(all)")
    #expect(all.filter { $0.hasPrefix("last") }.sorted() == (0..<4).map { "last job-\($0)" })
    for index in 0..<4 {
      #expect(try db.job(id: "job-\(index)")?.state == .done)
      #expect(try Self.states(db, "job-\(index)") == Array(repeating: "done", count: 10))
    }
    #expect(try db.claim(owner: "late", lease: .seconds(60)) == nil)
  }

  @Test("the last two shards ending at once: exactly one is last, whichever locks second")
  func lastOfTwo() throws {
    let server = try PostgresServer()
    let url = server.url()
    let db = try JobsDBConnection(url: url)
    for round in 0..<20 {
      let id = "j\(round)"
      try db.enqueue(id: id, kind: "batch", shards: 2)
      let first = try #require(try db.claim(owner: "x", lease: .seconds(60)))
      let second = try #require(try db.claim(owner: "y", lease: .seconds(60)))
      #expect(first.shard == 0 && second.shard == 1)
      let ends = JobsDBQueueTests.atOnce(2) { index in
        Result { () throws(JobsDBError) -> Bool in
          let own = try JobsDBConnection(url: url, migrate: false)
          return try own.endShard(id: id, shard: index, owner: index == 0 ? "x" : "y")
        }
      }
      let last = try ends.map { try $0.get() }
      #expect(last.filter { $0 }.count == 1, "round \(round): \(last)")
      // The last is still its owner's, running, for the merge; the other is done.
      let lastShard = try #require(last.firstIndex(of: true))
      let expected = lastShard == 0 ? ["running", "done"] : ["done", "running"]
      #expect(try Self.states(db, id) == expected)
      let ended = try db.finish(
        id: id, owner: lastShard == 0 ? "x" : "y", as: .done, record: #"{"merged": true}"#,
        shard: lastShard)
      #expect(ended.state == .done && ended.record == #"{"merged": true}"#)
    }
  }

  @Test("an expired shard is taken over; its old owner can neither renew, end nor hand it back")
  func takeover() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "j", kind: "batch", shards: 2)
    let a0 = try #require(try db.claim(owner: "a", lease: .seconds(1)))
    let b1 = try #require(try db.claim(owner: "b", lease: .seconds(60)))
    #expect(a0.shard == 0 && b1.shard == 1)
    // Both held: nothing to claim.
    #expect(try db.claim(owner: "c", lease: .seconds(60)) == nil)
    #expect(try Self.expired(db, "j", 0))
    #expect(try db.depth() == JobsDBDepth(queued: 0, running: 0, expired: 1))
    let c0 = try #require(try db.claim(owner: "c", lease: .seconds(60)))
    #expect(c0.id == "j" && c0.shard == 0 && c0.attempts == 2 && c0.leaseOwner == "c")
    #expect(try db.job(id: "j")?.attempts == 2)
    let lost = JobsDBError.leaseLost(job: "j", owner: "a")
    #expect(throws: lost) { try db.renew(id: "j", owner: "a", lease: .seconds(60), shard: 0) }
    #expect(throws: lost) { try db.endShard(id: "j", shard: 0, owner: "a") }
    #expect(throws: lost) { try db.release(id: "j", owner: "a", shard: 0) }
    #expect(throws: lost) { try db.finish(id: "j", owner: "a", as: .failed, shard: 0) }
    #expect(throws: lost) { try db.setBytes(id: "j", owner: "a", bytes: 5, shard: 0) }
    // Nor can a shard's owner end the job as if it ran whole, or another shard.
    #expect(throws: JobsDBError.leaseLost(job: "j", owner: "b")) {
      try db.finish(id: "j", owner: "b", as: .done)
    }
    #expect(throws: JobsDBError.leaseLost(job: "j", owner: "b")) {
      try db.endShard(id: "j", shard: 0, owner: "b")
    }
    try db.setBytes(id: "j", owner: "c", bytes: 1234, shard: 0)
    #expect(try db.job(id: "j")?.bytes == 1234)
    let renewed = try db.renew(id: "j", owner: "c", lease: .seconds(60), shard: 0)
    #expect(renewed.shard == 0 && renewed.leaseOwner == "c" && !renewed.cancelRequested)
    #expect(try !db.endShard(id: "j", shard: 1, owner: "b"))
    #expect(try db.endShard(id: "j", shard: 0, owner: "c"))
    #expect(try db.finish(id: "j", owner: "c", as: .done, shard: 0).state == .done)
    // Ended: its owner cannot end it again, no one claims it.
    #expect(throws: JobsDBError.leaseLost(job: "j", owner: "c")) {
      try db.finish(id: "j", owner: "c", as: .done, shard: 0)
    }
    #expect(try db.claim(owner: "d", lease: .seconds(60)) == nil)
  }

  @Test("a cancel reaches each shard's owner; the job ended, the others stop, none is claimed")
  func cancel() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "j", kind: "batch", shards: 4)
    _ = try db.claim(owner: "a", lease: .seconds(60))
    _ = try db.claim(owner: "b", lease: .seconds(60))
    #expect(try db.cancel(id: "j").state == .running)
    #expect(try db.renew(id: "j", owner: "a", lease: .seconds(60), shard: 0).cancelRequested)
    #expect(try db.finish(id: "j", owner: "a", as: .canceled, shard: 0).state == .canceled)
    // The other shard's owner learns at its renewal that the job is gone.
    #expect(throws: JobsDBError.leaseLost(job: "j", owner: "b")) {
      try db.renew(id: "j", owner: "b", lease: .seconds(60), shard: 1)
    }
    #expect(throws: JobsDBError.leaseLost(job: "j", owner: "b")) {
      try db.endShard(id: "j", shard: 1, owner: "b")
    }
    #expect(try db.claim(owner: "c", lease: .seconds(60)) == nil)
    #expect(try db.depth() == JobsDBDepth(queued: 0, running: 0, expired: 0))
    // A queued job of shards is canceled at once; removed, its shards go with it.
    try db.enqueue(id: "k", kind: "batch", shards: 3)
    #expect(try db.cancel(id: "k").state == .canceled)
    #expect(try db.remove(id: "k").removed)
    let left = try db.query("SELECT count(*) AS n FROM job_shards WHERE job_id = 'k'")
    #expect(try left.rows.first?.int("n") == 0)
  }

  @Test("a shard's end wakes no one; the replica's own notice, once free, does")
  func notices() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    let listener = try JobsDBConnection(url: server.url(), migrate: false)
    try listener.listen()
    try db.enqueue(id: "j", kind: "batch", shards: 2)
    #expect(try listener.notification(within: .seconds(5))?.payload == "j")
    _ = try db.claim(owner: "a", lease: .seconds(60))
    // Its replica still holds its run when the shard's end is written: a notice then would
    // find it busy.
    #expect(try !db.endShard(id: "j", shard: 0, owner: "a"))
    #expect(try listener.notification(within: .milliseconds(300)) == nil)
    try db.notifyQueue()
    let free = try #require(try listener.notification(within: .seconds(5)))
    #expect(free.channel == JobsDBConnection.queueChannel && free.payload == "")
  }

  @Test("a shard handed back is claimed again, first; its job stays running")
  func handBack() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "j", kind: "batch", shards: 3)
    try db.enqueue(id: "later", kind: "batch")
    _ = try db.claim(owner: "a", lease: .seconds(60))
    _ = try db.claim(owner: "a", lease: .seconds(60))
    let handed = try db.release(id: "j", owner: "a", shard: 1)
    #expect(handed.state == .running && handed.leaseOwner == nil)
    #expect(try Self.states(db, "j") == ["running", "queued", "queued"])
    let again = try #require(try db.claim(owner: "b", lease: .seconds(60)))
    #expect(again.id == "j" && again.shard == 1 && again.attempts == 2)
    #expect(try db.claim(owner: "b", lease: .seconds(60))?.shard == 2)
    #expect(try db.claim(owner: "b", lease: .seconds(60))?.id == "later")
  }
}
