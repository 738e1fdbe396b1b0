// SPDX-License-Identifier: Apache-2.0
// ImprintCore: answers kept across threads, for pure functions that Foundation makes slow.

import Synchronization

/// The answers of a pure function of a small key, kept for every thread.
///
/// For look-ups a card repeats with the same few keys (a locale's lookup keys, its writing
/// direction, a month's name in a language), which Foundation recomputes at some cost on every
/// call. Bounded: past `limit` keys the table is emptied and starts again, so hostile input can
/// make it slower, never larger.
public final class Memo<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  private let table = Mutex<[Key: Value]>([:])
  private let limit: Int

  /// A table of at most `limit` answers.
  public init(limit: Int = 1024) { self.limit = max(1, limit) }

  /// The answer for `key`: the one kept, or `compute(key)`, kept.
  ///
  /// `compute` runs outside the lock, so two threads may both compute a new key (the function
  /// is pure: the same answer).
  public func value(_ key: Key, _ compute: (Key) -> Value) -> Value {
    if let known = table.withLock({ $0[key] }) { return known }
    let value = compute(key)
    table.withLock {
      if $0.count >= limit { $0.removeAll(keepingCapacity: true) }
      $0[key] = value
    }
    return value
  }

  /// The answer for `key`, computed under the lock when it is new: for an answer that costs
  /// more than waiting while another thread computes it (a locale's learned shapes, asked for
  /// by every thread at the start of a run).
  public func valueComputedOnce(_ key: Key, _ compute: (Key) -> Value) -> Value {
    table.withLock { table in
      if let known = table[key] { return known }
      let value = compute(key)
      if table.count >= limit { table.removeAll(keepingCapacity: true) }
      table[key] = value
      return value
    }
  }
}
