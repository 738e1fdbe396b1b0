// SPDX-License-Identifier: Apache-2.0
// ImprintService: long work (`POST /v1/batch`): each job in a private folder, queued and run in
// the background one at a time, kept after it ends until the oldest are removed; bounded in
// jobs waiting, jobs kept and bytes on disk. With a jobs folder (`--jobs-dir`), each job's
// record is written there at each change and read again by the next start.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintJobsDB
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
  /// Inputs are counted when a job is accepted; a running job's folder is measured again every
  /// `checkInterval` as its outputs are written, and counted whole once it ends. A job that
  /// cannot fit, even once every finished job is removed, is refused: 413 `http.jobTooLarge`
  /// when it alone is over, else 507 `http.jobStorageFull`. A running job whose folder grows
  /// past what the jobs queued and running leave it is stopped (`service.jobDiskLimit`);
  /// finished jobs are removed, the oldest first, to make room for it before that.
  public var maximumBytes = 1 << 30
  /// Manifest lines one job may have at most (default 10 000); a manifest with more is refused
  /// when it is sent: 413 `http.tooManyLines`.
  public var lines = 10_000
  /// Seconds one job may run at most (default 3600); past it the job is stopped as a
  /// cancellation stops it and ends `failed` with `service.jobTimeLimit`, the items that ended
  /// kept.
  public var seconds = 3600.0
  /// Seconds between two checks of a running job's time and bytes (default 0.2).
  public var checkInterval = 0.2
  /// Items above which a batch runs in shards, with a jobs database (`--jobs-db`).
  ///
  /// Such a batch runs in shards of about this many items (`maximumShards` at most), each
  /// claimed by whichever replica is free, their results merged by the replica that ends the
  /// last (default 250; 0: every batch runs whole, on one replica). Each shard's run has the
  /// time limit (`seconds`) of its own.
  public var shardItems = 250
  /// The most shards a batch runs in.
  public static let maximumShards = 64

  /// How many shards a batch of `items` items runs in with a jobs database: 0 (whole) for
  /// `shardItems` items or fewer, else one a `shardItems` items, rounded up, at most
  /// `maximumShards`.
  public func shards(items: Int) -> Int {
    guard shardItems > 0, items > shardItems else { return 0 }
    return min((items + shardItems - 1) / shardItems, Self.maximumShards)
  }

  /// The defaults above.
  public init() {}
}

/// The state of one long job.
enum JobState: String, Sendable, Codable {
  /// Accepted, waiting for its turn.
  case queued
  /// Running.
  case running
  /// Ended: its report says what it did (a batch whose items failed is done, with its failures
  /// in the summary).
  case done
  /// Ended without running all its work: the work as a whole could not run, or it was stopped
  /// at a limit (its error says why; the items that ended are kept).
  case failed
  /// Ended because it was canceled (`DELETE`, or the server stopping) before all its items ran;
  /// the items that ended are kept.
  case canceled

  /// Whether the job ended.
  var isFinished: Bool { self != .queued && self != .running }
}

/// Why a running job is being stopped before its end.
enum JobHalt: Sendable, Equatable {
  /// `DELETE /v1/jobs/ID`.
  case canceled
  /// It ran longer than `JobLimits.seconds`.
  case timeLimit
  /// Its folder grew to `bytes` while the other jobs queued or running held `held`: together
  /// over `JobLimits.maximumBytes`.
  case diskLimit(bytes: Int, held: Int)
  /// The service stops.
  case stopping
}

/// What a job's work returns when it ends.
struct JobOutcome: Sendable {
  /// Item counts (a batch's summary); nil when there are none.
  var summary: JobSummary?
  /// Why the work as a whole failed; nil when it ran (the job is `done`).
  var error: ErrorRecord?
  /// Whether all its work ran: false for a batch stopped part-way (some lines never ran).
  ///
  /// A job stopped (`JobHalt`) whose work still ran whole ends as if it had not been.
  var complete = true
  /// For a shard's run that is not the job's last: what its end wrote (the job's end is
  /// another run's); nil for a job run whole, and for the last shard's run, which ends the job.
  var shardEnd: ShardEnd?
}

/// Item counts of a finished job, as `imprint batch` counts them.
struct JobSummary: Sendable, Codable, Equatable {
  var total: Int
  var ok: Int
  var skipped: Int
  var failed: Int
}

