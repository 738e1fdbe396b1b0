// SPDX-License-Identifier: Apache-2.0
// ImprintService: the connections waiting for a request's head, watched so that a head sent
// slowly (a byte now and then, which libmicrohttpd's idle timeout never sees as idle) is cut
// off once it took longer than --head-timeout; and each request's raw target, as sent.

internal import CMHD
import Foundation
import Synchronization

/// The open connections of an `HTTPServer`, each with the time it has spent receiving a
/// request's head.
///
/// libmicrohttpd's connection timeout counts inactivity only: a client that sends one byte of a
/// head every second is never idle and holds its connection (and one of `--max-connections`)
/// for as long as it likes. This watch knows, for each connection, whether it is waiting for a
/// head (from its opening, and again from the end of each request on a kept-alive connection,
/// to the first call of the access handler), asks the kernel when its socket last received data
/// (`TCP_INFO`), and shuts the socket (`shutdown(SHUT_RDWR)`, after which libmicrohttpd reads
/// its end and closes the connection) when a head began arriving more than `limit` ago and is
/// still not whole. A connection that sends nothing is left to the idle timeout.
///
/// It also keeps each request's target as the client sent it (libmicrohttpd's URI log
/// callback), before libmicrohttpd decodes its escapes into a C string that ends at the first
/// `%00`.
///
/// `@unchecked Sendable`: the table is behind a Mutex; a socket is shut only under it, and a
/// connection leaves the table (libmicrohttpd's `MHD_CONNECTION_NOTIFY_CLOSED`) before
/// libmicrohttpd closes its socket, so a number the system gave to another socket is never shut.
final class HeadWatch: @unchecked Sendable {
  private struct Connection {
    var socket: Int32
    /// Whether it waits for a head (false while a request is read, worked or answered).
    var waiting: Bool
    /// When the socket last received data as the wait began (nil: it had received none the
    /// kernel tells of).
    var lastDataBefore: ContinuousClock.Instant?
    /// When the head's first bytes arrived (as the kernel tells), once seen.
    var headBegan: ContinuousClock.Instant?
    /// The target of the request whose head is being read, as sent.
    var target: [UInt8]?
  }

  /// The longest a head may take from its first byte.
  let limit: Duration
  private let connections = Mutex<[UInt: Connection]>([:])
  private let stopped = Atomic(false)
  private let finished = DispatchSemaphore(value: 0)
  private let cutCount = Atomic(0)

  /// A watch that cuts heads taking longer than `seconds`, checked four times a second on a
  /// thread of its own until `stop`.
  init(seconds: Double) {
    limit = .milliseconds(Int64((seconds * 1000).rounded()))
    let thread = Thread { [self] in
      while !stopped.load(ordering: .acquiring) {
        usleep(250_000)
        sweep()
      }
      finished.signal()
    }
    thread.name = "imprint-head-watch"
    thread.start()
  }

  /// Connections cut for a slow head so far.
  var cut: Int { cutCount.load(ordering: .relaxed) }

  /// Ends the watch's thread (waits for it).
  func stop() {
    guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
    finished.wait()
  }

  private static func key(_ connection: OpaquePointer) -> UInt {
    UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
  }

  /// When `socket` last received data, as the kernel tells it (`TCP_INFO`'s
  /// `tcpi_last_data_recv`, in jiffies: a few milliseconds); nil when it does not.
  private static func lastData(_ socket: Int32, now: ContinuousClock.Instant)
    -> ContinuousClock.Instant?
  {
    let quiet = CMHD_milliseconds_since_data(socket)
    return quiet < 0 ? nil : now - .milliseconds(quiet)
  }

  /// Data counts as new when it came this long after the wait began: more than the kernel's
  /// jiffies and the time between two readings of the clock.
  private static let slack = Duration.milliseconds(50)

  /// A connection was accepted: it waits for its first head.
  func opened(_ connection: OpaquePointer) {
    let socket = CMHD_connection_socket(connection)
    guard socket >= 0 else { return }
    let entry = Connection(
      socket: socket, waiting: true, lastDataBefore: Self.lastData(socket, now: .now),
      headBegan: nil, target: nil)
    connections.withLock { $0[Self.key(connection)] = entry }
  }

  /// A connection is being closed (its socket not yet).
  func closed(_ connection: OpaquePointer) {
    _ = connections.withLock { $0.removeValue(forKey: Self.key(connection)) }
  }

  /// A request line arrived with `target`, as sent.
  func targetRead(_ connection: OpaquePointer, _ target: [UInt8]) {
    connections.withLock { $0[Self.key(connection)]?.target = target }
  }

  /// A request's head is whole: the connection no longer waits for one.
  ///
  /// - Returns: the request's target as sent, when it was seen.
  func headRead(_ connection: OpaquePointer) -> [UInt8]? {
    connections.withLock { table in
      let key = Self.key(connection)
      let target = table[key]?.target
      table[key]?.waiting = false
      table[key]?.headBegan = nil
      table[key]?.target = nil
      return target
    }
  }

  /// A request ended: a kept-alive connection waits for its next head from now.
  func requestEnded(_ connection: OpaquePointer) {
    connections.withLock { table in
      let key = Self.key(connection)
      guard let socket = table[key]?.socket else { return }
      table[key]?.waiting = true
      table[key]?.lastDataBefore = Self.lastData(socket, now: .now)
      table[key]?.headBegan = nil
    }
  }

  /// Notes the heads that began arriving and shuts the sockets of those past the limit.
  private func sweep() {
    let now = ContinuousClock.now
    connections.withLock { table in
      for (key, entry) in table {
        guard entry.waiting else { continue }
        var began = entry.headBegan
        // Data came after the wait began (the last data then, plus slack): the head's start.
        if began == nil, let last = Self.lastData(entry.socket, now: now),
          entry.lastDataBefore.map({ last > $0 + Self.slack }) ?? true
        {
          began = last
          table[key]?.headBegan = last
        }
        guard let began, now - began > limit else { continue }
        shutdown(entry.socket, Int32(SHUT_RDWR))
        table[key]?.waiting = false
        table[key]?.headBegan = nil
        cutCount.add(1, ordering: .relaxed)
      }
    }
  }
}
