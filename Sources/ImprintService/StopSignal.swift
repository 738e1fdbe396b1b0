// SPDX-License-Identifier: Apache-2.0
// ImprintService: SIGTERM and SIGINT as a stop request, SIGHUP as a reload, read from a pipe by
// a thread.

import Foundation

/// The pipe the signal handler writes to (its write end, -1 before `StopSignal.install`).
///
/// `nonisolated(unsafe)`: written once before the handlers are installed; the handler only
/// reads it, and `write(2)` is async-signal-safe.
nonisolated(unsafe) private var stopPipe: Int32 = -1

/// SIGTERM and SIGINT (and SIGHUP when asked) taken over: installed first, then waited for.
///
/// Installing before the server listens matters: a signal sent as soon as the port is
/// announced (a supervisor stopping it, a test) would otherwise meet the default action, which
/// ends the process without draining.
public struct StopSignal: Sendable {
  /// The pipe's read end.
  private let reader: Int32

  /// Installs handlers for SIGTERM and SIGINT, and SIGHUP when `hangUp` (replacing the
  /// defaults, which end the process); a signal that arrives before `wait` is kept in the pipe.
  ///
  /// A handler, not `SIG_IGN`, so that document workers started later by `exec` get the
  /// default actions back.
  public static func install(hangUp: Bool) -> StopSignal {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else {
      preconditionFailure("pipe failed: \(String(cString: strerror(errno)))")
    }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    stopPipe = ends[1]
    let handler: @convention(c) (Int32) -> Void = { signal in
      var byte = UInt8(truncatingIfNeeded: signal)
      _ = write(stopPipe, &byte, 1)
    }
    signal(SIGTERM, handler)
    signal(SIGINT, handler)
    if hangUp { signal(SIGHUP, handler) }
    return StopSignal(reader: ends[0])
  }

  /// Waits, without holding a thread of Swift's pool, until SIGTERM or SIGINT arrives (or
  /// arrived since `install`).
  ///
  /// - Parameter hangUp: called (on the waiting thread) for each SIGHUP, when `install` took
  ///   SIGHUP over; the wait goes on.
  /// - Returns: the signal's number.
  public func wait(hangUp: (@Sendable () -> Void)? = nil) async -> Int32 {
    await wait(hangUp: hangUp) { $0 }
  }

  /// Waits as `wait(hangUp:)` does, then calls `then` with the signal's number on the
  /// waiting thread (a thread of its own, not one of Swift's pool: it runs even when work
  /// stuck in system calls holds every thread of the pool) and returns what it returned.
  public func wait<Value: Sendable>(
    hangUp: (@Sendable () -> Void)? = nil, then: @escaping @Sendable (Int32) -> Value
  ) async -> Value {
    let reader = reader
    return await withCheckedContinuation { continuation in
      Thread {
        var byte: UInt8 = 0
        while true {
          let count = read(reader, &byte, 1)
          if count < 0 && errno == EINTR { continue }
          if count == 1, Int32(byte) == SIGHUP {
            hangUp?()
            continue
          }
          break
        }
        continuation.resume(returning: then(Int32(byte)))
      }.start()
    }
  }
}