/// The long jobs of one service: their folders under `root`, their states, their queue.
///
/// Jobs run one at a time, in the order accepted (the work of one uses the service's document
/// workers, as many at once as `--jobs`). A running job is watched every
/// `JobLimits.checkInterval`: past its time, or with its folder past the bytes left to it, it is
/// stopped by cancelling its task (a batch then starts no new item; the items under way end).
///
/// Without a jobs folder, everything is in this process's memory and under `root`, a private
/// folder the service removes when it stops: a restart forgets every job. The folder is held
/// while the process lives (`.owner`, `flock`ed), so that a new store removes those whose
/// server was killed before it could (`removeAbandonedFolders`). With one
/// (`persistent`), `root` is that folder, locked for this store (`.lock`), each job's record
/// is `ID/job.json`, written atomically at each change (`JobFile`), a job removed leaves its
/// `Idempotency-Key` in `.idempotency-keys.jsonl` (`RemovedKeys`), and a new store reads the
/// jobs it finds there (`JobStore.load`): the finished ones as they were, the ones that were
/// queued or running `failed` with `service.interrupted`.
final class JobStore: Sendable {
  /// The work of a job: runs in its folder, returns its outcome; stops early (starts no new
  /// item) once its task is cancelled.
  typealias Work = @Sendable (_ folder: String) async -> JobOutcome

  /// One job as the store keeps it.
  struct Record: Sendable {
    let id: String
    /// What made it, for reports.
    let kind: JobKind
    let folder: String
    /// The acceptance order, from 0.
    let number: Int
    var state = JobState.queued
    /// When it was accepted, started and ended.
    let accepted: Timestamp
    var started: Timestamp?
    var finished: Timestamp?
    var outcome: JobOutcome?
    /// The bytes its folder is counted for.
    var bytes: Int
    /// What its work is, as its record keeps it; nil while the request that made it still
    /// writes its inputs.
    var spec: JobWork?
    /// Its work, until it starts; nil while the request that made it still writes its inputs.
    var work: Work?
    /// The task running its work, while it runs.
    var task: Task<JobOutcome, Never>?
    /// Why it is being stopped, once it is.
    var halt: JobHalt?
    /// The URL its end is announced to (`callback=`), if any.
    var callback: String?
    /// Where that announcement is.
    var webhook: WebhookStatus?
    /// The `Idempotency-Key` of the request that made it, with that request's fingerprint.
    var idempotency: IdempotencyRecord?
    /// The shard of it this replica runs, and the job's shard count (`--jobs-db`); nil for a
    /// job run whole.
    var shard: (index: Int, count: Int)?
  }

  struct Store {
    var records: [String: Record] = [:]
    /// Queued jobs whose inputs are written, in order.
    var waiting: [String] = []
    var running = 0
    var accepted = 0
    /// Finished jobs removed (by DELETE, or as the oldest).
    var removed = 0
    /// Set once the service began to stop: no job is taken or started.
    var stopping = false
  }

  /// The folder of every job's folder.
  let root: String
  /// Whether `root` is a jobs folder kept across restarts (`--jobs-dir`).
  let persistent: Bool
  /// What the start found in the jobs folder (empty without one).
  let loaded: [LoadEvent]
  let limits: JobLimits
  /// Told of each job with a callback once it ended (its webhook is called there), unless the
  /// service's stop canceled it (in a jobs folder, its webhook stays pending in its record, for
  /// the next start to call).
  let ended: @Sendable (Record) -> Void
  /// Told of what no report will give: jobs canceled or dropped by the service's stop.
  let told: @Sendable (String) -> Void
  let store = Mutex(Store())
  /// Held while a job's record is written or a job's folder removed: records are written one
  /// at a time, each with its job's state as it is then, never into a folder being removed;
  /// true once the store is closed (no record is written after: the folder is another
  /// server's to write once its lock is released).
  private let writer = Mutex(false)
  /// The jobs folder's lock (`.lock`, `flock`ed), or the private folder's (`.owner`), open
  /// while the store keeps it; -1 once closed.
  private let lock: Mutex<Int32>
  /// The keys of the jobs removed from the jobs folder; nil without one.
  private let removedKeys: RemovedKeys?
  /// The webhooks still pending of the jobs removed from the jobs folder; nil without one.
  private let removedWebhooks: RemovedWebhooks?
  /// The body of a job's webhook calls (its report), made before its folder is removed.
  let webhookBody: @Sendable (Record) -> [UInt8]?
  /// The jobs database this store shares with other replicas (`--jobs-db`), nil for a store
  /// of this process alone (`JobStore+Shared.swift`).
  let shared: SharedJobs?
  /// The threads the jobs run on (a batch's items in parallel, and the watch), not Swift's
  /// global pool (`ThreadExecutor` says why); ended by `close()`.
  let executor = ThreadExecutor(name: "imprint-jobs", threads: activeProcessorCount + 1)

