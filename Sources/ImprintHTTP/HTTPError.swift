// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: the errors of the HTTP front end (framing, limits, bodies, the pool, the stop),
// each knowing the status it is answered with.

import Foundation
import ImprintCore

/// A request the HTTP front end refuses before, or instead of, its route's work.
public enum HTTPError: ImprintError, Equatable {
  /// A body larger than the limit (`bytes` nil: a chunked body, known only as it arrived).
  case bodyTooLarge(path: String, bytes: Int?, limit: Int)
  /// A JSON body or part over the JSON limit (its decoding costs many times its size).
  case jsonTooLarge(path: String, bytes: Int?, limit: Int)
  /// A body that does not fit in the body budget beside those held.
  case bodiesBusy(path: String, bytes: Int?, held: Int, limit: Int)
  /// A body whose length is given twice, or both by Content-Length and Transfer-Encoding.
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
  /// A path that is not UTF-8 text without NUL.
  case invalidPath(path: String, problem: String)
  /// A `multipart/form-data` body that cannot be read (no boundary, a part without a name, a
  /// body that ends before its closing boundary).
  case malformedMultipart(path: String, problem: String)
  /// A multipart body with more parts than the limit.
  case tooManyParts(path: String, limit: Int)
  /// A multipart part larger than the limit.
  case partTooLarge(path: String, part: String, limit: Int)
  /// A part's name or file name (`what`) that is too long or holds control characters.
  case invalidPartName(path: String, name: String, what: String, limit: Int)
  /// A part whose name, a file path inside the job, names no file (`.`, `./`).
  case partNamesNoFile(path: String, name: String)
  /// A part sent with a `Content-Transfer-Encoding` other than binary, 8bit or 7bit.
  case unsupportedPartEncoding(path: String, part: String, encoding: String)
  /// Every worker is busy and the queue is full.
  case busy(queued: Int)
  /// The request's deadline passed before its answer was made.
  case deadlineExceeded(path: String, seconds: Double)
  /// The server is stopping: the request came after the stop began.
  case stopping
  /// The server stopped while the request was worked; its work was canceled.
  case stoppedWhileWorking(path: String, seconds: Double)
  /// A listening address that is not `ADDRESS:PORT` with an IPv4 address.
  case invalidAddress(String)
  /// The listening socket could not be made (`call` failed with `errno`).
  case listen(address: String, call: String, errno: Int32)

  public var code: String {
    switch self {
    case .bodyTooLarge, .jsonTooLarge: "http.bodyTooLarge"
    case .bodiesBusy: "http.bodiesBusy"
    case .ambiguousFraming: "http.ambiguousFraming"
    case .malformedRequest: "http.malformedRequest"
    case .headTooLarge: "http.headTooLarge"
    case .headTimeout: "http.headTimeout"
    case .bodyTimeout: "http.requestTimeout"
    case .unsupportedVersion: "http.unsupportedVersion"
    case .unsupportedTransferCoding: "http.unsupportedTransferCoding"
    case .expectationFailed: "http.expectationFailed"
    case .invalidPath: "http.invalidPath"
    case .malformedMultipart: "http.malformedMultipart"
    case .tooManyParts: "http.tooManyParts"
    case .partTooLarge: "http.partTooLarge"
    case .invalidPartName, .partNamesNoFile: "http.invalidPartName"
    case .unsupportedPartEncoding: "http.unsupportedPartEncoding"
    case .busy: "http.busy"
    case .deadlineExceeded: "http.deadlineExceeded"
    case .stopping, .stoppedWhileWorking: "http.stopping"
    case .invalidAddress: "service.invalidAddress"
    case .listen: "service.listen"
    }
  }

  /// The status the error is answered with.
  public var status: Int {
    switch self {
    case .bodyTooLarge, .jsonTooLarge, .tooManyParts, .partTooLarge: 413
    case .bodiesBusy, .busy, .deadlineExceeded, .stopping, .stoppedWhileWorking: 503
    case .ambiguousFraming, .malformedRequest, .invalidPath, .malformedMultipart,
      .invalidPartName, .partNamesNoFile:
      400
    case .headTooLarge: 431
    case .headTimeout, .bodyTimeout: 408
    case .unsupportedVersion: 505
    case .unsupportedTransferCoding: 501
    case .expectationFailed: 417
    case .unsupportedPartEncoding: 415
    case .invalidAddress, .listen: 500
    }
  }

  /// Seconds a client should wait before trying again, for the errors of a busy or stopping
  /// server (`Retry-After`); nil for the others.
  public var retryAfter: Int? {
    switch self {
    case .busy, .bodiesBusy, .deadlineExceeded, .stopping, .stoppedWhileWorking: 1
    default: nil
    }
  }

  public var message: String {
    switch self {
    case .bodyTooLarge(let path, let bytes, let limit):
      "the body of '\(path)' is "
        + (bytes.map { "\($0) bytes; the limit is \(limit)" } ?? "over the limit of \(limit) bytes")
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
      "the request's head did not arrive whole within \(Formatting.number(seconds)) s of its first byte"
    case .bodyTimeout(let path, let seconds):
      "the body of '\(SafeText.excerpt(path, limit: 200))' did not arrive within "
        + Formatting.number(seconds) + " s"
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
    case .stopping:
      "the server is stopping and takes no new job"
    case .stoppedWhileWorking(let path, let seconds):
      "'\(SafeText.excerpt(path, limit: 200))' was still being worked when the server stopped; "
        + "its work was canceled after the drain timeout of \(Formatting.number(seconds)) s"
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
        + "\(Formatting.number(seconds)) s"
    case .listen(let address, let call, let errno):
      "cannot listen on \(address): \(call) failed (\(String(cString: strerror(errno))))"
    case .invalidAddress(let text):
      "'\(SafeText.excerpt(text, limit: 100))' is not an address to listen on; expected "
        + "IPV4-ADDRESS:PORT such as 127.0.0.1:8080"
    }
  }

  public var hint: String? {
    switch self {
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
    case .malformedMultipart:
      "send Content-Type: multipart/form-data; boundary=... and parts as curl -F makes them"
    case .tooManyParts: "send the files in several requests"
    case .partTooLarge: "send a smaller file, or start the server with a larger --max-part"
    case .unsupportedPartEncoding: "send the part's bytes as they are (binary)"
    case .stopping, .stoppedWhileWorking:
      "retry after the time in Retry-After (another instance may take it)"
    case .busy: "retry after the time in Retry-After"
    case .bodiesBusy:
      "retry after the time in Retry-After, or start the server with a larger --body-memory"
    case .invalidPath:
      "percent-encode UTF-8 text (%C3%A9 for é); NUL (%00) is never taken"
    case .ambiguousFraming:
      "send Content-Length once, or Transfer-Encoding: chunked without it (RFC 9112, "
        + "section 6.3); the connection is closed"
    case .deadlineExceeded: "retry later, or start the server with a larger --request-timeout"
    case .invalidPartName:
      "name parts and files with at most 255 bytes of text, without control characters"
    case .partNamesNoFile: "name each file part by its path inside the job, as the manifest does"
    case .listen: "choose another port, or stop the program that holds this one"
    case .invalidAddress: "give --listen as 127.0.0.1:8080, or 0.0.0.0:8080 for every address"
    }
  }
}
