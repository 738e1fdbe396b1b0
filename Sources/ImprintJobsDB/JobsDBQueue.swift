// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: the job queue several replicas share in the `jobs` table: jobs enqueued (with
// their `Idempotency-Key`), claimed one at a time with `FOR UPDATE SKIP LOCKED` under a lease
// the database's clock measures, renewed, ended by their lease's owner alone, taken over when
// the lease expires; `NOTIFY` wakes idle replicas.

/// A job's state in the `jobs` table.
public enum JobsDBJobState: String, Sendable, CaseIterable {
  /// Waiting for a replica to claim it.
  case queued
  /// Leased to a replica (`JobsDBJob.leaseOwner`), which runs it; claimable again once its
  /// lease has expired.
  case running
  /// Ended: made what it had to.
  case done
  /// Ended: failed.
  case failed
  /// Ended: canceled before or while it ran.
  case canceled

  /// Whether the job has ended (`done`, `failed`, `canceled`): nothing changes it any more.
  public var isFinal: Bool { self != .queued && self != .running }
}

/// One row of the `jobs` table, as the queue's statements return it.
public struct JobsDBJob: Sendable, Equatable {
  /// The job's identifier, the caller's.
  public let id: String
  /// Its place in the queue: the acceptance order.
  public let number: Int
  /// What it is (`batch`, `order`...): the caller's.
  public let kind: String
  public let state: JobsDBJobState
  /// Its record, a JSON object as PostgreSQL's `jsonb` writes it back (keys sorted by length
  /// then bytes, one space after `:` and `,`).
  public let record: String
  /// How many times it was claimed: 1 for its first run, each takeover one more.
  public let attempts: Int
  /// The replica that holds its lease; nil unless it is running.
  public let leaseOwner: String?
  /// When its lease ends, in seconds since 1970 by the database's clock; nil unless running.
  public let leaseUntil: Double?
  /// Whether a cancel was asked while it ran: its lease's owner ends it as `canceled`.
  public let cancelRequested: Bool
  /// When it was enqueued, first claimed and ended, in seconds since 1970 by the database's
  /// clock (nil: not yet).
  public let accepted: Double
  public let started: Double?
  public let finished: Double?
  /// The bytes its files are counted for (`setBytes`).
  public let bytes: Int
  /// How many shards it runs in (each claimed alone, `job_shards`); 0 for a job run whole.
  public let shards: Int
  /// The shard this replica claimed (`claim`, `renew`), from 0.
  ///
  /// Nil for a job run whole, and for a job read without a claim. With one, `leaseOwner`,
  /// `leaseUntil` and `attempts` are that shard's.
  public var shard: Int? = nil

  /// This job as claimed or renewed by `owner` in shard `shard`: the shard's lease and
  /// attempts in place of the job's row's (which holds no lease).
  func leased(shard: Int, owner: String, until: Double?, attempts: Int) -> JobsDBJob {
    JobsDBJob(
      id: id, number: number, kind: kind, state: state, record: record, attempts: attempts,
      leaseOwner: owner, leaseUntil: until, cancelRequested: cancelRequested,
      accepted: accepted, started: started, finished: finished, bytes: bytes, shards: shards,
      shard: shard)
  }
}

/// The jobs of each state and the bytes they hold (`totals`).
public struct JobsDBTotals: Sendable, Equatable {
  public let queued: Int
  public let running: Int
  /// Done, failed or canceled.
  public let ended: Int
  /// The bytes of the jobs queued or running.
  public let activeBytes: Int
  /// The bytes of all jobs.
  public let allBytes: Int
}

/// What `enqueue` did.
public struct JobsDBEnqueued: Sendable, Equatable {
  /// The job: the new one, or the one its `Idempotency-Key` made before.
  public let job: JobsDBJob
  /// Whether the job was made by an earlier request with the same key and fingerprint (and
  /// none was made now).
  public let replayed: Bool
}

