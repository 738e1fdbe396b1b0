// SPDX-License-Identifier: Apache-2.0
// ImprintService: long work (`POST /v1/batch`): each job in a private folder, queued and run in
// the background one at a time, kept after it ends until the oldest are removed; bounded in
// jobs waiting, jobs kept and bytes on disk.

import Foundation
import ImprintCore
import Synchronization

/// How much long work a service keeps.
public struct JobLimits: Sendable, Equatable {
  /// Jobs queued or running at most (default 8); more are answered 503 `http.jobQueueFull`
  /// with Retry-After.
  public var queue = 8
  /// Finished jobs kept at most (default 32); the oldest are removed with their files.
  public var kept = 32
  /// Bytes all jobs' folders may hold (default 1 GiB).
  ///
  /// Inputs are counted when a job is accepted, outputs when it ends. A job that cannot fit, even once every finished job is removed, is
  /// refused: 413 `http.jobTooLarge` when it alone is over, else 507 `http.jobStorageFull`.
  public var maximumBytes = 1 << 30

  /// The defaults above.
  public init() {}
}

/// The state of one long job.
enum JobState: String, Sendable, Encodable {
  /// Accepted, waiting for its turn.
  case queued
  /// Running.
  case running
  /// Ended: its report says what it did (a batch whose items failed is done, with its failures
  /// in the summary).
  case done
  /// Ended without a report: the work as a whole could not run (its error says why).
  case failed

  /// Whether the job ended.
  var isFinished: Bool { self == .done || self == .failed }
}

/// What a job's work returns when it ends.
struct JobOutcome: Sendable {
  /// Item counts (a batch's summary); nil when there are none.
  var summary: JobSummary?
  /// Why the work as a whole failed; nil when it ran (the job is `done`).
  var error: ErrorRecord?
}

/// Item counts of a finished job, as `imprint batch` counts them.
struct JobSummary: Sendable, Encodable, Equatable {
  var total: Int
  var ok: Int
  var skipped: Int
  var failed: Int
}

/// The long jobs of one service: their folders under `root`, their states, their queue.
///
/// Jobs run one at a time, in the order accepted (the work of one uses the service's document
/// workers, as many at once as `--jobs`). Everything is in this process's memory and under
/// `root`, which the service removes when it stops: a restart forgets every job.
final class JobStore: Sendable {
  /// The work of a job: runs in its folder, returns its outcome.
  typealias Work = @Sendable (_ folder: String) async -> JobOutcome

  /// One job as the store keeps it.
  struct Record: Sendable {
    let id: String
    /// What made it (`batch`), for reports.
    let kind: String
    let folder: String
    /// The acceptance order, from 0.
    let number: Int
    var state = JobState.queued
    /// When it was accepted, started and ended (ISO 8601, UTC).
    let accepted: String
    var started: String?
    var finished: String?
    var outcome: JobOutcome?
    /// The bytes its folder is counted for.
    var bytes: Int
    /// Its work, until it starts; nil while the request that made it still writes its inputs.
    var work: Work?
    /// The URL its end is announced to (`callback=`), if any.
    var callback: String?
    /// Where that announcement is.
    var webhook: WebhookStatus?
  }

  private struct Store {
    var records: [String: Record] = [:]
    /// Queued jobs whose inputs are written, in order.
    var waiting: [String] = []
    var running = 0
    var accepted = 0
    /// Finished jobs removed (by DELETE, or as the oldest).
    var removed = 0
  }

  /// The folder of every job's folder.
  let root: String
  let limits: JobLimits
  /// Told of each job with a callback once it ended (its webhook is called there).
  private let ended: @Sendable (Record) -> Void
  private let store = Mutex(Store())

  /// A store under a new private folder in `parent` (the system's temporary folder when nil).
  ///
  /// - Parameters:
  ///   - parent: the folder the store's folder is made in.
  ///   - limits: the jobs queued, kept and their bytes.
  ///   - ended: told of each job with a callback once it ended.
  /// - Throws: `FileError` when the folder cannot be made.
  init(parent: String?, limits: JobLimits, ended: @escaping @Sendable (Record) -> Void)
    throws(FileError)
  {
    let base = parent ?? FileManager.default.temporaryDirectory.path
    root = try Self.makePrivateFolder(in: base, prefix: "imprint-serve-jobs-")
    self.limits = limits
    self.ended = ended
  }

