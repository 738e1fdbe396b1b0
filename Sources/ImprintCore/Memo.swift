// SPDX-License-Identifier: Apache-2.0
// ImprintCore: answers kept across threads, for pure functions that Foundation makes slow.

import Foundation
import Synchronization

/// The answers of a pure function of a small key, kept for every thread.
///
/// For look-ups a card repeats with the same few keys (a locale's lookup keys, its writing
/// direction, a month's name in a language), which Foundation recomputes at some cost on every
/// call. Bounded: past `limit` keys the table is emptied and starts again, so hostile input can
/// make it slower, never larger.
public final class Memo<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  private let table = Mutex<[Key: Value]>([:])
  /// Held while `valueComputedOnce` computes an answer.
  ///
  /// A thread waiting for it sleeps (NSLock is a plain pthread mutex); a waiter on `Mutex` (a
  /// priority-inheriting futex on Linux) spins in the kernel while the owner runs: a learned
  /// locale shape's milliseconds burnt twice, up to 1.8 % of a 200-card run's CPU.
  private let computing = NSLock()
  private let limit: Int

  /// A table of at most `limit` answers.
  public init(limit: Int = 1024) { self.limit = max(1, limit) }

  /// The answer for `key`: the one kept, or `compute(key)`, kept.
  ///
  /// `compute` runs outside the lock, so two threads may both compute a new key (the function
  /// is pure: the same answer).
  public func value(_ key: Key, _ compute: (Key) -> Value) -> Value {
    if let known = table.withLock({ $0[key] }) { return known }
    return keep(key, compute(key))
  }

  /// The answer for `key`, computed once when it is new (other threads asking meanwhile wait
  /// for it, asleep): for an answer that costs more than waiting while another thread computes
  /// it (a locale's learned shapes, asked for by every thread at the start of a run).
  ///
  /// New answers are computed one at a time, so `compute` must not ask this same memo (it would
  /// wait for itself); asking another memo is fine.
  public func valueComputedOnce(_ key: Key, _ compute: (Key) -> Value) -> Value {
    if let known = table.withLock({ $0[key] }) { return known }
    computing.lock()
    defer { computing.unlock() }
    if let known = table.withLock({ $0[key] }) { return known }
    return keep(key, compute(key))
  }

  /// Keeps `value` as `key`'s answer (emptying the table at its limit) and returns it.
  private func keep(_ key: Key, _ value: Value) -> Value {
    table.withLock {
      if $0.count >= limit { $0.removeAll(keepingCapacity: true) }
      $0[key] = value
    }
    return value
  }
}
