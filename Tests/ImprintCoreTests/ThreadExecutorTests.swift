// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: ThreadExecutor runs the tasks that prefer it, and their child tasks, on
// its own named threads, at most its count at once, and resumes them there after each
// suspension; after `shutDown()` its threads end and later tasks still run.

import Foundation
import ImprintCore
import Synchronization
import Testing

/// The name of the thread running the caller (the kernel's, from /proc/thread-self/comm).
private func threadName() -> String {
  let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
  return name.trimmingCharacters(in: .newlines)
}

/// Threads named `prefix-N` in this process now, from /proc/self/task.
private func threads(named prefix: String) -> Int {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
  return tasks.filter { task in
    let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
    return name.hasPrefix(prefix + "-")
  }.count
}

/// A value shared by tasks and threads.
private final class Shared<Value: Sendable>: Sendable {
  let mutex: Mutex<Value>
  init(_ value: Value) { mutex = Mutex(value) }
  func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> Result {
    mutex.withLock(body)
  }
}

@Suite struct ThreadExecutorTests {
  @Test func tasksAndTheirChildrenRunOnItsThreadsAtMostItsCountAtOnce() async {
    let executor = ThreadExecutor(name: "tx-count", threads: 3)
    let counts = Shared((now: 0, most: 0, names: Set<String>()))
    await Task(executorPreference: executor) {
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<12 {
          group.addTask {
            counts.withLock {
              $0.now += 1
              $0.most = max($0.most, $0.now)
              $0.names.insert(threadName())
            }
            usleep(20_000)  // blocking, as drawing a card is
            counts.withLock { $0.now -= 1 }
          }
        }
      }
    }.value
    let seen = counts.withLock { $0 }
    #expect(seen.most == 3)
    #expect(seen.names == ["tx-count-1", "tx-count-2", "tx-count-3"])
    executor.shutDown()
  }

  @Test func aTaskResumesOnItsThreadsAfterEachSuspension() async throws {
    // Blocking Swift's global pool here would stall every other suite in the process: what
    // keeps the service answering then is that its work never runs there, checked after each
    // kind of suspension (a sleep, a child task, a continuation resumed from another thread).
    let executor = ThreadExecutor(name: "tx-resumed", threads: 1)
    let names = await Task(executorPreference: executor) { () -> [String] in
      var names = [threadName()]
      try? await Task.sleep(for: .milliseconds(20))
      names.append(threadName())
      names.append(
        await withTaskGroup(of: String.self) { group in
          group.addTask { threadName() }
          return await group.next() ?? ""
        })
      await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume() }
      }
      names.append(threadName())
      return names
    }.value
    #expect(names == Array(repeating: "tx-resumed-1", count: 4))
    executor.shutDown()
  }

  @Test func afterShutDownItsThreadsEndAndLaterTasksStillRun() async throws {
    let executor = ThreadExecutor(name: "tx-ended", threads: 2)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask(executorPreference: executor) { usleep(10_000) }
      }
    }
    #expect(threads(named: "tx-ended") == 2)
    executor.shutDown()
    let deadline = ContinuousClock.now + .seconds(10)
    while threads(named: "tx-ended") > 0 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(threads(named: "tx-ended") == 0)
    let ran = await Task(executorPreference: executor) { threadName() }.value
    #expect(!ran.hasPrefix("tx-ended"))
  }

  @Test func anIdleExecutorStartsNoThread() {
    let executor = ThreadExecutor(name: "tx-idle", threads: 4)
    #expect(threads(named: "tx-idle") == 0)
    #expect(executor.waiting == 0)
    executor.shutDown()
  }
}