/// An `Idempotency-Key` and the fingerprint of the request that carries it.
public struct JobsDBIdempotency: Sendable, Equatable {
  /// The client's key.
  public let key: String
  /// What identifies the request (a digest of its route, parameters and parts, say): the same
  /// key with another fingerprint is another request.
  public let fingerprint: String

  public init(key: String, fingerprint: String) {
    self.key = key
    self.fingerprint = fingerprint
  }
}

/// How many jobs wait and run, read from the database (for `/metrics`).
public struct JobsDBDepth: Sendable, Equatable {
  /// Jobs waiting to be claimed for the first time, or handed back.
  public let queued: Int
  /// Jobs running under a lease that has not expired (run in shards: none of whose running
  /// shards' leases has).
  public let running: Int
  /// Jobs running under a lease that has expired (their replica stopped renewing it): claimable
  /// again (run in shards: a shard of which is).
  public let expired: Int
}

/// A notification a listening connection received (`JobsDBConnection.notification(within:)`).
public struct JobsDBNotification: Sendable, Equatable {
  /// The channel it was sent on.
  public let channel: String
  /// Its payload (a job's id, on `JobsDBConnection.queueChannel`; empty for a job's end).
  public let payload: String
  /// The process id of the server session that sent it.
  public let sender: Int
}

extension JobsDBConnection {
  /// The channel `enqueue` and `release` notify with the job's id, and `finish` with an empty
  /// payload (a replica is free to take the next job), which `listen` listens to.
  public static let queueChannel = "imprint_jobs"

  /// The columns the queue's statements return, read by `JobsDBJob.init(row:)`.
  static let jobColumns = """
    id, number, kind, state, record::text AS record, attempts, lease_owner,
    extract(epoch FROM lease_until)::float8 AS lease_until, cancel_requested,
    extract(epoch FROM accepted_at)::float8 AS accepted_at,
    extract(epoch FROM started_at)::float8 AS started_at,
    extract(epoch FROM finished_at)::float8 AS finished_at, bytes, shards
    """

  /// A lease's length as the SQL of an interval from parameter `$index` (seconds, a
  /// `float8`).
  static func interval(_ index: Int) -> String {
    "$\(index)::float8 * interval '1 second'"
  }

  /// Adds job `id` of `kind` with `record` to the queue and notifies `queueChannel`, in one
  /// transaction; with `idempotency`, the key is recorded with the job in it.
  ///
  /// A key already recorded with the same fingerprint makes no job: its job is returned
  /// (`replayed`). Two requests with one key at the same moment are served in turn (the key's
  /// row is locked until the first commits). Runs its own transaction: not inside one the
  /// caller began.
  ///
  /// - Parameters:
  ///   - id: the job's identifier (unique).
  ///   - kind: what the job is.
  ///   - record: a JSON object, the job's record.
  ///   - bytes: the bytes its files are counted for.
  ///   - idempotency: the request's `Idempotency-Key` and fingerprint, when it has one.
  ///   - shards: how many shards the job runs in, each claimed alone (`job_shards`); 0 or 1
  ///     for a job claimed whole.
  /// - Returns: the job, new or replayed.
  /// - Throws: `JobsDBError.idempotencyKeyReused` for a key recorded with another fingerprint;
  ///   `.idempotencyKeyInUse` for one whose job is not made yet; `.idempotentJobGone` for one
  ///   whose job was removed; `.query` when the id is taken (SQLSTATE 23505) or `record` is
  ///   not JSON (22P02); `.unreachable`.
  @discardableResult
  public func enqueue(
    id: String, kind: String, record: String = "{}", bytes: Int = 0,
    idempotency: JobsDBIdempotency? = nil, shards: Int = 0
  ) throws(JobsDBError) -> JobsDBEnqueued {
    // One shard is the job whole.
    let shards = shards >= 2 ? shards : 0
    return try transaction { () throws(JobsDBError) -> JobsDBEnqueued in
      if let idempotency {
        let claimed = try query(
          """
          INSERT INTO idempotency_keys (key, fingerprint, job_id) VALUES ($1, $2, $3)
          ON CONFLICT (key) DO NOTHING
          """, [idempotency.key, idempotency.fingerprint, id])
        if claimed.changed == 0 { return try replay(idempotency) }
      }
      let made = try query(
        "INSERT INTO jobs (id, kind, record, bytes, shards) VALUES ($1, $2, $3::jsonb, $4, $5) "
          + "RETURNING " + Self.jobColumns, [id, kind, record, bytes, shards])
      if shards > 0 {
        try query(
          "INSERT INTO job_shards (job_id, shard) SELECT $1, generate_series(0, $2 - 1)",
          [id, shards])
      }
      try query("SELECT pg_notify($1, $2)", [Self.queueChannel, id])
      guard let job = try Self.job(made) else { preconditionFailure("INSERT returned no row") }
      return JobsDBEnqueued(job: job, replayed: false)
    }
  }

