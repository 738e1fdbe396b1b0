// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: one request as the server saw it end, for the access log and the metrics.

import Foundation
import ImprintCore

/// One request as the server saw it end: what the access log writes and the metrics count.
public struct CompletedRequest: Sendable, Encodable {
  /// When the request's head arrived (written as ISO 8601, UTC, milliseconds).
  public var time: Timestamp
  /// The request id: the client's `X-Request-Id` when it is a usable one, else made here.
  public var requestId: String
  /// `GET`, `POST`, ...
  public var method: String
  /// The path, without the query (which may carry a password).
  public var path: String
  /// The status answered; nil when the connection ended before an answer was queued.
  public var status: Int?
  /// The body's bytes received.
  public var bytesIn: Int
  /// The answer's body bytes.
  public var bytesOut: Int
  /// From the head's arrival to the end of the answer, in milliseconds (three decimals).
  public var durationMs: Double
  /// The error code of an error answer; `http.requestTimeout` for a body that did not
  /// arrive in time, `http.clientGone` for a request whose client left before its answer (work
  /// waiting for a worker never started, work under way was canceled); in both the connection
  /// closed without an answer.
  public var errorCode: String?

  /// `errorCode` of a request whose body did not arrive before its deadline.
  public static let requestTimeout = "http.requestTimeout"
  /// `errorCode` of a request whose client left before its answer was made.
  public static let clientGone = "http.clientGone"
  /// `errorCode` of a file answer cut short: the file ended before the size announced
  /// (truncated while it was sent) or could not be read, and the connection was closed.
  public static let fileShortened = "http.fileShortened"

  /// A record of each field.
  public init(
    time: Timestamp, requestId: String, method: String, path: String, status: Int?, bytesIn: Int,
    bytesOut: Int, durationMs: Double, errorCode: String?
  ) {
    self.time = time
    self.requestId = requestId
    self.method = method
    self.path = path
    self.status = status
    self.bytesIn = bytesIn
    self.bytesOut = bytesOut
    self.durationMs = durationMs
    self.errorCode = errorCode
  }

  /// The access log's line: this record as one line of JSON with sorted keys.
  public var logLine: String { JSONOutput.line(self) }
}
