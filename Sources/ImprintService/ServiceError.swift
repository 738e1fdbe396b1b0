// SPDX-License-Identifier: Apache-2.0
// ImprintService: the errors of the HTTP layer (routes, methods, bodies, parameters) and the
// status code every error is answered with.

import Foundation
import ImprintCore

/// A request the service cannot take, or a server that cannot start.
public enum ServiceError: ImprintError, Equatable {
  /// No route has this path.
  case notFound(method: String, path: String)
  /// The route exists but not for this method.
  case methodNotAllowed(method: String, path: String, allowed: [String])
  /// The body is larger than the server's limit (`bytes`: its declared length, when declared).
  case bodyTooLarge(path: String, bytes: Int?, limit: Int)
  /// A JSON body or part over the JSON limit (its decoding costs many times its size).
  case jsonTooLarge(path: String, bytes: Int?, limit: Int)
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
  /// A request path that, decoded, is not UTF-8 text or holds a NUL byte.
  case invalidPath(path: String, problem: String)
  /// A request whose body's length is given twice (`found`: the headers), which a proxy in
  /// front may read otherwise (request smuggling).
  case ambiguousFraming(path: String, found: String)
  /// A request whose message syntax is broken (RFC 9112): `problem` says how.
  case malformedRequest(problem: String)
  /// A request head longer than the limit, or with more header lines (431).
  case headTooLarge(limit: Int, fields: Int)
  /// A request head that took longer than the head timeout from its first byte (408).
  case headTimeout(seconds: Double)
  /// A request body that did not arrive within the request timeout, or stopped arriving for
  /// the connection timeout (408).
  case bodyTimeout(path: String, seconds: Double)
  /// An HTTP version other than 1.0 and 1.1 (505).
  case unsupportedVersion(found: String)
  /// A transfer coding other than chunked (501).
  case unsupportedTransferCoding(path: String, coding: String)
  /// An `Expect` other than `100-continue` (417).
  case expectationFailed(path: String, found: String)
  /// A `multipart/form-data` body that cannot be read (no boundary, a part without a name, a
  /// body that ends before its closing boundary).
  case malformedMultipart(path: String, problem: String)
  /// A multipart body with more parts than the limit.
  case tooManyParts(path: String, limit: Int)
  /// A multipart part larger than the limit.
  case partTooLarge(path: String, part: String, limit: Int)
  /// A part's name or file name (`what`) that is too long or holds control characters.
  case invalidPartName(path: String, name: String, what: String, limit: Int)
  /// A part sent in a transfer encoding other than binary, 8bit or 7bit (base64 ...).
  case unsupportedPartEncoding(path: String, part: String, encoding: String)
  /// A part whose name, a file path inside the job, names no file (`.`, `./`).
  case partNamesNoFile(path: String, name: String)
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
  /// The service is stopping: it takes no new long job.
  case stopping
  /// Job `id` was canceled (`DELETE /v1/jobs/ID`) after `ended` of its items ended; never an
  /// answer, a job's report gives it.
  case jobCanceled(id: String, ended: Int)
  /// Job `id` ran longer than the limit (`seconds`); never an answer.
  case jobTimeLimit(id: String, seconds: Double, ended: Int)
  /// Job `id`'s files grew past what the jobs' disk limit leaves it (`bytes` of `limit`,
  /// `held` by the other jobs queued or running); never an answer.
  case jobDiskLimit(id: String, bytes: Int, held: Int, limit: Int)
  /// Job `id` was canceled because the service stopped before it ended; never an answer.
  case jobInterrupted(id: String, ended: Int)
  /// Item `item` of job `id` was cut short (its document's worker killed) when the job was
  /// stopped for `reason`; `code` is the job's (`service.jobCanceled`, `.jobTimeLimit`,
  /// `.jobDiskLimit`, `.interrupted`). Never an answer: a job's results give it.
  case itemStopped(id: String, item: String, code: String, reason: String)
  /// Request `path` was still being worked when the server's stop ran out of drain time
  /// (`seconds`): its work was canceled (its document's worker killed) and it is answered 503.
  case stoppedWhileWorking(path: String, seconds: Double)
  /// The server's stop returned with work still stuck (`stuck`, `StopReport.stuck`) past the
  /// drain timeout (`seconds`) and its margin; never an answer (`imprint serve` reports it as
  /// it exits).
  case stopIncomplete(stuck: String, seconds: Double)
  /// Job `id` (`kind`) was still running when the server's stop ended (it had not ended within
  /// the drain timeout, `seconds`): recorded so, `failed`, before the process exits. `ended`: a
  /// batch's items that had ended; `sent` of `prepared`: a prepare job's documents the printer
  /// had accepted, of those it had prepared, and `sending` more it was sending. Never an answer.
  case jobLeftRunning(
    id: String, kind: String, seconds: Double, ended: Int, sent: Int, prepared: Int, sending: Int)
  /// Job `id` (`kind`) was `queued` or `running` (`was`) when the server's process ended
  /// without stopping it (killed, crashed, the machine went down), found so by the next start
  /// on the same jobs folder; `ended`: a batch's items that had ended. Never an answer.
  case jobLost(id: String, kind: String, was: String, ended: Int)
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
  /// Every worker is busy and the queue is full.
  case busy(queued: Int)
  /// A request whose body (`bytes` as declared; nil: a chunked body as it grew) does not fit
  /// in the bytes of bodies the server holds at once (`limit`), `held` being held.
  case bodiesBusy(path: String, bytes: Int?, held: Int, limit: Int)
  /// The request was not answered within the request timeout (`seconds`), counted from its
  /// head's arrival.
  case deadlineExceeded(path: String, seconds: Double)
  /// The address could not be listened on (`errno`: the failing call's).
  case listen(address: String, call: String, errno: Int32)
  /// `--listen` is not `ADDRESS:PORT`.
  case invalidAddress(String)
  /// The request lacks the bearer token, or carries another (`presented`: one was given).
  case unauthorized(path: String, presented: Bool)
  /// The token file's text is not a bearer token.
  case invalidToken(source: String, problem: String)
  /// A webhook secret file (`--webhook-secret-file`) others may read, or whose text is not a
  /// Standard Webhooks secret.
  case invalidWebhookSecret(source: String, problem: String)
  /// A configuration file's key is unknown, of the wrong type or out of range.
  case invalidSetting(file: String, key: String, problem: String)
  /// Another server holds the jobs folder `folder` (its lock file `.lock` is locked).
  case jobsFolderInUse(folder: String)