  /// A store under a new private folder in `parent` (the system's temporary folder when nil),
  /// or in the jobs folder `folder`, whose jobs it loads.
  ///
  /// - Parameters:
  ///   - parent: the folder the store's folder is made in, without `folder`.
  ///   - folder: the jobs folder kept across restarts (made when missing), or nil for none.
  ///   - limits: the jobs queued, kept, their bytes, lines and time.
  ///   - told: told of the jobs the service's stop canceled (a line for a log).
  ///   - ended: told of each job with a callback once it ended.
  ///   - webhookBody: the body of a job's webhook calls, asked for as a job whose webhook is
  ///     still pending is removed from a jobs folder (nil: not kept).
  ///   - shared: the jobs database shared with other replicas, whose jobs' files are in
  ///     `folder` (which it needs): no lock is taken on the folder and nothing is loaded from
  ///     it, the database holds the records.
  /// - Throws: `FileError` when the folder cannot be made, is not a folder, or its lock file
  ///   cannot be opened; `ServerError.jobsFolderInUse` when another store (another server)
  ///   holds `folder`.
  init(
    parent: String?, folder: String? = nil, limits: JobLimits,
    told: @escaping @Sendable (String) -> Void = { _ in },
    ended: @escaping @Sendable (Record) -> Void,
    webhookBody: @escaping @Sendable (Record) -> [UInt8]? = { _ in nil },
    shared: SharedJobs? = nil
  ) throws {
    self.limits = limits
    self.shared = shared
    self.ended = ended
    self.told = told
    self.webhookBody = webhookBody
    guard let folder else {
      let base = parent ?? FileManager.default.temporaryDirectory.path
      // Those of servers killed before they could remove theirs: customers' files, kept by
      // no one.
      loaded = Self.removeAbandonedFolders(in: base)
      let (made, held) = try Self.makeHeldFolder(in: base)
      root = made
      persistent = false
      lock = Mutex(held)
      removedKeys = nil
      removedWebhooks = nil
      return
    }
    var absolute =
      folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
    while absolute.count > 1 && absolute.hasSuffix("/") { absolute.removeLast() }
    root = absolute
    persistent = true
    if shared != nil {
      try FileIO.makeFolder(root)
      lock = Mutex(-1)
      removedKeys = nil
      removedWebhooks = nil
      loaded = []
      return
    }
    let descriptor = try Self.lockFolder(root)
    lock = Mutex(descriptor)
    let keys = RemovedKeys(in: root)
    removedKeys = keys
    let webhooks = RemovedWebhooks(in: root)
    removedWebhooks = webhooks
    let (records, found) = Self.load(root, limits: limits, keys: keys)
    var events = found
    let now = Timestamp.now
    events.insert(
      contentsOf: webhooks.problems.map {
        LoadEvent(time: now, event: "jobs.skipped", path: $0.path, reason: $0.reason)
      }, at: max(0, events.count - 1))
    loaded = events
    store.withLock { store in
      for record in records { store.records[record.id] = record }
      store.accepted = (records.map(\.number).max() ?? -1) + 1
    }
  }

  deinit {
    let descriptor = lock.withLock { $0 }
    if descriptor >= 0 { Foundation.close(descriptor) }
  }

  /// Ends the store's use of its folder: a private folder is removed with every job's folder
  /// (the service stopped; a job still running fails its writes); a jobs folder is kept, each
  /// job's record as last written, and its lock released.
  func close() {
    if let shared {
      shared.closing.store(true, ordering: .releasing)
      // The loop ends within a wait for a notification (0.2 s) once it sees the close; a
      // connection being made may hold it longer, and it ends on its own then.
      if shared.looping.load(ordering: .acquiring) {
        _ = shared.loopEnded.wait(timeout: .now() + 2)
      }
      // The webhooks this replica holds, for another to go on with at once; those whose call
      // is still under way (past the drain) are left to expire.
      let calling = shared.calling.withLock { $0 }?() ?? []
      do {
        try shared.use { (db) throws(JobsDBError) in
          _ = try db.releaseWebhooks(owner: shared.owner, except: calling)
        }
      } catch {
        told(
          "the webhooks this replica held were not handed back (\(error.message)); other replicas "
            + "call them once their leases expire")
      }
    }
    executor.shutDown()
    writer.withLock { $0 = true }
    if !persistent { try? FileManager.default.removeItem(atPath: root) }
    let descriptor = lock.withLock { descriptor -> Int32 in
      defer { descriptor = -1 }
      return descriptor
    }
    if descriptor >= 0 { Foundation.close(descriptor) }
  }

