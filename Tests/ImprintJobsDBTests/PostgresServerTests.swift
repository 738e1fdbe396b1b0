// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDBTests: the tests' private PostgreSQL server (ImprintTestSupport's PostgresServer):
// not root, no TCP, stopped and started again with its data, nothing of it left behind.

import Foundation
import ImprintJobsDB
import ImprintTestSupport
import Testing

@Suite("A private PostgreSQL server for tests", .tags(.slow), .skippedWhenQuick)
struct PostgresServerTests {
  /// A process's real user id (/proc/PID/status), nil when there is no such process.
  static func uid(of pid: pid_t) -> uid_t? {
    let status = procText("/proc/\(pid)/status") ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else {
      return nil
    }
    return line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { uid_t($0) }
  }

  /// Whether any of `pids` still runs (a zombie counts: not reaped).
  static func anyAlive(_ pids: [pid_t]) -> Bool {
    pids.contains { ProcessTree.state(of: $0) != nil }
  }

  @Test("runs as another user than root, on a socket in its folder alone; stops, restarts, goes")
  func lifecycle() throws {
    let server = try PostgresServer()
    let folder = server.folder
    let processes = server.processes
    // The postmaster and its helpers (checkpointer, writers, launcher...).
    #expect(processes.count >= 4, "\(processes)")
    let owner = getpwnam(server.user)?.pointee.pw_uid
    #expect(processes.allSatisfy { Self.uid(of: $0) == owner && owner != 0 })
    var info = stat()
    #expect(stat(folder, &info) == 0 && info.st_uid == owner)
    #expect(FileManager.default.fileExists(atPath: folder + "/.s.PGSQL.5432"))
    do {
      let db = try JobsDBConnection(url: server.url())
      let listen = try db.query("SELECT current_setting('listen_addresses') AS a").rows.first
      #expect(listen?.string("a") == "")
      try db.query("INSERT INTO jobs (id, kind) VALUES ('kept', 'batch')")
    }
    // A clean stop ends every process; a start finds the data again.
    try server.stop(.fast)
    #expect(server.processes.isEmpty && !Self.anyAlive(processes))
    try server.start()
    let restarted = server.processes
    do {
      let db = try JobsDBConnection(url: server.url())
      #expect(db.migrated.isEmpty)
      #expect(try db.query("SELECT id FROM jobs").rows.first?.string("id") == "kept")
    }
    // An immediate stop (a crash) with a session open, just after a commit: no backend is left,
    // the next start recovers with the commit; removing the server removes its folder.
    let open = try JobsDBConnection(url: server.url())
    try open.query("INSERT INTO jobs (id, kind) VALUES ('committed', 'batch')")
    try server.stop(.immediate)
    #expect(!Self.anyAlive(restarted))
    #expect(throws: JobsDBError.self) { try open.query("SELECT 1") }
    try server.start()
    let last = server.processes
    let ids = try JobsDBConnection(url: server.url()).query("SELECT id FROM jobs ORDER BY id")
    #expect(ids.rows.map { $0.string("id") } == ["committed", "kept"])
    server.remove()
    #expect(!Self.anyAlive(last) && !FileManager.default.fileExists(atPath: folder))
  }

  @Test("a server released without a stop is stopped and removed all the same")
  func released() throws {
    var server: PostgresServer? = try PostgresServer()
    let folder = try #require(server?.folder)
    let processes = server?.processes ?? []
    #expect(!processes.isEmpty)
    server = nil
    #expect(!Self.anyAlive(processes) && !FileManager.default.fileExists(atPath: folder))
  }
}
