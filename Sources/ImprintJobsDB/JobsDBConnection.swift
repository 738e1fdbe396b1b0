// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: the jobs database several replicas of `imprint serve` share (issue #29), kept
// in PostgreSQL. One module for that capability, named after what it holds (the jobs' database),
// not after the engine, and the one owner of libpq (CLibpq): connections, statements with
// parameters, the schema migrated at connect. The queue, leases and notifications that later
// steps build on it belong here too; the service will reach the database through it alone.

internal import CLibpq
import Foundation

/// One connection to the jobs database (libpq's `PGconn`), its schema migrated when it opens.
///
/// Owns one `PGconn`, made by `PQconnectStartParams` and `PQconnectPoll` and released by `PQfinish` when the value is
/// destroyed. Statements are sent with `PQexecParams` alone: their values are parameters
/// (`$1`...), never written into the SQL, and each call runs one statement. libpq does not let
/// two threads use one connection at once, so a connection is not Sendable: it belongs to the
/// task that opened it.
///
/// The server's notices (`NOTICE`, `WARNING` outside an error) are kept in `notices`, never
/// written to standard error as libpq's default would.
public struct JobsDBConnection: ~Copyable {
  private let raw: OpaquePointer
  private let address: JobsDBURL
  private let noticeLog: NoticeLog
  /// The URL as given, without its password.
  public var url: String { address.shown }
  /// The schema versions this connection applied when it opened (empty when another had, or
  /// when it was opened without migrating).
  public let migrated: [Int]

  /// Connects to the database at `url` and, unless `migrate` is false, brings its schema to
  /// `JobsDBSchema.latest` (`JobsDBSchema.migrate`).
  ///
  /// `url` is a `postgres://` or `postgresql://` URI or libpq's `key=value` pairs; libpq's
  /// environment variables (`PGHOST`, `PGPASSWORD`...) and password file fill in what it leaves
  /// out. Unless it says otherwise, the connection gives up after 10 s (`connect_timeout`) and
  /// names itself `imprint` (`application_name`); it always speaks UTF-8 (`client_encoding`).
  ///
  /// - Parameters:
  ///   - url: where the database is, with the user and password to connect as.
  ///   - migrate: whether to migrate the schema (true: a replica's first connection).
  /// - Throws: `JobsDBError.invalidURL` when libpq cannot read `url`; `.unreachable` when no
  ///   connection can be made; `.schemaTooNew`, `.query` from the migration.
  public init(url: String, migrate: Bool = true) throws(JobsDBError) {
    let address = JobsDBURL(url)
    let pq: LibPQ
    switch LibPQ.loaded {
    case .success(let functions): pq = functions
    case .failure(let failure):
      throw .unreachable(
        url: address.shown,
        reason: "libpq.so.5 cannot be loaded (Debian: libpq5): \(failure.reason)")
    }
    var problem: UnsafeMutablePointer<CChar>?
    guard let parsed = pq.conninfoParse(url, &problem) else {
      let reason = problem.map { String(cString: $0) } ?? "out of memory"
      pq.freemem(problem)
      throw .invalidURL(url: address.shown, reason: address.scrub(Self.oneLine(reason)))
    }
    pq.conninfoFree(parsed)
    // The URL's own values override those before it (expand_dbname), not those after it.
    let keywords = ["connect_timeout", "fallback_application_name", "dbname", "client_encoding"]
    let values = ["10", "imprint", url, "UTF8"]
    let made = withCStrings(keywords) { keywords in
      withCStrings(values) { values in pq.connectStartParams(keywords, values, 1) }
    }
    guard let raw = made else {
      throw .unreachable(url: address.shown, reason: "out of memory")
    }
    // Before the connection is made: a server may warn while it starts a session (a
    // collation version mismatch), and libpq's default processor prints to standard error.
    let log = NoticeLog()
    pq.setNoticeProcessor(raw, noticeProcessor, Unmanaged.passUnretained(log).toOpaque())
    if let problem = Self.complete(raw) {
      pq.finish(raw)
      throw .unreachable(url: address.shown, reason: address.scrub(problem))
    }
    do {
      migrated =
        migrate
        ? try JobsDBSchema.migrate(url: address.shown) { (sql, parameters) throws(JobsDBError) in
          try Self.execute(raw, address, sql, parameters)
        } : []
    } catch {
      pq.finish(raw)
      throw error
    }
    self.raw = raw
    self.address = address
    self.noticeLog = log
  }

