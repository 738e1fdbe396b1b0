// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: connections, statements and errors against a real PostgreSQL (a private
// server each test, PostgresServer), and URLs no server answers.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintJobsDB

@Suite("Jobs database connections", .tags(.slow), .skippedWhenQuick, .liveHandlesChecked)
struct JobsDBConnectionTests {
  /// A password no message may show.
  static let secret = "s3cret-Pa55"

  /// The error of connecting to `url`, checked to be `code` with `status` and to show no
  /// password.
  static func failure(of url: String, _ code: String, _ status: Int) -> JobsDBError? {
    let error = #expect(throws: JobsDBError.self) { _ = try JobsDBConnection(url: url) }
    #expect(error?.code == code && error?.status == status, "\(url)")
    #expect(error?.message.contains(secret) == false, "\(String(describing: error))")
    return error
  }

  @Test("parameters are values, never SQL, and come back as Swift values")
  func parameters() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    let hostile = "'); DROP TABLE jobs; --"
    let result = try db.query(
      "SELECT $1::text AS t, $2::bigint + 1 AS n, $3::boolean AS b, $4::float8 AS d, "
        + "$5::text IS NULL AS absent, $6::text AS word",
      [hostile, 41, true, 0.25, nil, "żółw 🐢"])
    #expect(result.columns == ["t", "n", "b", "d", "absent", "word"])
    let row = try #require(result.rows.first)
    #expect(row.string("t") == hostile)
    #expect(try row.int("n") == 42 && row.bool("b") == true && row.double("d") == 0.25)
    #expect(try row.bool("absent") == true && row.string("word") == "żółw 🐢")
    #expect(try db.query("SELECT count(*) AS n FROM jobs").rows.first?.int("n") == 0)
    // A value read as the wrong type, and one text parameters cannot carry.
    let wrong = #expect(throws: JobsDBError.self) { _ = try row.int("t") }
    #expect(wrong?.code == "jobsdb.value" && wrong?.status == 500 && wrong?.sqlState == nil)
    #expect(wrong?.message == "jobs database column 't' holds '\(hostile)', expected an integer")
    let nul = #expect(throws: JobsDBError.self) {
      try db.query("SELECT $1::text", ["a\u{0}b"])
    }
    #expect(nul?.code == "jobsdb.parameter" && nul?.status == 500)
    #expect(nul?.message == "parameter $1 of 'SELECT $1::text' holds a NUL character")
    // Rows changed are counted; NULL reads as nil whatever the type.
    try db.query("INSERT INTO jobs (id, kind) VALUES ($1, 'batch'), ($2, 'batch')", ["a", "b"])
    let updated = try db.query("UPDATE jobs SET bytes = $1 WHERE kind = 'batch'", [7])
    #expect(updated.changed == 2 && updated.rows.isEmpty)
    let nulls = try db.query("SELECT started_at, lease_until FROM jobs WHERE id = $1", ["a"])
    #expect(try nulls.rows.first?.int("lease_until") == nil)
  }

  @Test("a statement the server refuses is jobsdb.query with its SQLSTATE; one at a time")
  func refused() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    let missing = #expect(throws: JobsDBError.self) {
      try db.query("SELECT * FROM no_such_table WHERE id = $1", ["x"])
    }
    #expect(missing?.code == "jobsdb.query" && missing?.status == 500)
    #expect(missing?.sqlState == "42P01")
    #expect(
      missing?.message
        == #"jobs database refused 'SELECT * FROM no_such_table WHERE id = $1' with SQLSTATE 42P01 (relation "no_such_table" does not exist)"#
    )
    // Two statements in one call are refused whole: the second never runs.
    let two = #expect(throws: JobsDBError.self) {
      try db.query("INSERT INTO jobs (id, kind) VALUES ('x', 'batch'); DROP TABLE jobs")
    }
    #expect(two?.sqlState == "42601")
    // A constraint: a lease has both its owner and its expiry, or neither.
    let lease = #expect(throws: JobsDBError.self) {
      try db.query("INSERT INTO jobs (id, kind, lease_owner) VALUES ('y', 'batch', 'r1')")
    }
    #expect(lease?.sqlState == "23514")
    // The connection is usable after each.
    #expect(try db.query("SELECT count(*) AS n FROM jobs").rows.first?.int("n") == 0)
  }

  @Test("a lease's expiry is the database's clock plus its length, not the replica's")
  func leaseUsesDatabaseClock() throws {
    let server = try PostgresServer()
    let db = try JobsDBConnection(url: server.url())
    try db.query("INSERT INTO jobs (id, kind) VALUES ($1, $2)", ["job-1", "batch"])
    let before = try db.now()
    let claimed = try db.query(
      """
      UPDATE jobs SET state = 'running', lease_owner = $2,
        lease_until = now() + make_interval(secs => $3), attempts = attempts + 1
      WHERE id = $1 AND state = 'queued'
      RETURNING extract(epoch FROM lease_until)::float8 AS until,
        lease_until - now() = interval '30 seconds' AS exact, attempts
      """, ["job-1", "replica-1", 30.0])
    let row = try #require(claimed.rows.first)
    #expect(claimed.changed == 1 && row.string("exact") == "t")
    let until = try #require(try row.double("until"))
    let after = try db.now()
    // Read against the database's own now(), on both sides of the claim.
    #expect(until >= before + 30 && until <= after + 30)
    // Not leased again while the lease runs; taken once it has expired (by the database).
    let early = try db.query(
      "UPDATE jobs SET lease_owner = $2 WHERE id = $1 AND lease_until < now()",
      ["job-1", "replica-2"])
    #expect(early.changed == 0)
    try db.query(
      "UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1", ["job-1"])
    let late = try db.query(
      "UPDATE jobs SET lease_owner = $2, lease_until = now() + interval '30 seconds' "
        + "WHERE id = $1 AND lease_until < now() RETURNING lease_owner", ["job-1", "replica-2"])
    #expect(late.rows.first?.string("lease_owner") == "replica-2")
  }

  @Test("an unreachable database is jobsdb.unreachable, 503, without the URL's password")
  func unreachable() throws {
    let folder = TemporaryFolder()
    let urls = [
      "postgresql://imprint:\(Self.secret)@/imprint?host=\(folder.path)",
      "postgres://imprint@/imprint?host=\(folder.path)&password=\(Self.secret)",
      "host=\(folder.path) dbname=imprint user=imprint password='\(Self.secret)'",
      "host=\(folder.path) password=\(Self.secret) dbname=imprint",
    ]
    for url in urls {
      let error = Self.failure(of: url, "jobsdb.unreachable", 503)
      #expect(error?.message.contains("***") == true, "\(String(describing: error))")
      #expect(
        error?.message.contains("No such file or directory") == true,
        "libpq's reason: \(String(describing: error))")
    }
    // A connection whose server stops, as a crash stops it or cleanly: the next statement is
    // unreachable too.
    let server = try PostgresServer()
    try server.stop()
    for mode in [PostgresServer.StopMode.immediate, .fast] {
      try server.start()
      let db = try JobsDBConnection(url: server.url(password: Self.secret))
      #expect(db.url.contains("***") && !db.url.contains(Self.secret))
      try server.stop(mode)
      let lost = #expect(throws: JobsDBError.self) { try db.query("SELECT 1") }
      #expect(lost?.code == "jobsdb.unreachable", "\(mode): \(String(describing: lost))")
      #expect(lost?.message.contains(Self.secret) == false, "\(String(describing: lost))")
      // Connecting again fails while the server is down, and works once it is back, with the
      // connection's settings and notices kept.
      let down = #expect(throws: JobsDBError.self) { try db.reconnect() }
      #expect(down?.code == "jobsdb.unreachable")
      #expect(down?.message.contains(Self.secret) == false, "\(String(describing: down))")
      try server.start()
      try db.reconnect()
      let name = try db.query("SELECT current_setting('application_name') AS name").rows.first
      #expect(name?.string("name") == "imprint")
      try db.query("CREATE TABLE IF NOT EXISTS jobs ()")
      #expect(db.notices.last?.contains(#"relation "jobs" already exists"#) == true)
      try server.stop(.fast)
    }
  }

  @Test("a server that never answers is jobsdb.unreachable once connect_timeout has passed")
  func silentServer() throws {
    // A socket where PostgreSQL's would be, listening, never accepting: the connection is made
    // by the kernel, the server's answer never comes.
    let folder = TemporaryFolder()
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) {
      $0.copyBytes(from: folder.file(".s.PGSQL.5432").utf8)
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    #expect(bound == 0 && listen(listener, 8) == 0)
    let started = ContinuousClock.now
    let error = Self.failure(
      of: "postgres://imprint:\(Self.secret)@/imprint?host=\(folder.path)&connect_timeout=2",
      "jobsdb.unreachable", 503)
    let waited = ContinuousClock.now - started
    #expect(
      error?.message.contains("timeout expired after 2 s") == true, "\(String(describing: error))")
    #expect(waited >= .milliseconds(1900) && waited < .seconds(15), "\(waited)")
  }

  @Test("a URL libpq cannot read is jobsdb.invalidURL, its password taken out of libpq's text")
  func invalidURL() {
    // libpq quotes the first URI whole; the second is a pair without its '='.
    let urls = [
      "postgres://imprint:\(Self.secret)@[::1/imprint",
      "host=/tmp password='\(Self.secret)' dbname",
      "postgresql://imprint:\(Self.secret)@db/imprint?no_such_option=1",
    ]
    let errors = urls.map { Self.failure(of: $0, "jobsdb.invalidURL", 500) }
    let quoted = errors[0]
    #expect(
      quoted?.message
        == "jobs database URL 'postgres://imprint:***@[::1/imprint' cannot be read (libpq: end of "
        + "string reached when looking for matching \"]\" in IPv6 host address in URI: "
        + "\"postgres://imprint:***@[::1/imprint\")")
  }

  @Test("a password is taken out of URLs of every form, and out of libpq's text")
  func passwordsShown() {
    let cases = [
      ("postgres://u:p%40ss@h/db", "postgres://u:***@h/db", ["p%40ss", "p@ss"]),
      (
        "postgresql://u@h/db?sslmode=require&password=x1",
        "postgresql://u@h/db?sslmode=require&password=***", ["x1"]
      ),
      ("postgres://u:a@b@h/db", "postgres://u:***@h/db", ["a@b"]),
      ("postgres://h/db", "postgres://h/db", []),
      ("host=h password = 'it\\'s' user=u", "host=h password = *** user=u", ["'it\\'s'", "it's"]),
      ("password=p\\ q user=u", "password=*** user=u", ["p\\ q", "p q"]),
    ]
    for (url, shown, passwords) in cases {
      let address = JobsDBURL(url)
      #expect(address.shown == shown, "\(url)")
      #expect(Set(address.passwords) == Set(passwords), "\(url)")
    }
    let address = JobsDBURL("postgres://u:p%40ss@h/db")
    #expect(
      address.scrub("bad URI \"postgres://u:p%40ss@h/db\" (p@ss)")
        == "bad URI \"postgres://u:***@h/db\" (***)")
  }

  @Test("imprint names itself and speaks UTF-8 unless the URL says otherwise; UTF-8 always")
  func settings() throws {
    let server = try PostgresServer()
    let plain = try JobsDBConnection(url: server.url())
    let read =
      "SELECT current_setting('application_name') AS name, "
      + "current_setting('client_encoding') AS encoding"
    let first = try #require(try plain.query(read).rows.first)
    #expect(first.string("name") == "imprint" && first.string("encoding") == "UTF8")
    #expect(plain.option("connect_timeout") == "10")
    let own = try JobsDBConnection(
      url: server.url()
        + "&application_name=replica-2&connect_timeout=3&client_encoding=LATIN1")
    let second = try #require(try own.query(read).rows.first)
    #expect(second.string("name") == "replica-2" && second.string("encoding") == "UTF8")
    #expect(own.option("connect_timeout") == "3")
  }
}
