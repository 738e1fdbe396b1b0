// SPDX-License-Identifier: Apache-2.0
// ImprintService: the errors of the routes and jobs (methods, parameters, parts, jobs, the
// start), the status every error is answered with, and the error document's headers. The
// transport's own errors are ImprintHTTP's `HTTPError`.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintJobsDB
import ImprintNetwork
import ImprintPrinting

/// A request the service cannot take: a route's errors, each with its HTTP status (`status`).
///
/// How a job ended is `JobError`; the server's own start and stop, `ServerError`.
public enum ServiceError: ImprintError, Equatable {

  /// No route has this path.
  case notFound(method: String, path: String)
  /// The route exists but not for this method.
  case methodNotAllowed(method: String, path: String, allowed: [String])
  /// The body's media type is not one the route reads.
  case unsupportedMediaType(path: String, found: String?, expected: [String])
  /// A JSON body whose `Content-Type` names a charset other than UTF-8 (`found`).
  case unsupportedCharset(path: String, found: String)
  /// A parameter (query or JSON body) that is malformed, of the wrong type or unknown.
  case invalidParameter(name: String, problem: String)
  /// A parameter (or a JSON body's key) the route does not read; `known` are those it reads.
  case unknownParameter(name: String, known: [String])
  /// A parameter the route needs is missing.
  case missingParameter(name: String, route: String)
  /// A part the route does not read (`expected`: the names it reads).
  case unknownPart(path: String, name: String, expected: [String])
  /// A part the route needs is missing.
  case missingPart(path: String, name: String)
  /// A part name given twice.
  case duplicatePart(path: String, name: String)
  /// No price list of this name was configured (`available`: the names that were).
  case unknownPriceList(name: String, available: [String])
  /// No job of this id is kept (never accepted, or removed: by DELETE, or as one of the oldest).
  case unknownJob(id: String)
  /// Job `id` has no output at `path`.
  case unknownJobFile(id: String, path: String)
  /// As many jobs as the limit are queued or running.
  case jobQueueFull(queued: Int)
  /// A job's files (`bytes`) are over the limit of all jobs' bytes on their own.
  case jobTooLarge(bytes: Int, limit: Int)
  /// A job's files (`bytes`) do not fit beside the jobs queued and running (`held`).
  case jobStorageFull(bytes: Int, held: Int, limit: Int)
  /// A manifest with more lines than a job may have (`lines`: those counted, up to one past the
  /// limit).
  case tooManyLines(lines: Int, limit: Int)
  /// A batch's manifest (the part whose file name is `part`) holds no job line.
  case emptyManifest(part: String)
  /// A manifest sent to the service names a printer (line `line`, job `id`).
  case printerNotAllowed(line: Int, id: String)
  /// A callback URL that is not http(s), does not resolve, or leads to a refused address.
  case callbackRefused(url: String, reason: String)
  /// No printer of this name was configured (`available`: the names that were).
  case unknownPrinter(name: String, available: [String])
  /// A request named a printer by an address (a URI, a host) rather than by a configured name.
  case printerAddressRefused(given: String, available: [String])
  /// An `Idempotency-Key` header that is not a key (`problem` says why).
  case invalidIdempotencyKey(problem: String)
  /// An `Idempotency-Key` already sent with another request, which made job `id`.
  case idempotencyKeyReused(key: String, id: String)
  /// An `Idempotency-Key` whose first request is still being accepted.
  case idempotencyKeyInUse(key: String)
  /// An `Idempotency-Key` whose job (`id`) is no longer kept: it is not made again.
  case idempotentJobGone(key: String, id: String)
  /// The request lacks the bearer token, or carries another (`presented`: one was given).
  case unauthorized(path: String, presented: Bool)

  public var code: String {
    switch self {
    case .notFound: "http.notFound"
    case .methodNotAllowed: "http.methodNotAllowed"
    case .unsupportedMediaType: "http.unsupportedMediaType"
    case .unsupportedCharset: "http.unsupportedCharset"
    case .invalidParameter, .unknownParameter: "http.invalidParameter"
    case .missingParameter: "http.missingParameter"
    case .unknownPart: "http.unknownPart"
    case .missingPart: "http.missingPart"
    case .duplicatePart: "http.duplicatePart"
    case .unknownPriceList: "http.unknownPriceList"
    case .unknownJob: "http.unknownJob"
    case .unknownJobFile: "http.unknownJobFile"
    case .jobQueueFull: "http.jobQueueFull"
    case .jobTooLarge: "http.jobTooLarge"
    case .jobStorageFull: "http.jobStorageFull"
    case .tooManyLines: "http.tooManyLines"
    case .emptyManifest: "http.emptyManifest"
    case .printerNotAllowed: "http.printerNotAllowed"
    case .callbackRefused: "http.callbackRefused"
    case .unknownPrinter: "http.unknownPrinter"
    case .printerAddressRefused: "http.printerAddressRefused"
    case .invalidIdempotencyKey: "http.invalidIdempotencyKey"
    case .idempotencyKeyReused: "http.idempotencyKeyReused"
    case .idempotencyKeyInUse: "http.idempotencyKeyInUse"
    case .idempotentJobGone: "http.idempotentJobGone"
    case .unauthorized: "http.unauthorized"
    }
  }

