// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: the errors of the jobs database, each knowing the status the service answers it
// with. No message carries the password of the database's URL.

import ImprintCore

/// The jobs database could not be reached, refused a statement, or holds what this imprint
/// cannot read.
///
/// URLs in messages are shown without their password (`JobsDBURL.shown`), and libpq's own text
/// has the password taken out too (it quotes a malformed URL whole).
public enum JobsDBError: ImprintError, Equatable {
  /// The URL is not a PostgreSQL connection URL or `key=value` string libpq can read.
  case invalidURL(url: String, reason: String)
  /// No connection could be made to the database, or the connection was lost (the server
  /// stopped or restarted, the network broke).
  case unreachable(url: String, reason: String)
  /// The database refused a statement; `statement` is its SQL (never the parameters' values),
  /// `state` the server's SQLSTATE.
  case query(statement: String, state: String, reason: String)
  /// The database's schema was migrated by a newer imprint: version `found`, where this one
  /// knows up to `known`.
  case schemaTooNew(url: String, found: Int, known: Int)
  /// A column's value is not of the type it was read as.
  case value(column: String, text: String, expected: String)
  /// A statement's parameter (`$1` is `index` 1) cannot be sent: `problem` says why.
  case parameter(statement: String, index: Int, problem: String)
  /// An `Idempotency-Key` already sent with another request (another fingerprint), which made
  /// job `job`.
  case idempotencyKeyReused(key: String, job: String)
  /// An `Idempotency-Key` whose first request is still being accepted (no job yet).
  case idempotencyKeyInUse(key: String)
  /// An `Idempotency-Key` whose job (`job`) is no longer kept: it is not made again.
  case idempotentJobGone(key: String, job: String)
  /// No job `id` in the database.
  case jobNotFound(id: String)
  /// Job `job` is not leased to `owner` (any more): its lease expired and another replica
  /// took it over, or it ended, or it was never `owner`'s.
  case leaseLost(job: String, owner: String)

  public var code: String {
    switch self {
    case .invalidURL: "jobsdb.invalidURL"
    case .unreachable: "jobsdb.unreachable"
    case .query: "jobsdb.query"
    case .schemaTooNew: "jobsdb.schemaTooNew"
    case .value: "jobsdb.value"
    case .parameter: "jobsdb.parameter"
    case .idempotencyKeyReused: "jobsdb.idempotencyKeyReused"
    case .idempotencyKeyInUse: "jobsdb.idempotencyKeyInUse"
    case .idempotentJobGone: "jobsdb.idempotentJobGone"
    case .jobNotFound: "jobsdb.jobNotFound"
    case .leaseLost: "jobsdb.leaseLost"
    }
  }

  /// The server's SQLSTATE of a refused statement (`23505` a unique key taken, `40001` a
  /// serialization failure...), for callers that act on one; nil for the other cases.
  public var sqlState: String? {
    guard case .query(_, let state, _) = self else { return nil }
    return state
  }

  /// The status the error is answered with: 503 when the database cannot be reached (a retry
  /// may find it again); as `ServiceError`'s idempotency errors, 422 for a key reused with
  /// another request, 409 for one still being accepted, 410 for one whose job is gone; 404 for
  /// a job not there; 409 for a lease lost; 500 for the rest (the server's fault, not the
  /// request's).
  public var status: Int {
    switch self {
    case .unreachable: 503
    case .idempotencyKeyReused: 422
    case .idempotencyKeyInUse, .leaseLost: 409
    case .idempotentJobGone: 410
    case .jobNotFound: 404
    case .invalidURL, .query, .schemaTooNew, .value, .parameter: 500
    }
  }

  public var message: String {
    switch self {
    case .invalidURL(let url, let reason):
      "jobs database URL '\(url)' cannot be read (libpq: \(reason))"
    case .unreachable(let url, let reason):
      "jobs database '\(url)' cannot be reached (libpq: \(reason))"
    case .query(let statement, let state, let reason):
      "jobs database refused '\(statement)' with SQLSTATE \(state) (\(reason))"
    case .schemaTooNew(let url, let found, let known):
      "jobs database '\(url)' has schema version \(found); this imprint knows up to \(known)"
    case .value(let column, let text, let expected):
      "jobs database column '\(column)' holds '\(text)', expected \(expected)"
    case .parameter(let statement, let index, let problem):
      "parameter $\(index) of '\(statement)' \(problem)"
    case .idempotencyKeyReused(let key, let job):
      "Idempotency-Key '\(SafeText.excerpt(key, limit: 100))' was sent with another request, which made job '\(job)'"
    case .idempotencyKeyInUse(let key):
      "a request with Idempotency-Key '\(SafeText.excerpt(key, limit: 100))' is still being accepted"
    case .idempotentJobGone(let key, let job):
      "Idempotency-Key '\(SafeText.excerpt(key, limit: 100))' made job '\(job)', which is no longer kept"
    case .jobNotFound(let id):
      "jobs database has no job '\(id)'"
    case .leaseLost(let job, let owner):
      "job '\(job)' is not leased to '\(owner)'; another replica may have taken it over"
    }
  }

  public var hint: String? {
    switch self {
    case .invalidURL:
      "write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE or as key=value pairs"
    case .unreachable:
      "check that PostgreSQL runs and that the URL's host, port, user and database are right"
    case .query, .value, .parameter, .jobNotFound: nil
    case .schemaTooNew: "run the imprint that migrated it, or a newer one"
    case .idempotencyKeyReused: "send a new key with a new request"
    case .idempotencyKeyInUse: "retry in a moment"
    case .idempotentJobGone: "send a new key to make the job again"
    case .leaseLost: "stop working on the job: the replica that holds it now ends it"
    }
  }
}
