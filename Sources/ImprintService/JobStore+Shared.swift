// SPDX-License-Identifier: Apache-2.0
// ImprintService: long jobs shared by several replicas of `imprint serve` (`--jobs-db URL` with
// `--jobs-dir DIR` on storage every replica mounts): each job's record, state and lease in the
// jobs database (ImprintJobsDB, PostgreSQL), its files in DIR/ID. Any replica accepts a job
// (its inputs written to DIR/ID, then enqueued), any answers its polls, fetches and DELETE from
// the database; each replica claims queued jobs one at a time (`FOR UPDATE SKIP LOCKED`) and
// renews its lease while it runs one; a job whose replica is gone (its lease expired) is
// claimed by another, which makes its work again from the record (`JobWork`) and resumes it
// from its folder as `imprint batch` resumes a run.

import Foundation
import ImprintBatch
import ImprintCore
import ImprintHTTP
import ImprintJobsDB
import ImprintPrinting
import Synchronization

/// What a store shares with the other replicas: the jobs database and this replica's name in
/// its leases.
final class SharedJobs: Sendable {
  /// The connection requests use (one statement at a time).
  let client: JobsDBClient
  /// The database's URL as configured, for the claim loop's own connection (it listens).
  let url: String
  /// This replica's name in leases: its host, process and a random part.
  let owner: String
  /// How long a lease lasts unless renewed; renewed every third of it.
  let lease: Duration
  /// Makes a job's work from its record (`ImprintService.work(for:id:folder:shard:)`), of the
  /// shard claimed when it runs in shards; nil until the service is made, or once it is gone.
  let builder = Mutex<(@Sendable (JobWork, String, String, ShardRun?) -> JobStore.Work?)?>(nil)
  /// Calls a job's webhook (`ImprintService.deliver`): the job's id, the URL, the body and the
  /// calls already made; nil until the service is made, or once it is gone.
  let deliverer = Mutex<(@Sendable (String, String, [UInt8], Int) -> Void)?>(nil)
  /// The jobs whose webhooks this replica is calling now (`WebhookCalls.jobs`): their
  /// deliveries' leases are renewed, the others' left to expire.
  let calling = Mutex<(@Sendable () -> [String])?>(nil)
  /// Set when the store stops claiming (its close).
  let closing = Atomic<Bool>(false)
  /// The jobs this replica ran whose lease another replica took over: their end is not
  /// written.
  let lost = Mutex<Set<String>>([])
  /// Signalled once the claim loop has ended.
  let loopEnded = DispatchSemaphore(value: 0)
  /// Whether the claim loop was started.
  let looping = Atomic<Bool>(false)
  /// Whether the claim loop's connection reaches the database now (`/readyz`).
  let reachable = Atomic<Bool>(true)
  /// The jobs of each state as the claim loop last counted them (every second), for
  /// `/metrics`, which is answered without waiting for the database.
  let totals = Mutex<JobsDBTotals?>(nil)
  /// The database's failures since the start, by code, for `/metrics`.
  ///
  /// `jobsdb.unreachable`, `jobsdb.query`, `jobsdb.value`, …: the requests' calls and the claim
  /// loop's connection. What the database answered as a job's state (a key reused, a job not found, a lease
  /// lost) is not a failure and is not counted.
  let errors = Mutex<[String: Int]>([:])

  /// Counts `error` in `errors` when it is a failure of the database or of its use.
  func count(_ error: JobsDBError) {
    switch error {
    case .invalidURL, .unreachable, .query, .schemaTooNew, .value, .parameter:
      errors.withLock { $0[error.code, default: 0] += 1 }
    case .idempotencyKeyReused, .idempotencyKeyInUse, .idempotentJobGone, .jobNotFound,
      .leaseLost:
      break
    }
  }

  /// Runs `body` with the requests' connection (`JobsDBClient.use`); at once
  /// `JobsDBError.unreachable` (503) while the claim loop finds the database away, so that a
  /// request does not wait for a connection that will not come.
  func use<T>(_ body: (borrowing JobsDBConnection) throws(JobsDBError) -> sending T)
    throws(JobsDBError) -> T
  {
    guard reachable.load(ordering: .acquiring) else {
      throw .unreachable(url: client.url, reason: "this replica cannot reach it now")
    }
    do {
      return try client.use(body)
    } catch {
      count(error)
      throw error
    }
  }

