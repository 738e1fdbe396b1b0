// SPDX-License-Identifier: Apache-2.0
// WorkPool: a job's request and answer are released once it ran, while the pool works on
// (issue #15, memory flat over time).

import Foundation
import ImprintHTTP
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintService

@Suite("WorkPool", .liveHandlesChecked, .onTestThreads)
struct WorkPoolTests {
  /// Stands for what a request's job captures (its request, its answer).
  private final class Captured: Sendable {}

  /// Waits (10 ms steps) until `condition` holds, at most 30 s (a bound on a hang only).
  private func until(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<3000 {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return false
  }

  @Test("a job that ran is released while the jobs queued behind it run")
  func finishedJobReleased() async throws {
    let pool = WorkPool(width: 1, queueLimit: 8)
    let firstMayEnd = Atomic(false)
    let secondRuns = Atomic(false)
    let secondMayEnd = Atomic(false)
    let released = Atomic(false)
    weak var watched: Captured?
    do {
      let captured = Captured()
      watched = captured
      #expect(
        pool.submit {
          withExtendedLifetime(captured) {}
          while !firstMayEnd.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(5))
          }
        })
    }
    // Queued behind the first: it runs once the first ended, and keeps the pool busy.
    #expect(
      pool.submit {
        secondRuns.store(true, ordering: .releasing)
        while !secondMayEnd.load(ordering: .acquiring) {
          try? await Task.sleep(for: .milliseconds(5))
        }
        released.store(true, ordering: .releasing)
      })
    #expect(pool.counts == (running: 1, waiting: 1))
    firstMayEnd.store(true, ordering: .releasing)
    #expect(await until { secondRuns.load(ordering: .acquiring) })
    // The first job is over while the second runs: nothing may hold what it captured.
    #expect(await until { watched == nil }, "the first job's captures outlived it")
    secondMayEnd.store(true, ordering: .releasing)
    #expect(await until { released.load(ordering: .acquiring) && pool.pending == 0 })
  }
}
