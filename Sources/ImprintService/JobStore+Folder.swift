// SPDX-License-Identifier: Apache-2.0
// ImprintService: the jobs folder (`imprint serve --jobs-dir DIR`): each job's record written
// beside its files (`ID/job.json`), the folder locked for one server, and what a start finds
// there read back: finished jobs as they were, jobs the stopped process left queued or running
// failed with `service.interrupted`, anything else skipped and logged, never followed or
// deleted.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintHTTP
import ImprintPrinting

/// The `Idempotency-Key` of the request that made a job, kept with the job.
struct IdempotencyRecord: Sendable, Codable, Equatable {
  /// The key as the request gave it (1 to 255 printable ASCII characters).
  var key: String
  /// The request's fingerprint (`IdempotencyKeys.fingerprint(of:)`), 64 lowercase hex digits.
  var fingerprint: String
}

/// One job's record in a jobs folder: `ID/job.json`, schema 1.
struct JobFile: Codable, Equatable {
  /// The record's file name in a job's folder.
  static let name = "job.json"
  /// The largest record read (1 MiB).
  static let limit = 1 << 20
  /// The schema this server writes and reads.
  static let currentSchema = 1

  var schemaVersion = JobFile.currentSchema
  var job: String
  var kind: JobKind
  /// The acceptance order (the oldest finished jobs are removed first).
  var number: Int
  var state: JobState
  var accepted: Timestamp
  var started: Timestamp?
  var finished: Timestamp?
  var summary: JobSummary?
  var error: ErrorRecord?
  var callback: String?
  var webhook: WebhookStatus?
  var idempotency: IdempotencyRecord?
  /// What its work is (absent in records written before it was kept).
  var work: JobWork?

  /// The store's record of this job in `folder`, with its place, state and times as given
  /// (a jobs folder's are the file's, a jobs database's its columns).
  func record(
    folder: String, number: Int, accepted: Timestamp, state: JobState, started: Timestamp?,
    finished: Timestamp?, bytes: Int
  ) -> JobStore.Record {
    var record = JobStore.Record(
      id: job, kind: kind, folder: folder, number: number, accepted: accepted, bytes: bytes)
    record.state = state
    record.started = started
    record.finished = finished
    if state.isFinished { record.outcome = JobOutcome(summary: summary, error: error) }
    record.callback = callback
    record.webhook = webhook
    record.idempotency = idempotency
    record.spec = work
    return record
  }

  /// The record of `record` as it is.
  init(_ record: JobStore.Record) {
    job = record.id
    kind = record.kind
    number = record.number
    state = record.state
    accepted = record.accepted
    started = record.started
    finished = record.finished
    summary = record.outcome?.summary
    error = record.outcome?.error
    callback = record.callback
    webhook = record.webhook
    idempotency = record.idempotency
    work = record.spec
  }
}

extension JobStore {
  /// What a start found in the jobs folder, one JSON log line each.
  struct LoadEvent: Sendable, Encodable, Equatable {
    /// When the start read the folder (ISO 8601, UTC).
    var time: Timestamp
    /// `jobs.skipped` (an entry that is not a job this server can read: left where it is; or
    /// a line of the removed jobs' keys, `.idempotency-keys.jsonl`, that cannot be read),
    /// `jobs.interrupted` (a job the stopped process left queued or running: now `failed`),
    /// `jobs.removed` (a finished job past `--jobs-kept` or `--jobs-disk`, removed with its
    /// files), `jobs.unwritten` (a job whose changed record, or the keys of the jobs removed,
    /// could not be written), `jobs.loaded` (the end: the jobs kept); without a jobs folder,
    /// `jobs.abandoned` (the private folder of a server killed, removed) or `jobs.skipped` (one
    /// that could not be removed whole).
    var event: String
    /// The entry's path (the folder itself for `jobs.loaded`).
    var path: String
    /// Why, in words.
    var reason: String?
    /// The jobs kept, for `jobs.loaded`.
    var jobs: Int?
  }

  /// An entry of the jobs folder that is not a job this server reads, and why.
  private struct Skip: Error {
    var reason: String
  }

