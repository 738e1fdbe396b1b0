// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a private PostgreSQL server for a test: made by initdb in a temporary
// folder, listening on a Unix socket in that folder alone (no TCP), run as a user other than
// root, stopped by pg_ctl and removed with its folder, no process of it left behind.

import Foundation

/// A PostgreSQL server of the test's own, never the system's.
///
/// Its folder (`/tmp/imprint-pg-XXXXXX`, owned by the server's user) holds the cluster
/// (`data`, made by `initdb` with trust authentication), the socket (`.s.PGSQL.5432`) and the
/// log (`server.log`). PostgreSQL refuses to run as root: when the tests run as root, its
/// programs run as `user` (the `postgres` user Debian's package makes) through `setpriv`;
/// otherwise as the tests' own user. The server runs in the foreground under a `ProcessTree`,
/// so that whatever it leaves (a backend whose postmaster was killed) is ended with it;
/// `stop` asks it to end with `pg_ctl stop`. `fsync` and `full_page_writes` are off, for speed:
/// they guard against the machine's crash, which a test's cluster does not outlive, while the
/// kernel keeps what the server wrote through an immediate stop. `synchronous_commit` stays on:
/// off, a transaction committed just before an immediate stop is lost to it.
public final class PostgresServer {
  /// How `stop` asks the server to end (`pg_ctl stop -m`).
  public enum StopMode: String, Sendable {
    /// Sessions are disconnected, the server shuts down cleanly.
    case fast
    /// The server and its backends quit at once, as a crash would; the next start recovers.
    case immediate
  }

  /// The server could not be made, started or stopped; `description` says why, with its log.
  public struct Failure: Error, CustomStringConvertible {
    /// What failed.
    public var description: String
  }

  /// The server's folder: its cluster, its socket, its log.
  public let folder: String
  /// The system user its programs run as, which is also the database superuser's name.
  public let user: String
  /// The cluster's folder.
  public var data: String { folder + "/data" }
  /// The server's log (its standard error), written again at each start.
  public var log: String { folder + "/server.log" }
  private let uid: uid_t
  private let gid: gid_t
  private var tree: ProcessTree?
  private var removed = false

  /// The folder of PostgreSQL's programs: the newest `/usr/lib/postgresql/N/bin` (Debian's
  /// `postgresql` package), nil when none is installed.
  public static let programs: String? = {
    let root = "/usr/lib/postgresql"
    let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
      .compactMap { Int($0) }.sorted()
    return versions.last {
      FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/initdb")
    }
    .map { "\(root)/\($0)/bin" }
  }()

  /// Makes a cluster in a new folder and starts its server.
  ///
  /// - Parameter user: the user the server runs as when the tests run as root.
  /// - Throws: `Failure` when PostgreSQL is not installed, `user` does not exist, or initdb or
  ///   the server fail (with the server's log).
  public init(user: String = "postgres") throws {
    let runAs = geteuid() == 0 ? getpwnam(user) : getpwuid(geteuid())
    guard let account = runAs?.pointee else {
      throw Failure(description: "no user '\(user)' to run PostgreSQL as")
    }
    self.user = String(cString: account.pw_name)
    uid = account.pw_uid
    gid = account.pw_gid
    // /tmp, not TMPDIR: the server's user must reach the folder, and a socket's path is at most
    // 107 bytes.
    var template = Array("/tmp/imprint-pg-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else { throw Failure(description: "mkdtemp failed: errno \(errno)") }
    folder = made
    guard chown(folder, uid, gid) == 0 else {
      remove()
      throw Failure(description: "chown \(folder) to '\(user)' failed: errno \(errno)")
    }
    do {
      try run(
        "initdb",
        ["-D", data, "-U", self.user, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
      try start()
    } catch {
      remove()
      throw error
    }
  }

  deinit { remove() }

  /// A URL of database `database` for libpq: the socket's folder as `host`, `user`, and
  /// `password` when given (trust authentication does not ask for it).
  public func url(database: String = "postgres", password: String? = nil) -> String {
    "postgresql://\(user)\(password.map { ":" + $0 } ?? "")@/\(database)?host=\(folder)"
  }

  /// Starts the server (again, after `stop`) and waits until it accepts connections.
  ///
  /// - Throws: `Failure` when it ends or is not ready within 60 s, with its log.
  public func start() throws {
    guard tree == nil, let programs = Self.programs else {
      throw Failure(description: tree == nil ? "PostgreSQL is not installed" : "already started")
    }
    tree = try ProcessTree(
      asUser + [
        programs + "/postgres", "-D", data, "-k", folder, "-c", "listen_addresses=",
        "-c", "fsync=off", "-c", "full_page_writes=off",
      ], stderr: log)
    let ready = waitFor(tries: 6000) {
      tree?.isRunning != true || postmasterFile().count > 7 && postmasterFile()[7] == "ready"
    }
    guard ready, tree?.isRunning == true else {
      tree?.stop()
      tree = nil
      throw Failure(description: "the server did not start: \(logText())")
    }
  }

  /// Stops the server with `pg_ctl stop -m mode`, then ends whatever of it is left; nothing
  /// when it is not running.
  ///
  /// - Throws: `Failure` when pg_ctl fails (the server's processes are ended all the same).
  public func stop(_ mode: StopMode = .fast) throws {
    guard let running = tree else { return }
    defer {
      running.stop()
      tree = nil
    }
    try run("pg_ctl", ["stop", "-D", data, "-m", mode.rawValue, "-w", "-t", "60"])
  }

  /// The server's processes: the postmaster and every process it started (none when it is not
  /// running).
  public var processes: [pid_t] {
    guard let tree else { return [] }
    return ProcessTree.descendants(of: tree.pid)
  }

  /// Makes database `name` (`createdb`).
  ///
  /// - Throws: `Failure` when createdb fails.
  public func createDatabase(_ name: String) throws {
    try run("createdb", ["-h", folder, "-U", user, name])
  }

  /// Stops the server at once (`immediate`) and removes its folder; nothing after the first
  /// call.
  public func remove() {
    guard !removed else { return }
    removed = true
    try? stop(.immediate)
    try? FileManager.default.removeItem(atPath: folder)
  }

  /// `setpriv` to the server's user when the tests run as root, else nothing.
  private var asUser: [String] {
    guard geteuid() == 0 else { return [] }
    return ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--reset-env"]
  }

  /// Runs PostgreSQL's `program` as the server's user.
  private func run(_ program: String, _ arguments: [String]) throws {
    guard let programs = Self.programs else {
      throw Failure(description: "PostgreSQL is not installed")
    }
    let argv = asUser + [programs + "/" + program] + arguments
    let result = try runTool("/usr/bin/env", argv)
    guard result.status == 0 else {
      throw Failure(
        description: "\(program) exited \(result.status): \(result.stderr) \(result.stdout)")
    }
  }

  /// The lines of the cluster's `postmaster.pid` (its 8th is `ready` once the server accepts
  /// connections); empty when there is none.
  private func postmasterFile() -> [String] {
    guard let text = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8)
    else { return [] }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
  }

  private func logText() -> String {
    (try? String(contentsOfFile: log, encoding: .utf8)) ?? "(no log)"
  }
}
