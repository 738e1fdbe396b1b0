// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: the bounded pool requests are worked in, off the connections' threads.

import ImprintCore
import Synchronization

/// Runs jobs `width` at a time, keeping at most `queueLimit` waiting; refuses the rest.
///
/// The jobs run on `executor`, `width` threads of the pool's own, not on Swift's global pool
/// (`ThreadExecutor` says why); `shutDown()` ends them once idle.
package final class WorkPool: Sendable {
  /// A job: the work of one request.
  package typealias Job = @Sendable () async -> Void

  private struct State {
    var running = 0
    var waiting: [(id: UInt64?, job: Job)] = []
  }

  /// Jobs run at once.
  package let width: Int
  /// Jobs kept waiting at most.
  package let queueLimit: Int
  /// The threads the jobs run on, and the tasks they start (`Answer.work`).
  package let executor: ThreadExecutor
  private let state = Mutex(State())

  /// A pool running `width` jobs at once (at least 1) with up to `queueLimit` waiting, on
  /// `width` threads named `name-1`, `name-2`, ….
  package init(width: Int, queueLimit: Int, name: String = "imprint-work") {
    self.width = max(1, width)
    self.queueLimit = max(0, queueLimit)
    executor = ThreadExecutor(name: name, threads: self.width)
  }

  /// Ends the pool's threads once the jobs under way are done; a job submitted later runs on
  /// Swift's global pool.
  package func shutDown() { executor.shutDown() }

  /// Jobs running or waiting.
  package var pending: Int { state.withLock { $0.running + $0.waiting.count } }

  /// Jobs running, and jobs waiting.
  package var counts: (running: Int, waiting: Int) {
    state.withLock { ($0.running, $0.waiting.count) }
  }

  /// Starts `job`, or queues it behind the running ones.
  ///
  /// - Parameters:
  ///   - id: names the job while it waits, for `cancel`; nil: it cannot be cancelled.
  ///   - job: the work.
  /// - Returns: false, and `job` is dropped, when `width` jobs run and `queueLimit` wait.
  package func submit(id: UInt64? = nil, _ job: @escaping Job) -> Bool {
    let start = state.withLock { state -> Bool? in
      if state.running < width {
        state.running += 1
        return true
      }
      guard state.waiting.count < queueLimit else { return nil }
      state.waiting.append((id, job))
      return false
    }
    guard let start else { return false }
    if start { run(job) }
    return true
  }

  /// Runs `job` in a task of its own, then the first waiting job in another, and so on until
  /// none is left.
  ///
  /// A task per job, not one task looping over the queue: under steady load such a loop never
  /// ended, and (release builds) every job's request and answer stayed reachable from its
  /// frames until it did, the server's memory growing with each request (issue #15's memory
  /// run: 64 connections, 30 kB a request, 2.5 GB after 100 000).
  private func run(_ job: @escaping Job) {
    Task.detached(executorPreference: executor) {
      await job()
      let next = self.state.withLock { state -> Job? in
        guard !state.waiting.isEmpty else {
          state.running -= 1
          return nil
        }
        return state.waiting.removeFirst().job
      }
      if let next { self.run(next) }
    }
  }

  /// Drops the job submitted with `id` if it is still waiting.
  ///
  /// - Returns: whether it was waiting (it will never run); false when it started already, or
  ///   was never queued.
  package func cancel(_ id: UInt64) -> Bool {
    state.withLock { state in
      guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return false }
      state.waiting.remove(at: index)
      return true
    }
  }
}