  /// Connects to the database at `url` (its schema migrated, once among replicas).
  ///
  /// - Throws: what `JobsDBClient.init` throws.
  init(url: String, lease: Duration) throws(JobsDBError) {
    client = try JobsDBClient(url: url)
    self.url = url
    self.lease = lease
    let host = ProcessInfo.processInfo.hostName
    let random = UUID().uuidString.prefix(8).lowercased()
    owner = "\(host)/\(getpid())/\(random)"
  }
}

extension JobSummary {
  /// The counts of a sharded run's results as merged (`ShardMerge`), with `failed` failures
  /// (the merge's own, with the cards its layout refused, when it made one).
  init(_ merged: MergedResults, failed: Int? = nil) {
    let failed = failed ?? merged.failed
    self.init(
      total: merged.items, ok: merged.items - failed - merged.skipped, skipped: merged.skipped,
      failed: failed)
  }
}

extension JobState {
  /// The state of a job as the database keeps it.
  init(_ state: JobsDBJobState) {
    switch state {
    case .queued: self = .queued
    case .running: self = .running
    case .done: self = .done
    case .failed: self = .failed
    case .canceled: self = .canceled
    }
  }

  /// The database's word for an ended state.
  var database: JobsDBJobState {
    switch self {
    case .queued: .queued
    case .running: .running
    case .done: .done
    case .failed: .failed
    case .canceled: .canceled
    }
  }
}

extension Timestamp {
  /// The time `seconds` since 1970, to the millisecond.
  init(seconds: Double) { self.init(milliseconds: Int64((seconds * 1000).rounded())) }
}

extension JobStore {
  /// The error a client is answered for `error` of the jobs database: its `Idempotency-Key`
  /// errors as a single server words them; the others as they are (`jobsdb.unreachable` is
  /// 503).
  static func shown(_ error: JobsDBError) -> any Error {
    switch error {
    case .idempotencyKeyReused(let key, let job):
      ServiceError.idempotencyKeyReused(key: key, id: job)
    case .idempotencyKeyInUse(let key): ServiceError.idempotencyKeyInUse(key: key)
    case .idempotentJobGone(let key, let job): ServiceError.idempotentJobGone(key: key, id: job)
    case .jobNotFound(let id): ServiceError.unknownJob(id: id)
    default: error
    }
  }

  /// Job `job` of the database as a record of this store: its folder under `root`, its state
  /// and times the database's, the rest from its record (`JobFile`).
  ///
  /// - Throws: `JobError.unreadable` when its record is not one this server reads.
  func record(of job: JobsDBJob) throws(JobError) -> Record {
    let file: JobFile
    do {
      file = try JSONDecoder().decode(JobFile.self, from: Data(job.record.utf8))
    } catch {
      throw .unreadable(id: job.id, reason: "its record in the jobs database is damaged")
    }
    guard file.job == job.id, file.kind.rawValue == job.kind else {
      throw .unreadable(id: job.id, reason: "its record names another job")
    }
    return file.record(
      folder: root + "/" + job.id, number: job.number,
      accepted: Timestamp(seconds: job.accepted), state: JobState(job.state),
      started: job.started.map(Timestamp.init(seconds:)),
      finished: job.finished.map(Timestamp.init(seconds:)), bytes: job.bytes)
  }

  /// Job `id`: the one this replica runs as it runs it, else the database's; nil when there is
  /// none.
  ///
  /// - Throws: `JobsDBError.unreachable` (503) when the database cannot be asked.
  func lookup(_ id: String) throws -> Record? {
    guard let shared else { return record(id) }
    if let running = record(id), running.state == .running { return running }
    guard let job = try shared.use({ (db) throws(JobsDBError) in try db.job(id: id) })
    else { return nil }
    do {
      return try record(of: job)
    } catch {
      // Answered as a job whose record says nothing more (never a 500); one of a kind this
      // server does not know is not one of its jobs.
      var plain = plainRecord(of: job)
      if plain?.state.isFinished == true { plain?.outcome = JobOutcome(error: ErrorRecord(error)) }
      return plain
    }
  }

