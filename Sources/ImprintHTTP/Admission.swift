// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: the checks a request's head passes before any of its body is read, as one
// ordered list (RFC 9110's order of concerns: who may ask, what is asked, how much it sends).

import Foundation
import ImprintCore

/// A request whose head was read whole, as the admission checks see it, and what the checks
/// that admitted it took for it.
struct HeadCandidate {
  let method: String
  /// The percent-decoded path, as text.
  let path: String
  /// The path as sent, and what is wrong with its decoded bytes (not text, a NUL), if anything.
  let rawPath: [UInt8]
  let pathProblem: String?
  let authorization: String?
  /// The first query parameter that is not text, with what is wrong with it.
  let queryProblem: (name: String, problem: String)?
  /// `Content-Length`, when given.
  let declared: Int?
  /// Whether the body is JSON, which the route decodes whole.
  let isJSON: Bool
  /// The largest body taken (a JSON body's own limit, else the server's).
  let limit: Int
  /// The bytes of the body budget a byte of this body takes.
  let workFactor: Int
  /// The `Content-Type` media type and its whole value (for a multipart body's boundary).
  let mediaType: String?
  let contentType: String?

  /// The bytes of the body budget this request holds once admitted (`bodyBudget`).
  var reserved = 0
  /// The reader of a `multipart/form-data` body (`multipart`).
  var form: MultipartParser?
}

/// One check of a request's head before its body is read: nil to go on, or the answer that
/// refuses the request (its body then not read, the connection closed after the answer when a
/// body was announced).
struct AdmissionCheck: Sendable {
  /// What it checks, for a reader of the list and of traces.
  let name: String
  let check: @Sendable (HTTPServer, inout HeadCandidate) -> HTTPResponse?

  /// The checks in the order they run; the first refusal answers.
  ///
  /// Who asks and what is asked come before how much is sent: a client without the token
  /// learns nothing of the limits, and a request the server would refuse anyway takes nothing
  /// of the body budget. The budget is taken last but one, so that only an admitted body holds
  /// it; a multipart body without a boundary gives back what it took when its exchange ends.
  static let ordered: [AdmissionCheck] = [gate, path, bodyLimit, jsonLimit, bodyBudget, multipart]

  /// The server's own gate: the bearer token (401), the route and method, a query that is not
  /// text (400).
  static let gate = AdmissionCheck(name: "gate") { server, head in
    server.gate(head.method, head.path, head.authorization, head.queryProblem)
  }

  /// A path that is not text without NUL once percent-decoded (400).
  static let path = AdmissionCheck(name: "path") { _, head in
    head.pathProblem.map {
      .error(
        HTTPError.invalidPath(path: String(decoding: head.rawPath, as: UTF8.self), problem: $0))
    }
  }

  /// A declared body over the server's limit (413), refused before it is read: curl then sends
  /// none of it after `Expect: 100-continue`.
  static let bodyLimit = AdmissionCheck(name: "bodyLimit") { server, head in
    guard let declared = head.declared, declared > server.maximumBodyBytes else { return nil }
    return .error(
      HTTPError.bodyTooLarge(path: head.path, bytes: declared, limit: server.maximumBodyBytes))
  }

  /// A declared JSON body over the JSON limit (413).
  static let jsonLimit = AdmissionCheck(name: "jsonLimit") { server, head in
    guard head.isJSON, let declared = head.declared, declared > head.limit else {
      return nil
    }
    return .error(HTTPError.jsonTooLarge(path: head.path, bytes: declared, limit: head.limit))
  }

  /// A declared body takes its bytes of the budget before any is read (a JSON body the work
  /// of decoding it too); 503 when the bodies being received hold too much already.
  static let bodyBudget = AdmissionCheck(name: "bodyBudget") { server, head in
    guard let declared = head.declared, declared > 0 else { return nil }
    guard server.reserve(declared * head.workFactor) else {
      return .error(
        HTTPError.bodiesBusy(
          path: head.path, bytes: declared, held: server.bodyBytesHeld, limit: server.bodyBudget))
    }
    head.reserved = declared * head.workFactor
    return nil
  }

  /// A `multipart/form-data` body needs a usable boundary (400); its reader is made here.
  static let multipart = AdmissionCheck(name: "multipart") { server, head in
    guard head.mediaType == "multipart/form-data" else { return nil }
    guard let boundary = head.contentType.flatMap(HTTPMessageHeaders.boundary) else {
      return .error(
        HTTPError.malformedMultipart(
          path: head.path, problem: "its Content-Type gives no usable boundary"))
    }
    head.form = MultipartParser(boundary: boundary, path: head.path, limits: server.multipartLimits)
    return nil
  }
}