  /// The job an earlier request with `idempotency`'s key made, inside `enqueue`'s transaction.
  private func replay(_ idempotency: JobsDBIdempotency) throws(JobsDBError) -> JobsDBEnqueued {
    let key = idempotency.key
    let recorded = try query(
      "SELECT fingerprint, job_id FROM idempotency_keys WHERE key = $1", [key]
    ).rows.first
    guard let recorded, let job = recorded.string("job_id") else {
      throw .idempotencyKeyInUse(key: key)
    }
    guard recorded.string("fingerprint") == idempotency.fingerprint else {
      throw .idempotencyKeyReused(key: key, job: job)
    }
    guard let made = try self.job(id: job) else { throw .idempotentJobGone(key: key, job: job) }
    return JobsDBEnqueued(job: made, replayed: true)
  }

  /// Job `id` as the database has it now; nil when there is none.
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func job(id: String) throws(JobsDBError) -> JobsDBJob? {
    try Self.job(query("SELECT " + Self.jobColumns + " FROM jobs WHERE id = $1", [id]))
  }

  /// Claims the oldest work that waits for replica `owner`.
  ///
  /// That is a job run whole that is queued, or running under an expired lease (its replica
  /// stopped), or a shard of a job that is queued (or whose lease expired) while its job is
  /// queued or running. The row is locked with `FOR
  /// UPDATE SKIP LOCKED`, so that replicas claiming at once each get other work, and marked
  /// running, its lease `owner`'s until the database's `now()` plus `lease`, its attempts one
  /// more; a shard's job is marked running too (it holds no lease of its own). Jobs are taken
  /// in the queue's order, a job's shards in theirs.
  ///
  /// Work taken over resumes where its files say (the caller's). A job whose cancel was asked
  /// (`cancelRequested`) is ended as `canceled` by its new owner (a shard's, too).
  ///
  /// - Parameters:
  ///   - owner: the replica's name, unique among replicas.
  ///   - lease: how long the lease lasts unless renewed.
  /// - Returns: the job claimed (with `shard` set for a shard), or nil when nothing waits.
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func claim(owner: String, lease: Duration) throws(JobsDBError) -> JobsDBJob? {
    try transaction { () throws(JobsDBError) -> JobsDBJob? in
      let whole = try query(
        """
        SELECT id, number FROM jobs
        WHERE shards = 0 AND (state = 'queued' OR (state = 'running' AND lease_until < now()))
        ORDER BY number LIMIT 1 FOR UPDATE SKIP LOCKED
        """
      ).rows.first
      let part = try query(
        """
        SELECT s.job_id, s.shard, j.number FROM job_shards s JOIN jobs j ON j.id = s.job_id
        WHERE j.state IN ('queued', 'running')
          AND (s.state = 'queued' OR (s.state = 'running' AND s.lease_until < now()))
        ORDER BY j.number, s.shard LIMIT 1 FOR UPDATE OF s SKIP LOCKED
        """
      ).rows.first
      let wholeNumber = try whole?.int("number")
      if let part, let shard = try part.int("shard"), let id = part.string("job_id"),
        let number = try part.int("number"), wholeNumber.map({ number < $0 }) ?? true
      {
        return try claim(shard: shard, of: id, owner: owner, lease: lease)
      }
      guard let id = whole?.string("id") else { return nil }
      return try Self.job(
        query(
          """
          UPDATE jobs SET state = 'running', lease_owner = $2, lease_until = now() + \
          \(Self.interval(3)), attempts = attempts + 1, started_at = coalesce(started_at, now())
          WHERE id = $1
          RETURNING
          """ + " " + Self.jobColumns, [id, owner, Self.seconds(lease)]))
    }
  }