  /// Job `job` of the database as a record of its columns alone (its kind, place, state and
  /// times), for a record this server cannot read; nil for a kind it does not know.
  func plainRecord(of job: JobsDBJob) -> Record? {
    guard let kind = JobKind(rawValue: job.kind) else { return nil }
    var record = Record(
      id: job.id, kind: kind, folder: root + "/" + job.id, number: job.number,
      accepted: Timestamp(seconds: job.accepted), bytes: job.bytes)
    record.state = JobState(job.state)
    record.started = job.started.map(Timestamp.init(seconds:))
    record.finished = job.finished.map(Timestamp.init(seconds:))
    return record
  }

  /// `reserve` with the jobs database: the limits are the database's (jobs queued or running
  /// on every replica, and their bytes); the reservation is this replica's until `start`
  /// enqueues it.
  func reserveShared(_ shared: SharedJobs, kind: JobKind, bytes: Int, callback: String?) throws
    -> Record
  {
    let totals = try shared.use { (db) throws(JobsDBError) in try db.totals() }
    let id = UUID().uuidString.lowercased()
    let folder = root + "/" + id
    let outcome = store.withLock { store -> Result<Record, any Error> in
      guard !store.stopping else { return .failure(HTTPError.stopping) }
      let reserved = store.records.values.filter { $0.state == .queued }
      let active = totals.queued + totals.running + reserved.count
      guard active < limits.queue else {
        return .failure(ServiceError.jobQueueFull(queued: active))
      }
      let held = totals.activeBytes + reserved.reduce(0) { $0 + $1.bytes }
      guard held <= limits.maximumBytes - bytes else {
        return .failure(
          ServiceError.jobStorageFull(bytes: bytes, held: held, limit: limits.maximumBytes))
      }
      var record = Record(
        id: id, kind: kind, folder: folder, number: -1, accepted: Timestamp.now, bytes: bytes)
      record.callback = callback
      record.webhook = callback.map { WebhookStatus(url: $0, state: "pending") }
      store.records[id] = record
      return .success(record)
    }
    return try madeFolder(try outcome.get())
  }

  /// `start` with the jobs database: the job is enqueued with its record (and key), for
  /// whichever replica claims it first.
  ///
  /// - Returns: the job as enqueued, or the one an earlier request with the same
  ///   `Idempotency-Key` and fingerprint made (this reservation is dropped then).
  func startShared(
    _ shared: SharedJobs, _ id: String, idempotency: IdempotencyRecord?, spec: JobWork
  ) throws -> Record {
    guard var record = store.withLock({ $0.stopping ? nil : $0.records[id] }) else {
      abandon(id)
      throw HTTPError.stopping
    }
    record.spec = spec
    record.idempotency = idempotency
    let text = JSONOutput.line(JobFile(record))
    // A large batch in shards, for whichever replicas are free.
    var shards = 0
    if case .batch(let batch) = spec { shards = limits.shards(items: batch.lines) }
    let enqueued: JobsDBEnqueued
    do {
      enqueued = try shared.use { (db) throws(JobsDBError) in
        try db.enqueue(
          id: id, kind: record.kind.rawValue, record: text, bytes: record.bytes,
          idempotency: idempotency.map {
            JobsDBIdempotency(key: $0.key, fingerprint: $0.fingerprint)
          }, shards: shards)
      }
    } catch {
      abandon(id)
      throw Self.shown(error)
    }
    // The reservation alone: this replica's claim loop may have claimed the job already, its
    // record running under the same id.
    store.withLock { store in
      if store.records[id]?.state == .queued { store.records.removeValue(forKey: id) }
    }
    if enqueued.replayed { removeFolders([record.folder]) }
    return try self.record(of: enqueued.job)
  }

  /// `remove` with the jobs database: a queued or ended job removed there and its folder
  /// here; a running one asked to stop (at once when it runs here, else when its replica
  /// renews its lease).
  func removeShared(_ shared: SharedJobs, _ id: String) throws -> Removal {
    // Twice at most: a job that ended, or was handed back and so canceled, between the
    // removal and the cancel is removed on the second pass.
    for _ in 0..<2 {
      let (job, removed) = try shared.use { (db) throws(JobsDBError) in
        try db.remove(id: id)
      }
      if removed {
        removeFolders([root + "/" + id])
        return .removed(JobState(job.state))
      }
      if job.state == .running { break }
    }
    halt(id, .canceled)
    return .canceling
  }