  public var code: String {
    switch self {
    case .notFound: "http.notFound"
    case .methodNotAllowed: "http.methodNotAllowed"
    case .bodyTooLarge, .jsonTooLarge: "http.bodyTooLarge"
    case .unsupportedMediaType: "http.unsupportedMediaType"
    case .unsupportedCharset: "http.unsupportedCharset"
    case .invalidParameter, .unknownParameter: "http.invalidParameter"
    case .missingParameter: "http.missingParameter"
    case .invalidPath: "http.invalidPath"
    case .ambiguousFraming: "http.ambiguousFraming"
    case .malformedRequest: "http.malformedRequest"
    case .headTooLarge: "http.headTooLarge"
    case .headTimeout: "http.headTimeout"
    case .bodyTimeout: "http.requestTimeout"
    case .unsupportedVersion: "http.unsupportedVersion"
    case .unsupportedTransferCoding: "http.unsupportedTransferCoding"
    case .expectationFailed: "http.expectationFailed"
    case .malformedMultipart: "http.malformedMultipart"
    case .tooManyParts: "http.tooManyParts"
    case .partTooLarge: "http.partTooLarge"
    case .invalidPartName, .partNamesNoFile: "http.invalidPartName"
    case .unsupportedPartEncoding: "http.unsupportedPartEncoding"
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
    // A new job refused and a request cut short: either way, the server is stopping.
    case .stopping, .stoppedWhileWorking: "http.stopping"
    case .jobCanceled: "service.jobCanceled"
    case .jobTimeLimit: "service.jobTimeLimit"
    case .jobDiskLimit: "service.jobDiskLimit"
    case .jobInterrupted, .jobLost, .jobLeftRunning: "service.interrupted"
    case .stopIncomplete: "service.stopIncomplete"
    case .itemStopped(_, _, let code, _): code
    case .printerNotAllowed: "http.printerNotAllowed"
    case .callbackRefused: "http.callbackRefused"
    case .unknownPrinter: "http.unknownPrinter"
    case .printerAddressRefused: "http.printerAddressRefused"
    case .invalidIdempotencyKey: "http.invalidIdempotencyKey"
    case .idempotencyKeyReused: "http.idempotencyKeyReused"
    case .idempotencyKeyInUse: "http.idempotencyKeyInUse"
    case .idempotentJobGone: "http.idempotentJobGone"
    case .busy: "http.busy"
    case .bodiesBusy: "http.bodiesBusy"
    case .deadlineExceeded: "http.deadlineExceeded"
    case .listen: "service.listen"
    case .invalidAddress: "service.invalidAddress"
    case .unauthorized: "http.unauthorized"
    case .invalidToken: "service.invalidToken"
    case .invalidWebhookSecret: "service.invalidWebhookSecret"
    case .invalidSetting: "service.invalidSetting"
    case .jobsFolderInUse: "service.jobsFolderInUse"
    }
  }