  deinit { pq.finish(raw) }

  /// Makes the connection `PQconnectStartParams` began: `PQconnectPoll` as its socket is
  /// ready, within `connect_timeout` seconds (at least 2, as libpq's own wait; none when 0).
  ///
  /// - Returns: nil once connected, else why not (libpq's text, on one line).
  private static func complete(_ raw: OpaquePointer) -> String? {
    let seconds = option(raw, "connect_timeout").flatMap { Int($0) } ?? 0
    let clock = ContinuousClock()
    let deadline = seconds > 0 ? clock.now.advanced(by: .seconds(max(seconds, 2))) : nil
    var state = PGRES_POLLING_WRITING
    while state != PGRES_POLLING_OK {
      guard state != PGRES_POLLING_FAILED, pq.status(raw) != CONNECTION_BAD, pq.socket(raw) >= 0
      else { return oneLine(text(pq.errorMessage(raw))) }
      var socket = pollfd(
        fd: pq.socket(raw), events: Int16(state == PGRES_POLLING_READING ? POLLIN : POLLOUT),
        revents: 0)
      // Milliseconds left, as poll takes them (-1: no deadline).
      let left =
        deadline.map { Int32(min(max(0, clock.now.duration(to: $0) / .milliseconds(1)), 1e9)) }
        ?? -1
      let ready = poll(&socket, 1, left)
      if ready < 0 && errno == EINTR { continue }
      if ready == 0 { return "timeout expired after \(max(seconds, 2)) s" }
      state = pq.connectPoll(raw)
    }
    return nil
  }

  /// Runs one statement with `PQexecParams` and returns its rows as Swift values.
  ///
  /// Its `$1`, `$2`... take `parameters` (nil is NULL).
  ///
  /// - Parameters:
  ///   - sql: one statement, its values as parameters.
  ///   - parameters: the parameters' values, `$1` first.
  /// - Returns: the rows and the count of rows changed.
  /// - Throws: `JobsDBError.query` when the server refuses the statement (the SQLSTATE with
  ///   it); `.unreachable` when the connection is lost; `.parameter` for a value with a NUL
  ///   character, which text parameters cannot carry.
  @discardableResult
  public func query(_ sql: String, _ parameters: [(any JobsDBParameter)?] = [])
    throws(JobsDBError) -> JobsDBResult
  {
    try Self.execute(raw, address, sql, parameters)
  }

  /// Connects again with the same URL and settings (`PQreset`), after `.unreachable`: the
  /// server restarted, the network came back.
  ///
  /// Once, at once: waiting between tries is the caller's. The schema is not migrated again;
  /// statements of a transaction under way when the connection was lost are gone.
  ///
  /// - Throws: `JobsDBError.unreachable` when no connection can be made.
  public func reconnect() throws(JobsDBError) {
    pq.reset(raw)
    guard pq.status(raw) == CONNECTION_OK else { throw lost() }
  }

  /// The database's clock: `now()`, the start of the current transaction, in seconds since
  /// 1970.
  ///
  /// Leases are written and compared with this clock alone, never a replica's (replicas' clocks
  /// may disagree).
  ///
  /// - Throws: `JobsDBError` as `query` does.
  public func now() throws(JobsDBError) -> Double {
    let result = try query("SELECT extract(epoch FROM now())::float8 AS now")
    guard let now = try result.rows.first?.double("now") else {
      preconditionFailure("SELECT now() returned no row")
    }
    return now
  }