  /// Makes room for a job of `bytes` input bytes and reserves it.
  ///
  /// The job gets a new unguessable id (a random UUID) and its folder, made now. Its work is given with `start` once its inputs are
  /// written, or the reservation is dropped with `abandon`.
  ///
  /// - Throws: `ServiceError.jobQueueFull` when `limits.queue` jobs are queued or running;
  ///   `.jobTooLarge` when `bytes` alone is over `limits.maximumBytes`; `.jobStorageFull` when
  ///   it does not fit beside the queued and running jobs even once the finished ones are
  ///   removed (the oldest finished jobs are removed to make room first); `.stopping` once the
  ///   service began to stop; `FileError` when the folder cannot be made.
  func reserve(kind: JobKind, bytes: Int, callback: String? = nil) throws -> Record {
    guard bytes <= limits.maximumBytes else {
      throw ServiceError.jobTooLarge(bytes: bytes, limit: limits.maximumBytes)
    }
    if let shared { return try reserveShared(shared, kind: kind, bytes: bytes, callback: callback) }
    let id = UUID().uuidString.lowercased()
    let folder = root + "/" + id
    let now = Timestamp.now
    let outcome = store.withLock { store -> Result<(Record, [Record]), any Error> in
      guard !store.stopping else { return .failure(HTTPError.stopping) }
      let active = store.records.values.filter { !$0.state.isFinished }
      guard active.count < limits.queue else {
        return .failure(ServiceError.jobQueueFull(queued: active.count))
      }
      let held = active.reduce(0) { $0 + $1.bytes }
      guard held <= limits.maximumBytes - bytes else {
        return .failure(
          ServiceError.jobStorageFull(bytes: bytes, held: held, limit: limits.maximumBytes))
      }
      var removed: [Record] = []
      var used = store.records.values.reduce(0) { $0 + $1.bytes }
      for old in Self.finished(store) where used > limits.maximumBytes - bytes {
        used -= old.bytes
        removed.append(old)
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
    discard(removed)
    return try madeFolder(record)
  }

  /// `record`, reserved, once its folder is made; dropped when it cannot be.
  ///
  /// - Throws: `FileError` when the folder cannot be made.
  func madeFolder(_ record: Record) throws -> Record {
    do {
      try FileIO.makeFolder(record.folder)
    } catch {
      abandon(record.id)
      throw error
    }
    return record
  }

  /// Queues the work of reserved job `id` (its inputs are written) and starts it when its turn
  /// comes.
  ///
  /// In a jobs folder, the job's record (with `idempotency`) is written first, durably: once
  /// the work may start, a restart finds the job and its key.
  ///
  /// - Parameters:
  ///   - id: the reserved job.
  ///   - idempotency: the key of the request that made it, if any.
  ///   - spec: what its work is, kept in its record.
  ///   - work: its work, made from `spec` (with a jobs database, the replica that claims the
  ///     job makes it again).
  /// - Returns: the job as queued; with a jobs database, the one an earlier request with the
  ///   same `Idempotency-Key` and fingerprint made, if any (this reservation is dropped then).
  /// - Throws: `HTTPError.stopping` when the service's stop dropped the reservation;
  ///   `FileError` when the record cannot be written (the reservation is dropped, its folder
  ///   removed, either way); with a jobs database, its errors (`jobsdb.unreachable`, 503) and
  ///   the `Idempotency-Key`'s (`ServiceError.idempotencyKeyReused`...).
  @discardableResult
  func start(
    _ id: String, idempotency: IdempotencyRecord? = nil, spec: JobWork, work: @escaping Work
  ) throws -> Record {
    if let shared { return try startShared(shared, id, idempotency: idempotency, spec: spec) }
    let reserved = store.withLock { store in
      guard store.records[id] != nil else { return false }
      store.records[id]?.idempotency = idempotency
      store.records[id]?.spec = spec
      return true
    }
    if reserved && persistent {
      do {
        try write(id)
      } catch {
        abandon(id)
        throw error
      }
    }
    let queued = store.withLock { store -> Record? in
      guard !store.stopping, store.records[id] != nil else { return nil }
      store.records[id]?.work = work
      store.waiting.append(id)
      return store.records[id]
    }
    guard let queued else {
      abandon(id)
      throw HTTPError.stopping
    }
    next()
    return queued
  }

  /// Drops reserved job `id` and its folder (its inputs could not be written, or the service's
  /// stop dropped it).
  func abandon(_ id: String) {
    store.withLock { _ = $0.records.removeValue(forKey: id) }
    removeFolders([root + "/" + id])
  }

  /// The `Idempotency-Key`s of the jobs removed from the jobs folder (none without one), then
  /// of the jobs kept, oldest job first, each with its job's id.
  var idempotencyKeys: [(IdempotencyRecord, String)] {
    let removed = (removedKeys?.keys ?? []).map {
      (IdempotencyRecord(key: $0.key, fingerprint: $0.fingerprint), $0.job)
    }
    return removed
      + store.withLock { store in
        store.records.values.sorted { $0.number < $1.number }.compactMap { record in
          record.idempotency.map { ($0, record.id) }
        }
      }
  }

  /// Job `id`, if it is kept.
  func record(_ id: String) -> Record? { store.withLock { $0.records[id] } }

  /// The finished jobs whose webhook is still pending, oldest first: in a jobs folder, those
  /// a start found so (their job ended, or was found interrupted, before a call was
  /// answered; `ImprintService.resumeWebhooks` calls them again).
  var pendingWebhooks: [Record] {
    store.withLock { store in
      store.records.values.filter {
        $0.state.isFinished && $0.callback != nil && $0.webhook?.state == "pending"
      }.sorted { $0.number < $1.number }
    }
  }

  /// The webhooks still pending of the jobs removed from the jobs folder (none without one),
  /// by job id: `ImprintService.resumeWebhooks` calls them too.
  var removedPendingWebhooks: [RemovedWebhook] { removedWebhooks?.all ?? [] }

  /// Changes where job `id`'s webhook is.
  ///
  /// In its record, or for a job removed from the jobs folder with its webhook pending, in the
  /// file kept for it (removed once it is no longer pending); nothing for another job, or once
  /// the store is closed. With a jobs database, in its delivery and the job's record
  /// (`updateSharedWebhook`).
  ///
  /// - Parameters:
  ///   - id: the job.
  ///   - nextCallIn: when the next call is due, for a delivery that goes on (with a jobs
  ///     database, a replica taking it over waits for it too).
  ///   - change: the change made to its webhook's status.
  /// - Returns: whether the calls may go on: false when another replica holds the delivery.
  @discardableResult
  func updateWebhook(
    _ id: String, nextCallIn: Duration? = nil, _ change: (inout WebhookStatus) -> Void
  ) -> Bool {
    if let shared { return updateSharedWebhook(shared, id, nextCallIn: nextCallIn, change) }
    let kept = store.withLock { store -> Bool in
      guard var status = store.records[id]?.webhook else { return false }
      change(&status)
      store.records[id]?.webhook = status
      return true
    }
    guard !kept else {
      persist(id)
      return true
    }
    guard let removedWebhooks else { return true }
    do {
      try writer.withLock { (closed) throws(FileError) in
        guard !closed else { return }
        try removedWebhooks.update(id, change)
      }
    } catch {
      told("the webhook of job '\(id)' could not be written: " + ErrorRecord(error).message)
    }
    return true
  }

  /// What `remove` did.
  enum Removal: Equatable {
    /// The job was removed, in this state (a queued one never runs).
    case removed(JobState)
    /// The job runs: it was asked to stop (it starts no new item) and ends `canceled`.
    case canceling
  }

  /// Removes job `id`: a finished one with its files, a queued one before it runs (it never
  /// will); a running one is canceled instead (its items under way end, no other starts), and
  /// kept, with the outputs of the items that ended, until it is removed in turn.
  ///
  /// - Throws: `ServiceError.unknownJob`; with a jobs database, its errors
  ///   (`jobsdb.unreachable`, 503).
  func remove(_ id: String) throws -> Removal {
    if let shared { return try removeShared(shared, id) }
    let outcome = store.withLock {
      store -> Result<(Removal, Record?, Task<JobOutcome, Never>?), ServiceError> in
      guard let record = store.records[id] else { return .failure(.unknownJob(id: id)) }
      if record.state == .running {
        if record.halt == nil { store.records[id]?.halt = .canceled }
        return .success((.canceling, nil, record.task))
      }
      store.records.removeValue(forKey: id)
      store.waiting.removeAll { $0 == id }
      if record.state.isFinished { store.removed += 1 }
      return .success((.removed(record.state), record, nil))
    }
    let (removal, removed, task) = try outcome.get()
    task?.cancel()
    if let removed { discard([removed]) }
    return removal
  }

  /// Stops running job `id` for `reason` (the first reason given stays): its task is cancelled.
  func halt(_ id: String, _ reason: JobHalt) {
    let task = store.withLock { store -> Task<JobOutcome, Never>? in
      guard let record = store.records[id], record.state == .running else { return nil }
      if record.halt == nil { store.records[id]?.halt = reason }
      return record.task
    }
    task?.cancel()
  }

  /// Begins the service's stop: no job is taken (`reserve` throws `.stopping`) or started, and
  /// the queued ones are dropped (told, with no webhook: their folders go with the store's);
  /// in a jobs folder they end `canceled` instead (`service.interrupted`), their records
  /// written, their webhooks left pending for the next start.
  func beginStop() {
    let now = Timestamp.now
    let dropped = store.withLock { store -> [String] in
      store.stopping = true
      let queued = store.records.values.filter { $0.state == .queued }.sorted {
        $0.number < $1.number
      }
      for record in queued {
        // A reservation whose inputs are still being written is its request's to abandon.
        guard persistent, store.waiting.contains(record.id) else {
          store.records.removeValue(forKey: record.id)
          continue
        }
        store.records[record.id]?.state = .canceled
        store.records[record.id]?.finished = now
        store.records[record.id]?.work = nil
        store.records[record.id]?.outcome = JobOutcome(
          error: ErrorRecord(JobError.interrupted(id: record.id, ended: 0)))
      }
      store.waiting.removeAll()
      return queued.map(\.id)
    }
    for id in dropped {
      persist(id)
      told(JobError.interrupted(id: id, ended: 0).message)
    }
  }

  /// Lets the running job end until `deadline` less `grace`, then cancels it and waits for it
  /// at most until `deadline` (its items under way end); `beginStop` first.
  ///
  /// A job canceled here is told (`told`), its webhook not called: the server is going, and
  /// its report and files with it (in a jobs folder, they are kept, and the next start calls
  /// the webhook). A job still running at `deadline` (its work stuck in a system call: a
  /// printer that does not answer) is told too (`JobError.leftRunning`: what it had
  /// done), and in a jobs folder its record is written so, `failed`, its webhook pending: the
  /// next start serves it as the stop left it, never as a crash's. It runs on in this
  /// process; should it end before `close`, its own end is written instead.
  ///
  /// - Parameters:
  ///   - deadline: when the drain time is over.
  ///   - grace: the time before `deadline` from which the running job is canceled.
  ///   - drainSeconds: the drain timeout as configured, for the message.
  func stopRunning(until deadline: ContinuousClock.Instant, grace: Duration, drainSeconds: Double) {
    func running() -> [String] {
      store.withLock { $0.records.values.filter { $0.state == .running }.map(\.id) }
    }
    // A job that has ended is still counted until its end is written and the jobs past the
    // kept number are removed (`finish`): the stop waits for that too.
    func busy() -> Bool { store.withLock { $0.running > 0 } }
    while busy() && ContinuousClock.now < deadline - grace { usleep(10_000) }
    for id in running() { halt(id, .stopping) }
    while busy() && ContinuousClock.now < deadline { usleep(10_000) }
    let now = Timestamp.now
    let left = store.withLock { store in
      store.records.values.filter { $0.state == .running }.sorted { $0.number < $1.number }
    }
    for record in left {
      let error = Self.leftRunning(record, drainSeconds: drainSeconds)
      told(error.message)
      // With a jobs database, its lease expires and another replica resumes it.
      guard persistent, shared == nil else { continue }
      var stopped = record
      stopped.state = .failed
      stopped.finished = now
      stopped.outcome = JobOutcome(error: ErrorRecord(error))
      do {
        try writer.withLock { (closed) throws(FileError) in
          // Unless its own end was written meanwhile.
          guard !closed, self.record(record.id)?.state == .running else { return }
          try Self.writeRecord(stopped)
        }
      } catch {
        told("job '\(record.id)': its record could not be written: " + ErrorRecord(error).message)
      }
    }
  }

  /// The jobs running now, oldest first, as a stop's report names them: `job 'ID' (prepare)`.
  var running: [String] {
    store.withLock { store in
      store.records.values.filter { $0.state == .running }.sorted { $0.number < $1.number }
        .map { "job '\($0.id)' (\($0.kind))" }
    }
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
    if let shared { return sharedCounts(shared) }
    return store.withLock { store in
      var counts = Counts(removed: store.removed)
      for record in store.records.values {
        switch record.state {
        case .queued: counts.queued += 1
        case .running: counts.running += 1
        case .done, .failed, .canceled: counts.finished += 1
        }
        counts.bytes += record.bytes
      }
      return counts
    }
  }

  /// Starts the next waiting job when none runs, and watches it (`check`) until it ends.
  private func next() {
    let started = store.withLock { store -> (Record, Task<JobOutcome, Never>)? in
      guard !store.stopping, store.running == 0 else { return nil }
      while !store.waiting.isEmpty {
        let id = store.waiting.removeFirst()
        guard var record = store.records[id], let work = record.work else { continue }
        let folder = record.folder
        let task = Task.detached(executorPreference: executor) { await work(folder) }
        record.state = .running
        record.started = Timestamp.now
        record.work = nil
        record.task = task
        store.records[id] = record
        store.running += 1
        return (record, task)
      }
      return nil
    }
    guard let (record, task) = started else { return }
    persist(record.id)
    Task.detached(executorPreference: executor) { [self] in
      let outcome = await watched(record, task)
      finish(record.id, outcome, bytes: Self.size(of: record.folder))
      next()
    }
  }

  /// The outcome of running job `record`'s `task`, its time and bytes checked (`check`) every
  /// `limits.checkInterval` until it ends.
  func watched(_ record: Record, _ task: Task<JobOutcome, Never>) async -> JobOutcome {
    let began = ContinuousClock.now
    let watch = Task.detached(executorPreference: executor) { [self] in
      while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(limits.checkInterval))
        guard !Task.isCancelled else { return }
        check(record.id, folder: record.folder, running: ContinuousClock.now - began)
      }
    }
    let outcome = await task.value
    watch.cancel()
    return outcome
  }

