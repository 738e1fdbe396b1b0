// SPDX-License-Identifier: Apache-2.0
// ImprintService: SIGTERM and SIGINT as a stop request, read from a pipe by a thread.

import Foundation

/// The pipe the signal handler writes to (its write end, -1 before `StopSignal.wait`).
///
/// `nonisolated(unsafe)`: written once before the handlers are installed; the handler only
/// reads it, and `write(2)` is async-signal-safe.
nonisolated(unsafe) private var stopPipe: Int32 = -1

/// Waits for SIGTERM or SIGINT.
public enum StopSignal {
  /// Installs handlers for SIGTERM and SIGINT (replacing the default, which ends the process)
  /// and waits, without holding a thread of Swift's pool, until one arrives.
  ///
  /// A handler, not `SIG_IGN`, so that document workers started later by `exec` get the
  /// default actions back.
  ///
  /// - Parameter hangUp: when given, SIGHUP is handled too: each one calls it (on the waiting
  ///   thread) and the wait goes on.
  /// - Returns: the signal's number.
  public static func wait(hangUp: (@Sendable () -> Void)? = nil) async -> Int32 {
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
    if hangUp != nil { signal(SIGHUP, handler) }
    let reader = ends[0]
    return await withCheckedContinuation { continuation in
      Thread {
        var byte: UInt8 = 0
        while true {
          let count = read(reader, &byte, 1)
          if count < 0 && errno == EINTR { continue }
          if count == 1, Int32(byte) == SIGHUP, let hangUp {
            hangUp()
            continue
          }
          break
        }
        continuation.resume(returning: Int32(byte))
      }.start()
    }
  }
}