  /// Starts claiming the database's jobs on a thread of its own (`claimLoop`); nothing
  /// without a database.
  func startClaiming() {
    guard let shared, !shared.looping.exchange(true, ordering: .acquiringAndReleasing) else {
      return
    }
    let thread = Thread { [self] in
      claimLoop(shared)
      shared.loopEnded.signal()
    }
    thread.name = "imprint-claims"
    thread.start()
  }

  /// Claims, renews and hands back jobs until the store closes.
  ///
  /// On a connection of its own, which listens for new jobs (`LISTEN`); connected again with a growing pause (a quarter
  /// of a second to 5 s) when the database cannot be reached. A job this replica runs while
  /// the database is away past two thirds of its lease is stopped: another replica may take
  /// it over once the lease expires.
  private func claimLoop(_ shared: SharedJobs) {
    var pause = 0.25
    var renewed = ContinuousClock.now
    var down: String?
    while !shared.closing.load(ordering: .acquiring) {
      do throws(JobsDBError) {
        let connection = try JobsDBConnection(url: shared.url, migrate: false)
        try connection.listen()
        try connection.listenForWebhooks()
        shared.reachable.store(true, ordering: .releasing)
        if down != nil {
          told("the jobs database is reachable again")
          down = nil
        }
        pause = 0.25
        try claim(shared, on: connection, renewed: &renewed)
        return
      } catch {
        shared.count(error)
        shared.reachable.store(false, ordering: .releasing)
        // The requests' connection is gone too (a restart ends every session).
        shared.client.markLost()
        if down == nil {
          down = error.message
          told("the jobs database cannot be reached: \(error.message); trying again")
        }
        if let id = runningNow()?.id, ContinuousClock.now - renewed > shared.lease * 2 / 3 {
          shared.lost.withLock { _ = $0.insert(id) }
          halt(id, .stopping)
        }
        Thread.sleep(forTimeInterval: pause)
        pause = min(pause * 2, 5)
      }
    }
  }

  /// The claim loop's work on one connection, until the store closes.
  private func claim(
    _ shared: SharedJobs, on connection: borrowing JobsDBConnection,
    renewed: inout ContinuousClock.Instant
  ) throws(JobsDBError) {
    var counted = ContinuousClock.now - .seconds(2)
    // Renewed at once on a new connection: the leases may be near their end after an outage.
    var hooksRenewed = ContinuousClock.now - shared.lease
    while !shared.closing.load(ordering: .acquiring) {
      if ContinuousClock.now - counted >= .seconds(1) {
        let totals = try connection.totals()
        shared.totals.withLock { $0 = totals }
        counted = ContinuousClock.now
        try claimWebhooks(shared, on: connection)
      }
      if ContinuousClock.now - hooksRenewed >= shared.lease / 3 {
        let calling = shared.calling.withLock { $0 }?() ?? []
        try connection.renewWebhooks(owner: shared.owner, jobs: calling, lease: shared.lease)
        hooksRenewed = ContinuousClock.now
      }
      if let (id, shard) = runningNow() {
        if ContinuousClock.now - renewed >= shared.lease / 3 {
          do throws(JobsDBError) {
            let job = try connection.renew(
              id: id, owner: shared.owner, lease: shared.lease, shard: shard)
            renewed = ContinuousClock.now
            // Its bytes as its watch last measured them: the other replicas' limits count them.
            if let bytes = record(id)?.bytes {
              try connection.setBytes(id: id, owner: shared.owner, bytes: bytes, shard: shard)
            }
            if job.cancelRequested { halt(id, .canceled) }
          } catch {
            guard case .leaseLost = error else { throw error }
            told("job '\(id)': its lease was taken over by another replica; it is stopped here")
            shared.lost.withLock { _ = $0.insert(id) }
            halt(id, .stopping)
            renewed = ContinuousClock.now
          }
        }
      } else if !store.withLock({ $0.stopping }),
        let job = try connection.claim(owner: shared.owner, lease: shared.lease)
      {
        renewed = ContinuousClock.now
        launch(job, shared)
        continue
      }
      _ = try connection.notification(within: .milliseconds(200))
    }
  }