  /// Removes every job's folder (the service stopped; a job still running fails its writes).
  func removeAll() {
    try? FileManager.default.removeItem(atPath: root)
  }

  /// Makes room for a job of `bytes` input bytes and reserves it.
  ///
  /// The job gets a new unguessable id (a random UUID) and its folder, made now. Its work is given with `start` once its inputs are
  /// written, or the reservation is dropped with `abandon`.
  ///
  /// - Throws: `ServiceError.jobQueueFull` when `limits.queue` jobs are queued or running;
  ///   `.jobTooLarge` when `bytes` alone is over `limits.maximumBytes`; `.jobStorageFull` when
  ///   it does not fit beside the queued and running jobs even once the finished ones are
  ///   removed (the oldest finished jobs are removed to make room first); `FileError` when the
  ///   folder cannot be made.
  func reserve(kind: String, bytes: Int, callback: String? = nil) throws -> Record {
    guard bytes <= limits.maximumBytes else {
      throw ServiceError.jobTooLarge(bytes: bytes, limit: limits.maximumBytes)
    }
    let id = UUID().uuidString.lowercased()
    let folder = root + "/" + id
    let now = HTTPServer.timestamp(Date())
    let outcome = store.withLock { store -> Result<(Record, [String]), ServiceError> in
      let active = store.records.values.filter { !$0.state.isFinished }
      guard active.count < limits.queue else {
        return .failure(.jobQueueFull(queued: active.count))
      }
      let held = active.reduce(0) { $0 + $1.bytes }
      guard held <= limits.maximumBytes - bytes else {
        return .failure(
          .jobStorageFull(bytes: bytes, held: held, limit: limits.maximumBytes))
      }
      var removed: [String] = []
      var used = store.records.values.reduce(0) { $0 + $1.bytes }
      for old in Self.finished(store) where used > limits.maximumBytes - bytes {
        used -= old.bytes
        removed.append(old.folder)
        store.records.removeValue(forKey: old.id)
        store.removed += 1
      }
      var record = Record(
        id: id, kind: kind, folder: folder, number: store.accepted, accepted: now, bytes: bytes)
      record.callback = callback
      record.webhook = callback.map { WebhookStatus(url: $0, state: "pending") }
      store.accepted += 1
      store.records[id] = record
      return .success((record, removed))
    }
    let (record, removed) = try outcome.get()
    for old in removed { try? FileManager.default.removeItem(atPath: old) }
    do {
      try FileIO.makeFolder(folder)
    } catch {
      abandon(id)
      throw error
    }
    return record
  }

  /// Queues the work of reserved job `id` (its inputs are written) and starts it when its turn
  /// comes.
  func start(_ id: String, work: @escaping Work) {
    store.withLock { store in
      guard store.records[id] != nil else { return }
      store.records[id]?.work = work
      store.waiting.append(id)
    }
    next()
  }

  /// Drops reserved job `id` and its folder (its inputs could not be written).
  func abandon(_ id: String) {
    let folder = store.withLock { $0.records.removeValue(forKey: id)?.folder }
    if let folder { try? FileManager.default.removeItem(atPath: folder) }
  }

  /// Job `id`, if it is kept.
  func record(_ id: String) -> Record? { store.withLock { $0.records[id] } }

  /// Changes where job `id`'s webhook is (nothing when the job is no longer kept).
  func updateWebhook(_ id: String, _ change: (inout WebhookStatus) -> Void) {
    store.withLock { store in
      guard var status = store.records[id]?.webhook else { return }
      change(&status)
      store.records[id]?.webhook = status
    }
  }

  /// Removes job `id`: a finished one with its files, a queued one before it runs (it never
  /// will).
  ///
  /// - Returns: its state when it was removed.
  /// - Throws: `ServiceError.unknownJob`; `.jobRunning` for a job that is running (it cannot be
  ///   stopped part-way: its items may be on their way to a printer).
  func remove(_ id: String) throws(ServiceError) -> JobState {
    let outcome = store.withLock { store -> Result<(JobState, String), ServiceError> in
      guard let record = store.records[id], record.state != .running else {
        return .failure(store.records[id] == nil ? .unknownJob(id: id) : .jobRunning(id: id))
      }
      store.records.removeValue(forKey: id)
      store.waiting.removeAll { $0 == id }
      if record.state.isFinished { store.removed += 1 }
      return .success((record.state, record.folder))
    }
    let (state, folder) = try outcome.get()
    try? FileManager.default.removeItem(atPath: folder)
    return state
  }

