// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: one process's share of a manifest (`--shard I/N`, or `auto` from a Kubernetes
// Indexed Item or a Slurm array).

/// One process's share of a manifest: item k (0-based, in manifest order, counting every line
/// that is an item) belongs to shard k mod `count`.
public struct BatchShard: Sendable, Equatable, CustomStringConvertible {
  /// This shard's index, from 0.
  public let index: Int
  /// The shard count.
  public let count: Int

  /// The whole manifest (shard 0 of 1).
  public static let whole = BatchShard(checkedIndex: 0, count: 1)

  private init(checkedIndex index: Int, count: Int) {
    self.index = index
    self.count = count
  }

  /// Shard `index` of `count`.
  ///
  /// - Throws: `BatchError.badShard` unless 0 <= index < count.
  public init(index: Int, count: Int) throws(BatchError) {
    guard count >= 1, (0..<count).contains(index) else { throw .badShard("\(index)/\(count)") }
    self.init(checkedIndex: index, count: count)
  }

  /// Parses `I/N`, or `auto`: the shard of this process in a Kubernetes Indexed Item
  /// (`JOB_COMPLETION_INDEX`, `JOB_COMPLETION_COUNT`) or a Slurm array (`SLURM_ARRAY_TASK_ID`
  /// less `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_COUNT`), read from `environment`.
  ///
  /// - Throws: `BatchError.badShard` with the spec (after `auto` is resolved) unless it is I/N
  ///   with 0 <= I < N; `BatchError.noShardEnvironment` for `auto` without those variables.
  public init(parsing text: String, environment: [String: String] = [:]) throws(BatchError) {
    var spec = text
    if text == "auto" {
      if let index = environment["JOB_COMPLETION_INDEX"],
        let count = environment["JOB_COMPLETION_COUNT"]
      {
        spec = "\(index)/\(count)"
      } else if let id = environment["SLURM_ARRAY_TASK_ID"],
        let count = environment["SLURM_ARRAY_TASK_COUNT"]
      {
        let first = Int(environment["SLURM_ARRAY_TASK_MIN"] ?? "0") ?? 0
        spec = "\((Int(id) ?? -1) - first)/\(count)"
      } else {
        throw .noShardEnvironment
      }
    }
    let parts = spec.split(separator: "/")
    guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
      (0..<count).contains(index)
    else { throw .badShard(spec) }
    self.init(checkedIndex: index, count: count)
  }

  /// `I/N`.
  public var description: String { "\(index)/\(count)" }

  /// Whether the item at `ordinal` (0-based, counting every item line) is this shard's.
  public func owns(ordinal: Int) -> Bool { ordinal % count == index }

  /// How many of a manifest's `records` items are this shard's.
  public func items(of records: Int) -> Int {
    records / count + (records % count > index ? 1 : 0)
  }
}
