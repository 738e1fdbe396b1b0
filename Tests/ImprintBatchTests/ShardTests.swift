// SPDX-License-Identifier: Apache-2.0
// ImprintBatchTests: shard specs, the one item status, and merging shards' results, called as a
// library (no CLI).

import Foundation
import ImprintCards
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintBatch

@Suite("BatchShard", .liveHandlesChecked)
struct BatchShardTests {
  @Test("I/N parses; auto reads a Kubernetes Indexed Job's or a Slurm array's variables")
  func parsing() throws {
    #expect(try BatchShard(parsing: "0/1") == .whole)
    let shard = try BatchShard(parsing: "2/3")
    #expect(shard.index == 2 && shard.count == 3 && shard.description == "2/3")
    let kubernetes = ["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETION_COUNT": "4"]
    #expect(
      try BatchShard(parsing: "auto", environment: kubernetes) == BatchShard(index: 1, count: 4))
    let slurm = [
      "SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3",
    ]
    #expect(try BatchShard(parsing: "auto", environment: slurm) == BatchShard(index: 2, count: 3))
    // Kubernetes' variables win when both are set.
    #expect(
      try BatchShard(parsing: "auto", environment: kubernetes.merging(slurm) { a, _ in a })
        == BatchShard(index: 1, count: 4))
  }

  @Test(
    "malformed specs are batch.badShard naming the spec, after auto is resolved",
    arguments: [
      ("3/3", [:], "3/3"), ("-1/2", [:], "-1/2"), ("1/0", [:], "1/0"), ("a/b", [:], "a/b"),
      ("1", [:], "1"), ("1/2/3", [:], "1/2/3"), ("", [:], ""), ("0 /2", [:], "0 /2"),
      ("auto", ["JOB_COMPLETION_INDEX": "5", "JOB_COMPLETION_COUNT": "3"], "5/3"),
      ("auto", ["SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "3"], "-1/3"),
    ])
  func malformed(spec: String, environment: [String: String], resolved: String) {
    #expect(throws: BatchError.badShard(resolved)) {
      try BatchShard(parsing: spec, environment: environment)
    }
  }

  @Test("auto without the variables is batch.noShardEnvironment; a bad index is refused")
  func noEnvironment() {
    #expect(throws: BatchError.noShardEnvironment) { try BatchShard(parsing: "auto") }
    #expect(BatchError.noShardEnvironment.code == "batch.noShardEnvironment")
    #expect(throws: BatchError.badShard("2/2")) { try BatchShard(index: 2, count: 2) }
    #expect(BatchError.badShard("\u{1B}[2J/2").message.contains("\\u{1B}"))
  }

  @Test("every job belongs to exactly one shard, and the shards' job counts add up")
  func partition() throws {
    for count in 1...5 {
      let shards = try (0..<count).map { try BatchShard(index: $0, count: count) }
      for records in 0...11 {
        #expect(shards.map { $0.items(of: records) }.reduce(0, +) == records)
        for (index, shard) in shards.enumerated() {
          let owned = (0..<records).filter { shard.owns(ordinal: $0) }
          #expect(owned.count == shard.items(of: records))
          #expect(owned.allSatisfy { $0 % count == index })
        }
      }
    }
  }
}

@Suite("ItemStatus", .liveHandlesChecked)
struct ItemStatusTests {
  @Test("a job's status is encoded as its raw value and decoded strictly")
  func coding() throws {
    let result = ItemResult(
      id: "a", line: 1, kind: .qr, status: .skipped, outputs: ["qr/a.png"], error: nil,
      seconds: 0)
    let line = JSONOutput.line(result)
    #expect(line.contains(#""status":"skipped""#))
    #expect(try JSONDecoder().decode(ItemResult.self, from: Data(line.utf8)) == result)
    let unknown = line.replacingOccurrences(of: #""skipped""#, with: #""done""#)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(ItemResult.self, from: Data(unknown.utf8))
    }
    #expect(ItemStatus.allCases.filter(\.succeeded) == [.ok, .skipped])
  }
}

