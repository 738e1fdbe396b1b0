// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: the print claims of prepare jobs in `print_claims`: a part of an order's line
// claimed by one run of its job, in one transaction with that job's lease, before the part is
// sent to a printer.

extension JobsDBConnection {
  /// Claims part `part` of the order's line `key` of job `id` for run `run` of replica
  /// `owner`, in one transaction with the job's lease.
  ///
  /// The job's row is locked (`FOR UPDATE`: no renewal, takeover or end runs meanwhile) and
  /// must be running under `owner`'s lease, unexpired by the database's clock; the claim is
  /// added unless the part has one, or taken from the run that made it when that run made no
  /// printer's job for it (`printCreated`). A run is one claim of the job by a replica (a
  /// takeover is another run, even by the same replica).
  ///
  /// - Returns: the run that holds the claim: `run` when it was made or taken now, or made by
  ///   `run` before; another when an earlier run claimed the part and made a printer's job.
  /// - Throws: `JobsDBError.leaseLost` when the job is not running under `owner`'s unexpired
  ///   lease (nothing is claimed); `.unreachable`, `.query`.
  public func claimPrint(job id: String, line key: String, part: String, owner: String, run: String)
    throws(JobsDBError) -> String
  {
    try transaction { () throws(JobsDBError) -> String in
      try lockLease(job: id, owner: owner)
      // A claim whose run made no printer's job (it stopped before) is this run's now.
      try query(
        """
        INSERT INTO print_claims (job_id, line_key, part, owner) VALUES ($1, $2, $3, $4)
        ON CONFLICT (job_id, line_key, part) DO UPDATE SET owner = excluded.owner,
          claimed_at = now()
        WHERE print_claims.printer_job IS NULL
        """, [id, key, part, run])
      let claim = try query(
        "SELECT owner FROM print_claims WHERE job_id = $1 AND line_key = $2 AND part = $3",
        [id, key, part])
      // Inserted or kept under the job's lock: missing only if the table is not this schema's.
      guard let holder = claim.rows.first?.string("owner") else {
        throw .value(column: "owner", text: "NULL", expected: "the run that claimed the part")
      }
      return holder
    }
  }

  /// Records that `printer` made job `printerJob` for the part `part` of line `key` of job
  /// `id`, claimed by run `run`, in one transaction with the job's lease (as `claimPrint`).
  ///
  /// - Throws: `JobsDBError.leaseLost` when the job is not running under `owner`'s unexpired
  ///   lease, or the part's claim is not `run`'s (nothing is changed); `.unreachable`,
  ///   `.query`.
  public func printCreated(
    job id: String, line key: String, part: String, owner: String, run: String,
    printer: String, printerJob: Int
  ) throws(JobsDBError) {
    try transaction { () throws(JobsDBError) in
      try lockLease(job: id, owner: owner)
      let set = try query(
        """
        UPDATE print_claims SET printer = $5, printer_job = $6
        WHERE job_id = $1 AND line_key = $2 AND part = $3 AND owner = $4
        """, [id, key, part, run, printer, printerJob])
      guard set.changed == 1 else { throw .leaseLost(job: id, owner: owner) }
    }
  }

  /// Gives back run `run`'s claim on part `part` of line `key` of job `id`, whose printer's
  /// job `printerJob` was canceled before its document was sent.
  ///
  /// The claim names no printer's job again, so the next run may take it (`claimPrint`).
  /// Changes nothing when the claim is another run's or names another printer's job.
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func printWithdrawn(
    job id: String, line key: String, part: String, run: String, printerJob: Int
  ) throws(JobsDBError) {
    try query(
      """
      UPDATE print_claims SET printer = NULL, printer_job = NULL
      WHERE job_id = $1 AND line_key = $2 AND part = $3 AND owner = $4 AND printer_job = $5
      """, [id, key, part, run, printerJob])
  }

  /// The claims of job `id`'s parts: each line's key and part with the run that claimed it and
  /// the printer's job it made (nil: none yet), in the order they were claimed.
  ///
  /// - Throws: `JobsDBError.unreachable`, `.query`.
  public func printClaims(job id: String) throws(JobsDBError) -> [(
    line: String, part: String, run: String, printerJob: Int?
  )] {
    var claims: [(String, String, String, Int?)] = []
    for row in try query(
      """
      SELECT line_key, part, owner, printer_job FROM print_claims WHERE job_id = $1
      ORDER BY claimed_at, line_key, part
      """, [id]
    ).rows {
      claims.append(
        (
          row.string("line_key") ?? "", row.string("part") ?? "", row.string("owner") ?? "",
          try row.int("printer_job")
        ))
    }
    return claims
  }

  /// Locks job `id`'s row (`FOR UPDATE`, until the transaction ends) while it runs under
  /// `owner`'s lease, unexpired by the database's clock.
  ///
  /// - Throws: `JobsDBError.leaseLost` when it does not; `.unreachable`, `.query`.
  private func lockLease(job id: String, owner: String) throws(JobsDBError) {
    let held = try query(
      """
      SELECT id FROM jobs
      WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND lease_until >= now()
      FOR UPDATE
      """, [id, owner])
    guard !held.rows.isEmpty else { throw .leaseLost(job: id, owner: owner) }
  }
}