  /// Claims the webhook deliveries that wait (their replica stopped, or handed them back) and
  /// calls them, going on from the calls recorded: a few at a time, every second.
  private func claimWebhooks(_ shared: SharedJobs, on connection: borrowing JobsDBConnection)
    throws(JobsDBError)
  {
    guard !store.withLock({ $0.stopping }), let deliver = shared.deliverer.withLock({ $0 }) else {
      return
    }
    for _ in 0..<8 {
      guard let hook = try connection.claimWebhook(owner: shared.owner, lease: shared.lease)
      else { return }
      told(
        "job '\(hook.job)': its webhook taken over after \(hook.attempts) call"
          + (hook.attempts == 1 ? "" : "s"))
      deliver(hook.job, hook.url, Array(hook.body.utf8), hook.attempts)
    }
  }

  /// The job this replica runs, if any, and its shard when it runs one.
  private func runningNow() -> (id: String, shard: Int?)? {
    store.withLock { store in
      store.records.values.first { $0.state == .running }.map { ($0.id, $0.shard?.index) }
    }
  }

  /// Runs job `job`, just claimed: its work made from its record; a record this server cannot
  /// read, or a job whose cancel was asked, ends at once.
  private func launch(_ job: JobsDBJob, _ shared: SharedJobs) {
    var record: Record
    do {
      record = try self.record(of: job)
    } catch {
      // Its record replaced by one this server writes, when its kind is known: its polls then
      // read the job failed with why, not a record they cannot read either.
      end(
        shared, job.id, as: .failed, error: ErrorRecord(error), record: plainRecord(of: job),
        shard: job.shard.map { ($0, job.shards) })
      return
    }
    guard let spec = record.spec else {
      let error = JobError.unreadable(id: job.id, reason: "its record does not say its work")
      end(
        shared, job.id, as: .failed, error: ErrorRecord(error), record: record,
        shard: job.shard.map { ($0, job.shards) })
      return
    }
    if job.cancelRequested {
      let error = JobError.canceled(id: job.id, ended: 0)
      end(
        shared, job.id, as: .canceled, error: ErrorRecord(error), record: record,
        shard: job.shard.map { ($0, job.shards) })
      return
    }
    let shard = job.shard.map { index in
      ShardRun(index: index, count: job.shards) { [self] in endShard(shared, job.id, index) }
    }
    guard let build = shared.builder.withLock({ $0 }),
      let work = build(spec, job.id, record.folder, shard)
    else {
      _ = try? shared.use { (db) throws(JobsDBError) in
        try db.release(id: job.id, owner: shared.owner, shard: job.shard)
      }
      return
    }
    record.shard = job.shard.map { ($0, job.shards) }
    let folder = record.folder
    let task = Task.detached(executorPreference: executor) { await work(folder) }
    record.state = .running
    record.task = task
    let started = record
    store.withLock { store in
      store.records[job.id] = started
      store.running += 1
    }
    Task.detached(executorPreference: executor) { [self] in
      let outcome = await watched(started, task)
      finishShared(shared, job.id, outcome, bytes: Self.size(of: folder))
    }
  }

  /// Ends job `id` that this replica ran: its end written to the database (unless its lease
  /// was lost, or the stop cut it short: then it is handed back, for another replica to
  /// resume), the ended jobs past `limits.kept` removed, its webhook called.
  private func finishShared(_ shared: SharedJobs, _ id: String, _ outcome: JobOutcome, bytes: Int) {
    let taken = store.withLock { store -> Record? in store.records.removeValue(forKey: id) }
    // Counted as running until its end is written: a stop waits for that (`stopRunning`).
    defer { store.withLock { $0.running -= 1 } }
    guard var record = taken else { return }
    if shared.lost.withLock({ $0.remove(id) }) != nil {
      // A shard whose job ended meanwhile (canceled, or failed in another shard): its results,
      // written as its run stopped, are not the job's (its end gathered those there then).
      if removeShardOfEndedJob(shared, id, folder: record.folder, shard: record.shard) { return }
      told("job '\(id)': another replica holds it now; what this one did is left to it")
      return
    }
    // A shard ended, not the last: the job goes on in the others. This replica is free now:
    // its claim loop, which a notification wakes, takes its next work at once (not when its
    // wait ends).
    if outcome.shardEnd == .ended {
      _ = try? shared.use { (db) throws(JobsDBError) in try db.notifyQueue() }
      return
    }
    // Stopped part-way by the drain, or refused a print claim (its lease ended while it
    // printed), or a shard whose end could not be written: handed back, for the replica that
    // holds it, or will, to go on.
    if (record.halt == .stopping && !outcome.complete)
      || outcome.error?.code == PrintError.unclaimedCode || outcome.shardEnd == .unwritten
    {
      // Nothing to hand back of a shard whose job ended meanwhile (a cancel this replica's
      // stop came before it saw).
      if removeShardOfEndedJob(shared, id, folder: record.folder, shard: record.shard) { return }
      do {
        try shared.use { (db) throws(JobsDBError) in
          _ = try db.release(id: id, owner: shared.owner, shard: record.shard?.index)
        }
        told("job '\(id)': handed back to the queue, for another replica to resume")
      } catch {
        told(
          "job '\(id)': not handed back (\(error.message)); another replica resumes it once its lease expires"
        )
      }
      return
    }
    let (state, error) = conclusion(record, outcome)
    record.bytes = bytes
    record.outcome = JobOutcome(summary: outcome.summary, error: error)
    let shard = record.shard
    record.shard = nil
    end(shared, id, as: state, error: error, record: record, shard: shard)
  }