@Suite("ShardMerge", .liveHandlesChecked)
struct ShardMergeTests {
  let profile = repositoryRoot + "/assets/samples/profiles/harbor-lamp.json"

  /// A manifest of QR jobs, a card job that ships, and a line that fails; run as `shards`
  /// shards into `folder/out`.
  func runShards(_ shards: Int, in folder: TemporaryFolder, layout: BatchLayout? = nil)
    async throws -> (manifest: String, options: BatchOptions)
  {
    let lines = [
      #"{"id":"q1","kind":"qr","payload":"one"}"#,
      #"{"id":"c1","kind":"card","profile":"\#(profile)","shipTo":{"name":"N","address":"A"}}"#,
      #"{"id":"q2","kind":"qr"}"#,
      #"{"id":"q3","kind":"qr","payload":"three"}"#,
      #"{"id":"q4","kind":"qr","payload":"four"}"#,
    ]
    let manifest = folder.file("m.jsonl")
    #expect(
      FileManager.default.createFile(
        atPath: manifest, contents: Data((lines.joined(separator: "\n") + "\n").utf8)))
    var options = BatchOptions(
      outputFolder: folder.file("out"), placeholder: try CardInput.shippedPlaceholder())
    options.jobs = 1
    options.layout = layout
    for index in 0..<shards {
      var shard = options
      shard.shard = try BatchShard(index: index, count: shards)
      _ = try await BatchRunner.run(manifest: manifest, options: shard)
    }
    return (manifest, options)
  }

  @Test("failures are counted by the decoded status, never by text in a field's value")
  func decodedStatus() async throws {
    let folder = TemporaryFolder()
    let (manifest, options) = try await runShards(2, in: folder)
    // Shard 0 has q1, q2 (failed: no payload), q4. q1's line gains "status":"failed" in the
    // value of a field the result does not have (ignored when decoded); its status is ok.
    let path = folder.file("out/results-0-of-2.jsonl")
    var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
      .map(String.init)
    #expect(lines.count == 3 && lines[0].contains(#""id":"q1""#))
    lines[0] =
      #"{"note":{"status":"failed","text":"\"status\":\"failed\""},"#
      + lines[0].dropFirst()
    #expect(lines[0].contains(#""status":"failed""#) && lines[0].contains(#""status":"ok""#))
    #expect(
      FileManager.default.createFile(
        atPath: path, contents: Data((lines.joined(separator: "\n") + "\n").utf8)))
    let report = try await ShardMerge.run(manifest: manifest, options: options)
    #expect(report.merged.items == 5 && report.merged.shards == 2)
    #expect(report.failed == 1 && report.merged.failed == 1)
    #expect(report.merged.cards == ["c1"])
    #expect(report.merged.shipped.map(\.id) == ["c1"])
    #expect(report.imposed == nil)
    // The results keep each shard's line as written, in manifest order.
    let merged = try String(contentsOfFile: folder.file("out/results.jsonl"), encoding: .utf8)
      .split(separator: "\n").map(String.init)
    #expect(merged.count == 5 && merged[0] == lines[0])
    let statuses = try merged.map {
      try JSONDecoder().decode(ItemResult.self, from: Data($0.utf8)).status
    }
    #expect(statuses == [.ok, .ok, .failed, .ok, .ok])
    // The shipped card's packing list and labels.
    #expect(FileManager.default.fileExists(atPath: folder.file("out/packing-list.csv")))
    #expect(FileManager.default.fileExists(atPath: folder.file("out/labels.pdf")))
  }

  @Test(
    "shards told the ids are unique pass over others' lines unread: the same merged results",
    arguments: [1, 2, 3, 7])
  func uniqueIDs(shards: Int) async throws {
    // 40 items: QR codes, lines that fail (no payload, an unknown key, not JSON, a blank id),
    // comments and blank lines, a card; every id its own.
    var lines: [String] = ["# a comment", ""]
    for index in 0..<40 {
      switch index % 8 {
      case 3: lines.append(#"{"id":"q\#(index)","kind":"qr"}"#)
      case 5: lines.append(#"{"id":"q\#(index)","kind":"qr","payload":"p","size":3}"#)
      case 6: lines.append(#"{"id":"q\#(index)","#)
      case 7: lines.append(#"{"id":"","kind":"qr","payload":"p"}"#)
      default: lines.append(#"{"id":"q\#(index)","kind":"qr","payload":"p\#(index)"}"#)
      }
      if index == 20 { lines += ["", "# another"] }
    }
    lines.append(#"{"id":"c1","kind":"card","profile":"\#(profile)"}"#)
    let folder = TemporaryFolder()
    let manifest = folder.file("m.jsonl")
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: manifest))
    /// The results of a run in `shards` shards (merged unless 1), without their seconds.
    func results(unique: Bool, into name: String) async throws -> [String] {
      var options = BatchOptions(
        outputFolder: folder.file(name), placeholder: try CardInput.shippedPlaceholder())
      options.jobs = 1
      options.uniqueIDs = unique
      for index in 0..<shards {
        var shard = options
        shard.shard = try BatchShard(index: index, count: shards)
        _ = try await BatchRunner.run(manifest: manifest, options: shard)
      }
      if shards > 1 {
        let merged = try ShardMerge.merge(manifest: manifest, folder: folder.file(name))
        #expect(merged.items == 41 && merged.skipped == 0)
      }
      return try String(contentsOfFile: folder.file(name + "/results.jsonl"), encoding: .utf8)
        .split(separator: "\n").map {
          let result = try JSONDecoder().decode(ItemResult.self, from: Data($0.utf8))
          return "\(result.id) \(result.line) \(result.status) \(result.error?.code ?? "")"
        }
    }
    let read = try await results(unique: false, into: "read")
    let skipped = try await results(unique: true, into: "skipped")
    #expect(read.count == 41 && skipped == read, "\(skipped)")
    #expect(read.filter { $0.contains(" failed ") }.count == 20)
  }

  @Test("a result line with a status that is not one of the three fails that job alone")
  func unknownStatus() async throws {
    let folder = TemporaryFolder()
    let (manifest, options) = try await runShards(2, in: folder)
    let path = folder.file("out/results-1-of-2.jsonl")
    let text = try String(contentsOfFile: path, encoding: .utf8)
    // Shard 1 has c1 and q3: c1 claims a status no run writes.
    #expect(text.hasPrefix(#"{"copies":1"#) && text.contains(#""id":"c1""#))
    let changed = text.replacingOccurrences(
      of: #""status":"ok""#, with: #""status":"done""#, options: [], range: nil)
    #expect(FileManager.default.createFile(atPath: path, contents: Data(changed.utf8)))
    let report = try await ShardMerge.run(manifest: manifest, options: options)
    #expect(report.failed == 3)  // q2's own failure, c1 and q3 unreadable
    #expect(report.merged.cards.isEmpty && report.merged.shipped.isEmpty)
    let results = try String(contentsOfFile: folder.file("out/results.jsonl"), encoding: .utf8)
    #expect(results.components(separatedBy: "batch.resultUnreadable").count == 3)
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/packing-list.csv")))
  }

  @Test("the merge lays the finished cards out again, as an unsharded run does")
  func layout() async throws {
    let folder = TemporaryFolder()
    let (manifest, options) = try await runShards(3, in: folder, layout: .cardPrinter)
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/card-printer.pdf")))
    let report = try await ShardMerge.run(manifest: manifest, options: options)
    #expect(report.imposed?.pages == 2 && report.imposed?.refused.isEmpty == true)
    #expect(report.failed == 1)
    let sharded = try Data(contentsOf: URL(fileURLWithPath: folder.file("out/card-printer.pdf")))
    // The same manifest unsharded draws the same file.
    let whole = TemporaryFolder()
    _ = try await runShards(1, in: whole, layout: .cardPrinter)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: whole.file("out/card-printer.pdf"))) == sharded)
    #expect(FileManager.default.fileExists(atPath: whole.file("out/packing-list.csv")))
  }
}