  /// Marks shard `shard` of job `id`, locked by `claim`, running under `owner`'s lease, and
  /// its job running (its attempts the most any of its shards had).
  private func claim(shard: Int, of id: String, owner: String, lease: Duration)
    throws(JobsDBError) -> JobsDBJob?
  {
    let leased = try query(
      """
      UPDATE job_shards SET state = 'running', lease_owner = $3, lease_until = now() + \
      \(Self.interval(4)), attempts = attempts + 1
      WHERE job_id = $1 AND shard = $2
      RETURNING attempts, extract(epoch FROM lease_until)::float8 AS lease_until
      """, [id, shard, owner, Self.seconds(lease)]
    ).rows.first
    let attempts = try leased?.int("attempts") ?? 1
    let job = try Self.job(
      query(
        """
        UPDATE jobs SET state = 'running', started_at = coalesce(started_at, now()),
          attempts = greatest(attempts, $2)
        WHERE id = $1
        RETURNING
        """ + " " + Self.jobColumns, [id, attempts]))
    return job?.leased(
      shard: shard, owner: owner, until: try leased?.double("lease_until"), attempts: attempts)
  }

  /// Extends `owner`'s lease of job `id` (of its shard `shard`, when given) to the database's
  /// `now()` plus `lease`, while `owner` holds it (it has not expired) and the job runs.
  ///
  /// - Returns: the job, with its new `leaseUntil` and whether its cancel was asked.
  /// - Throws: `JobsDBError.leaseLost` when the job (or shard) is not running under `owner`'s
  ///   lease, or that lease expired (even if no replica took it over yet), or a shard's job
  ///   ended; `.unreachable`, `.query`.
  @discardableResult
  public func renew(id: String, owner: String, lease: Duration, shard: Int? = nil)
    throws(JobsDBError) -> JobsDBJob
  {
    guard let shard else {
      let renewed = try query(
        """
        UPDATE jobs SET lease_until = now() + \(Self.interval(3))
        WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND lease_until >= now()
        RETURNING
        """ + " " + Self.jobColumns, [id, owner, Self.seconds(lease)])
      guard let job = try Self.job(renewed) else { throw .leaseLost(job: id, owner: owner) }
      return job
    }
    let renewed = try query(
      """
      UPDATE job_shards SET lease_until = now() + \(Self.interval(3))
      WHERE job_id = $1 AND shard = $4 AND state = 'running' AND lease_owner = $2
        AND lease_until >= now() AND EXISTS (SELECT FROM jobs WHERE id = $1 AND state = 'running')
      RETURNING attempts, extract(epoch FROM lease_until)::float8 AS lease_until
      """, [id, owner, Self.seconds(lease), shard]
    ).rows.first
    guard let renewed, let job = try self.job(id: id) else {
      throw .leaseLost(job: id, owner: owner)
    }
    return job.leased(
      shard: shard, owner: owner, until: try renewed.double("lease_until"),
      attempts: try renewed.int("attempts") ?? job.attempts)
  }

  /// Ends job `id` as `state` (`done`, `failed` or `canceled`), by its lease's owner alone
  /// (with `shard`, the owner of that shard's lease: the job's other shards are left as they
  /// are, their runs stop when they next renew).
  ///
  /// Its record is replaced by `record` when given, its lease released. A lease that expired
  /// but that no replica took over is still `owner`'s; one taken over is not, and the new
  /// owner's result stands. Runs its own transaction, as `enqueue`.
  ///
  /// - Returns: the job ended.
  /// - Throws: `JobsDBError.leaseLost` when the job (or shard) is not running under `owner`'s
  ///   lease; `.query` for a `record` that is not JSON; `.unreachable`.
  @discardableResult
  public func finish(
    id: String, owner: String, as state: JobsDBJobState, record: String? = nil,
    shard: Int? = nil
  ) throws(JobsDBError) -> JobsDBJob {
    try transaction { () throws(JobsDBError) -> JobsDBJob in
      try ending(id: id, owner: owner, as: state, record: record, shard: shard)
    }
  }

