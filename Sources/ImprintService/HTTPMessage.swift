// SPDX-License-Identifier: Apache-2.0
// ImprintService: a request as the routes see it and the response they make: Swift values,
// no libmicrohttpd type.

import Foundation
import ImprintCore
import Synchronization

/// One HTTP request, read whole: its method, path, query parameters, content type and body.
struct HTTPRequest: Sendable {
  /// `GET`, `POST`, ...
  var method: String
  /// The path without the query (`/v1/qr`).
  var path: String
  /// The query parameters, decoded; a name given twice keeps its last value and is listed in
  /// `repeatedParameters`.
  var query: [String: String]
  /// Query parameter names given more than once.
  var repeatedParameters: [String]
  /// The `Content-Type` header's media type, lowercased, without parameters (`application/json`).
  var contentType: String?
  /// The body's bytes (empty for a multipart body: see `parts`).
  var body: [UInt8]
  /// The parts of a `multipart/form-data` body, in the order sent; nil for other bodies.
  var parts: [FormPart]? = nil
  /// The `Idempotency-Key` header as sent, if any (`IdempotencyKeys.key(of:)` reads it).
  var idempotencyKey: String? = nil
  /// When its deadline passes (`--request-timeout` after its head arrived): its answer is then
  /// the deadline's, so work with effects past the answer (a job started) must not begin.
  var deadline: ContinuousClock.Instant

  /// Whether the deadline passed.
  var isPastDeadline: Bool { ContinuousClock.now >= deadline }
}

/// One HTTP response: status, media type, body and extra headers.
struct HTTPResponse: Sendable {
  /// The status code.
  var status: Int
  /// The `Content-Type` header.
  var contentType: String
  /// The body's bytes (empty when `file` is the body).
  var body: [UInt8]
  /// An open file sent as the body instead of `body`, read by libmicrohttpd as it sends.
  var file: ResponseFile? = nil
  /// Further headers (`Allow`, `Retry-After`).
  var headers: [(name: String, value: String)] = []
  /// The error's code, for an error answer (the access log and `/metrics` count it).
  var errorCode: String?

  /// The bytes of the body: `file`'s size, else `body`'s count.
  var bodyBytes: Int { file?.size ?? body.count }

  /// A JSON document (sorted keys, as the CLI's `--json`).
  static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
    HTTPResponse(
      status: status, contentType: "application/json",
      body: Array(JSONOutput.pretty(value).utf8))
  }

  /// Text in the Prometheus exposition format 0.0.4.
  static func metrics(_ text: String) -> HTTPResponse {
    HTTPResponse(
      status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8))
  }

  /// The error document `{"error": {"code", "message", "hint"}, "schemaVersion": 1}` with the
  /// error's status (`ServiceStatus.of`).
  static func error(_ error: any Error) -> HTTPResponse {
    struct Document: Encodable {
      var schemaVersion = 1
      var error: ErrorRecord
    }
    // Hints name what a client sends (`password`, `level=L`), not the command's options.
    let record = ErrorSurface.$current.withValue(.http) { ErrorRecord(error) }
    var response = json(Document(error: record), status: ServiceStatus.of(error))
    response.errorCode = record.code
    if case .methodNotAllowed(_, _, let allowed) = error as? ServiceError {
      response.headers.append(("Allow", allowed.joined(separator: ", ")))
    }
    switch error as? ServiceError {
    // The first request with the same Idempotency-Key is answered within its accepting:
    // a retry a second later gets its job.
    case .busy, .bodiesBusy, .stopping, .stoppedWhileWorking, .idempotencyKeyInUse:
      response.headers.append(("Retry-After", "1"))
    // A job ahead ends in seconds or minutes: a client polls no faster than that.
    case .jobQueueFull, .jobStorageFull: response.headers.append(("Retry-After", "10"))
    default: break
    }
    if case .unauthorized(_, let presented) = error as? ServiceError {
      response.headers.append(
        (
          "WWW-Authenticate",
          "Bearer realm=\"imprint\"" + (presented ? ", error=\"invalid_token\"" : "")
        ))
    }
    return response
  }
}

/// A regular file opened to be a response's body: libmicrohttpd reads it as it sends
/// (`MHD_create_response_from_fd64`), so a large file costs no memory.
///
/// Owns one descriptor until `take()` gives it to libmicrohttpd, which closes it with the
/// response; closed when released otherwise (a response never sent: the deadline's answer came
/// first).
final class ResponseFile: Sendable {
  /// The file's size in bytes, from `fstat` when it was opened.
  let size: Int
  private let descriptor: Mutex<Int32>

  /// Opens regular file `relative` inside `folder` (`ConfinedPath.openFile`: no symbolic link
  /// followed at any component, never blocking on a FIFO or a device), refused when it has more
  /// than one name: a hard link planted there could name a file outside the folder.
  ///
  /// - Throws: `ConfinedPath.openFile`'s `FileError`; `FileError.notRegularFile` (`.other`)
  ///   for a file with more than one name.
  init(_ relative: String, in folder: String, what: String) throws(FileError) {
    let (fd, status) = try ConfinedPath.openFile(relative, in: folder, what: what)
    guard status.st_nlink == 1 else {
      close(fd)
      throw .notRegularFile(path: relative, kind: .other)
    }
    size = Int(status.st_size)
    descriptor = Mutex(fd)
  }

  /// The whole file, at most `limit` bytes, read from the descriptor (not handed over).
  ///
  /// - Throws: `FileError.tooLarge` or `.unreadable`.
  func read(limit: Int) throws(FileError) -> [UInt8] {
    let fd = descriptor.withLock { $0 }
    return try FileIO.read(descriptor: fd, size: size, path: "job output", limit: limit)
  }

  /// The descriptor, handed over once (nil after): its new owner closes it.
  func take() -> Int32? {
    let fd = descriptor.withLock { fd -> Int32 in
      defer { fd = -1 }
      return fd
    }
    return fd >= 0 ? fd : nil
  }

  deinit {
    let fd = descriptor.withLock { $0 }
    if fd >= 0 { close(fd) }
  }
}
