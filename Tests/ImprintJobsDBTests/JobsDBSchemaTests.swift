// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: the schema migrated at connect, once, however many replicas connect at the
// same moment; against a real PostgreSQL (PostgresServer).

import Foundation
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintJobsDB

@Suite("Jobs database schema", .tags(.slow), .skippedWhenQuick, .liveHandlesChecked)
struct JobsDBSchemaTests {
  /// The tables the migrations make (1: the first four, 2: `job_shards`).
  static let tables = [
    "jobs", "idempotency_keys", "webhook_deliveries", "print_claims", "job_shards",
  ]

  /// The versions `schema_migrations` records, in order.
  static func recorded(_ db: borrowing JobsDBConnection) throws -> [Int] {
    try db.query("SELECT version FROM schema_migrations ORDER BY version").rows.compactMap {
      try $0.int("version")
    }
  }

  /// The tables of `tables` the database has.
  static func present(_ db: borrowing JobsDBConnection) throws -> [String] {
    try tables.filter { table in
      try db.query("SELECT to_regclass($1) IS NOT NULL AS present", [table]).rows.first?
        .bool("present") == true
    }
  }

  /// Whether, within 10 s, the server has `db`'s session alone: every other connection was
  /// closed (`PQfinish`) when its value was released, or when its opening failed.
  static func aloneSoon(_ db: borrowing JobsDBConnection) throws -> Bool {
    try waitFor(tries: 1000) {
      try db.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend'"
      ).rows.first?.int("n") == 1
    }
  }

  @Test("an empty database is migrated to the latest schema, each version recorded")
  func emptyDatabase() throws {
    let server = try PostgresServer()
    try server.createDatabase("imprint")
    let plain = try JobsDBConnection(url: server.url(database: "imprint"), migrate: false)
    #expect(try plain.migrated.isEmpty && Self.present(plain).isEmpty)
    let db = try JobsDBConnection(url: server.url(database: "imprint"))
    #expect(JobsDBSchema.latest == 2 && db.migrated == [1, 2])
    #expect(try Self.recorded(db) == [1, 2] && Self.present(db) == Self.tables)
    let names = try db.query("SELECT name FROM schema_migrations ORDER BY version").rows.map {
      $0.string("name")
    }
    #expect(names == JobsDBSchema.migrations.map(\.name))
  }

  @Test("connecting again applies nothing and changes nothing")
  func again() throws {
    let server = try PostgresServer()
    let first = try JobsDBConnection(url: server.url())
    let applied = "SELECT applied_at::text AS at FROM schema_migrations"
    let at = try first.query(applied).rows.first?.string("at")
    try first.query("INSERT INTO jobs (id, kind) VALUES ('kept', 'batch')")
    let second = try JobsDBConnection(url: server.url())
    #expect(try second.migrated.isEmpty && Self.recorded(second) == [1, 2])
    #expect(try second.query(applied).rows.first?.string("at") == at)
    #expect(try second.query("SELECT id FROM jobs").rows.map { $0.string("id") } == ["kept"])
    // The server's notice of the table already there is kept, never printed.
    #expect(
      second.notices.contains { $0.contains(#"relation "schema_migrations" already exists"#) },
      "\(second.notices)")
  }

  @Test("a database of version 1 with jobs in it gets version 2 alone; its jobs kept, whole")
  func fromVersionOne() throws {
    let server = try PostgresServer()
    let url = server.url()
    // Version 1 as an imprint that knew only it left it: its statements and record.
    do {
      let plain = try JobsDBConnection(url: url, migrate: false)
      try plain.query(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
          + "applied_at timestamptz NOT NULL DEFAULT now())")
      for statement in JobsDBSchema.migrations[0].statements { try plain.query(statement) }
      try plain.query(
        "INSERT INTO schema_migrations (version, name) VALUES (1, $1)",
        [JobsDBSchema.migrations[0].name])
      try plain.query("INSERT INTO jobs (id, kind, record) VALUES ('old', 'batch', '{\"a\": 1}')")
      #expect(try Self.present(plain) == Array(Self.tables.prefix(4)))
    }
    let db = try JobsDBConnection(url: url)
    #expect(try db.migrated == [2] && Self.recorded(db) == [1, 2])
    #expect(try Self.present(db) == Self.tables)
    let old = try #require(try db.job(id: "old"))
    #expect(old.shards == 0 && old.state == .queued && old.record == #"{"a": 1}"#)
    // Claimed whole, as before.
    let claimed = try #require(try db.claim(owner: "r", lease: .seconds(60)))
    #expect(claimed.id == "old" && claimed.shard == nil && claimed.leaseOwner == "r")
  }

  @Test("five replicas connecting at once to an empty database migrate it exactly once")
  func fiveAtOnce() throws {
    let server = try PostgresServer()
    let url = server.url()
    let results = Outcomes()
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    // Threads, not tasks: libpq blocks its thread, and five must wait on the lock at once.
    for _ in 0..<5 {
      done.enter()
      Thread {
        start.wait()
        let result = Result { () throws(JobsDBError) in try JobsDBConnection(url: url).migrated }
        results.list.withLock { $0.append(result) }
        done.leave()
      }.start()
    }
    for _ in 0..<5 { start.signal() }
    done.wait()
    let migrated = try results.list.withLock { try $0.map { try $0.get() } }
    #expect(migrated.count == 5)
    #expect(migrated.filter { $0 == [1, 2] }.count == 1 && migrated.filter(\.isEmpty).count == 4)
    let db = try JobsDBConnection(url: url, migrate: false)
    #expect(try Self.recorded(db) == [1, 2] && Self.present(db) == Self.tables)
    #expect(try Self.aloneSoon(db))
  }

  @Test("a schema migrated by a newer imprint is refused, and left as it was")
  func newer() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url(password: "pw-newer"))
    try db.query(
      "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')",
      [JobsDBSchema.latest + 1])
    let error = #expect(throws: JobsDBError.self) {
      _ = try JobsDBConnection(url: server.url(password: "pw-newer"))
    }
    #expect(error?.code == "jobsdb.schemaTooNew" && error?.status == 500)
    #expect(
      error?.message == "jobs database '\(server.url(password: "***"))' has schema version "
        + "\(JobsDBSchema.latest + 1); this imprint knows up to \(JobsDBSchema.latest)")
    #expect(try Self.recorded(db) == [1, 2, 3])
  }

  @Test("a migration that fails leaves nothing of itself: one transaction, its connection closed")
  func failedMigration() throws {
    let server = try PostgresServer()
    try server.createDatabase("imprint")
    let url = server.url(database: "imprint")
    // A table in the way of migration 1's second table: its first statement ran, then failed.
    let plain = try JobsDBConnection(url: url, migrate: false)
    try plain.query("CREATE TABLE idempotency_keys (other integer)")
    let error = #expect(throws: JobsDBError.self) { _ = try JobsDBConnection(url: url) }
    #expect(error?.sqlState == "42P07")
    #expect(try Self.aloneSoon(plain))
    #expect(try Self.present(plain) == ["idempotency_keys"])
    #expect(
      try plain.query("SELECT to_regclass('schema_migrations') AS t").rows.first?
        .string("t") == nil)
  }
}

/// What each replica's connection did, gathered from their threads.
private final class Outcomes: Sendable {
  let list = Mutex<[Result<[Int], JobsDBError>]>([])
}
