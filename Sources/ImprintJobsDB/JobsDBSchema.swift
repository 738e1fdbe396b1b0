// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: the jobs database's schema, in ordered migrations that a replica applies when it
// connects, exactly once however many replicas start at the same moment.

/// The tables of the jobs database, as numbered migrations, and how they are applied.
///
/// Each migration is a list of statements, run in order in one transaction with the rows of
/// `schema_migrations` that record it. A later change to the schema is a new migration at the
/// end of `migrations`, never an edit of one already released: databases migrated by it would
/// not see the edit.
public enum JobsDBSchema {
  /// One change to the schema.
  public struct Migration: Sendable {
    /// Its number: 1 for the first, each the one before plus 1.
    public let version: Int
    /// What it does, recorded with it.
    public let name: String
    /// Its statements, each run alone (`PQexecParams` takes one statement a call).
    public let statements: [String]
  }

  /// The advisory lock (`pg_advisory_xact_lock`) the migration holds.
  ///
  /// Its number is the bytes of `Imprint` and 1. Replicas starting at once wait for it in turn;
  /// the first applies what is missing, the others find it applied.
  static let lock = 0x496D_7072_696E_7401

  /// Every migration, oldest first.
  public static let migrations: [Migration] = [
    Migration(
      version: 1,
      name: "jobs, idempotency keys, webhook deliveries, print claims",
      statements: [
        // A job: its kind and state, its lease (the replica running it and until when, by the
        // database's clock), its bytes on the shared storage and its record (what the folder
        // store writes to job.json: summary, error, callback, webhook). `number` is the
        // acceptance order, the queue's.
        """
        CREATE TABLE jobs (
          id text PRIMARY KEY,
          number bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
          kind text NOT NULL,
          state text NOT NULL DEFAULT 'queued'
            CHECK (state IN ('queued', 'running', 'done', 'failed', 'canceled')),
          accepted_at timestamptz NOT NULL DEFAULT now(),
          started_at timestamptz,
          finished_at timestamptz,
          lease_owner text,
          lease_until timestamptz,
          attempts integer NOT NULL DEFAULT 0,
          cancel_requested boolean NOT NULL DEFAULT false,
          bytes bigint NOT NULL DEFAULT 0,
          record jsonb NOT NULL DEFAULT '{}',
          CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
        )
        """,
        // The queue in order, and the leases that may have expired.
        "CREATE INDEX jobs_waiting ON jobs (number) WHERE state IN ('queued', 'running')",
        "CREATE INDEX jobs_leases ON jobs (lease_until) WHERE state = 'running'",
        // An `Idempotency-Key` with its request's fingerprint and its job (NULL while the
        // request is being accepted); it outlives its job, whose retry is then answered 410.
        """
        CREATE TABLE idempotency_keys (
          key text PRIMARY KEY,
          fingerprint text NOT NULL,
          job_id text,
          claimed_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        // A job's webhook: one delivery a job, made by whichever replica holds its lease; it
        // outlives its job until delivered or given up.
        """
        CREATE TABLE webhook_deliveries (
          job_id text PRIMARY KEY,
          url text NOT NULL,
          body bytea NOT NULL,
          state text NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'delivered', 'failed')),
          attempts integer NOT NULL DEFAULT 0,
          next_attempt_at timestamptz NOT NULL DEFAULT now(),
          lease_owner text,
          lease_until timestamptz,
          last_status integer,
          last_error text,
          CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
        )
        """,
        "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) "
          + "WHERE state = 'pending'",
        // The print journal's claims: a part of an order's line (`PrintJournal.lineKey`),
        // claimed by a replica before it is sent, in the same transaction as its job's lease;
        // the printer's job and whether the whole document was accepted, once known.
        """
        CREATE TABLE print_claims (
          job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
          line_key text NOT NULL,
          part text NOT NULL CHECK (part IN ('whole', 'color', 'mono')),
          owner text NOT NULL,
          claimed_at timestamptz NOT NULL DEFAULT now(),
          printer text,
          printer_job integer,
          sent boolean NOT NULL DEFAULT false,
          entry jsonb,
          PRIMARY KEY (job_id, line_key, part)
        )
        """,
      ]),
    Migration(
      version: 2,
      name: "batch shards",
      statements: [
        // A batch of many items is run in shards (`imprint batch --shard I/N`), each claimed
        // by any replica under a lease of its own; the job's row then holds no lease: it is
        // `running` from its first shard's claim until the replica that ends its last shard
        // (and merges their results) or stops it ends it. 0: a job claimed whole.
        "ALTER TABLE jobs ADD COLUMN shards integer NOT NULL DEFAULT 0 CHECK (shards >= 0)",
        """
        CREATE TABLE job_shards (
          job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
          shard integer NOT NULL CHECK (shard >= 0),
          state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done')),
          lease_owner text,
          lease_until timestamptz,
          attempts integer NOT NULL DEFAULT 0,
          PRIMARY KEY (job_id, shard),
          CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
        )
        """,
        "CREATE INDEX job_shards_waiting ON job_shards (job_id, shard) WHERE state <> 'done'",
      ]),
  ]

  /// The newest schema version this imprint knows.
  public static var latest: Int { migrations.last?.version ?? 0 }

  /// Applies the migrations the database lacks, in one transaction holding the migration's
  /// advisory lock, and records each in `schema_migrations` (made when missing).
  ///
  /// - Parameters:
  ///   - url: the database's URL without its password, for errors.
  ///   - run: runs one statement with its parameters on the connection.
  /// - Returns: the versions applied, oldest first (empty when none was missing).
  /// - Throws: `JobsDBError.schemaTooNew` when the database records a version past `latest`
  ///   (nothing is changed); the errors of `run`. A failure rolls every change back.
  static func migrate(
    url: String,
    run: (String, [(any JobsDBParameter)?]) throws(JobsDBError) -> JobsDBResult
  ) throws(JobsDBError) -> [Int] {
    _ = try run("BEGIN", [])
    do throws(JobsDBError) {
      _ = try run("SELECT pg_advisory_xact_lock($1::bigint)", [lock])
      _ = try run(
        """
        CREATE TABLE IF NOT EXISTS schema_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )
        """, [])
      let recorded = try run("SELECT version FROM schema_migrations", [])
      var versions: Set<Int> = []
      for row in recorded.rows {
        if let version = try row.int("version") { versions.insert(version) }
      }
      if let newest = versions.max(), newest > latest {
        throw JobsDBError.schemaTooNew(url: url, found: newest, known: latest)
      }
      var applied: [Int] = []
      for migration in migrations where !versions.contains(migration.version) {
        for statement in migration.statements { _ = try run(statement, []) }
        _ = try run(
          "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
          [migration.version, migration.name])
        applied.append(migration.version)
      }
      _ = try run("COMMIT", [])
      return applied
    } catch {
      // The first error is the one to report; a rollback that fails too (the connection is
      // gone) ends the transaction as surely.
      _ = try? run("ROLLBACK", [])
      throw error
    }
  }
}