  public var message: String {
    switch self {
    case .notFound(let method, let path):
      "no route for \(method) '\(SafeText.excerpt(path, limit: 200))'"
    case .methodNotAllowed(let method, let path, let allowed):
      "'\(path)' does not take \(SafeText.excerpt(method, limit: 20)); it takes "
        + allowed.joined(separator: ", ")
    case .unsupportedMediaType(let path, let found, let expected):
      "'\(path)' reads " + Formatting.alternatives(expected) + "; "
        + (found.map { "the body is '\(SafeText.excerpt($0, limit: 100))'" }
          ?? "the request has no Content-Type")
    case .unsupportedCharset(let path, let found):
      "'\(path)' reads JSON in UTF-8; the body's Content-Type says charset '"
        + SafeText.excerpt(found, limit: 100) + "'"
    case .invalidParameter(let name, let problem):
      "parameter '\(SafeText.excerpt(name, limit: 100))' \(problem)"
    case .unknownParameter(let name, _):
      "parameter '\(SafeText.excerpt(name, limit: 100))' is not known"
    case .missingParameter(let name, let route):
      "'\(route)' needs the parameter '\(name)'"
    case .unknownPart(let path, let name, let expected):
      "'\(path)' reads no part named '\(SafeText.excerpt(name, limit: 100))'; it reads "
        + expected.joined(separator: ", ")
    case .missingPart(let path, let name):
      "'\(path)' needs the part '\(name)'"
    case .duplicatePart(let path, let name):
      "part '\(SafeText.excerpt(name, limit: 100))' of '\(path)' is given more than once"
    case .unknownPriceList(let name, let available):
      "no price list is named '\(SafeText.excerpt(name, limit: 100))'; "
        + (available.isEmpty
          ? "the server has none" : "the server has " + available.joined(separator: ", "))
    case .unknownJob(let id):
      "no job has the id '\(SafeText.excerpt(id, limit: 100))'"
    case .unknownJobFile(let id, let path):
      "job '\(id)' has no output '\(SafeText.excerpt(path, limit: 200))'"
    case .jobQueueFull(let queued):
      "the server holds \(Formatting.count(queued, "job")) queued or running, the most it takes"
    case .jobTooLarge(let bytes, let limit):
      "the job's files are \(bytes) bytes; all jobs together may hold \(limit)"
    case .jobStorageFull(let bytes, let held, let limit):
      "the job's files are \(bytes) bytes and the jobs queued or running hold \(held); all jobs "
        + "together may hold \(limit)"
    case .tooManyLines(let lines, let limit):
      "the manifest has "
        + (lines > limit
          ? "more than \(Formatting.count(limit, "line"))" : Formatting.count(lines, "line"))
        + "; a job may have \(limit)"
    case .emptyManifest(let part):
      "manifest '\(SafeText.excerpt(part, limit: 100))' holds no job line; expected at least one"
    case .printerNotAllowed(let line, let id):
      "manifest line \(line) (job '\(SafeText.excerpt(id, limit: 100))') names a printer; a "
        + "batch sent to the service prints nowhere"
    case .callbackRefused(let url, let reason):
      "callback '\(SafeText.excerpt(url, limit: 200))' is refused: \(reason)"
    case .unknownPrinter(let name, let available):
      "no printer is named '\(SafeText.excerpt(name, limit: 100))'; "
        + (available.isEmpty
          ? "the server has none" : "the server has " + available.joined(separator: ", "))
    case .printerAddressRefused(let given, let available):
      "printer '\(SafeText.excerpt(given, limit: 200))' is an address, not a name; the server "
        + "sends only to the printers of its configuration"
        + (available.isEmpty ? ", and has none" : " (" + available.joined(separator: ", ") + ")")
    case .invalidIdempotencyKey(let problem):
      "the Idempotency-Key header \(problem)"
    case .idempotencyKeyReused(let key, let id):
      "Idempotency-Key '\(SafeText.excerpt(key, limit: 100))' was sent with another request, "
        + "which made job '\(id)'; a retry must send the same parameters and parts"
    case .idempotencyKeyInUse(let key):
      "a request with Idempotency-Key '\(SafeText.excerpt(key, limit: 100))' is still being "
        + "accepted"
    case .idempotentJobGone(let key, let id):
      "Idempotency-Key '\(SafeText.excerpt(key, limit: 100))' made job '\(id)', which is no "
        + "longer kept; it is not made again"
    case .unauthorized(let path, let presented):
      "'\(SafeText.excerpt(path, limit: 200))' needs the server's bearer token; the request "
        + (presented ? "carries another" : "carries none")
    }
  }

