// SPDX-License-Identifier: Apache-2.0
// ImprintCore: the one status of an item of a bulk run (a batch job, a card, a QR line, an upload),
// as reports and results files write it.

/// What became of one item of a bulk run: a batch job, a card of `imprint card`, a line of a QR
/// list, an upload of `inspect` or `thumb`.
///
/// Encoded as its raw value (`"ok"`, `"skipped"`, `"failed"`) in JSON reports and
/// `results.jsonl`; decoding anything else fails, so a status is never guessed from text.
public enum ItemStatus: String, Sendable, Codable, CaseIterable {
  /// Made now.
  case ok
  /// Not made again: an earlier run made it from the same inputs (batch jobs).
  case skipped
  /// Failed; the report carries the error.
  case failed

  /// Whether the item's outputs exist (made now or before).
  public var succeeded: Bool { self != .failed }
}