  /// Removes a shard's results when its job has ended in the database; whether it had.
  ///
  /// They are not the job's: its end gathered those there then. False for no shard.
  private func removeShardOfEndedJob(
    _ shared: SharedJobs, _ id: String, folder: String?, shard: (index: Int, count: Int)?
  ) -> Bool {
    guard let shard, let folder,
      (try? shared.use({ (db) throws(JobsDBError) in try db.job(id: id) }))??.state.isFinal
        ?? false
    else { return false }
    ShardMerge.removeShardResults(
      folder: folder + "/output", shards: shard.count, only: shard.index)
    return true
  }

  /// Writes the end of shard `shard` of job `id`, run to its end here (`ShardRun.end`).
  private func endShard(_ shared: SharedJobs, _ id: String, _ shard: Int) -> ShardEnd {
    do {
      let last = try shared.use { (db) throws(JobsDBError) in
        try db.endShard(id: id, shard: shard, owner: shared.owner)
      }
      return last ? .last : .ended
    } catch {
      if case .leaseLost = error {
        shared.lost.withLock { _ = $0.insert(id) }
        return .lost
      }
      told(
        "job '\(id)': the end of its shard \(shard) could not be written (\(error.message)); "
          + "the shard is run again, its items skipped")
      return .unwritten
    }
  }