  /// `finish` inside the caller's transaction.
  private func ending(
    id: String, owner: String, as state: JobsDBJobState, record: String?, shard: Int?
  ) throws(JobsDBError) -> JobsDBJob {
    precondition(state.isFinal, "a job ends done, failed or canceled, not \(state)")
    if let shard {
      let held = try query(
        """
        UPDATE job_shards SET state = 'done', lease_owner = NULL, lease_until = NULL
        WHERE job_id = $1 AND shard = $3 AND state = 'running' AND lease_owner = $2
        """, [id, owner, shard])
      guard held.changed == 1 else { throw .leaseLost(job: id, owner: owner) }
    }
    // The end notifies `queueChannel` (an empty payload: a replica is free), in the same
    // statement and only when a job ended: the replica that ran it claims its next job at
    // once rather than when its wait for a notification times out.
    let ended = try query(
      """
      UPDATE jobs SET state = $3, record = coalesce($4::jsonb, record), finished_at = now(),
        lease_owner = NULL, lease_until = NULL
      WHERE id = $1 AND state = 'running' AND (lease_owner = $2 OR ($6 AND shards > 0))
      RETURNING pg_notify($5, '') IS NULL AS notified,
      """ + " " + Self.jobColumns,
      [id, owner, state.rawValue, record, Self.queueChannel, shard != nil])
    guard let job = try Self.job(ended) else { throw .leaseLost(job: id, owner: owner) }
    return job
  }

  /// Notifies `queueChannel` with an empty payload: a replica is free (the one that sends it,
  /// once it has let its work go), and the listening ones claim what waits at once.
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func notifyQueue() throws(JobsDBError) {
    try query("SELECT pg_notify($1, '')", [Self.queueChannel])
  }

