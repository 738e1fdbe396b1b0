// SPDX-License-Identifier: Apache-2.0
// Imprint: a task executor with threads of its own, for work that must not wait on others.

import Foundation

/// Runs the tasks that prefer it (`Task(executorPreference:)`, and their child tasks) on
/// threads of its own, first come first served.
///
/// Why not Swift's global pool: it has one thread per core (two here), shared by everything
/// in the process. A service's requests and jobs draw cards and wait on document workers in
/// synchronous code; in a process where anything else blocks those threads (a library user's
/// code, the test runner's other suites), its requests starved until their deadlines passed
/// (session 18: 51 failed expectations). Its own threads keep the service answering whatever
/// the rest of the process does, and bound its CPU use by their number.
///
/// Its threads start as jobs arrive, up to `threads`. `shutDown()` lets them end once the jobs
/// enqueued before it have run; a job enqueued after it runs on the global pool (a task that
/// outlives the service still ends, even when the executor's threads are stuck).
///
/// `@unchecked Sendable`: the fields but `threads` and `name` are read and written under
/// `condition`.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var head = 0
  private var closed = false
  /// Threads started, and those of them waiting for a job.
  private var started = 0
  private var idle = 0

  /// Threads of this executor at most.
  public let threads: Int
  private let name: String

  /// An executor with up to `threads` threads (at least 1) named `name-1`, `name-2`, ….
  public init(name: String, threads: Int) {
    self.name = name
    self.threads = max(1, threads)
  }

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    guard !closed else {
      condition.unlock()
      globalConcurrentExecutor.enqueue(ExecutorJob(job))
      return
    }
    jobs.append(job)
    // A thread for each job no idle thread will take, up to `threads`.
    let start = jobs.count - head > idle && started < threads
    if start {
      started += 1
    } else {
      condition.signal()
    }
    let index = started
    condition.unlock()
    if start { spawn(index) }
  }

  /// Starts thread `index`, with an 8 MiB stack as the main thread's: drawing and parsing
  /// nest deeply.
  private func spawn(_ index: Int) {
    let name = "\(name)-\(index)"
    let thread = Thread { [self] in
      Self.nameThread(name)
      loop()
    }
    thread.stackSize = 8 << 20
    thread.start()
  }

  /// Names the calling thread as Linux sees it (`ps -T`, `top -H`): glibc's
  /// `pthread_setname_np`, a `prctl` for the calling thread (no file written: a pod's root
  /// may be read-only), looked up at run time because Swift's Glibc module leaves out the
  /// GNU extensions.
  ///
  /// Not `Thread.name`: Foundation passes it on to the system only once the thread's handle
  /// is known, which a thread just started may not be yet (it then kept the name of the
  /// thread that started it, a Dispatch thread's).
  private static func nameThread(_ name: String) {
    guard let setName = setThreadName else { return }
    _ = setName(pthread_self(), String(name.utf8.prefix(15)) ?? "imprint")
  }

  private typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
  private static let setThreadName: SetThreadName? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pthread_setname_np") else { return nil }
    return unsafeBitCast(symbol, to: SetThreadName.self)
  }()

  /// Ends the threads once the jobs enqueued so far have run; later jobs run on the global
  /// pool.
  public func shutDown() {
    condition.lock()
    closed = true
    condition.broadcast()
    condition.unlock()
  }

  /// Jobs waiting for a thread now.
  public var waiting: Int {
    condition.lock()
    defer { condition.unlock() }
    return jobs.count - head
  }

  private func loop() {
    let executor = asUnownedTaskExecutor()
    while let job = take() {
      job.runSynchronously(on: executor)
    }
  }

  /// The next job, waiting for one; nil once shut down with none left (the thread ends).
  private func take() -> UnownedJob? {
    condition.lock()
    defer { condition.unlock() }
    while head == jobs.count {
      if closed { return nil }
      idle += 1
      condition.wait()
      idle -= 1
    }
    let job = jobs[head]
    head += 1
    if head == jobs.count {
      jobs.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 1024 && head * 2 >= jobs.count {
      jobs.removeFirst(head)
      head = 0
    }
    return job
  }
}