  /// Writes job `id`'s end to the database as `state` with `error` (`record` with it, when
  /// known), by the holder of its lease (of shard `shard.index`'s of `shard.count`, for a job
  /// run in shards), removes the ended jobs past `limits.kept` and calls its webhook.
  ///
  /// A job of shards ends with the results its shards wrote merged (`ShardMerge.partial` unless
  /// it is done: its last shard's run merged them whole); the shards' own results are removed
  /// once its end is written (a takeover before that merges them again).
  private func end(
    _ shared: SharedJobs, _ id: String, as state: JobState, error: ErrorRecord?, record: Record?,
    shard: (index: Int, count: Int)?
  ) {
    // A shard of a job that has ended already (another shard's end, or a replica that claimed
    // a shard of the canceled job, came first): its merge below would write the job's
    // results.jsonl again after that end, with what the shards hold now, under a report that
    // counts what they held then; only its own results go.
    if removeShardOfEndedJob(shared, id, folder: record?.folder, shard: shard) { return }
    var ended = record
    ended?.state = state
    ended?.finished = Timestamp.now
    if ended?.outcome == nil { ended?.outcome = JobOutcome(error: error) }
    // A job of shards stopped before its last ended (canceled, failed): its results are those
    // of the items its shards ended, as a run whole stopped part-way keeps them.
    // Merged beside results.jsonl first, renamed once this end is written: a shard that loses
    // the race to end the job (two replicas stopping their shards at once) never rewrites the
    // results under the winner's report.
    var staged: (from: String, to: String)?
    defer { if let staged { unlink(staged.from) } }
    if let shard, state != .done, case .batch(let work)? = record?.spec,
      let folder = record?.folder
    {
      do {
        let path = folder + "/output/.results-\(UUID().uuidString).jsonl"
        let merged = try ShardMerge.partial(
          manifest: folder + "/" + work.manifest, folder: folder + "/output",
          shards: shard.count, output: path)
        staged = (path, folder + "/output/results.jsonl")
        ended?.outcome?.summary = JobSummary(merged)
        // Its error counts the items of every shard (a shard's run counted its own).
        if state == .canceled {
          ended?.outcome?.error = ErrorRecord(JobError.canceled(id: id, ended: merged.items))
        }
      } catch {
        told(
          "job '\(id)': the results of its shards were not gathered: \(ErrorRecord(error).message)")
      }
    }
    ended?.task = nil
    let text = ended.map { JSONOutput.line(JobFile($0)) }
    // The webhook's body is the job's report as the database ends it (its finish time the
    // database's), kept with the delivery: every replica that calls it sends the same bytes.
    let webhookBody = webhookBody
    let announced = ended
    let delivery: JobsDBWebhook?
    do {
      let (_, added) = try shared.use { (db) throws(JobsDBError) in
        try db.finish(
          id: id, owner: shared.owner, as: state.database, record: text, lease: shared.lease,
          shard: shard?.index
        ) { job in
          guard var record = announced, let url = record.callback else { return nil }
          record.finished = job.finished.map(Timestamp.init(seconds:))
          guard let body = webhookBody(record) else { return nil }
          return (url, String(decoding: body, as: UTF8.self))
        }
      }
      delivery = added
    } catch {
      // A shard of a job another shard's end already ended (a cancel stops every running
      // shard, each then ends here): its results, written as it stopped, perhaps after that
      // end removed the shards' files, are not the job's.
      if removeShardOfEndedJob(shared, id, folder: record?.folder, shard: shard) { return }
      told("job '\(id)': its end could not be written: \(error.message)")
      return
    }
    if let (from, to) = staged, rename(from, to) == 0 { staged = nil }
    if let shard, let folder = record?.folder {
      ShardMerge.removeShardResults(folder: folder + "/output", shards: shard.count)
    }
    do {
      let removed = try shared.use { (db) throws(JobsDBError) in
        try db.removeEnded(keeping: limits.kept)
      }
      removeFolders(removed.map { root + "/" + $0 })
    } catch {
      told("the ended jobs past the kept number were not removed now: \(error.message)")
    }
    if let delivery, let deliver = shared.deliverer.withLock({ $0 }) {
      deliver(id, delivery.url, Array(delivery.body.utf8), delivery.attempts)
    }
  }

  /// What the database held when the claim loop last counted (every second), for `/metrics`;
  /// nothing before it first did.
  func sharedCounts(_ shared: SharedJobs) -> Counts {
    guard let totals = shared.totals.withLock({ $0 }) else { return Counts() }
    return Counts(
      queued: totals.queued, running: totals.running, finished: totals.ended,
      bytes: totals.allBytes)
  }

  /// Records a call of job `id`'s webhook: its delivery in the database (removed once
  /// delivered or given up) and the job's record with it, in one transaction, while this
  /// replica holds the delivery; a failure is told.
  ///
  /// - Returns: false when another replica holds the delivery now (nothing is written): the
  ///   calls stop here.
  @discardableResult
  func updateSharedWebhook(
    _ shared: SharedJobs, _ id: String, nextCallIn: Duration?,
    _ change: (inout WebhookStatus) -> Void
  ) -> Bool {
    do {
      guard let hook = try shared.use({ (db) throws(JobsDBError) in try db.webhook(job: id) })
      else { return false }
      var status = WebhookStatus(
        url: hook.url, state: "pending", attempts: hook.attempts, status: hook.lastStatus,
        error: hook.lastError)
      change(&status)
      let state = JobsDBWebhookState(rawValue: status.state) ?? .pending
      let report = JSONOutput.line(status)
      let recorded = status
      let held = try shared.use { (db) throws(JobsDBError) in
        try db.recordWebhookCall(
          job: id, owner: shared.owner, state: state, attempts: recorded.attempts,
          status: recorded.status, error: recorded.error, report: report,
          nextCallIn: nextCallIn)
      }
      if !held { told("job '\(id)': its webhook is called by another replica now") }
      return held
    } catch {
      // Not known to be held: no further call from here. The delivery's lease expires, and a
      // replica that reaches the database (this one too) claims it and goes on.
      told(
        "the webhook of job '\(id)' could not be written (" + ErrorRecord(error).message
          + "); its calls go on once its lease expires")
      return false
    }
  }
}
