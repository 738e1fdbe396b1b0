// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: combining the results of a sharded run, refusing an incomplete or mixed set
// (a shard missing, unfinished, of another shard count or another manifest).

import Foundation
import ImprintCore

/// What a shard leaves beside its results once they are in place: which shard of how many, and
/// the digest of the manifest it ran.
struct ShardCompletion: Codable, Equatable {
  /// The shard's index, from 0.
  var shard: Int
  /// The shard count.
  var shards: Int
  /// `FileDigest.hex` of the manifest.
  var manifest: String

  /// Where shard `index` of `count` keeps its record (a hidden name: no item id starts with `.`).
  static func path(folder: String, index: Int, count: Int) -> String {
    "\(folder)/.state/.shard-\(index)-of-\(count).json"
  }

  /// The record of the shard `options` runs.
  static func path(_ options: BatchOptions) -> String {
    path(folder: options.outputFolder, index: options.shard.index, count: options.shard.count)
  }
}

/// What `ShardMerge.merge` combined.
public struct MergedResults: Sendable {
  /// Items (manifest records).
  public var items = 0
  /// Failed items (by their status).
  public var failed = 0
  /// Items an earlier run had made (status `skipped`).
  public var skipped = 0
  /// The shard count.
  public var shards = 0
  /// Ids of the card items that succeeded (to lay out again).
  public var cards = Set<String>()
  /// The shipped orders that succeeded (for the packing list and labels).
  public var shipped: [ItemResult] = []
}

/// What `ShardMerge.run` did.
public struct MergeReport: Sendable {
  /// The results combined.
  public var merged: MergedResults
  /// The layout drawn from the finished cards (with a layout and at least one such card).
  public var imposed: Imposed?

  /// Failed items: by their status, and cards the layout could not take.
  public var failed: Int { merged.failed + (imposed?.refused.count ?? 0) }
}

/// Combines shards' results into one `results.jsonl`.
public enum ShardMerge {
  /// Finishes a sharded run in `options.outputFolder` (`imprint batch merge`): merges the
  /// shards' results (`merge`), lays the finished cards out again when `options.layout` is set
  /// (`impose`), and writes the packing list and labels of the shipped orders.
  ///
  /// - Parameters:
  ///   - manifest: the manifest the shards ran.
  ///   - options: the folder, layout, templates, photo and card options (as the shards had).
  ///   - shards: the shard count to merge, when results of several are there.
  /// - Returns: what was merged and laid out; cards the layout cannot take are in
  ///   `imposed.refused` and counted failed.
  /// - Throws: as `merge`; `FileError`, `GraphicsError` when the layout or labels cannot be
  ///   written.
  public static func run(manifest: String, options: BatchOptions, shards: Int? = nil) async throws
    -> MergeReport
  {
    let merged = try merge(manifest: manifest, folder: options.outputFolder, shards: shards)
    var report = MergeReport(merged: merged)
    if let layout = options.layout {
      report.imposed = try await impose(
        merged.cards, manifest: manifest, options: options, layout: layout)
    }
    try Fulfilment.write(
      merged.shipped, folder: options.outputFolder, fonts: options.cardOptions.fonts)
    return report
  }

  /// Lays out the cards the shards finished: the manifest is read again, in order, and each
  /// finished card item laid out again (`BatchRunner.preparer`) and placed `copies` times.
  ///
  /// - Returns: the layout, or nil when no card finished.
  static func impose(
    _ cards: Set<String>, manifest: String, options: BatchOptions, layout: BatchLayout
  ) async throws -> Imposed? {
    guard !cards.isEmpty else { return nil }
    var reader = try ManifestReader(path: manifest, inputsRoot: options.inputsRoot)
    var queue: [PlacedCard] = []
    var placedIDs = Set<String>()
    let next = { () -> PlacedCard? in
      while queue.isEmpty, let item = reader.next() {
        guard case .success(let item) = item, let card = item.card, cards.contains(item.id),
          placedIDs.insert(item.id).inserted
        else { continue }
        queue = (1...card.copies).map { PlacedCard(id: item.id, copy: $0, card: card) }
      }
      return queue.isEmpty ? nil : queue.removeFirst()
    }
    return try await Imposition.impose(
      next: next, prepare: BatchRunner.preparer(options: options),
      into: layout.imposer(folder: options.outputFolder))
  }

