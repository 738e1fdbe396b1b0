// SPDX-License-Identifier: Apache-2.0
// Imprint: bounded parallel work over a stream of inputs.

import Foundation
import Synchronization

/// Runs `work` on every input with at most `jobs` tasks at a time, handing each output to
/// `collect` as it completes (in completion order).
///
/// Inputs are pulled lazily from `inputs`, so a long stream is never held in memory; only
/// `jobs` inputs are in flight at once.
/// - Parameters:
///   - inputs: produces the next input, or nil at the end; called on the caller's task only.
///   - jobs: the maximum number of concurrent tasks (at least 1).
///   - ready: whether to start more inputs now (checked after each output; when false, the
///     tasks still running finish first, so a caller that keeps outputs until an earlier one
///     arrives can bound what it keeps). With no task running, one input starts regardless.
///   - work: runs in a child task; must not share C handles with other tasks.
///   - collect: receives each output on the caller's task.
public func forEachConcurrently<Input: Sendable, Output: Sendable>(
  inputs: () -> Input?, jobs: Int, ready: () -> Bool = { true },
  work: @escaping @Sendable (Input) async -> Output, collect: (Output) -> Void
) async {
  await withTaskGroup(of: Output.self) { group in
    var running = 0
    var exhausted = false
    func startMore() {
      while !exhausted, running < max(1, jobs), running == 0 || ready() {
        guard let input = inputs() else {
          exhausted = true
          return
        }
        group.addTask { await work(input) }
        running += 1
      }
    }
    startMore()
    while running > 0, let output = await group.next() {
      running -= 1
      collect(output)
      startMore()
    }
  }
}

/// The number of processors the process may use (the `--jobs` default).
public var activeProcessorCount: Int {
  max(1, ProcessInfo.processInfo.activeProcessorCount)
}

/// A counting semaphore for async tasks: at most `count` holders at once; the others wait in
/// the order they asked, without holding a thread.
///
/// Waiting is not cancelled with the task: a holder that may be cancelled checks for it once it
/// has its permit (the document sandbox then starts no worker).
public final class AsyncPermits: Sendable {
  private struct State {
    var available: Int
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state: Mutex<State>

  /// Permits for `count` holders at once (at least 1).
  public init(_ count: Int) {
    state = Mutex(State(available: max(1, count)))
  }

  /// Tasks waiting for a permit now.
  public var waiting: Int { state.withLock { $0.waiters.count } }

  /// Waits for a permit; the caller must `release()` it once done.
  public func acquire() async {
    await withCheckedContinuation { continuation in
      // Checked and queued under one lock: a permit released in between is never missed.
      let free = state.withLock { state in
        guard state.available > 0 else {
          state.waiters.append(continuation)
          return false
        }
        state.available -= 1
        return true
      }
      if free { continuation.resume() }
    }
  }

  /// Gives a permit back: to the task that has waited longest, if any.
  public func release() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard !state.waiters.isEmpty else {
        state.available += 1
        return nil
      }
      return state.waiters.removeFirst()
    }
    waiter?.resume()
  }
}