  public var message: String {
    switch self {
    case .notFound(let method, let path):
      "no route for \(method) '\(SafeText.excerpt(path, limit: 200))'"
    case .methodNotAllowed(let method, let path, let allowed):
      "'\(path)' does not take \(SafeText.excerpt(method, limit: 20)); it takes "
        + allowed.joined(separator: ", ")
    case .bodyTooLarge(let path, let bytes, let limit):
      "the body of '\(path)' is "
        + (bytes.map { "\($0) bytes; the limit is \(limit)" } ?? "over the limit of \(limit) bytes")
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
    case .invalidPath(let path, let problem):
      "the path '\(SafeText.excerpt(path, limit: 200))' \(problem)"
    case .ambiguousFraming(let path, let found):
      "the request to '\(SafeText.excerpt(path, limit: 200))' gives its body's length twice "
        + "(\(found)); expected one Content-Length, or Transfer-Encoding: chunked alone"
    case .jsonTooLarge(let path, let bytes, let limit):
      "the JSON sent to '\(SafeText.excerpt(path, limit: 200))' is "
        + (bytes.map { "\($0) bytes; JSON is taken up to \(limit) bytes" }
          ?? "over the limit of \(limit) bytes for JSON")
    case .malformedRequest(let problem):
      "the request cannot be read as HTTP/1.1: \(problem)"
    case .headTooLarge(let limit, let fields):
      "the request's head is over the limit of \(limit) bytes or \(fields) header lines"
    case .headTimeout(let seconds):
      "the request's head did not arrive whole within \(ServiceMetrics.number(seconds)) s of its first byte"
    case .bodyTimeout(let path, let seconds):
      "the body of '\(SafeText.excerpt(path, limit: 200))' did not arrive within "
        + ServiceMetrics.number(seconds) + " s"
    case .unsupportedVersion(let found):
      "the request is \(SafeText.excerpt(found, limit: 20)); this server speaks HTTP/1.1 and HTTP/1.0"
    case .unsupportedTransferCoding(let path, let coding):
      "the body of '\(SafeText.excerpt(path, limit: 200))' is sent with Transfer-Encoding '\(coding)'; "
        + "expected chunked alone, or a Content-Length"
    case .expectationFailed(let path, let found):
      "the request to '\(SafeText.excerpt(path, limit: 200))' expects '\(found)'; only 100-continue is met"
    case .malformedMultipart(let path, let problem):
      "the multipart body of '\(path)' cannot be read: \(problem)"
    case .tooManyParts(let path, let limit):
      "the multipart body of '\(path)' has more than \(Formatting.count(limit, "part"))"
    case .partTooLarge(let path, let part, let limit):
      "part '\(SafeText.excerpt(part, limit: 100))' of '\(path)' is over the limit of \(limit) bytes"
    case .invalidPartName(let path, let name, let what, let limit):
      "a part of '\(path)' has the \(what) '\(SafeText.excerpt(name, limit: 100))'; expected at "
        + "most \(limit) bytes without control characters"
    case .partNamesNoFile(let path, let name):
      "a part of '\(path)' is named '\(SafeText.excerpt(name, limit: 100))', which names no file; "
        + "expected a file path inside the job, such as 'photos/a.jpg'"
    case .unsupportedPartEncoding(let path, let part, let encoding):
      "part '\(SafeText.excerpt(part, limit: 100))' of '\(path)' is sent as "
        + "'\(SafeText.excerpt(encoding, limit: 40))'; expected binary, 8bit or 7bit"
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
    case .stopping:
      "the server is stopping and takes no new job"
    case .jobCanceled(let id, let ended):
      "job '\(id)' was canceled after \(ended) of its items ended; the lines after them were not run"
    case .jobTimeLimit(let id, let seconds, let ended):
      "job '\(id)' ran longer than its limit of \(ServiceMetrics.number(seconds)) s and was "
        + "stopped after \(ended) of its items ended; the lines after them were not run"
    case .jobDiskLimit(let id, let bytes, let held, let limit):
      "job '\(id)' was stopped: its files reached \(bytes) bytes and the other jobs queued or "
        + "running hold \(held); all jobs together may hold \(limit)"
    case .jobInterrupted(let id, let ended):
      "job '\(id)' was canceled after \(ended) of its items ended: the server stopped"
    case .itemStopped(let id, let item, _, let reason):
      "job '\(id)', item '\(SafeText.excerpt(item, limit: 100))' was stopped part-way: "
        + reason
    case .stoppedWhileWorking(let path, let seconds):
      "'\(SafeText.excerpt(path, limit: 200))' was still being worked when the server stopped; "
        + "its work was canceled after the drain timeout of \(ServiceMetrics.number(seconds)) s"
    case .stopIncomplete(let stuck, let seconds):
      "the server stopped with work still stuck past the drain timeout of "
        + "\(ServiceMetrics.number(seconds)) s: \(SafeText.excerpt(stuck, limit: 2000))"
    case .jobLeftRunning(
      let id, let kind, let seconds, let ended, let sent, let prepared, let sending):
      "the server stopped while job '\(id)' was still running (it had not ended within the "
        + "drain timeout of \(ServiceMetrics.number(seconds)) s); "
        + (kind == "batch"
          ? "\(ended) of its items had ended"
          : "\(sent) of the \(prepared) documents it had prepared had been sent to the printer"
            + (sending > 0 ? ", \(sending) more was being sent" : ""))
    case .jobLost(let id, let kind, let was, let ended):
      "job '\(id)' was \(was) when the server stopped without ending it (killed, crashed or "
        + "its machine went down); "
        + (kind == "batch"
          ? "\(ended) of its items had ended" : "the files it had prepared are kept")
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
    case .busy(let queued):
      "every worker is busy and the queue is full (\(Formatting.count(queued, "request")) "
        + "waiting)"
    case .bodiesBusy(let path, let bytes, let held, let limit):
      "the body of '\(SafeText.excerpt(path, limit: 200))' ("
        + (bytes.map { "\($0) bytes" } ?? "chunked, as it grew")
        + ") does not fit beside the bodies being received: \(held) bytes are held and the "
        + "server holds at most \(limit) at once"
    case .deadlineExceeded(let path, let seconds):
      "'\(SafeText.excerpt(path, limit: 200))' was not answered within the request timeout of "
        + "\(ServiceMetrics.number(seconds)) s"
    case .listen(let address, let call, let errno):
      "cannot listen on \(address): \(call) failed (\(String(cString: strerror(errno))))"
    case .invalidAddress(let text):
      "'\(SafeText.excerpt(text, limit: 100))' is not an address to listen on; expected "
        + "IPV4-ADDRESS:PORT such as 127.0.0.1:8080"
    case .unauthorized(let path, let presented):
      "'\(SafeText.excerpt(path, limit: 200))' needs the server's bearer token; the request "
        + (presented ? "carries another" : "carries none")
    case .invalidToken(let source, let problem):
      "the token file '\(source)' \(problem)"
    case .invalidWebhookSecret(let source, let problem):
      "the webhook secret file '\(source)' \(problem)"
    case .invalidSetting(let file, let key, let problem):
      "configuration '\(file)': '\(key)' \(problem)"
    case .jobsFolderInUse(let folder):
      "jobs folder '\(folder)' is in use by another server ('\(folder)/.lock' is locked)"
    }
  }

