// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: AsyncPermits lets at most its count of tasks hold a permit, serves waiters
// in order; a task cancelled while it waits still waits its turn in `acquire`, and leaves the
// queue in `acquireUnlessCancelled`.

import Foundation
import ImprintCore
import ImprintTestSupport
import Synchronization
import Testing

/// A value shared by tasks.
private final class Shared<Value: Sendable>: Sendable {
  let mutex: Mutex<Value>
  init(_ value: Value) { mutex = Mutex(value) }
  func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> Result {
    mutex.withLock(body)
  }
}

@Suite("AsyncPermits", .liveHandlesChecked)
struct AsyncPermitsTests {
  @Test("never more holders than permits, and every task gets one")
  func bounded() async throws {
    let permits = AsyncPermits(3)
    let counts = Shared((now: 0, most: 0, done: 0))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<40 {
        group.addTask {
          await permits.acquire()
          counts.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
          }
          try await Task.sleep(nanoseconds: 1_000_000)
          counts.withLock {
            $0.now -= 1
            $0.done += 1
          }
          permits.release()
        }
      }
      try await group.waitForAll()
    }
    let final = counts.withLock { $0 }
    #expect(final.done == 40)
    #expect(final.now == 0)
    // Holding for a millisecond, forty tasks overlap: at most three at once, and more than one.
    #expect(final.most == 3)
  }

  @Test("waiters are served in the order they asked")
  func inOrder() async throws {
    let permits = AsyncPermits(1)
    await permits.acquire()
    let order = Shared<[Int]>([])
    var tasks: [Task<Void, Never>] = []
    for index in 0..<5 {
      tasks.append(
        Task {
          await permits.acquire()
          order.withLock { $0.append(index) }
          permits.release()
        })
      // Each waiter queued before the next one starts.
      while permits.waiting < index + 1 { try await Task.sleep(nanoseconds: 1_000_000) }
    }
    permits.release()
    for task in tasks { await task.value }
    #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
  }

  @Test("a task cancelled while it waits still gets its permit, in its turn")
  func cancelled() async throws {
    let permits = AsyncPermits(1)
    await permits.acquire()
    let got = Shared(false)
    let waiter = Task {
      await permits.acquire()
      got.withLock { $0 = true }
      permits.release()
    }
    while permits.waiting < 1 { try await Task.sleep(nanoseconds: 1_000_000) }
    waiter.cancel()
    try await Task.sleep(nanoseconds: 20_000_000)
    // Still waiting: the permit is the holder's until given back.
    #expect(permits.waiting == 1 && !got.withLock { $0 })
    permits.release()
    await waiter.value
    #expect(got.withLock { $0 })
    #expect(permits.waiting == 0)
    // The permit came back: the next task gets it at once.
    await permits.acquire()
    permits.release()
  }

  @Test("acquireUnlessCancelled: a cancelled waiter leaves the queue at once, with no permit")
  func leavesWhenCancelled() async throws {
    let permits = AsyncPermits(1)
    await permits.acquire()
    let leaving = Task { await permits.acquireUnlessCancelled() }
    let staying = Task {
      let got = await permits.acquireUnlessCancelled()
      if got { permits.release() }
      return got
    }
    while permits.waiting < 2 { try await Task.sleep(nanoseconds: 1_000_000) }
    leaving.cancel()
    // Answered while the permit is still held: it gave up its place, and took no permit.
    #expect(await leaving.value == false)
    #expect(permits.waiting == 1)
    permits.release()
    // The one left in the queue gets the permit, and gives it back.
    #expect(await staying.value == true)
    #expect(permits.waiting == 0)
    // A task already cancelled gets none, even with a permit free.
    let late = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await permits.acquireUnlessCancelled()
    }
    #expect(await late.value == false)
    // Every permit came back: one is taken at once.
    #expect(await permits.acquireUnlessCancelled())
    permits.release()
  }
}