  /// Checks that the shards in `folder` are one complete run of `manifest` and writes
  /// `folder/results.jsonl` in manifest order.
  ///
  /// Every shard 0..<N must have its results and completion record, all of one shard count
  /// (`shards`, or the only count present) and of this manifest's bytes, with one result for
  /// each of the manifest's items, in order, none twice. A result line that cannot be read fails
  /// that item (`batch.resultUnreadable`); the others are merged.
  ///
  /// - Throws: `BatchError.shardsMissing`, `.shardMismatch`, `FileError`; no results file is
  ///   written then.
  public static func merge(manifest: String, folder: String, shards requested: Int? = nil) throws
    -> MergedResults
  {
    let count = try shardCount(folder: folder, requested: requested)
    let digest = try FileDigest.hex(manifest)
    var unfinished: [Int] = []
    var stale: [Int] = []
    for index in 0..<count {
      let path = ShardCompletion.path(folder: folder, index: index, count: count)
      guard let bytes = try? FileIO.read(path, limit: FileIO.Limit.structured),
        let record = try? JSONDecoder().decode(ShardCompletion.self, from: Data(bytes)),
        record.shard == index, record.shards == count
      else {
        unfinished.append(index)
        continue
      }
      if record.manifest != digest { stale.append(index) }
    }
    if !unfinished.isEmpty {
      throw BatchError.shardsMissing(
        folder: folder,
        detail: "\(shardList(unfinished, of: count)) did not finish (still running, killed, or "
          + "stopped by an error of its own)")
    }
    if !stale.isEmpty {
      let name = (manifest as NSString).lastPathComponent
      throw BatchError.shardMismatch(
        folder: folder,
        detail: "\(shardList(stale, of: count)) ran another manifest than '\(name)' (or an "
          + "earlier version of it)")
    }
    let readers = try (0..<count).map { index in
      try ShardResultsReader(folder: folder, index: index, count: count)
    }
    var merged = MergedResults()
    merged.shards = count
    let output = try AtomicOutput(path: folder + "/results.jsonl")
    var missing: [(shard: Int, id: String, line: Int)] = []
    var reader = try ManifestReader(path: manifest)
    var ordinal = 0
    while let item = reader.next() {
      let shard = readers[ordinal % count]
      ordinal += 1
      let expected = expectation(item)
      merged.items += 1
      let line: [UInt8]
      let result: ItemResult
      switch shard.next() {
      case nil:
        missing.append((shard.index, expected.id, expected.line))
        continue
      case .failure(let problem):
        // One unreadable line is that item's failure; the merge goes on.
        result = ItemResult(
          id: expected.id, line: expected.line, kind: expected.kind, status: .failed,
          outputs: [], error: ErrorRecord(problem), seconds: 0)
        line = Array(JSONOutput.line(result).utf8)
      case .success(let read):
        guard read.result.id == expected.id, read.result.line == expected.line else {
          output.discard()
          throw BatchError.shardMismatch(
            folder: folder,
            detail: "shard \(shard.index) of \(count) (\(shard.name) line \(shard.lineNumber)) "
              + "has item '\(read.result.id)' (line \(read.result.line)) where the manifest has "
              + "item '\(expected.id)' (line \(expected.line))")
        }
        result = read.result
        line = read.line
      }
      try output.write(line)
      try output.write(CollectionOfOne(UInt8(ascii: "\n")))
      if result.status == .skipped { merged.skipped += 1 }
      if result.status.succeeded {
        if result.kind == .card { merged.cards.insert(result.id) }
        if result.shipTo != nil { merged.shipped.append(result) }
      } else {
        merged.failed += 1
      }
    }
    if let first = missing.first {
      output.discard()
      let more = missing.count > 1 ? " and \(missing.count - 1) more" : ""
      throw BatchError.shardsMissing(
        folder: folder,
        detail: "shard \(first.shard) of \(count) has no result for item '\(first.id)' (line "
          + "\(first.line))\(more): it stopped early")
    }
    for shard in readers where shard.hasMore() {
      output.discard()
      throw BatchError.shardMismatch(
        folder: folder,
        detail: "shard \(shard.index) of \(count) (\(shard.name)) has more results than the "
          + "manifest has items for it")
    }
    try output.commit()
    return merged
  }