  public var hint: String? {
    switch self {
    case .notFound:
      "the routes are " + ImprintService.routes.keys.sorted().joined(separator: ", ")
        + "; GET /openapi.json describes them"
    case .bodyTooLarge: "send a smaller file, or start the server with a larger --max-body"
    case .jsonTooLarge:
      "JSON carries options and profiles, a few KiB: send files as multipart parts of their own"
    case .malformedRequest:
      "send one request line, CRLF-ended header lines 'Name: value' (Host once), and a body "
        + "framed by one Content-Length or by Transfer-Encoding: chunked"
    case .headTooLarge: "send a shorter target and fewer or shorter headers"
    case .headTimeout, .bodyTimeout: "send the request whole without pausing"
    case .unsupportedVersion: "send HTTP/1.1"
    case .unsupportedTransferCoding: "send the body with Content-Length, or chunked alone"
    case .expectationFailed: "leave the Expect header out"
    case .unsupportedMediaType(_, _, let expected): "send Content-Type: \(expected[0])"
    case .unknownParameter(_, let known):
      known.isEmpty
        ? "the route takes no parameter"
        : "the route's parameters are " + known.joined(separator: ", ")
    case .unsupportedCharset:
      "send the JSON encoded as UTF-8, with Content-Type: application/json (charset=utf-8, or none)"
    case .malformedMultipart:
      "send Content-Type: multipart/form-data; boundary=... and parts as curl -F makes them"
    case .tooManyParts: "send the files in several requests"
    case .partTooLarge: "send a smaller file, or start the server with a larger --max-part"
    case .unsupportedPartEncoding: "send the part's bytes as they are (binary)"
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
    case .stopping, .stoppedWhileWorking:
      "retry after the time in Retry-After (another instance may take it)"
    case .jobTimeLimit:
      "send fewer lines in each job, or start the server with a larger --job-timeout"
    case .jobDiskLimit:
      "send fewer lines in each job, or start the server with a larger --jobs-disk"
    case .jobInterrupted: "send the job again"
    case .stopIncomplete:
      "work that cannot be canceled (a prepare job sending to or waiting for its printer, a "
        + "system call to a printer, a scheduler or a file system that does not answer) was "
        + "left behind: the process ended without it; check what it waits for"
    case .jobLost(_, let kind, _, _), .jobLeftRunning(_, let kind, _, _, _, _, _):
      kind == "prepare"
        ? "its print journal (print-journal.json in the job's folder under the server's "
          + "--jobs-dir) and the printer's job list tell what was sent; check them before "
          + "sending the order again with a new Idempotency-Key"
        : "send the job again; its files list the outputs of the items that ended"
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
    case .busy: "retry after the time in Retry-After"
    case .bodiesBusy:
      "retry after the time in Retry-After, or start the server with a larger --body-memory"
    case .invalidPath:
      "percent-encode UTF-8 text (%C3%A9 for é); NUL (%00) is never taken"
    case .ambiguousFraming:
      "send Content-Length once, or Transfer-Encoding: chunked without it (RFC 9112, "
        + "section 6.3); the connection is closed"
    case .deadlineExceeded: "retry later, or start the server with a larger --request-timeout"
    case .listen: "choose another port, or stop the program that holds this one"
    case .unauthorized: "send the header 'Authorization: Bearer <token>'"
    case .invalidToken:
      "put one token on one line, e.g. from 'openssl rand -hex 32', in a file others cannot "
        + "read (chmod 600 FILE)"
    case .invalidWebhookSecret:
      "put one secret on one line, e.g. from 'echo whsec_$(openssl rand -base64 32)', in a file "
        + "others cannot read (chmod 600 FILE)"
    case .invalidSetting: "the settings are the long options of imprint serve, in camelCase"
    case .jobsFolderInUse:
      "give each server its own --jobs-dir (one writer a folder), or stop the other one first"
    default: nil
    }
  }
}

