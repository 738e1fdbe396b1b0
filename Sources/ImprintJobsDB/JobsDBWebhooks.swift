// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: the webhook deliveries several replicas share in `webhook_deliveries`: one a
// job, added by the replica that ends the job in the same transaction as its end, made under a
// lease that replica renews; a delivery whose replica is gone (its lease expired) is claimed by
// another with `FOR UPDATE SKIP LOCKED`, which goes on from the calls recorded. A delivery
// outlives its job (a job removed while its webhook is pending is still announced) and is
// removed once delivered or given up.

import ImprintCore

/// One row of `webhook_deliveries`: a job's webhook not yet delivered nor given up.
public struct JobsDBWebhook: Sendable, Equatable {
  /// The job's id (the calls' `Webhook-Id`).
  public let job: String
  /// The callback URL, with its credentials if it has any.
  public let url: String
  /// The body of every call (the job's report as it ended), UTF-8.
  public let body: String
  /// Calls made so far, by every replica that held the delivery.
  public let attempts: Int
  /// The HTTP status of the last call answered, and why the last call failed.
  public let lastStatus: Int?
  public let lastError: String?
  /// The replica that holds the delivery; nil once handed back.
  public let leaseOwner: String?
}

/// Where a delivery is after a call (`recordWebhookCall`).
public enum JobsDBWebhookState: String, Sendable {
  /// More calls to come.
  case pending
  /// A call was answered 2xx: the delivery is removed.
  case delivered
  /// The last call failed: the delivery is removed.
  case failed
}

extension JobsDBConnection {
  /// The columns a delivery is read from.
  private static let webhookColumns = """
    job_id, url, convert_from(body, 'UTF8') AS body, attempts, last_status, last_error,
    lease_owner
    """

  /// The channel deliveries handed back are notified on (`releaseWebhooks`; the claim loop
  /// claims every second in any case).
  public static let webhookChannel = "imprint_webhooks"

  /// Adds job `job`'s delivery to `url` with `body`, pending and leased to `owner` until the
  /// database's `now()` plus `lease`; one already there for the job is left as it is.
  ///
  /// - Returns: the delivery as the table has it.
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  @discardableResult
  public func addWebhook(job: String, url: String, body: String, owner: String, lease: Duration)
    throws(JobsDBError) -> JobsDBWebhook
  {
    let added = try query(
      """
      INSERT INTO webhook_deliveries (job_id, url, body, lease_owner, lease_until)
      VALUES ($1, $2, convert_to($3, 'UTF8'), $4, now() + \(Self.interval(5)))
      ON CONFLICT (job_id) DO NOTHING
      RETURNING
      """ + " " + Self.webhookColumns, [job, url, body, owner, Self.seconds(lease)])
    if let made = try Self.webhook(added) { return made }
    guard let kept = try webhook(job: job) else { throw .jobNotFound(id: job) }
    return kept
  }

  /// Job `job`'s pending delivery; nil when there is none (never asked for, delivered or given
  /// up).
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func webhook(job: String) throws(JobsDBError) -> JobsDBWebhook? {
    try Self.webhook(
      query(
        "SELECT " + Self.webhookColumns + " FROM webhook_deliveries WHERE job_id = $1", [job]))
  }

  /// Claims the delivery that waits longest (pending, its lease expired or handed back) for
  /// replica `owner` until the database's `now()` plus `lease`, in one statement (`FOR UPDATE
  /// SKIP LOCKED`: replicas claiming at once each get another).
  ///
  /// - Returns: the delivery claimed, with the calls already made; nil when none waits.
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func claimWebhook(owner: String, lease: Duration) throws(JobsDBError) -> JobsDBWebhook? {
    try Self.webhook(
      query(
        """
        UPDATE webhook_deliveries SET lease_owner = $1, lease_until = now() + \
        \(Self.interval(2))
        WHERE job_id = (
          SELECT job_id FROM webhook_deliveries
          WHERE state = 'pending' AND next_attempt_at <= now()
            AND (lease_until IS NULL OR lease_until < now())
          ORDER BY next_attempt_at, job_id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING
        """ + " " + Self.webhookColumns, [owner, Self.seconds(lease)]))
  }