  /// The shard count of the results in `folder`: `requested`, or the only one present.
  static func shardCount(folder: String, requested: Int?) throws -> Int {
    var found: [Int: Set<Int>] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
      if let (index, count) = shardOf(resultsFile: name) { found[count, default: []].insert(index) }
    }
    let counts = found.keys.sorted()
    guard !counts.isEmpty else { throw FileError.notFound(path: folder + "/results-*-of-*.jsonl") }
    let count: Int
    if let requested {
      count = requested
    } else if counts.count == 1 {
      count = counts[0]
    } else {
      throw BatchError.shardMismatch(
        folder: folder,
        detail: "it holds the results of runs of "
          + counts.map { "\($0) (results-*-of-\($0).jsonl)" }.joined(separator: " and ")
          + " shards")
    }
    let absent = (0..<count).filter { !(found[count]?.contains($0) ?? false) }
    if !absent.isEmpty {
      throw BatchError.shardsMissing(
        folder: folder,
        detail: "\(shardList(absent, of: count)) \(absent.count == 1 ? "has" : "have") no results ("
          + absent.map { "results-\($0)-of-\(count).jsonl" }.joined(separator: ", ") + ")")
    }
    return count
  }

  /// Writes `folder/results.jsonl` from the results of a run in `shards` shards that stopped
  /// before every shard ended (canceled, or failed as a whole): each shard's results as far as
  /// they follow its items in order (a shard stopped part-way wrote those of its items that
  /// ended; one never run wrote none), in manifest order; the items without a result are left
  /// out, as a stopped run leaves them.
  ///
  /// - Parameters:
  ///   - manifest: the batch's manifest.
  ///   - folder: the batch's output folder, which holds the shards' results.
  ///   - shards: the number of shards.
  ///   - output: where the results go; nil for `folder/results.jsonl` (a caller that may lose
  ///     a race to end the job writes elsewhere first, and renames once it has won).
  /// - Returns: what was written: `items` counts the results, `failed` and `skipped` theirs.
  /// - Throws: `FileError` when the manifest cannot be read or the results cannot be written.
  public static func partial(
    manifest: String, folder: String, shards: Int, output: String? = nil
  ) throws -> MergedResults {
    var merged = MergedResults()
    merged.shards = shards
    let readers = (0..<shards).map { index in
      try? ShardResultsReader(folder: folder, index: index, count: shards)
    }
    // Where a shard's results stop: its later items have none.
    var ended = Set<Int>()
    var reader = try ManifestReader(path: manifest)
    // Removed unless committed (its end).
    let destination = output
    let output = try AtomicOutput(path: destination ?? folder + "/results.jsonl")
    var ordinal = 0
    while let item = reader.next() {
      let index = ordinal % shards
      ordinal += 1
      guard !ended.contains(index), let shard = readers[index] else { continue }
      let expected = expectation(item)
      guard case .success(let read) = shard.next(), read.result.id == expected.id,
        read.result.line == expected.line
      else {
        ended.insert(index)
        continue
      }
      merged.items += 1
      switch read.result.status {
      case .failed: merged.failed += 1
      case .skipped: merged.skipped += 1
      case .ok: break
      }
      try output.write(read.line)
      try output.write(CollectionOfOne(UInt8(ascii: "\n")))
    }
    try output.commit()
    return merged
  }

  /// Removes the shards' own results and completion records of a run in `shards` shards in
  /// `folder` (of shard `only` alone, when given), once they are merged and the merge is
  /// recorded (what is missing is skipped).
  public static func removeShardResults(folder: String, shards: Int, only: Int? = nil) {
    for index in only.map({ [$0] }) ?? Array(0..<shards) {
      unlink(folder + "/results-\(index)-of-\(shards).jsonl")
      unlink(ShardCompletion.path(folder: folder, index: index, count: shards))
    }
  }

  /// The id, line and kind a shard's result for manifest record `item` must have (a record
  /// that is not an item is named by its id, else `line-N`, as its failure is).
  private static func expectation(_ item: Result<ManifestItem, ManifestLineError>) -> (
    id: String, line: Int, kind: ItemKind?
  ) {
    switch item {
    case .success(let job): (job.id, job.line, job.kind)
    case .failure(let error): (error.id ?? "line-\(error.line)", error.line, nil)
    }
  }

  /// `results-I-of-N.jsonl` → (I, N), for N ≥ 2 and I < N.
  public static func shardOf(resultsFile name: String) -> (Int, Int)? {
    guard name.hasPrefix("results-"), name.hasSuffix(".jsonl") else { return nil }
    let middle = name.dropFirst("results-".count).dropLast(".jsonl".count)
    let parts = middle.components(separatedBy: "-of-")
    guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
      let index = Int(parts[0]), let count = Int(parts[1]), count >= 2, (0..<count).contains(index)
    else { return nil }
    return (index, count)
  }

  private static func shardList(_ indices: [Int], of count: Int) -> String {
    let words = indices.map(String.init)
    let list =
      words.count == 1
      ? words[0] : words.dropLast().joined(separator: ", ") + " and " + words[words.count - 1]
    return "shard\(indices.count == 1 ? "" : "s") \(list) of \(count)"
  }
}

/// One shard's results, a line at a time.
private final class ShardResultsReader {
  let index: Int
  let name: String
  private var reader: LineReader

  init(folder: String, index: Int, count: Int) throws(FileError) {
    self.index = index
    name = "results-\(index)-of-\(count).jsonl"
    reader = try LineReader(path: folder + "/" + name)
  }

  /// The line last read.
  var lineNumber: Int { reader.lineNumber }

  /// The next result with its line's bytes; a line that is too long or not a result is that
  /// line's failure (reading goes on); nil at the end.
  func next() -> Result<(result: ItemResult, line: [UInt8]), BatchError>? {
    let line: [UInt8]
    do {
      guard let next = try reader.next() else { return nil }
      line = next
    } catch {
      return .failure(
        .resultUnreadable(
          file: name, line: reader.lineNumber, reason: error.message, cause: error))
    }
    guard let result = try? JSONDecoder().decode(ItemResult.self, from: Data(line)) else {
      return .failure(
        .resultUnreadable(file: name, line: reader.lineNumber, reason: "not an item's result"))
    }
    return .success((result, line))
  }

  /// Whether any line is left (a readable one or not).
  func hasMore() -> Bool { next() != nil }
}
