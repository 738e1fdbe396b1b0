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

/// Runs `body`, which blocks (waits on a process, a pipe, a device), on a thread of its own
/// and returns what it returns, holding no thread of Swift's global pool meanwhile.
///
/// Not `DispatchQueue.global()`: on Linux its threads are the ones Swift's tasks run on (one a
/// core), so two documents waited for there stalled every other task of the process (a
/// service's webhooks among them) until they ended. A thread costs some 30 µs to start, so
/// one that ended its body waits a while for the next (`BlockingThreads`).
public func onOwnThread<Value: Sendable, Failure: Error>(
  stackSize: Int = 1 << 20, _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
  let result = await withCheckedContinuation { continuation in
    BlockingThreads.shared.run(stackSize: stackSize) {
      continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
    }
  }
  return try result.get()
}

/// The threads `onOwnThread` runs its bodies on: one a body, started when no thread is idle
/// (a body never waits for another one to end), kept for the next body once it returns.
///
/// A card's photo is decoded by a sandbox worker that a thread waits for: a thread started and
/// ended for each of 200 cards cost more CPU than the waits themselves (clone, stack, guard
/// page, signal masks). An idle thread ends after `idleSeconds`, and at most `maximumIdle` wait.
final class BlockingThreads: Sendable {
  static let shared = BlockingThreads()
  /// How long an idle thread waits for another body before it ends (20 s for `shared`).
  let idleSeconds: Int

  init(idleSeconds: Int = 20) { self.idleSeconds = idleSeconds }

  /// The most threads kept idle at once; a thread finding this many waiting ends.
  static let maximumIdle = 16

  /// One thread's hand-over point: the body it is to run, and the semaphore it waits on.
  private final class Slot: @unchecked Sendable {
    let wake = DispatchSemaphore(value: 0)
    /// Written by the caller before `wake` is signalled, read by the thread after: the
    /// semaphore orders the two.
    var work: (@Sendable () -> Void)?
    let stackSize: Int

    init(stackSize: Int) { self.stackSize = stackSize }
  }

  private let idle = Mutex<[Slot]>([])

  /// How many threads wait idle now.
  var idleCount: Int { idle.withLock { $0.count } }

  /// Runs `work` on an idle thread whose stack is at least `stackSize`, or on a new one.
  func run(stackSize: Int, _ work: @escaping @Sendable () -> Void) {
    let parked = idle.withLock { slots -> Slot? in
      guard let index = slots.lastIndex(where: { $0.stackSize >= stackSize }) else { return nil }
      return slots.remove(at: index)
    }
    if let parked {
      parked.work = work
      parked.wake.signal()
      return
    }
    let slot = Slot(stackSize: stackSize)
    slot.work = work
    let thread = Thread { [self] in serve(slot) }
    thread.stackSize = stackSize
    thread.start()
  }

  /// A thread's life: its body, then waiting idle for the next until it is not wanted.
  private func serve(_ slot: Slot) {
    while true {
      let work = slot.work
      slot.work = nil
      work?()
      let kept = idle.withLock { slots -> Bool in
        guard slots.count < Self.maximumIdle else { return false }
        slots.append(slot)
        return true
      }
      guard kept else { return }
      if slot.wake.wait(timeout: .now() + .seconds(idleSeconds)) == .timedOut {
        // Leave the idle list, unless a caller took this thread meanwhile: then its signal is
        // on the way and its body must run.
        let taken = idle.withLock { slots -> Bool in
          guard let index = slots.firstIndex(where: { $0 === slot }) else { return true }
          slots.remove(at: index)
          return false
        }
        guard taken else { return }
        slot.wake.wait()
      }
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
/// `acquire()` waits whatever becomes of the task; `acquireUnlessCancelled()` gives up when the
/// task is cancelled (a holder that may be cancelled checks again once it has its permit: the
/// document sandbox then starts no worker).
public final class AsyncPermits: Sendable {
  private struct Waiter {
    let id: UInt64
    let continuation: CheckedContinuation<Bool, Never>
  }

  private struct State {
    var available: Int
    var waiters: [Waiter] = []
    var lastID: UInt64 = 0
  }

  private let state: Mutex<State>

  /// Permits for `count` holders at once (at least 1).
  public init(_ count: Int) {
    state = Mutex(State(available: max(1, count)))
  }

  /// Tasks waiting for a permit now.
  public var waiting: Int { state.withLock { $0.waiters.count } }

  /// Waits for a permit, even once the task is cancelled; the caller must `release()` it once
  /// done.
  public func acquire() async {
    _ = await wait(cancellable: false)
  }

  /// Waits for a permit unless the task is or gets cancelled.
  ///
  /// - Returns: true with a permit (the caller must `release()` it once done); false when the
  ///   task was cancelled first (no permit: the task left the queue).
  public func acquireUnlessCancelled() async -> Bool {
    await wait(cancellable: true)
  }

  private func wait(cancellable: Bool) async -> Bool {
    let id = state.withLock { state in
      state.lastID += 1
      return state.lastID
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        // Checked and queued under one lock: a permit released, or a cancellation, in between
        // is never missed.
        let outcome = state.withLock { state -> Bool? in
          if cancellable && Task.isCancelled { return false }
          guard state.available > 0 else {
            state.waiters.append(Waiter(id: id, continuation: continuation))
            return nil
          }
          state.available -= 1
          return true
        }
        if let outcome { continuation.resume(returning: outcome) }
      }
    } onCancel: {
      guard cancellable else { return }
      let left = state.withLock { state -> Waiter? in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return state.waiters.remove(at: index)
      }
      left?.continuation.resume(returning: false)
    }
  }

  /// Gives a permit back: to the task that has waited longest, if any.
  public func release() {
    let waiter = state.withLock { state -> Waiter? in
      guard !state.waiters.isEmpty else {
        state.available += 1
        return nil
      }
      return state.waiters.removeFirst()
    }
    waiter?.continuation.resume(returning: true)
  }
}