  /// Extends the deliveries of `jobs` that `owner` holds, unexpired, to the database's
  /// `now()` plus `lease` (those it is calling now: one it holds but no longer calls is left to
  /// expire, for another replica to claim).
  ///
  /// - Returns: how many it extended.
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  @discardableResult
  public func renewWebhooks(owner: String, jobs: [String], lease: Duration) throws(JobsDBError)
    -> Int
  {
    guard !jobs.isEmpty else { return 0 }
    return try query(
      """
      UPDATE webhook_deliveries SET lease_until = now() + \(Self.interval(2))
      WHERE lease_owner = $1 AND state = 'pending' AND lease_until >= now()
        AND job_id IN (SELECT jsonb_array_elements_text($3::jsonb))
      """, [owner, Self.seconds(lease), Self.jsonArray(jobs)]
    ).changed
  }

  /// `values` as a JSON array of strings, a parameter.
  private static func jsonArray(_ values: [String]) -> String { JSONOutput.line(values) }

  /// Hands back the deliveries `owner` holds (a replica stopping) but those of `calling` (its
  /// calls still under way: their leases expire), for another to claim at once, and notifies
  /// `webhookChannel`.
  ///
  /// - Returns: how many it handed back.
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  @discardableResult
  public func releaseWebhooks(owner: String, except calling: [String] = []) throws(JobsDBError)
    -> Int
  {
    try transaction { () throws(JobsDBError) -> Int in
      let released = try query(
        """
        UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
        WHERE lease_owner = $1 AND state = 'pending'
          AND job_id NOT IN (SELECT jsonb_array_elements_text($2::jsonb))
        """, [owner, Self.jsonArray(calling)]
      ).changed
      if released > 0 { try query("SELECT pg_notify($1, '')", [Self.webhookChannel]) }
      return released
    }
  }

  /// Records a call of job `job`'s webhook by `owner`, while it holds the delivery.
  ///
  /// The calls made, the last status and error are kept; a delivery no longer `pending` is
  /// removed. With `report`, the job's record's `webhook` key is set to it in the same
  /// transaction (when the job is still kept). With `nextCallIn`, a pending delivery's next
  /// call is due that long after the database's `now()`: `claimWebhook` leaves it until then,
  /// so a replica taking it over keeps the backoff.
  ///
  /// - Returns: whether `owner` held the delivery, its lease unexpired (else nothing is
  ///   changed: another replica took it over, or may).
  /// - Throws: `JobsDBError.unreachable`, `.query` (for a `report` that is not JSON).
  @discardableResult
  public func recordWebhookCall(
    job: String, owner: String, state: JobsDBWebhookState, attempts: Int, status: Int?,
    error: String?, report: String?, nextCallIn: Duration? = nil
  ) throws(JobsDBError) -> Bool {
    try transaction { () throws(JobsDBError) -> Bool in
      let held: Int
      // Held: this replica's lease, unexpired by the database's clock.
      if state == .pending {
        // The next call's time by the database's clock: a replica that takes the delivery
        // over waits for it as this one would have.
        held =
          try query(
            """
            UPDATE webhook_deliveries SET attempts = $3, last_status = $4, last_error = $5,
              next_attempt_at = CASE WHEN $6::float8 IS NULL THEN next_attempt_at
                ELSE now() + \(Self.interval(6)) END
            WHERE job_id = $1 AND lease_owner = $2 AND lease_until >= now()
            """, [job, owner, attempts, status, error, nextCallIn.map(Self.seconds)]
          ).changed
      } else {
        held =
          try query(
            """
            DELETE FROM webhook_deliveries
            WHERE job_id = $1 AND lease_owner = $2 AND lease_until >= now()
            """, [job, owner]
          ).changed
      }
      guard held == 1 else { return false }
      if let report {
        try query(
          "UPDATE jobs SET record = jsonb_set(record, '{webhook}', $2::jsonb) WHERE id = $1",
          [job, report])
      }
      return true
    }
  }

  /// Listens to `webhookChannel` too (`LISTEN`).
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func listenForWebhooks() throws(JobsDBError) {
    try query("LISTEN \"\(Self.webhookChannel)\"")
  }

  /// The delivery of the first row of `result`; nil when it has none.
  private static func webhook(_ result: JobsDBResult) throws(JobsDBError) -> JobsDBWebhook? {
    guard let row = result.rows.first else { return nil }
    // job_id, url, body and attempts are NOT NULL.
    return JobsDBWebhook(
      job: row.string("job_id") ?? "", url: row.string("url") ?? "",
      body: row.string("body") ?? "", attempts: try row.int("attempts") ?? 0,
      lastStatus: try row.int("last_status"), lastError: row.string("last_error"),
      leaseOwner: row.string("lease_owner"))
  }
}