/// The HTTP status an error is answered with.
enum ServiceStatus {
  /// 400 for a malformed request or body (not JSON, a multipart body that breaks its rules, a
  /// malformed `Idempotency-Key`), 401 without the bearer token, 404 for an unknown route,
  /// template, price list, printer, job or job file, 405, 409 for an `Idempotency-Key` whose
  /// first request is still being accepted, 410 for one whose job is no longer kept, 413 (a
  /// body or part over its limit, too many parts, a job's files over the jobs' limit, a
  /// manifest over the lines of a job), 415, 503 when busy, past the request timeout, stopping
  /// or the job queue is full, 507 when a job's files do not fit
  /// beside the running ones, 422 for input
  /// understood but refused (an invalid
  /// address, a damaged PDF, a profile without an account), 500 for the rest (errors that are
  /// not Imprint's, files the server could not write).
  static func of(_ error: any Error) -> Int {
    if let error = error as? ServiceError {
      switch error {
      case .notFound, .unknownPriceList, .unknownJob, .unknownJobFile, .unknownPrinter: return 404
      case .methodNotAllowed: return 405
      case .bodyTooLarge, .jsonTooLarge: return 413
      case .headTooLarge: return 431
      case .headTimeout, .bodyTimeout: return 408
      case .unsupportedVersion: return 505
      case .unsupportedTransferCoding: return 501
      case .expectationFailed: return 417
      case .unsupportedMediaType, .unsupportedCharset: return 415
      case .invalidParameter, .unknownParameter, .missingParameter, .invalidAddress,
        .malformedMultipart,
        .invalidPath, .ambiguousFraming, .malformedRequest,
        .invalidPartName, .partNamesNoFile, .unknownPart, .missingPart, .duplicatePart:
        return 400
      case .tooManyParts, .partTooLarge: return 413
      case .unsupportedPartEncoding: return 415
      case .unauthorized: return 401
      case .busy, .deadlineExceeded, .jobQueueFull, .bodiesBusy: return 503
      case .jobTooLarge: return 413
      case .jobStorageFull: return 507
      case .tooManyLines: return 413
      case .stopping, .stoppedWhileWorking: return 503
      case .printerNotAllowed, .callbackRefused, .printerAddressRefused, .idempotencyKeyReused,
        .emptyManifest:
        return 422
      case .invalidIdempotencyKey: return 400
      case .idempotencyKeyInUse: return 409
      case .idempotentJobGone: return 410
      // A job's report gives these; no request is answered with them.
      case .jobCanceled, .jobTimeLimit, .jobDiskLimit, .jobInterrupted, .itemStopped, .jobLost,
        .jobLeftRunning, .stopIncomplete:
        return 500
      case .listen, .invalidToken, .invalidWebhookSecret, .invalidSetting, .jobsFolderInUse:
        return 500
      }
    }
    if let error = error as? RecordedError { return error.status }
    guard let error = error as? any ImprintError else { return 500 }
    // A body that is not JSON at all (a profile's `profile.notJSON` included) is malformed.
    if error.code.hasPrefix("json.") || error.code.hasSuffix(".notJSON") { return 400 }
    if error.code == "template.notFound" { return 404 }
    // An order's file path that leads out of its folder is input refused; an inline photo over
    // the image limit, a body part too large.
    if error.code == "file.escapesFolder" { return 422 }
    if error.code == "file.tooLarge" { return 413 }
    if error.code.hasPrefix("file.") { return 500 }
    return 422
  }
}
