// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: a request as the routes see it and the response they make: Swift values,
// nothing of the transport.

import Foundation
import ImprintCore
import Synchronization

/// One HTTP request, read whole: its method, path, query parameters, content type and body.
package struct HTTPRequest: Sendable {
  /// `GET`, `POST`, ...
  package var method: String
  /// The path without the query (`/v1/qr`).
  package var path: String
  /// The query parameters, decoded; a name given twice keeps its last value and is listed in
  /// `repeatedParameters`.
  package var query: [String: String]
  /// Query parameter names given more than once.
  package var repeatedParameters: [String]
  /// The `Content-Type` header's media type, lowercased, without parameters (`application/json`).
  package var contentType: String?
  /// The `Content-Type` header's `charset` parameter, lowercased, if any.
  package var charset: String? = nil
  /// The body's bytes (empty for a multipart body: see `parts`).
  package var body: [UInt8]
  /// The parts of a `multipart/form-data` body, in the order sent; nil for other bodies.
  package var parts: [FormPart]? = nil
  /// The `Idempotency-Key` header as sent, if any (`IdempotencyKeys.key(of:)` reads it).
  package var idempotencyKey: String? = nil
  /// When its deadline passes (`--request-timeout` after its head arrived): its answer is then
  /// the deadline's, so work with effects past the answer (a job started) must not begin.
  package var deadline: ContinuousClock.Instant

  /// Whether the deadline passed.
  package var isPastDeadline: Bool { ContinuousClock.now >= deadline }
}

/// One HTTP response: status, media type, body and extra headers.
package struct HTTPResponse: Sendable {
  /// The status code.
  package var status: Int
  /// The `Content-Type` header.
  package var contentType: String
  /// The body's bytes (empty when `file` is the body).
  package var body: [UInt8]
  /// An open file sent as the body instead of `body`, read as it is sent.
  package var file: ResponseFile? = nil
  /// Further headers (`Allow`, `Retry-After`).
  package var headers: [(name: String, value: String)] = []
  /// The error's code, for an error answer (the access log and `/metrics` count it).
  package var errorCode: String?

  /// A response of `status` with `body` (or `file`) of `contentType`.
  package init(
    status: Int, contentType: String, body: [UInt8], file: ResponseFile? = nil,
    headers: [(name: String, value: String)] = [], errorCode: String? = nil
  ) {
    self.status = status
    self.contentType = contentType
    self.body = body
    self.file = file
    self.headers = headers
    self.errorCode = errorCode
  }

  /// The bytes of the body: `file`'s size (up to where it ended, when it was cut short), else
  /// `body`'s count.
  package var bodyBytes: Int { file?.bytesSent ?? body.count }

  /// A JSON document (sorted keys, as the CLI's `--json`).
  package static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
    HTTPResponse(
      status: status, contentType: "application/json",
      body: Array(JSONOutput.pretty(value).utf8))
  }

  /// Text in the Prometheus exposition format 0.0.4.
  package static func metrics(_ text: String) -> HTTPResponse {
    HTTPResponse(
      status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8))
  }

  /// The error document `{"error": {"code", "message", "hint"}, "schemaVersion": 1}` with
  /// `status`.
  package static func error(_ error: any Error, status: Int) -> HTTPResponse {
    struct Document: Encodable {
      var schemaVersion = 1
      var error: ErrorRecord
    }
    // Hints name what a client sends (`password`, `level=L`), not the command's options.
    let record = ErrorSurface.$current.withValue(.http) { ErrorRecord(error) }
    var response = json(Document(error: record), status: status)
    response.errorCode = record.code
    return response
  }

  /// The error document of a transport error, with its status and, for a busy or stopping
  /// server, `Retry-After`.
  package static func error(_ error: HTTPError) -> HTTPResponse {
    var response = Self.error(error as any Error, status: error.status)
    if let seconds = error.retryAfter { response.headers.append(("Retry-After", "\(seconds)")) }
    return response
  }
}

