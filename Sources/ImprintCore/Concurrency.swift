// SPDX-License-Identifier: Apache-2.0
// Imprint: bounded parallel work over a stream of inputs.

import Foundation

/// Runs `work` on every input with at most `jobs` tasks at a time, handing each output to
/// `collect` as it completes (in completion order).
///
/// Inputs are pulled lazily from `inputs`, so a long stream is never held in memory; only
/// `jobs` inputs are in flight at once.
/// - Parameters:
///   - inputs: produces the next input, or nil at the end; called on the caller's task only.
///   - jobs: the maximum number of concurrent tasks (at least 1).
///   - work: runs in a child task; must not share C handles with other tasks.
///   - collect: receives each output on the caller's task.
public func forEachConcurrently<Input: Sendable, Output: Sendable>(
  inputs: () -> Input?, jobs: Int, work: @escaping @Sendable (Input) async -> Output,
  collect: (Output) -> Void
) async {
  await withTaskGroup(of: Output.self) { group in
    var running = 0
    while running < max(1, jobs), let input = inputs() {
      group.addTask { await work(input) }
      running += 1
    }
    while let output = await group.next() {
      collect(output)
      if let input = inputs() {
        group.addTask { await work(input) }
      }
    }
  }
}

/// The number of processors the process may use (the `--jobs` default).
public var activeProcessorCount: Int {
  max(1, ProcessInfo.processInfo.activeProcessorCount)
}
