// SPDX-License-Identifier: Apache-2.0
// ImprintService: what a job's work is, as data kept in its record (`job.json`): the route that
// accepts a job writes its inputs into the job's folder and says here how they are run, so
// that the work can be made again from the folder and the record alone — by this process when
// it starts the job, and by another one (a replica sharing the jobs' storage) that takes it
// over. `ImprintService.work(for:id:folder:)` makes the work from it.

import ImprintPrinting

/// How a job's work runs, from the files its request wrote into the job's folder.
enum JobWork: Sendable, Codable, Equatable {
  /// `POST /v1/batch`: the manifest and its inputs run as `imprint batch` runs them.
  case batch(BatchWork)
  /// `POST /v1/prepare`: the order, its price list and its files prepared (and printed).
  case prepare(PrepareWork)

  /// The kind of job it is.
  var kind: JobKind {
    switch self {
    case .batch: .batch
    case .prepare: .prepare
    }
  }
}

/// A batch job's work: `manifest` in the job's folder, its inputs under `inputs/`, its outputs
/// to `output/`.
struct BatchWork: Sendable, Codable, Equatable {
  /// The manifest's file name in the job's folder: `manifest.jsonl` or `manifest.csv`.
  var manifest: String
  /// The manifest as messages name it: the file name of the part that brought it.
  var manifestName: String
  /// The input files the request sent, by their manifest paths, sorted.
  var sentInputs: [String]
  /// The manifest's lines (a run that ends with fewer results was stopped part-way).
  var lines: Int
  /// Whether no two of its items have one id, as read when the job was accepted (its shards
  /// then pass over each other's lines unread: `BatchOptions.uniqueIDs`); nil in records
  /// written before it was kept.
  var uniqueIDs: Bool?
}

/// A prepare job's work: `order.json`, `prices.json` and `files/` in the job's folder, its
/// outputs to `output/`.
struct PrepareWork: Sendable, Codable, Equatable {
  /// The options as the request gave them.
  var request: PrepareRequest
  /// The configuration's name of the printer the order is sent to, if any (its address and
  /// credentials are the configuration's when the work is made).
  var printer: String?
}

/// One shard of a batch job run in shards (`--jobs-db`, `JobLimits.shardItems`), as the replica
/// that claimed it runs it: `imprint batch --shard INDEX/COUNT` on the job's folder.
struct ShardRun: Sendable {
  /// The shard, from 0.
  let index: Int
  /// The job's shard count.
  let count: Int
  /// Writes the shard's end once it ran to its end (`JobsDBConnection.endShard`).
  let end: @Sendable () -> ShardEnd
}

/// What the end of a shard's run wrote.
enum ShardEnd: Sendable, Equatable {
  /// Every other shard had ended: this run merges the shards' results and ends the job.
  case last
  /// Ended; the job goes on in its other shards.
  case ended
  /// Another replica holds the shard, or the job ended: nothing more is written from here.
  case lost
  /// Not written (the database away): the shard is handed back, or its lease expires, and a
  /// run of it (every item skipped) ends it again.
  case unwritten
}
