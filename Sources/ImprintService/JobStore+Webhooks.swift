// SPDX-License-Identifier: Apache-2.0
// ImprintService: the webhooks of jobs a jobs folder no longer keeps (`DIR/.webhooks/ID.json`).
// A finished job removed (DELETE, `--jobs-kept`, `--jobs-disk`) while its webhook is still
// pending leaves the delivery there before its folder goes: the backend asked for the call, so
// it is made, at least once like every other, even across a restart.

import Foundation
import ImprintCore
import ImprintHTTP
import Synchronization

/// The pending webhook of a job removed from a jobs folder: `.webhooks/ID.json`, schema 1.
struct RemovedWebhook: Codable, Equatable, Sendable {
  /// The schema this server writes and reads.
  static let currentSchema = 1

  var schemaVersion = RemovedWebhook.currentSchema
  /// The job's id (`Webhook-Id`).
  var job: String
  /// The callback URL, with its credentials if it had any.
  var callback: String
  /// Where the delivery is (`pending` while the file exists).
  var webhook: WebhookStatus
  /// The body of every call: the job's report as it was when it was removed.
  var body: String
}

/// The webhooks still pending of the jobs removed from a jobs folder, one file each in its
/// folder `.webhooks` (hidden: never taken for a job), written atomically and synced as each
/// is kept and after each call, removed once delivered or failed.
final class RemovedWebhooks: Sendable {
  /// The folder's name in the jobs folder.
  static let name = ".webhooks"
  /// The largest file read (2 MiB: a report without its results, and its URL).
  static let readLimit = 2 << 20

  /// The folder's path.
  let folder: String
  /// What reading the folder at the start found wrong, one entry a file skipped: its path and
  /// why (it is left where it is).
  let problems: [(path: String, reason: String)]
  private let pending: Mutex<[String: RemovedWebhook]>

  /// The pending webhooks kept in `root`'s `.webhooks` (none when it is missing).
  init(in root: String) {
    folder = root + "/" + Self.name
    var found: [String: RemovedWebhook] = [:]
    var problems: [(String, String)] = []
    var status = stat()
    if lstat(folder, &status) == 0 && (status.st_mode & S_IFMT) != S_IFDIR {
      problems.append((folder, "is not a folder (a symbolic link is never followed)"))
    } else {
      let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
      for name in names where !name.hasPrefix(".") {
        let path = folder + "/" + name
        switch Self.read(path, named: name) {
        case .success(let webhook): found[webhook.job] = webhook
        case .failure(let skip): problems.append((path, skip.reason))
        }
      }
    }
    self.problems = problems
    pending = Mutex(found)
  }

  /// Why a file of the folder is skipped.
  private struct Skip: Error {
    var reason: String
  }

  /// The webhook in `path`, named `name` (`ID.json`).
  private static func read(_ path: String, named name: String) -> Result<RemovedWebhook, Skip> {
    let id = String(name.dropLast(".json".count))
    guard name.hasSuffix(".json"), JobStore.isJobID(id) else {
      return .failure(Skip(reason: "is not a job's webhook: its name is not a job id and .json"))
    }
    var status = stat()
    guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
      return .failure(Skip(reason: "is not a regular file"))
    }
    let webhook: RemovedWebhook
    do {
      webhook = try JSONDecoder().decode(
        RemovedWebhook.self, from: Data(try FileIO.read(path, limit: readLimit)))
    } catch {
      return .failure(Skip(reason: "cannot be read as a webhook of schema 1"))
    }
    guard webhook.schemaVersion == RemovedWebhook.currentSchema, webhook.job == id,
      webhook.webhook.url == webhook.callback, webhook.webhook.state == "pending",
      (0...1_000_000).contains(webhook.webhook.attempts)
    else {
      return .failure(Skip(reason: "is damaged (not a pending webhook of job '\(id)')"))
    }
    return .success(webhook)
  }

  /// The webhooks pending, by job id.
  var all: [RemovedWebhook] { pending.withLock { $0.values.sorted { $0.job < $1.job } } }

  /// Keeps `webhook` (its file written and synced, the folder made when missing).
  ///
  /// - Throws: `FileError` when it cannot be written (it is not kept).
  func keep(_ webhook: RemovedWebhook) throws(FileError) {
    try write(webhook)
    pending.withLock { $0[webhook.job] = webhook }
  }

  /// Changes the pending webhook of job `id`, if one is kept: its file written again, or
  /// removed once the webhook is no longer pending.
  ///
  /// - Throws: `FileError` when the file cannot be written.
  func update(_ id: String, _ change: (inout WebhookStatus) -> Void) throws(FileError) {
    guard
      let changed = pending.withLock({ pending -> RemovedWebhook? in
        guard var webhook = pending[id] else { return nil }
        change(&webhook.webhook)
        pending[id] = webhook.webhook.state == "pending" ? webhook : nil
        return webhook
      })
    else { return }
    if changed.webhook.state == "pending" {
      try write(changed)
    } else {
      unlink(folder + "/" + id + ".json")
    }
  }

  /// Writes `webhook`'s file.
  private func write(_ webhook: RemovedWebhook) throws(FileError) {
    var status = stat()
    if lstat(folder, &status) != 0 {
      try FileIO.makeFolder(folder)
      chmod(folder, 0o700)
    } else if (status.st_mode & S_IFMT) != S_IFDIR {
      throw .unwritable(path: folder, reason: "it is not a folder")
    }
    try AtomicFile.write(
      Array(JSONOutput.pretty(webhook).utf8), to: folder + "/" + webhook.job + ".json")
  }
}
