// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: print claims against a real PostgreSQL: made only under the job's
// unexpired lease, in the same transaction; kept by the run that made them, so that a later run
// of the job (a takeover) finds a part another run claimed.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintJobsDB

@Suite("Jobs database print claims", .tags(.slow), .skippedWhenQuick, .liveHandlesChecked)
struct JobsDBPrintClaimTests {
  @Test("claimed under the lease alone; a later run finds the parts a printer may have")
  func claimedOnce() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "order", kind: "prepare")
    _ = try #require(try db.claim(owner: "a", lease: .milliseconds(500)))
    #expect(
      try db.claimPrint(job: "order", line: "L1", part: "whole", owner: "a", run: "a/1") == "a/1")
    // The same run again: still its own.
    #expect(
      try db.claimPrint(job: "order", line: "L1", part: "whole", owner: "a", run: "a/1") == "a/1")
    #expect(
      try db.claimPrint(job: "order", line: "L2", part: "color", owner: "a", run: "a/1") == "a/1")
    // The printer made job 7 for the first part (its document on its way).
    try db.printCreated(
      job: "order", line: "L1", part: "whole", owner: "a", run: "a/1", printer: "p", printerJob: 7)
    // Not the lease's owner: nothing claimed.
    #expect(throws: JobsDBError.leaseLost(job: "order", owner: "b")) {
      _ = try db.claimPrint(job: "order", line: "L2", part: "mono", owner: "b", run: "b/1")
    }
    // The lease expired, not yet taken over: its owner may not claim either.
    #expect(try JobsDBQueueTests.expired(db, "order"))
    #expect(throws: JobsDBError.leaseLost(job: "order", owner: "a")) {
      _ = try db.claimPrint(job: "order", line: "L2", part: "mono", owner: "a", run: "a/1")
    }
    // Taken over: a part the first run made a printer's job for stays its own (the printer
    // may have it); one it made none for is the new run's; the others are claimed.
    _ = try #require(try db.claim(owner: "b", lease: .seconds(60)))
    #expect(throws: JobsDBError.leaseLost(job: "order", owner: "a")) {
      try db.printCreated(
        job: "order", line: "L2", part: "color", owner: "a", run: "a/1", printer: "p",
        printerJob: 8)
    }
    #expect(
      try db.claimPrint(job: "order", line: "L1", part: "whole", owner: "b", run: "b/2") == "a/1")
    #expect(
      try db.claimPrint(job: "order", line: "L2", part: "color", owner: "b", run: "b/2") == "b/2")
    #expect(
      try db.claimPrint(job: "order", line: "L2", part: "mono", owner: "b", run: "b/2") == "b/2")
    // Only the claim's run records its printer's job.
    #expect(throws: JobsDBError.leaseLost(job: "order", owner: "b")) {
      try db.printCreated(
        job: "order", line: "L1", part: "whole", owner: "b", run: "b/2", printer: "p",
        printerJob: 9)
    }
    try db.printCreated(
      job: "order", line: "L2", part: "mono", owner: "b", run: "b/2", printer: "p", printerJob: 10)
    let claims = try db.printClaims(job: "order").map {
      "\($0.line) \($0.part) \($0.run) \($0.printerJob.map(String.init) ?? "-")"
    }
    #expect(claims == ["L1 whole a/1 7", "L2 color b/2 -", "L2 mono b/2 10"], "\(claims)")
    // The job ended and removed: its claims go with it.
    try db.complete(id: "order", owner: "b")
    #expect(throws: JobsDBError.leaseLost(job: "order", owner: "b")) {
      _ = try db.claimPrint(job: "order", line: "L3", part: "whole", owner: "b", run: "b/2")
    }
    #expect(try db.remove(id: "order").removed)
    #expect(try db.printClaims(job: "order").isEmpty)
  }

  @Test("a printer's job canceled unsent is given back: the next run takes the part")
  func withdrawn() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.enqueue(id: "order", kind: "prepare")
    _ = try #require(try db.claim(owner: "a", lease: .milliseconds(500)))
    for line in ["L1", "L2"] {
      _ = try db.claimPrint(job: "order", line: line, part: "whole", owner: "a", run: "a/1")
      try db.printCreated(
        job: "order", line: line, part: "whole", owner: "a", run: "a/1", printer: "p",
        printerJob: line == "L1" ? 7 : 8)
    }
    // L1's job 7 was canceled before its document was sent (the journal could not be
    // written). Another run's or another job's number changes nothing.
    try db.printWithdrawn(job: "order", line: "L2", part: "whole", run: "a/1", printerJob: 7)
    try db.printWithdrawn(job: "order", line: "L2", part: "whole", run: "b/1", printerJob: 8)
    try db.printWithdrawn(job: "order", line: "L1", part: "whole", run: "a/1", printerJob: 7)
    var claims = try db.printClaims(job: "order").map {
      "\($0.line) \($0.run) \($0.printerJob.map(String.init) ?? "-")"
    }
    #expect(claims == ["L1 a/1 -", "L2 a/1 8"], "\(claims)")
    // Taken over: L1 is the new run's to send, L2 stays the first run's (the printer may have
    // it).
    #expect(try JobsDBQueueTests.expired(db, "order"))
    _ = try #require(try db.claim(owner: "b", lease: .seconds(60)))
    #expect(
      try db.claimPrint(job: "order", line: "L1", part: "whole", owner: "b", run: "b/2") == "b/2")
    #expect(
      try db.claimPrint(job: "order", line: "L2", part: "whole", owner: "b", run: "b/2") == "a/1")
    claims = try db.printClaims(job: "order").map { "\($0.line) \($0.run)" }
    #expect(claims.sorted() == ["L1 b/2", "L2 a/1"], "\(claims)")
  }

  @Test("claims at once by the lease's run and by a replica that lost the job: the run's alone")
  func atOnce() throws {
    let server = try PostgresServer()
    let url = server.url()
    let db = try JobsDBConnection(url: url)
    try db.enqueue(id: "order", kind: "prepare")
    _ = try #require(try db.claim(owner: "a", lease: .seconds(60)))
    // Eight threads, each a part: the even ones the lease's run (a/1), the odd ones a replica
    // whose lease is gone (b/1).
    let results = JobsDBQueueTests.atOnce(8) { index in
      Result { () throws(JobsDBError) -> String in
        let own = try JobsDBConnection(url: url, migrate: false)
        let owner = index % 2 == 0 ? "a" : "b"
        return try own.claimPrint(
          job: "order", line: "L\(index)", part: "whole", owner: owner, run: "\(owner)/1")
      }
    }
    for (index, result) in results.enumerated() {
      if index % 2 == 0 {
        #expect(try result.get() == "a/1")
      } else {
        #expect(throws: JobsDBError.leaseLost(job: "order", owner: "b")) { try result.get() }
      }
    }
    let claims = try db.printClaims(job: "order").map { "\($0.line) \($0.run)" }.sorted()
    #expect(claims == ["L0 a/1", "L2 a/1", "L4 a/1", "L6 a/1"])
  }
}