  /// Checks running job `id` against its limits: its time, then its folder's bytes (the
  /// record counts them from now; the oldest finished jobs are removed to make room, and the
  /// job is stopped when the jobs queued and running alone are over the limit).
  func check(_ id: String, folder: String, running: Duration) {
    guard running <= .seconds(limits.seconds) else {
      halt(id, .timeLimit)
      return
    }
    let bytes = Self.size(of: folder)
    let (removed, over) = store.withLock { store -> ([Record], JobHalt?) in
      guard store.records[id]?.state == .running else { return ([], nil) }
      store.records[id]?.bytes = bytes
      let held = store.records.values.filter { !$0.state.isFinished && $0.id != id }.reduce(0) {
        $0 + $1.bytes
      }
      guard held <= limits.maximumBytes - bytes else {
        return ([], .diskLimit(bytes: bytes, held: held))
      }
      var used = store.records.values.reduce(0) { $0 + $1.bytes }
      var removed: [Record] = []
      for old in Self.finished(store) where used > limits.maximumBytes {
        used -= old.bytes
        removed.append(old)
        store.records.removeValue(forKey: old.id)
        store.removed += 1
      }
      return (removed, nil)
    }
    discard(removed)
    if let over { halt(id, over) }
  }

  /// Records how job `id` ended (its halt, if it was stopped, decides its state and error) and
  /// removes the oldest finished jobs past `limits.kept`.
  private func finish(_ id: String, _ outcome: JobOutcome, bytes: Int) {
    let (removed, announced, stopped) = store.withLock {
      store -> ([Record], Record?, String?) in
      var stopped: String?
      if var record = store.records[id] {
        let (state, error) = conclusion(record, outcome)
        if record.halt == .stopping && !outcome.complete { stopped = error?.message }
        record.state = state
        record.finished = Timestamp.now
        record.outcome = JobOutcome(summary: outcome.summary, error: error)
        record.bytes = bytes
        record.task = nil
        store.records[id] = record
      }
      let announced = store.records[id].flatMap {
        $0.callback == nil || $0.halt == .stopping ? nil : $0
      }
      let finished = Self.finished(store)
      let excess = finished.prefix(max(0, finished.count - limits.kept))
      for old in excess { store.records.removeValue(forKey: old.id) }
      store.removed += excess.count
      return (Array(excess), announced, stopped)
    }
    persist(id)
    if let stopped { told(stopped) }
    // Announced before the oldest are removed: the report lists the job's files.
    if let announced { ended(announced) }
    discard(removed)
    // Counted as running until now: a stop waits for the end to be written (`stopRunning`).
    store.withLock { $0.running -= 1 }
  }