  /// Ends shard `shard` of job `id`, run to its end by `owner`, which holds its lease.
  ///
  /// It is marked done, unless every other shard of the job is done already. Then it is the
  /// job's last:
  /// left running under `owner`'s lease, for `owner` to merge the shards' results and end the
  /// job (`finish` with `shard`); a replica that takes it over (its lease expired) finds it
  /// run and merges. The shards are counted under a lock of the job: of two shards ending at
  /// once, one is last.
  ///
  /// - Returns: true when the shard is the job's last (the job is `owner`'s to end).
  /// - Throws: `JobsDBError.leaseLost` when the shard is not running under `owner`'s lease or
  ///   its job ended; `.unreachable`, `.query`.
  public func endShard(id: String, shard: Int, owner: String) throws(JobsDBError) -> Bool {
    try transaction { () throws(JobsDBError) -> Bool in
      // The ends of one job's shards in turn, under a lock of the job's id (not its row:
      // claims lock a shard, then the job's row; a shard's end locked the row, then its shard,
      // and two such deadlocked).
      try query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [id])
      let running = try query("SELECT id FROM jobs WHERE id = $1 AND state = 'running'", [id])
      let counted = try query(
        """
        SELECT count(*) FILTER (WHERE shard <> $2 AND state <> 'done') AS others,
          count(*) FILTER (WHERE shard = $2 AND state = 'running' AND lease_owner = $3) AS held
        FROM job_shards WHERE job_id = $1
        """, [id, shard, owner]
      ).rows.first
      guard running.rows.count == 1, try counted?.int("held") == 1 else {
        throw .leaseLost(job: id, owner: owner)
      }
      guard try counted?.int("others") != 0 else { return true }
      try query(
        """
        UPDATE job_shards SET state = 'done', lease_owner = NULL, lease_until = NULL
        WHERE job_id = $1 AND shard = $2
        """, [id, shard])
      return false
    }
  }

  /// `finish`, and in the same transaction the job's webhook delivery added
  /// (`webhook_deliveries`), pending and leased to `owner` for `lease`: made from the job as
  /// ended (its finish time is the database's), so that whichever replica makes the calls sends
  /// the same body.
  ///
  /// - Parameters:
  ///   - id: the job.
  ///   - owner: the replica that holds its lease.
  ///   - state: `done`, `failed` or `canceled`.
  ///   - record: its record, replacing the one kept; nil keeps it.
  ///   - lease: how long `owner` holds the delivery unless it renews it
  ///     (`renewWebhooks`).
  ///   - shard: the shard whose lease `owner` holds, for a job run in shards.
  ///   - webhook: the delivery's URL and body for the job as ended; nil for none.
  /// - Returns: the job ended, and the delivery added (nil when `webhook` gave none).
  /// - Throws: as `finish`; nothing is changed when it throws.
  public func finish(
    id: String, owner: String, as state: JobsDBJobState, record: String?, lease: Duration,
    shard: Int? = nil, webhook: (JobsDBJob) -> (url: String, body: String)?
  ) throws(JobsDBError) -> (job: JobsDBJob, webhook: JobsDBWebhook?) {
    try transaction { () throws(JobsDBError) -> (JobsDBJob, JobsDBWebhook?) in
      let job = try ending(id: id, owner: owner, as: state, record: record, shard: shard)
      guard let (url, body) = webhook(job) else { return (job, nil) }
      let added = try addWebhook(job: id, url: url, body: body, owner: owner, lease: lease)
      return (job, added)
    }
  }

  /// Ends job `id` as `done` (`finish`).
  @discardableResult
  public func complete(id: String, owner: String, record: String? = nil) throws(JobsDBError)
    -> JobsDBJob
  {
    try finish(id: id, owner: owner, as: .done, record: record)
  }

  /// Ends job `id` as `failed` (`finish`).
  @discardableResult
  public func fail(id: String, owner: String, record: String? = nil) throws(JobsDBError)
    -> JobsDBJob
  {
    try finish(id: id, owner: owner, as: .failed, record: record)
  }

  /// Hands job `id` back to the queue (a replica draining), by its lease's owner alone; with
  /// `shard`, that shard of it (its job stays running: other shards may run).
  ///
  /// The job (or shard) is queued again, its lease released, its attempts kept, a
  /// notification sent. Runs its own transaction, as `enqueue`.
  ///
  /// - Throws: `JobsDBError.leaseLost` when the job (or shard) is not running under `owner`'s
  ///   lease; `.unreachable`, `.query`.
  @discardableResult
  public func release(id: String, owner: String, shard: Int? = nil) throws(JobsDBError)
    -> JobsDBJob
  {
    try transaction { () throws(JobsDBError) -> JobsDBJob in
      if let shard {
        let released = try query(
          """
          UPDATE job_shards SET state = 'queued', lease_owner = NULL, lease_until = NULL
          WHERE job_id = $1 AND shard = $3 AND state = 'running' AND lease_owner = $2
          """, [id, owner, shard])
        guard released.changed == 1, let job = try job(id: id) else {
          throw .leaseLost(job: id, owner: owner)
        }
        try query("SELECT pg_notify($1, $2)", [Self.queueChannel, id])
        return job
      }
      let released = try query(
        """
        UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL
        WHERE id = $1 AND state = 'running' AND lease_owner = $2
        RETURNING
        """ + " " + Self.jobColumns, [id, owner])
      guard let job = try Self.job(released) else { throw .leaseLost(job: id, owner: owner) }
      try query("SELECT pg_notify($1, $2)", [Self.queueChannel, id])
      return job
    }
  }

  /// Cancels job `id` from any replica: a queued job is `canceled` at once; a running one is
  /// marked (`cancelRequested`) for its lease's owner, who sees it when it renews and ends the
  /// job as `canceled`; an ended job is left as it is.
  ///
  /// - Returns: the job after the cancel.
  /// - Throws: `JobsDBError.jobNotFound` when there is no job `id`; `.unreachable`, `.query`.
  @discardableResult
  public func cancel(id: String) throws(JobsDBError) -> JobsDBJob {
    let canceled = try query(
      """
      UPDATE jobs SET
        cancel_requested = cancel_requested OR state IN ('queued', 'running'),
        state = CASE WHEN state = 'queued' THEN 'canceled' ELSE state END,
        finished_at = CASE WHEN state = 'queued' THEN now() ELSE finished_at END
      WHERE id = $1
      RETURNING
      """ + " " + Self.jobColumns, [id])
    guard let job = try Self.job(canceled) else { throw .jobNotFound(id: id) }
    return job
  }

  /// Removes job `id` unless it runs: a queued job never runs, an ended one is gone with its
  /// record (its `Idempotency-Key` stays, its retry answered `idempotentJobGone`); a running
  /// one is asked to stop instead (`cancel`).
  ///
  /// - Returns: the job as it was when removed (`removed`), or after its cancel was asked.
  /// - Throws: `JobsDBError.jobNotFound` when there is no job `id`; `.unreachable`, `.query`.
  public func remove(id: String) throws(JobsDBError) -> (job: JobsDBJob, removed: Bool) {
    let deleted = try query(
      "DELETE FROM jobs WHERE id = $1 AND state <> 'running' RETURNING " + Self.jobColumns, [id])
    if let job = try Self.job(deleted) { return (job, true) }
    return (try cancel(id: id), false)
  }

  /// Removes the ended jobs past the newest `kept`, oldest first, in one statement.
  ///
  /// - Returns: the ids removed, oldest first.
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func removeEnded(keeping kept: Int) throws(JobsDBError) -> [String] {
    let removed = try query(
      """
      DELETE FROM jobs WHERE id IN (
        SELECT id FROM jobs WHERE state IN ('done', 'failed', 'canceled')
        ORDER BY number DESC OFFSET $1)
      RETURNING id, number
      """, [kept])
    var ended: [(number: Int, id: String)] = []
    for row in removed.rows {
      ended.append((try row.int("number") ?? 0, row.string("id") ?? ""))
    }
    return ended.sorted { $0.number < $1.number }.map(\.id)
  }

  /// Sets the bytes job `id`'s files are counted for, while `owner` holds its lease (with
  /// `shard`, that shard's: each of a job's shards measures the one folder they share).
  ///
  /// - Throws: `JobsDBError.leaseLost` when the job (or shard) is not running under `owner`'s
  ///   lease; `.unreachable`, `.query`.
  public func setBytes(id: String, owner: String, bytes: Int, shard: Int? = nil)
    throws(JobsDBError)
  {
    let set = try query(
      """
      UPDATE jobs SET bytes = $3 WHERE id = $1 AND state = 'running' AND CASE
        WHEN $4::integer IS NULL THEN lease_owner = $2
        ELSE EXISTS (
          SELECT FROM job_shards WHERE job_id = $1 AND shard = $4 AND state = 'running'
            AND lease_owner = $2)
        END
      """, [id, owner, bytes, shard])
    guard set.changed == 1 else { throw .leaseLost(job: id, owner: owner) }
  }

  /// The jobs of each state and the bytes they hold, in one statement.
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func totals() throws(JobsDBError) -> JobsDBTotals {
    let row = try query(
      """
      SELECT count(*) FILTER (WHERE state = 'queued') AS queued,
        count(*) FILTER (WHERE state = 'running') AS running,
        count(*) FILTER (WHERE state IN ('done', 'failed', 'canceled')) AS ended,
        coalesce(sum(bytes) FILTER (WHERE state IN ('queued', 'running')), 0) AS active_bytes,
        coalesce(sum(bytes), 0) AS all_bytes
      FROM jobs
      """
    ).rows.first
    guard let row else { preconditionFailure("SELECT count(*) returned no row") }
    return JobsDBTotals(
      queued: try row.int("queued") ?? 0, running: try row.int("running") ?? 0,
      ended: try row.int("ended") ?? 0, activeBytes: try row.int("active_bytes") ?? 0,
      allBytes: try row.int("all_bytes") ?? 0)
  }

  /// Sets the top-level key `key` of job `id`'s record to `value`, a JSON value.
  ///
  /// - Throws: `JobsDBError.jobNotFound` when there is no job `id`; `.query` for a `value`
  ///   that is not JSON; `.unreachable`.
  public func setRecordField(id: String, key: String, value: String) throws(JobsDBError) {
    let set = try query(
      "UPDATE jobs SET record = jsonb_set(record, ARRAY[$2], $3::jsonb) WHERE id = $1",
      [id, key, value])
    guard set.changed == 1 else { throw .jobNotFound(id: id) }
  }

  /// The queue's depth now, by the database's clock (one statement).
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func depth() throws(JobsDBError) -> JobsDBDepth {
    let row = try query(
      """
      SELECT count(*) FILTER (WHERE state = 'queued') AS queued,
        count(*) FILTER (WHERE state = 'running' AND NOT expired) AS running,
        count(*) FILTER (WHERE state = 'running' AND expired) AS expired
      FROM (
        SELECT state, CASE WHEN shards = 0 THEN lease_until < now() ELSE EXISTS (
          SELECT FROM job_shards s WHERE s.job_id = jobs.id AND s.state = 'running'
            AND s.lease_until < now()) END AS expired
        FROM jobs WHERE state IN ('queued', 'running')) AS waiting
      """
    ).rows.first
    guard let row else { preconditionFailure("SELECT count(*) returned no row") }
    return JobsDBDepth(
      queued: try row.int("queued") ?? 0, running: try row.int("running") ?? 0,
      expired: try row.int("expired") ?? 0)
  }

  /// Listens to `queueChannel` (`LISTEN`), so that `notification(within:)` wakes when a job is
  /// enqueued or handed back.
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func listen() throws(JobsDBError) {
    // A channel is an identifier, which a parameter cannot be: the constant, quoted.
    try query("LISTEN \"\(Self.queueChannel)\"")
  }

  /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
  ///
  /// Not inside a transaction the caller began (`BEGIN`): its `COMMIT` would end that one.
  func transaction<T>(_ body: () throws(JobsDBError) -> T) throws(JobsDBError) -> T {
    try query("BEGIN")
    do {
      let value = try body()
      try query("COMMIT")
      return value
    } catch {
      // The first error is the one to report; a rollback that fails too (the connection is
      // gone) ends the transaction as surely.
      _ = try? query("ROLLBACK")
      throw error
    }
  }

  /// `duration` in seconds, as the lease's parameter.
  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
  }

  /// The job of the first row of `result`; nil when it has none.
  static func job(_ result: JobsDBResult) throws(JobsDBError) -> JobsDBJob? {
    guard let row = result.rows.first else { return nil }
    let stateText = row.string("state") ?? "NULL"
    guard let state = JobsDBJobState(rawValue: stateText) else {
      throw .value(column: "state", text: stateText, expected: "a job's state")
    }
    // The other columns are NOT NULL.
    let id = row.string("id") ?? ""
    let kind = row.string("kind") ?? ""
    let record = row.string("record") ?? "{}"
    let number = try row.int("number") ?? 0
    let attempts = try row.int("attempts") ?? 0
    let cancel = try row.bool("cancel_requested") ?? false
    return JobsDBJob(
      id: id, number: number, kind: kind, state: state, record: record, attempts: attempts,
      leaseOwner: row.string("lease_owner"), leaseUntil: try row.double("lease_until"),
      cancelRequested: cancel, accepted: try row.double("accepted_at") ?? 0,
      started: try row.double("started_at"), finished: try row.double("finished_at"),
      bytes: try row.int("bytes") ?? 0, shards: try row.int("shards") ?? 0)
  }
}