  /// Waits until a notification (`NOTIFY`, `pg_notify`) of a channel this connection listens
  /// to (`LISTEN`) arrives, at most `timeout`, without polling the database: `PQconsumeInput`
  /// and `PQnotifies` each time `poll` finds the connection's socket (`PQsocket`) readable.
  ///
  /// A notification that arrived during an earlier statement is returned at once. The server
  /// delivers a notification when the transaction that sent it commits; one sent while this
  /// connection was lost is never delivered, so a waiter looks for work after each timeout too.
  ///
  /// - Parameter timeout: the longest wait (zero: only what already arrived).
  /// - Returns: the oldest notification not yet returned, or nil when none came in time.
  /// - Throws: `JobsDBError.unreachable` when the connection is lost.
  public func notification(within timeout: Duration) throws(JobsDBError) -> JobsDBNotification? {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
      guard pq.consumeInput(raw) == 1 else { throw lost() }
      if let notice = pq.notifies(raw) {
        defer { pq.freemem(notice) }
        return JobsDBNotification(
          channel: String(cString: notice.pointee.relname),
          payload: String(cString: notice.pointee.extra), sender: Int(notice.pointee.be_pid))
      }
      let left = clock.now.duration(to: deadline)
      if left <= .zero { return nil }
      var socket = pollfd(fd: pq.socket(raw), events: Int16(POLLIN), revents: 0)
      guard socket.fd >= 0 else { throw lost() }
      // Whole milliseconds, rounded up: a wait never ends before its deadline.
      let milliseconds = Int32(min((left / .milliseconds(1)).rounded(.up), 1e9))
      if poll(&socket, 1, milliseconds) < 0 && errno != EINTR {
        throw .unreachable(url: address.shown, reason: "poll failed: errno \(errno)")
      }
    }
  }

  /// `.unreachable` with libpq's last error on this connection.
  private func lost() -> JobsDBError {
    .unreachable(
      url: address.shown,
      reason: address.scrub(Self.oneLine(text(pq.errorMessage(raw)))))
  }

  /// The server's latest notices on this connection, oldest first (at most
  /// `NoticeLog.limit`), each as libpq wrote it without its final newline.
  public var notices: [String] { noticeLog.lines }

  /// A connection option as libpq uses it (`PQconninfo`), for tests; nil when unset.
  func option(_ keyword: String) -> String? { Self.option(raw, keyword) }

  private static func option(_ raw: OpaquePointer, _ keyword: String) -> String? {
    guard let options = pq.conninfo(raw) else { return nil }
    defer { pq.conninfoFree(options) }
    var option = options
    while let name = option.pointee.keyword {
      if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
      option += 1
    }
    return nil
  }

  /// Runs `sql` on `raw` (see `query`); the migration runs through it before the connection's
  /// value exists.
  private static func execute(
    _ raw: OpaquePointer, _ address: JobsDBURL, _ sql: String,
    _ parameters: [(any JobsDBParameter)?]
  ) throws(JobsDBError) -> JobsDBResult {
    let texts = parameters.map { $0?.jobsDBText }
    if let index = texts.firstIndex(where: { $0?.utf8.contains(0) == true }) {
      throw .parameter(
        statement: shown(sql), index: index + 1, problem: "holds a NUL character")
    }
    let result = withOptionalCStrings(texts) { values in
      pq.execParams(raw, sql, Int32(texts.count), nil, values, nil, nil, 0)
    }
    defer { pq.clear(result) }
    guard let result, [PGRES_COMMAND_OK, PGRES_TUPLES_OK].contains(pq.resultStatus(result)) else {
      throw failure(raw, address, sql, result)
    }
    let columns = (0..<pq.nfields(result)).map { text(pq.fname(result, $0)) }
    let rows = (0..<pq.ntuples(result)).map { row in
      JobsDBRow(
        columns: columns,
        values: (0..<Int32(columns.count)).map { column in
          pq.getisnull(result, row, column) == 1
            ? nil : text(pq.getvalue(result, row, column))
        })
    }
    return JobsDBResult(
      columns: columns, rows: rows, changed: Int(text(pq.cmdTuples(result))) ?? 0)
  }

  /// The error of a statement that failed: `.unreachable` when the connection is gone (libpq
  /// says so, or wrote the error itself, without a SQLSTATE: a lost connection can leave
  /// `PQstatus` OK until the next call; or the server's SQLSTATE is a connection exception,
  /// class 08, or a shutdown, 57P01 to 57P03), else `.query` with the server's primary message
  /// and SQLSTATE.
  private static func failure(
    _ raw: OpaquePointer, _ address: JobsDBURL, _ sql: String, _ result: OpaquePointer?
  ) -> JobsDBError {
    // PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY are character macros ('C', 'M').
    let field = { (code: Character) -> String? in
      guard let result, let ascii = code.asciiValue,
        let text = pq.resultErrorField(result, Int32(ascii))
      else { return nil }
      return String(cString: text)
    }
    let connection = oneLine(text(pq.errorMessage(raw)))
    let reason = address.scrub(
      field("M").map(oneLine) ?? (connection.isEmpty ? "no result" : connection))
    guard let state = field("C"), pq.status(raw) == CONNECTION_OK, !state.hasPrefix("08"),
      !["57P01", "57P02", "57P03"].contains(state)
    else { return .unreachable(url: address.shown, reason: reason) }
    return .query(statement: shown(sql), state: state, reason: reason)
  }

  /// A statement as messages show it: its whitespace runs as one space, at most 160
  /// characters.
  static func shown(_ sql: String) -> String {
    let words = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    return words.count > 160 ? words.prefix(159) + "…" : words
  }

  /// libpq's text on one line: each line trimmed, joined by a space.
  static func oneLine(_ text: String) -> String {
    text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
      !$0.isEmpty
    }.joined(separator: " ")
  }
}

