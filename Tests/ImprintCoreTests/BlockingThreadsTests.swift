// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: onOwnThread's threads are reused, never shared by two bodies at once, and
// have the stack asked for.

import Foundation
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintCore

@Suite("Blocking threads", .liveHandlesChecked)
struct BlockingThreadsTests {
  /// A name for the calling thread, given the first time it asks (a new thread has none).
  static func threadID() -> String {
    let dictionary = Thread.current.threadDictionary
    if let id = dictionary["imprint.test.thread"] as? String { return id }
    let id = UUID().uuidString
    dictionary["imprint.test.thread"] = id
    return id
  }

  /// The calling thread's stack size, as it was started with.
  static func stackSize() -> Int { Thread.current.stackSize }

  @Test("a body after another runs on a thread kept from before, not on a new one")
  func reused() async {
    // A pool of the test's own: the shared one serves other suites at the same time. Its
    // threads wait long: a loaded test run left this task unscheduled for more than the
    // shared pool's 20 s between two bodies, and the idle thread ended meanwhile.
    let pool = BlockingThreads(idleSeconds: 3600)
    var seen: [String] = []
    for _ in 0..<20 {
      seen.append(
        await withCheckedContinuation { continuation in
          pool.run(stackSize: 1 << 20) { continuation.resume(returning: Self.threadID()) }
        })
      // The body answered just before its thread went idle: wait for that.
      let deadline = Date().addingTimeInterval(300)
      while pool.idleCount == 0 && Date() < deadline { usleep(100) }
    }
    #expect(Set(seen).count == 1, "\(Set(seen).count) threads for 20 bodies in a row")
  }

  @Test("bodies that block together each have a thread: none waits for another to end")
  func neverShared() async {
    let count = 24
    final class Counter: Sendable { let value = Atomic<Int>(0) }
    let arrived = Counter()
    // Each body waits until all have started: with fewer threads than bodies this never ends
    // (the deadline turns that into a failure, not a hang).
    let ids = await withTaskGroup(of: (String, Bool).self) { group in
      for _ in 0..<count {
        group.addTask {
          await onOwnThread {
            arrived.value.add(1, ordering: .sequentiallyConsistent)
            let deadline = Date().addingTimeInterval(120)
            while arrived.value.load(ordering: .sequentiallyConsistent) < count && Date() < deadline
            {
              usleep(1000)
            }
            return (Self.threadID(), arrived.value.load(ordering: .sequentiallyConsistent) == count)
          }
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(ids.allSatisfy { $0.1 }, "a body waited for another one to end")
    #expect(Set(ids.map(\.0)).count == count)
  }

  @Test("a body asking for a larger stack gets it, also after smaller ones ran")
  func stackSizes() async {
    _ = await onOwnThread { Self.stackSize() }
    let large = await onOwnThread(stackSize: 8 << 20) { Self.stackSize() }
    #expect(large >= 8 << 20)
    let small = await onOwnThread { Self.stackSize() }
    #expect(small >= 1 << 20)
  }

  @Test("an error thrown by a body reaches the caller, and the thread serves the next body")
  func errors() async {
    struct Refused: Error, Equatable {}
    await #expect(throws: Refused.self) {
      _ = try await onOwnThread { () throws(Refused) -> Int in throw Refused() }
    }
    #expect(await onOwnThread { 41 + 1 } == 42)
  }
}