/// A regular file opened to be a response's body, read a block at a time as it is sent
/// (`read(at:into:maximum:)`, `pread`), so a large file costs no memory beyond one block.
///
/// A file that is found shorter than the size announced (it was truncated while it was sent) or
/// cannot be read ends the answer at once: the connection is closed (the client sees fewer
/// bytes than `Content-Length`), and `shortened` is told.
///
/// Owns one descriptor, closed when released (after the answer was sent).
package final class ResponseFile: Sendable {
  /// The file's size in bytes, from `fstat` when it was opened: the `Content-Length` sent.
  package let size: Int
  private let descriptor: Int32
  /// Where the file was found to end before `size`; -1 while it has not been.
  private let end = Atomic(-1)
  /// Told once, on the connection's thread, when the file ends before `size` or cannot be read:
  /// why, in words (`ended at byte N of the M announced ...`).
  private let shortened: @Sendable (String) -> Void

  /// What `read(at:into:maximum:)` answers when the answer must end with an error: the
  /// connection is closed.
  package static let endWithError = -2

  /// Opens regular file `relative` inside `folder` (`ConfinedPath.openFile`: no symbolic link
  /// followed at any component, never blocking on a FIFO or a device), refused when it has more
  /// than one name: a hard link planted there could name a file outside the folder.
  ///
  /// - Parameters:
  ///   - relative: the path inside `folder`.
  ///   - folder: the folder it is confined to.
  ///   - what: what it is, for errors.
  ///   - shortened: told when it is found shorter than its size while it is sent.
  /// - Throws: `ConfinedPath.openFile`'s `FileError`; `FileError.notRegularFile` (`.other`)
  ///   for a file with more than one name.
  package init(
    _ relative: String, in folder: String, what: String,
    shortened: @escaping @Sendable (String) -> Void = { _ in }
  ) throws(FileError) {
    let (fd, status) = try ConfinedPath.openFile(relative, in: folder, what: what)
    guard status.st_nlink == 1 else {
      close(fd)
      throw .notRegularFile(path: relative, kind: .other)
    }
    size = Int(status.st_size)
    descriptor = fd
    self.shortened = shortened
  }

  deinit { close(descriptor) }

  /// The whole file, at most `limit` bytes, read from its start.
  ///
  /// - Returns: its bytes.
  /// - Throws: `FileError.tooLarge` or `.unreadable`.
  package func read(limit: Int) throws(FileError) -> [UInt8] {
    try FileIO.read(descriptor: descriptor, size: size, path: "job output", limit: limit)
  }

  /// Whether the file ended before its size while it was sent (or could not be read).
  package var wasCut: Bool { end.load(ordering: .relaxed) >= 0 }

  /// The body's bytes sent: the size, or where the file was found to end.
  package var bytesSent: Int {
    let at = end.load(ordering: .relaxed)
    return at >= 0 ? at : size
  }

  /// Copies the file's bytes from `position`, at most `maximum` and never past `size`, into
  /// `buffer` (`pread`).
  ///
  /// - Returns: the bytes copied (more than 0), or `endWithError` when the file ends before
  ///   `size` or a read fails (`shortened` told, the first time).
  package func read(at position: UInt64, into buffer: UnsafeMutableRawPointer, maximum: Int) -> Int
  {
    guard position < UInt64(size), maximum > 0 else { return Self.endWithError }
    // Below `size`, an Int: no overflow from here.
    let offset = Int(position)
    let wanted = min(maximum, size - offset)
    var got: Int
    repeat {
      got = pread(descriptor, buffer, wanted, off_t(offset))
    } while got < 0 && errno == EINTR
    guard got <= 0 else { return got }
    let reason =
      got == 0
      ? "ended at byte \(offset) of the \(size) announced (it was made shorter while it was sent)"
      : "could not be read at byte \(offset) of \(size) (\(FileError.Reason.system(errno)))"
    if end.compareExchange(expected: -1, desired: offset, ordering: .relaxed).exchanged {
      shortened(reason)
    }
    return Self.endWithError
  }
}