/// The server's notices on one connection, the latest `limit` kept.
///
/// A class: libpq's notice processor gets its address (`Unmanaged`, unretained: the connection
/// holds it for as long as the `PGconn` lives). Called only inside the connection's own libpq
/// calls, on the thread making them.
final class NoticeLog {
  /// Notices kept at most; older ones are dropped.
  static let limit = 16
  private(set) var lines: [String] = []

  func add(_ line: String) {
    lines.append(line)
    if lines.count > Self.limit { lines.removeFirst(lines.count - Self.limit) }
  }
}

/// A C string libpq returned, as text; empty for none (libpq returns none only out of memory).
private func text(_ string: UnsafePointer<CChar>?) -> String {
  string.map { String(cString: $0) } ?? ""
}

/// libpq's functions, for the calls made on a connection (`init` makes one only once they
/// are loaded).
private var pq: LibPQ { LibPQ.functions }

/// libpq's notice processor: the notice into the connection's `NoticeLog`.
private func noticeProcessor(_ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?) {
  guard let context, let text else { return }
  let line = String(cString: text)
  Unmanaged<NoticeLog>.fromOpaque(context).takeUnretainedValue().add(
    line.hasSuffix("\n") ? String(line.dropLast()) : line)
}

/// Calls `body` with `strings` as an array of C strings ending with a null pointer (libpq's
/// keyword and value lists), valid during the call.
private func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
  withOptionalCStrings(strings + [nil]) { body($0) }
}

/// Calls `body` with `strings` as an array of C strings (nil stays a null pointer), valid
/// during the call.
private func withOptionalCStrings<T>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> T)
  -> T
{
  let copies = strings.map { $0.map { strdup($0) } ?? nil }
  defer { for copy in copies { free(copy) } }
  return body(copies.map { $0.map { UnsafePointer($0) } })
}
