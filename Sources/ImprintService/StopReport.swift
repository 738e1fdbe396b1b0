// SPDX-License-Identifier: Apache-2.0
// ImprintService: what a stop left behind. Work stuck in a system call (a printer or a file
// system that never answers) cannot be canceled: the stop returns without it, within its
// bound, and says what it was.

import Foundation
import Synchronization

/// What `ImprintService.stop()` could not end within the drain time and its margin.
///
/// Empty (`isComplete`) after a stop that ended everything: every request answered and its
/// work returned, no job running, every step of the stop done. Anything else is work stuck in
/// a system call that cancellation does not interrupt; it goes on in the background, holding
/// its thread (and, for a request, one of the threads Swift's tasks run on).
public struct StopReport: Sendable, Equatable {
  /// The requests whose work had not returned (`POST /v1/quote`), in the order they arrived.
  public var requests: [String] = []
  /// The jobs still running (`job 'ID' (prepare)`), oldest first.
  public var jobs: [String] = []
  /// The step of the stop itself that had not ended (`closing the jobs folder`), if any.
  public var step: String?

  /// A report of nothing left behind.
  public init() {}

  /// Whether the stop ended everything.
  public var isComplete: Bool { requests.isEmpty && jobs.isEmpty && step == nil }

  /// What was left, in words: `job 'ID' (prepare), request 'POST /v1/quote'`.
  public var stuck: String {
    (jobs + requests.map { "request '\($0)'" } + (step.map { ["the stop's step \($0)"] } ?? []))
      .joined(separator: ", ")
  }
}

extension ImprintService {
  /// Seconds a stop may take past `drainSeconds` (2): for the daemon to stop, the jobs folder
  /// to be closed and the idle document workers to be reaped once the drain is over.
  public static let stopMargin = 2.0

  /// Runs `body` on a thread of its own and waits for it until `deadline`.
  ///
  /// - Returns: whether `body` returned by then; when it did not, it goes on in the
  ///   background (a system call that does not return cannot be interrupted).
  static func bounded(
    until deadline: ContinuousClock.Instant, name: String, _ body: @escaping @Sendable () -> Void
  ) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      body()
      done.signal()
    }
    thread.name = name
    thread.start()
    let left = max(.zero, deadline - ContinuousClock.now).components
    let nanoseconds =
      Int(clamping: min(left.seconds, 1 << 32)) * 1_000_000_000
      + Int(left.attoseconds / 1_000_000_000)
    return done.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
  }
}

/// The step a stop is at, read by the caller when the stop did not end in time.
final class StopProgress: Sendable {
  private let current = Mutex<String?>(nil)

  /// Notes that the stop begins `step`; nil once it ended.
  func begin(_ step: String?) { current.withLock { $0 = step } }

  /// The step under way; nil once the stop ended.
  var step: String? { current.withLock { $0 } }
}
