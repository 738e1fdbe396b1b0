// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: ThreadExecutor runs the tasks that prefer it, and their child tasks, on
// its own named threads, at most its count at once; its work ends while every thread of
// Swift's global pool is blocked; after `shutDown()` its threads end and later tasks still
// run.

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

  @Test func itsWorkEndsWhileTheGlobalPoolIsBlocked() async throws {
    let executor = ThreadExecutor(name: "tx-starved", threads: 1)
    let done = DispatchSemaphore(value: 0)
    let blockers = ProcessInfo.processInfo.activeProcessorCount + 2
    let released = Shared(0)
    // Every thread of the global pool waits for the executor's work (at most 30 s).
    let blocking = (0..<blockers).map { _ in
      Task.detached {
        if done.wait(timeout: .now() + 30) == .success {
          done.signal()
          released.withLock { $0 += 1 }
        }
      }
    }
    let started = ContinuousClock.now
    let work = Task.detached(executorPreference: executor) { () -> String in
      try? await Task.sleep(for: .milliseconds(100))  // resumed on the executor, not the pool
      return threadName()
    }
    // Waited for off the pool: its threads are all blocked.
    let name = await withCheckedContinuation { continuation in
      Thread.detachNewThread {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Shared<String?>(nil)
        Task.detached(executorPreference: executor) {
          let name = await work.value
          box.withLock { $0 = name }
          semaphore.signal()
        }
        semaphore.wait()
        done.signal()
        continuation.resume(returning: box.withLock { $0 } ?? "")
      }
    }
    for task in blocking { await task.value }
    #expect(name == "tx-starved-1")
    #expect(released.withLock { $0 } == blockers)
    #expect(ContinuousClock.now - started < .seconds(25))
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