  public var hint: String? {
    switch self {
    case .notFound:
      "the routes are " + ImprintService.routes.keys.sorted().joined(separator: ", ")
        + "; GET /openapi.json describes them"
    case .unsupportedMediaType(_, _, let expected): "send Content-Type: \(expected[0])"
    case .unknownParameter(_, let known):
      known.isEmpty
        ? "the route takes no parameter"
        : "the route's parameters are " + known.joined(separator: ", ")
    case .unsupportedCharset:
      "send the JSON encoded as UTF-8, with Content-Type: application/json (charset=utf-8, or none)"
    case .unknownPriceList:
      "price lists are named in the server's configuration file (--config, priceLists)"
    case .unknownJob:
      "the id is the one the route that accepted the job answered; finished jobs are kept until "
        + "removed, the oldest first past the server's jobsKept"
    case .unknownJobFile: "GET /v1/jobs/ID lists the job's files once it ended"
    case .jobQueueFull, .jobStorageFull: "retry after the time in Retry-After"
    case .jobTooLarge: "send fewer files in each job, or start the server with a larger --jobs-disk"
    case .tooManyLines:
      "send the lines in several jobs, or start the server with a larger --job-lines"
    case .emptyManifest:
      "send a manifest of JSON Lines, one job a line, or a CSV file with a header line and a "
        + "job a line"
    case .printerNotAllowed:
      "leave 'printer' out: POST /v1/prepare sends orders to a printer named in the server's "
        + "configuration"
    case .callbackRefused:
      "give an http or https URL of a public host (the server's --webhook-allow-private admits "
        + "private and loopback addresses)"
    case .unknownPrinter:
      "printers are named in the server's configuration file (--config, printers)"
    case .printerAddressRefused:
      "give the name of one of the server's printers; it never connects where a request says"
    case .invalidIdempotencyKey:
      "send a quoted string of 1 to 255 printable ASCII characters, such as a new UUID: "
        + "Idempotency-Key: \"8e03978e-40d5-43e8-bc93-6894a57f9324\""
    case .idempotencyKeyReused: "send a new key with a new request"
    case .idempotencyKeyInUse:
      "retry after the time in Retry-After, once the first request was answered"
    case .idempotentJobGone: "send a new key to make a new job"
    case .unauthorized: "send the header 'Authorization: Bearer <token>'"
    default: nil
    }
  }

  /// The HTTP status this error is answered with.
  public var status: Int {
    switch self {
    case .notFound, .unknownPriceList, .unknownJob, .unknownJobFile, .unknownPrinter: 404
    case .methodNotAllowed: 405
    case .unsupportedMediaType, .unsupportedCharset: 415
    case .invalidParameter, .unknownParameter, .missingParameter, .unknownPart, .missingPart,
      .duplicatePart, .invalidIdempotencyKey:
      400
    case .unauthorized: 401
    case .jobQueueFull: 503
    case .jobTooLarge, .tooManyLines: 413
    case .jobStorageFull: 507
    case .printerNotAllowed, .callbackRefused, .printerAddressRefused, .idempotencyKeyReused,
      .emptyManifest:
      422
    case .idempotencyKeyInUse: 409
    case .idempotentJobGone: 410
    }
  }
}

/// The HTTP status an error is answered with.
enum ServiceStatus {
  /// The error's own `status`; 500 for an error that is not Imprint's.
  ///
  /// `ImprintError.status` says what each means (400 malformed, 404 unknown, 413 too large, 422
  /// refused, 500 the server's fault, 503 unavailable now); `HTTPError` and `ServiceError` add
  /// the transport's and the routes' own (401, 405, 408, 409, 410, 415, 507...). docs/service.md
  /// lists every answer.
  static func of(_ error: any Error) -> Int {
    (error as? any ImprintError)?.status ?? 500
  }
}

extension HTTPResponse {
  /// The error document of any error a route throws, with its status (`ServiceStatus.of`) and
  /// the headers its kind asks for: `Allow` (405), `Retry-After` (a key in use, a full job
  /// queue or storage; the transport's own for a busy or stopping server), `WWW-Authenticate`
  /// (401).
  static func error(_ error: any Error) -> HTTPResponse {
    if let error = error as? HTTPError { return .error(error) }
    var response = Self.error(error, status: ServiceStatus.of(error))
    switch error as? ServiceError {
    case .methodNotAllowed(_, _, let allowed):
      response.headers.append(("Allow", allowed.joined(separator: ", ")))
    // The first request with the same Idempotency-Key is answered within its accepting: a
    // retry a second later gets its job.
    case .idempotencyKeyInUse: response.headers.append(("Retry-After", "1"))
    // A job ahead ends in seconds or minutes: a client polls no faster than that.
    case .jobQueueFull, .jobStorageFull: response.headers.append(("Retry-After", "10"))
    case .unauthorized(_, let presented):
      response.headers.append(
        (
          "WWW-Authenticate",
          "Bearer realm=\"imprint\"" + (presented ? ", error=\"invalid_token\"" : "")
        ))
    default: break
    }
    // The jobs database is away (restarting, or the network): a retry in a few seconds may
    // find it back.
    if case .unreachable = error as? JobsDBError { response.headers.append(("Retry-After", "5")) }
    return response
  }
}