  /// What the store holds now, for `/metrics`.
  struct Counts: Equatable {
    var queued = 0
    var running = 0
    var finished = 0
    /// Bytes counted for all jobs' folders.
    var bytes = 0
    /// Finished jobs removed since the start.
    var removed = 0
  }

  /// What the store holds now.
  var counts: Counts {
    store.withLock { store in
      var counts = Counts(removed: store.removed)
      for record in store.records.values {
        switch record.state {
        case .queued: counts.queued += 1
        case .running: counts.running += 1
        case .done, .failed: counts.finished += 1
        }
        counts.bytes += record.bytes
      }
      return counts
    }
  }

  /// Starts the next waiting job when none runs.
  private func next() {
    let started = store.withLock { store -> (Record, Work)? in
      guard store.running == 0, !store.waiting.isEmpty else { return nil }
      let id = store.waiting.removeFirst()
      guard var record = store.records[id], let work = record.work else { return nil }
      record.state = .running
      record.started = HTTPServer.timestamp(Date())
      record.work = nil
      store.records[id] = record
      store.running += 1
      return (record, work)
    }
    guard let (record, work) = started else { return }
    Task.detached { [self] in
      let outcome = await work(record.folder)
      finish(record.id, outcome, bytes: Self.size(of: record.folder))
      next()
    }
  }

  /// Records how job `id` ended and removes the oldest finished jobs past `limits.kept`.
  private func finish(_ id: String, _ outcome: JobOutcome, bytes: Int) {
    let (removed, announced) = store.withLock { store -> ([String], Record?) in
      store.running -= 1
      if var record = store.records[id] {
        record.state = outcome.error == nil ? .done : .failed
        record.finished = HTTPServer.timestamp(Date())
        record.outcome = outcome
        record.bytes = bytes
        store.records[id] = record
      }
      let announced = store.records[id].flatMap { $0.callback == nil ? nil : $0 }
      let finished = Self.finished(store)
      let excess = finished.prefix(max(0, finished.count - limits.kept))
      for old in excess { store.records.removeValue(forKey: old.id) }
      store.removed += excess.count
      return (excess.map(\.folder), announced)
    }
    // Announced before the oldest are removed: the report lists the job's files.
    if let announced { ended(announced) }
    for folder in removed { try? FileManager.default.removeItem(atPath: folder) }
  }

  /// The finished jobs, oldest first.
  private static func finished(_ store: Store) -> [Record] {
    store.records.values.filter(\.state.isFinished).sorted { $0.number < $1.number }
  }

  /// The bytes of the regular files under `folder` (links not followed).
  static func size(of folder: String) -> Int {
    guard let walker = FileManager.default.enumerator(atPath: folder) else { return 0 }
    var total = 0
    while let relative = walker.nextObject() as? String {
      var status = stat()
      if lstat(folder + "/" + relative, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
        total += Int(status.st_size)
      }
    }
    return total
  }

  /// The regular files under `folder`, relative and sorted; hidden ones (`.state/`) and those
  /// past the first `limit` left out.
  static func files(in folder: String, limit: Int = 10_000) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
    var found: [String] = []
    while let relative = walker.nextObject() as? String, found.count < limit {
      if (relative as NSString).lastPathComponent.hasPrefix(".") {
        walker.skipDescendants()
        continue
      }
      var status = stat()
      if lstat(folder + "/" + relative, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
        found.append(relative)
      }
    }
    return found.sorted()
  }

  /// A new folder `prefix` + six random characters inside `parent`, readable by its owner only
  /// (`mkdtemp`).
  static func makePrivateFolder(in parent: String, prefix: String) throws(FileError) -> String {
    try FileIO.makeFolder(parent)
    var template = Array((parent + "/" + prefix + "XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else { throw .unwritable(path: parent, reason: .system(errno)) }
    return made
  }
}