  /// The state and error running job `record` ends with, given its work's `outcome`: its
  /// halt, if it was stopped before its work ran whole, decides them.
  func conclusion(_ record: Record, _ outcome: JobOutcome) -> (JobState, ErrorRecord?) {
    let id = record.id
    let ended = outcome.summary?.total ?? 0
    switch outcome.complete ? nil : record.halt {
    case nil:
      return (outcome.error == nil ? .done : .failed, outcome.error)
    case .canceled:
      return (.canceled, ErrorRecord(JobError.canceled(id: id, ended: ended)))
    case .stopping:
      return (.canceled, ErrorRecord(JobError.interrupted(id: id, ended: ended)))
    case .timeLimit:
      return (
        .failed, ErrorRecord(JobError.timeLimit(id: id, seconds: limits.seconds, ended: ended))
      )
    case .diskLimit(let bytes, let held):
      return (
        .failed,
        ErrorRecord(
          JobError.diskLimit(id: id, bytes: bytes, held: held, limit: limits.maximumBytes))
      )
    }
  }

  /// Removes the folders of jobs no longer kept, in a jobs folder their `Idempotency-Key`s
  /// kept first (`RemovedKeys`: a retry after a restart is not made again; a failure is told),
  /// and their webhooks still pending (`RemovedWebhooks`: the call is made, even after a
  /// restart, with the report as it was when the job was removed; a failure is told).
  private func discard(_ removed: [Record]) {
    if let removedWebhooks {
      for record in removed where record.webhook?.state == "pending" {
        guard let callback = record.callback, let status = record.webhook,
          let body = webhookBody(record)
        else { continue }
        do {
          try removedWebhooks.keep(
            RemovedWebhook(
              job: record.id, callback: callback, webhook: status,
              body: String(decoding: body, as: UTF8.self)))
        } catch {
          told(
            "the webhook of job '\(record.id)', removed while it was pending, could not be kept: "
              + ErrorRecord(error).message + "; it is still called, but not after a restart")
        }
      }
    }
    if let removedKeys {
      do {
        try removedKeys.append(removed.compactMap(\.removedKey))
      } catch {
        let ids = removed.filter { $0.idempotency != nil }.map { "'\($0.id)'" }
        told(
          "the Idempotency-Keys of the jobs \(ids.joined(separator: ", ")) could not be kept: "
            + ErrorRecord(error).message
            + "; after a restart, a request retried with one of them would make a new job")
      }
    }
    removeFolders(removed.map(\.folder))
  }

