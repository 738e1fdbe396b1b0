// SPDX-License-Identifier: Apache-2.0
// ImprintService: the sockets of requests waiting for a worker or being worked, watched for
// their client leaving (epoll, EPOLLRDHUP): libmicrohttpd does not look at a connection while
// it is suspended.

internal import CMHD
import Foundation
import Synchronization

/// Sockets watched for their client closing them, each with what to do then.
///
/// libmicrohttpd stops watching a connection it suspended, so a client that leaves while its
/// request waits in the pool's queue or is worked would go unnoticed until a worker had made
/// its answer. This watch has an epoll instance and a thread of its own: a socket is added when
/// its request is suspended and removed before its connection is resumed (only then may libmicrohttpd
/// close it and the system give its number to another connection). A client is gone when its
/// side of the connection is shut (`EPOLLRDHUP`: it sent FIN, as closing the socket does) or the
/// connection failed (`EPOLLHUP`, `EPOLLERR`: a reset): libmicrohttpd itself ends a request
/// whose client it reads the end of. Pipelined bytes waiting on the socket are not a departure
/// (`EPOLLIN` is not asked for).
///
/// Owns one epoll instance and one eventfd, closed by `stop`.
///
/// `@unchecked Sendable`: the descriptors are set in `init` and closed in `stop` after the thread
/// ended; the table of watched sockets is behind a Mutex, which also orders each socket's
/// `EPOLL_CTL_ADD` and `EPOLL_CTL_DEL` with the table.
final class DepartureWatch: @unchecked Sendable {
  /// What to do when a watched socket's client left (called once, on the watch's thread).
  typealias Departure = @Sendable () -> Void

  private struct Watched {
    var socket: Int32
    var departure: Departure
  }

  private let epoll: Int32
  private let wake: Int32
  private let watched = Mutex<[UInt64: Watched]>([:])
  private let finished = DispatchSemaphore(value: 0)
  /// The eventfd's token in epoll's events (no watched socket has it).
  private static let wakeToken = UInt64.max

  /// Makes the epoll instance (`epoll_create1`) and the eventfd that stops it, and starts the
  /// watch's thread.
  init() {
    epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    wake = eventfd(0, Int32(EFD_CLOEXEC))
    precondition(
      epoll >= 0 && wake >= 0,
      "epoll_create1 or eventfd failed: \(String(cString: strerror(errno)))")
    var event = epoll_event()
    event.events = EPOLLIN.rawValue
    event.data.u64 = Self.wakeToken
    precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event) == 0, "epoll_ctl failed on eventfd")
    let thread = Thread { [self] in run() }
    thread.name = "imprint-departures"
    thread.start()
  }

  /// Watches `socket` under `token` (unique, never `UInt64.max`) until `unwatch(token)`;
  /// `departure` is called once if its client leaves first.
  ///
  /// - Returns: whether the socket is watched (`epoll_ctl` may refuse it, out of memory).
  @discardableResult
  func watch(_ socket: Int32, token: UInt64, departure: @escaping Departure) -> Bool {
    precondition(token != Self.wakeToken, "DepartureWatch: token \(token) is reserved")
    return watched.withLock { table in
      var event = epoll_event()
      event.events = EPOLLRDHUP.rawValue | EPOLLONESHOT.rawValue
      event.data.u64 = token
      guard epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0 else { return false }
      table[token] = Watched(socket: socket, departure: departure)
      return true
    }
  }

  /// Stops watching the socket of `token`; nothing when it is not watched (never was, its
  /// client left, or unwatched already).
  func unwatch(_ token: UInt64) {
    _ = take(token)
  }

  /// Removes `token`'s socket from the table and from epoll (`EPOLL_CTL_DEL`), under the lock.
  private func take(_ token: UInt64) -> Watched? {
    watched.withLock { table in
      guard let entry = table.removeValue(forKey: token) else { return nil }
      _ = epoll_ctl(epoll, EPOLL_CTL_DEL, entry.socket, nil)
      return entry
    }
  }

  /// The thread: waits for departures (`epoll_wait`) until the eventfd is written.
  private func run() {
    var events = [epoll_event](repeating: epoll_event(), count: 64)
    loop: while true {
      let count = epoll_wait(epoll, &events, Int32(events.count), -1)
      if count < 0 {
        if errno == EINTR { continue }
        break
      }
      for event in events.prefix(Int(count)) {
        let token = event.data.u64
        if token == Self.wakeToken { break loop }
        take(token)?.departure()
      }
    }
    finished.signal()
  }

  /// Ends the thread, then closes the epoll instance and the eventfd.
  ///
  /// Sockets still watched are forgotten (their departures never called).
  func stop() {
    var one: UInt64 = 1
    _ = write(wake, &one, MemoryLayout<UInt64>.size)
    finished.wait()
    watched.withLock { $0.removeAll() }
    close(epoll)
    close(wake)
  }
}