  /// Opens and locks `folder`'s `.lock` (`flock`, exclusive, not waiting), making the folder
  /// (readable by its owner only) when it does not exist.
  ///
  /// - Returns: the lock file's descriptor, held open while the lock is.
  /// - Throws: `FileError` when the folder cannot be made or is not a folder, or the lock file
  ///   cannot be opened; `ServerError.jobsFolderInUse` when another process holds the lock.
  static func lockFolder(_ folder: String) throws -> Int32 {
    var status = stat()
    if stat(folder, &status) != 0 {
      try FileIO.makeFolder(folder)
      chmod(folder, 0o700)
    } else if (status.st_mode & S_IFMT) != S_IFDIR {
      throw FileError.unwritable(path: folder, reason: "it is not a folder")
    }
    let path = folder + "/.lock"
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
      throw FileError.unwritable(path: path, reason: .system(errno))
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      Foundation.close(descriptor)
      if code == EWOULDBLOCK { throw ServerError.jobsFolderInUse(folder: folder) }
      throw FileError.unwritable(path: path, reason: .system(code))
    }
    return descriptor
  }

  /// Writes `record`'s `job.json` atomically (synced before it is renamed).
  ///
  /// - Throws: `FileError` when it cannot be written.
  static func writeRecord(_ record: Record) throws(FileError) {
    try AtomicFile.write(
      Array(JSONOutput.pretty(JobFile(record)).utf8), to: record.folder + "/" + JobFile.name)
  }

  /// Reads the jobs of the jobs folder `root`, and says what it found.
  ///
  /// Each entry not hidden (`.lock` and other names beginning with `.` are not looked at) must
  /// be a job's folder: named by its id (a lowercase UUID), a folder (not a link), holding a
  /// `job.json` of schema 1 (a regular file, naming that id) and, if any, an `output` folder
  /// (not a link). Anything else is skipped, logged and left where it is. A job that was
  /// queued or running ends `failed` (`JobError.lost`), its folder as the stopped
  /// process left it; a webhook still pending stays so (the service calls it again,
  /// `pendingWebhooks`). Then the oldest finished jobs past
  /// `limits.kept`, then past `limits.maximumBytes`, are removed with their files, their
  /// `Idempotency-Key`s added to `keys` first. Records that changed are written back.
  ///
  /// - Returns: the jobs kept, oldest first, and one event per entry skipped, job interrupted
  ///   or removed, ending with `jobs.loaded`.
  static func load(_ root: String, limits: JobLimits, keys: RemovedKeys) -> (
    [Record], [LoadEvent]
  ) {
    let now = Timestamp.now
    var events = keys.problems.map {
      LoadEvent(time: now, event: "jobs.skipped", path: keys.path, reason: $0)
    }
    var records: [Record] = []
    var changed: Set<String> = []
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
    for name in names where !name.hasPrefix(".") {
      let path = root + "/" + name
      do throws(Skip) {
        var record = try read(name, in: root)
        if !record.state.isFinished {
          let ended = record.kind == .batch ? files(in: path + "/output/.state").count : 0
          let lost = JobError.lost(
            id: record.id, kind: record.kind, was: record.state.rawValue, ended: ended)
          record.state = .failed
          record.finished = now
          record.outcome = JobOutcome(error: ErrorRecord(lost))
          changed.insert(record.id)
          events.append(
            LoadEvent(time: now, event: "jobs.interrupted", path: path, reason: lost.message))
        }
        record.bytes = size(of: path)
        records.append(record)
      } catch {
        events.append(LoadEvent(time: now, event: "jobs.skipped", path: path, reason: error.reason))
      }
    }
    records.sort { ($0.number, $0.id) < ($1.number, $1.id) }
    var used = records.reduce(0) { $0 + $1.bytes }
    var removed: [(Record, String)] = []
    while let oldest = records.first,
      records.count > limits.kept || used > limits.maximumBytes
    {
      var reason =
        records.count > limits.kept
        ? "one of the oldest finished jobs past --jobs-kept (\(limits.kept))"
        : "one of the oldest finished jobs past --jobs-disk (\(limits.maximumBytes) bytes)"
      if oldest.webhook?.state == "pending" {
        reason += "; its webhook, still pending, is not called"
      }
      records.removeFirst()
      used -= oldest.bytes
      removed.append((oldest, reason))
    }
    // Their keys are kept before their folders go.
    do {
      try keys.append(removed.compactMap { $0.0.removedKey })
    } catch {
      events.append(
        LoadEvent(time: now, event: "jobs.unwritten", path: keys.path, reason: error.message))
    }
    for (record, reason) in removed {
      try? FileManager.default.removeItem(atPath: record.folder)
      events.append(
        LoadEvent(time: now, event: "jobs.removed", path: record.folder, reason: reason))
    }
    for record in records where changed.contains(record.id) {
      do {
        try writeRecord(record)
      } catch {
        events.append(
          LoadEvent(time: now, event: "jobs.unwritten", path: record.folder, reason: error.message))
      }
    }
    events.append(LoadEvent(time: now, event: "jobs.loaded", path: root, jobs: records.count))
    return (records, events)
  }

  /// What job `record`, still running when the stop ended, had done: a batch's items ended
  /// (their resume records, `output/.state`); a prepare job's documents sent to the printer
  /// and being sent (its print journal's entries), of those it had prepared (their tickets in
  /// `output`).
  static func leftRunning(_ record: Record, drainSeconds: Double) -> JobError {
    let output = record.folder + "/output"
    let ended = record.kind == .batch ? files(in: output + "/.state").count : 0
    let journal = try? PrintJournal(path: record.folder + "/" + ServicePrinter.journalName)
    let entries = journal?.entries ?? []
    let prepared = files(in: output).filter { $0.hasSuffix(".ticket.json") }.count
    let sent = entries.filter(\.sent).count
    return .leftRunning(
      id: record.id, kind: record.kind, seconds: drainSeconds, ended: ended, sent: sent,
      prepared: max(prepared, entries.count), sending: entries.count - sent)
  }

  /// Job `name` of the jobs folder `root`, as its record says.
  ///
  /// - Throws: `Skip` saying why the entry is not a job this server reads.
  private static func read(_ name: String, in root: String) throws(Skip) -> Record {
    guard isJobID(name) else {
      throw Skip(reason: "is not a job: its name is not a job id (a lowercase UUID)")
    }
    let folder = root + "/" + name
    var status = stat()
    guard lstat(folder, &status) == 0 else {
      throw Skip(reason: "cannot be read (\(String(cString: strerror(errno))))")
    }
    switch status.st_mode & S_IFMT {
    case S_IFDIR: break
    case S_IFLNK: throw Skip(reason: "is a symbolic link; a job's folder is never one")
    default: throw Skip(reason: "is not a folder")
    }
    let path = folder + "/" + JobFile.name
    guard lstat(path, &status) == 0 else {
      throw Skip(
        reason: "has no \(JobFile.name): not a job, or one whose request was never answered "
          + "(the server stopped while accepting it)")
    }
    guard (status.st_mode & S_IFMT) == S_IFREG else {
      throw Skip(reason: "its \(JobFile.name) is not a regular file")
    }
    if lstat(folder + "/output", &status) == 0 && (status.st_mode & S_IFMT) != S_IFDIR {
      throw Skip(reason: "its output is not a folder (a symbolic link is never followed)")
    }
    let bytes: [UInt8]
    do {
      bytes = try FileIO.read(path, limit: JobFile.limit)
    } catch {
      throw Skip(reason: "its \(JobFile.name) cannot be read: " + error.message)
    }
    struct Version: Decodable { var schemaVersion: Int }
    let version: Version
    let file: JobFile
    do {
      version = try JSONDecoder().decode(Version.self, from: Data(bytes))
    } catch {
      throw Skip(reason: "its \(JobFile.name) is damaged (\(describe(error)))")
    }
    guard version.schemaVersion == JobFile.currentSchema else {
      throw Skip(
        reason: "its \(JobFile.name) has schemaVersion \(version.schemaVersion); this server "
          + "reads \(JobFile.currentSchema)")
    }
    do {
      file = try JSONDecoder().decode(JobFile.self, from: Data(bytes))
    } catch {
      throw Skip(reason: "its \(JobFile.name) is damaged (\(describe(error)))")
    }
    if let problem = problem(of: file, named: name) {
      throw Skip(reason: "its \(JobFile.name) is damaged (\(problem))")
    }
    return file.record(
      folder: folder, number: file.number, accepted: file.accepted, state: file.state,
      started: file.started, finished: file.finished, bytes: 0)
  }

  /// Whether `name` is a job's id: a lowercase UUID.
  static func isJobID(_ name: String) -> Bool {
    name.utf8.count == 36 && name == name.lowercased() && UUID(uuidString: name) != nil
  }

  /// What is wrong with record `file` of the folder `name`, or nil.
  private static func problem(of file: JobFile, named name: String) -> String? {
    if file.job != name { return "it names job '\(SafeText.excerpt(file.job, limit: 60))'" }
    if !(0...(1 << 52)).contains(file.number) { return "number \(file.number)" }
    if let summary = file.summary,
      [summary.total, summary.ok, summary.skipped, summary.failed].contains(where: { $0 < 0 })
    {
      return "a negative count in its summary"
    }
    if let problem = file.idempotency?.problem { return problem }
    if let webhook = file.webhook {
      guard webhook.url == file.callback else { return "its webhook's url is not its callback" }
      guard ["pending", "delivered", "failed"].contains(webhook.state) else {
        return "webhook state '\(SafeText.excerpt(webhook.state, limit: 60))'; expected "
          + "pending, delivered or failed"
      }
      guard (0...1_000_000).contains(webhook.attempts) else {
        return "webhook attempts \(webhook.attempts)"
      }
    }
    return nil
  }

  /// A decoding error in a few words: where, and what.
  private static func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "not JSON" }
    let (path, text): ([any CodingKey], String) =
      switch error {
      case .typeMismatch(_, let context), .valueNotFound(_, let context),
        .keyNotFound(_, let context), .dataCorrupted(let context):
        (context.codingPath, context.debugDescription)
      @unknown default: ([], "not a job's record")
      }
    let at = path.map(\.stringValue).joined(separator: ".")
    return SafeText.excerpt((at.isEmpty ? "" : "'\(at)': ") + text, limit: 200)
  }
}