  /// Removes job folders, never while a record is being written.
  func removeFolders(_ folders: [String]) {
    guard !folders.isEmpty else { return }
    writer.withLock { _ in
      for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
    }
  }

  /// Writes job `id`'s record as it is now (`write`), in a jobs folder; a failure is told.
  private func persist(_ id: String) {
    guard persistent, shared == nil else { return }
    do {
      try write(id)
    } catch {
      told("job '\(id)': its record could not be written: " + ErrorRecord(error).message)
    }
  }

  /// Writes job `id`'s record, as it is when the write begins, to `job.json` in its folder
  /// (`AtomicFile`: synced before it is renamed); nothing when the job is no longer kept or
  /// the store is closed.
  ///
  /// - Throws: `FileError` when it cannot be written.
  private func write(_ id: String) throws(FileError) {
    try writer.withLock { (closed) throws(FileError) in
      guard !closed, let record = record(id) else { return }
      // Never under a bulk run's deferred flush: task-local values stay out of the detached
      // tasks that end jobs, and requests start them.
      try Self.writeRecord(record)
    }
  }

  /// The finished jobs, oldest first.
  static func finished(_ store: Store) -> [Record] {
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

  /// The regular files under `folder` that `GET /v1/jobs/ID/files/PATH` serves, relative and
  /// sorted: hidden ones (`.state/`), links, files of more than one name (hard links) and
  /// those past the first `limit` left out.
  static func files(in folder: String, limit: Int = 10_000) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
    var found: [String] = []
    while let relative = walker.nextObject() as? String, found.count < limit {
      if (relative as NSString).lastPathComponent.hasPrefix(".") {
        walker.skipDescendants()
        continue
      }
      var status = stat()
      if lstat(folder + "/" + relative, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
        status.st_nlink == 1
      {
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
