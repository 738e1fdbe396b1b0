// SPDX-License-Identifier: Apache-2.0
// The HTTP front end's framing and header rules (RFC 9112, RFC 9110), over raw sockets against
// a service started in this process: every malformed or ambiguous request is answered 4xx/5xx
// and its connection closed, and the bytes after it are never served as another request.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintService
import ImprintTestSupport
import Testing

/// A request that, read leniently, would hide a second one: a DELETE of a job that does not
/// exist, which would be answered 404 if it ran.
private let hidden = "DELETE /v1/jobs/smuggled HTTP/1.1\r\nHost: a\r\n\r\n"

@Suite("HTTP framing: strict heads and bodies, one answer each", .onTestThreads)
struct HTTPFramingTests {
  /// Malformed shapes: each is answered with `status` and `code`, its connection closed, and
  /// nothing after it is answered.
  static let refused: [(name: String, request: String, status: Int, code: String)] = [
    (
      "a space before a header's colon",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Length : 47\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a space before an ordinary header's colon",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nUser-Agent : x\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a space before Host's colon", "GET /healthz HTTP/1.1\r\nHost : a\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a space before Content-Type's colon",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Type : application/json\r\n"
        + "Content-Length: 2\r\n\r\n{}" + hidden, 400, "http.malformedRequest"
    ),
    (
      "a tab before a header's colon",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Thing\t: 1\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a folded Transfer-Encoding line",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x,\r\n chunked\r\n\r\n0\r\n\r\n"
        + hidden, 400, "http.malformedRequest"
    ),
    (
      "a folded ordinary header",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Thing: a\r\n b\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a header line with an empty name",
      "GET /healthz HTTP/1.1\r\nHost: a\r\n: a\r\nX-After: b\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a chunk-size line ended by a bare LF",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n2\n{}\r\n0\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "chunk data not followed by CRLF",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a chunk extension ended by a bare LF",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;a=b\n{}\r\n0\r\n\r\n"
        + hidden, 400, "http.malformedRequest"
    ),
    (
      "a 40 KB chunk-size line of other characters",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        + String(repeating: "z", count: 40_000) + "\r\n" + hidden, 400, "http.malformedRequest"
    ),
    (
      "a chunk size past 64 bits",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "1FFFFFFFFFFFFFFFF\r\nx\r\n0\r\n\r\n" + hidden, 400, "http.malformedRequest"
    ),
    (
      "a space after the chunk size",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\n{}\r\n0\r\n\r\n"
        + hidden, 400, "http.malformedRequest"
    ),
    (
      "a Transfer-Encoding whose last coding is not chunked",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"
        + hidden,
      400, "http.malformedRequest"
    ),
    (
      "Transfer-Encoding gzip alone",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "Transfer-Encoding identity",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a quoted Transfer-Encoding",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n" + hidden,
      400, "http.malformedRequest"
    ),
    (
      "gzip before chunked (a coding the server does not decode)",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
        + hidden,
      501, "http.unsupportedTransferCoding"
    ),
    (
      "gzip and chunked on two lines",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "0\r\n\r\n" + hidden, 501, "http.unsupportedTransferCoding"
    ),
    (
      "Content-Length and Transfer-Encoding",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "0\r\n\r\n" + hidden, 400, "http.malformedRequest"
    ),
    (
      "Content-Length twice",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
        + hidden,
      400, "http.malformedRequest"
    ),
    (
      "a Content-Length list",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n\r\n{}" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a signed Content-Length",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Length: +2\r\n\r\n{}" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "Transfer-Encoding in HTTP/1.0",
      "POST /v1/qr HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "no Host in HTTP/1.1", "GET /healthz HTTP/1.1\r\n\r\n" + hidden, 400, "http.malformedRequest"
    ),
    (
      "two Hosts", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "two Authorization headers",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n"
        + hidden, 400, "http.malformedRequest"
    ),
    (
      "two Idempotency-Keys",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n\r\n"
        + hidden,
      400, "http.malformedRequest"
    ),
    (
      "a NUL in a header value",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\u{0}junk\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a control byte in a header value",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nIdempotency-Key: a\u{1}b\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "DEL in a header value",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Thing: a\u{7F}b\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a bare LF in the head", "GET /healthz HTTP/1.1\nHost: a\n\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a bare CR in the head", "GET /healthz HTTP/1.1\rHost: a\r\r" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "two spaces in the request line", "GET  /healthz HTTP/1.1\r\nHost: a\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a blank before the first header line", "GET /healthz HTTP/1.1\r\n Host: a\r\n\r\n" + hidden,
      400, "http.malformedRequest"
    ),
    (
      "a lowercase version", "GET /healthz http/1.1\r\nHost: a\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "HTTP/2.0 in a request line", "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n" + hidden, 505,
      "http.unsupportedVersion"
    ),
    (
      "CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "a target that is no path", "GET healthz HTTP/1.1\r\nHost: a\r\n\r\n" + hidden, 400,
      "http.malformedRequest"
    ),
    (
      "an Expect other than 100-continue",
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}" + hidden,
      417, "http.expectationFailed"
    ),
  ]

  @Test("each malformed or ambiguous request: one 4xx/5xx answer, the connection closed")
  func refusedShapes() async throws {
    let server = try InProcessService(settings: { $0.accessLog = true })
    for shape in Self.refused {
      let seen = try rawExchange(port: server.port, Array(shape.request.utf8), seconds: 10)
      #expect(seen.answers.count == 1, "\(shape.name): \(seen.answers.map(\.status))")
      #expect(seen.answers.first?.status == shape.status, "\(shape.name)")
      // llhttp refuses some shapes the server's own rules would also catch: either code is
      // the class's.
      let code = seen.answers.first?.errorCode
      #expect(
        code == shape.code
          || (shape.code == "http.malformedRequest" && code == "http.ambiguousFraming"),
        "\(shape.name): \(code ?? "none")")
      #expect(seen.answers.first?.header("Connection") == "close", "\(shape.name)")
      #expect(seen.closed, "\(shape.name): the connection stayed open")
    }
    // Every one of them reached the access log with its status; none of the hidden requests did.
    let log = server.accessLog
    #expect(log.count == Self.refused.count, "\(log)")
    #expect(!server.log.contains { $0.contains("smuggled") }, "\(server.log)")
    #expect(log.allSatisfy { $0.contains("\"status\":4") || $0.contains("\"status\":5") })
    await server.stop()
  }

  @Test("a head over 32 KiB or 100 header lines: 431, the connection closed")
  func headLimits() async throws {
    let server = try InProcessService()
    let long =
      "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Long: " + String(repeating: "a", count: 40_000)
      + "\r\n\r\n"
    let many =
      "GET /healthz HTTP/1.1\r\nHost: a\r\n"
      + (0..<101).map { "X-Field-\($0): 1\r\n" }.joined() + "\r\n"
    let longTarget =
      "GET /healthz?" + String(repeating: "a", count: 33_000) + " HTTP/1.1\r\nHost: a\r\n\r\n"
    for request in [long, many, longTarget] {
      let seen = try rawExchange(port: server.port, Array(request.utf8))
      #expect(seen.answers.map(\.status) == [431])
      #expect(seen.answers.first?.errorCode == "http.headTooLarge")
      #expect(seen.closed)
    }
    // Just under both limits: served.
    let fits =
      "GET /healthz HTTP/1.1\r\nHost: a\r\n" + (0..<98).map { "X-Field-\($0): 1\r\n" }.joined()
      + "X-Long: " + String(repeating: "a", count: 28_000) + "\r\n\r\n"
    #expect(try rawExchange(port: server.port, Array(fits.utf8)).answers.map(\.status) == [200])
    await server.stop()
  }

  @Test("well-formed shapes are served: pipelining, absolute form, HTTP/1.0, chunks, trailers")
  func servedShapes() async throws {
    let server = try InProcessService()
    let health = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
    // Three pipelined requests in one write: three answers, in order, the connection kept.
    let pipelined = try rawExchange(
      port: server.port, Array((health + health + health).utf8), answers: 3)
    #expect(pipelined.answers.map(\.status) == [200, 200, 200])
    #expect(!pipelined.closed)
    // Absolute form (RFC 9112, 3.2.2): the authority ignored, the path served.
    let absolute = try rawExchange(
      port: server.port,
      Array("GET http://elsewhere.example/healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    #expect(absolute.answers.map(\.status) == [200])
    // A blank line before a request is ignored (RFC 9112, 2.2).
    let blank = try rawExchange(port: server.port, Array(("\r\n" + health).utf8))
    #expect(blank.answers.map(\.status) == [200])
    // HTTP/1.0 without Host: served, then closed.
    let old = try rawExchange(port: server.port, Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
    #expect(old.answers.map(\.status) == [200])
    #expect(old.closed)
    // Bodies are worked in the pool, on threads of its own (`WorkPool`), not Swift's global
    // pool; the exchanges that block while they wait run on a thread of their own too
    // (`onOwnThread`), not on the suite's test threads.
    let port = server.port
    // A chunked JSON body with an extension and a trailer, then a second request: two answers.
    let qr =
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
      + "Transfer-Encoding: chunked\r\n\r\n"
      + "5;name=value\r\n{\"pay\r\nF\r\nload\": \"hello\"}\r\n0\r\nX-Trailer: 1\r\n\r\n" + health
    let chunked = try await onOwnThread {
      try rawExchange(port: port, Array(qr.utf8), answers: 2, seconds: 60)
    }
    #expect(chunked.answers.map(\.status) == [200, 200], "\(chunked.answers.map(\.text))")
    #expect(chunked.answers.first?.header("Content-Type") == "image/png")
    // Chunk sizes in hexadecimal, any case, with leading zeros.
    let hex =
      "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
      + "Transfer-Encoding: Chunked\r\n\r\n0000000A\r\n{\"payload\"\r\na\r\n: \"hello\"}\r\n0\r\n\r\n"
    let hexed = try await onOwnThread { try rawExchange(port: port, Array(hex.utf8)) }
    #expect(hexed.answers.map(\.status) == [200])
    // A method the parser does not know, on a route: the route's 405 and its methods, closed
    // (the rest of the message is not read); on no route, 404.
    for (target, status) in [("/healthz", 405), ("/v1/jobs/x", 405), ("/nowhere", 404)] {
      let query = try await onOwnThread {
        try rawExchange(
          port: port, Array("QUERY \(target) HTTP/1.1\r\nHost: a\r\n\r\n\(hidden)".utf8))
      }
      #expect(query.answers.map(\.status) == [status], "\(target)")
      #expect(query.closed, "\(target)")
    }
    let brew = try await onOwnThread {
      try rawExchange(port: port, Array("BREW /healthz HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
    }
    #expect(brew.answers.first?.header("Allow") == "GET, HEAD")
    // Expect: 100-continue: the interim answer, then the final one.
    let (interim, final) = try await onOwnThread {
      let connection = try RawHTTPConnection(port: port)
      connection.send(
        "POST /v1/qr HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
          + "Content-Length: 20\r\nExpect: 100-continue\r\n\r\n")
      let interim = connection.read(answers: 1, seconds: 2)
      connection.send("{\"payload\": \"hello\"}")
      return (interim, connection.read(answers: 1))
    }
    #expect(interim.answers.map(\.status) == [100])
    #expect(final.answers.map(\.status) == [200])
    await server.stop()
  }

  @Test("a head sent slowly past --head-timeout: 408, the connection closed")
  func slowHead() async throws {
    let server = try InProcessService(settings: { $0.headTimeout = 1 })
    let connection = try RawHTTPConnection(port: server.port)
    connection.send("GET /healthz HTTP/1.1\r\n")
    let started = Date()
    for byte in "Host: a".utf8 {
      connection.send([byte])
      usleep(300_000)
      if Date().timeIntervalSince(started) > 3 { break }
    }
    let seen = connection.read(seconds: 5)
    #expect(seen.answers.map(\.status) == [408])
    #expect(seen.answers.first?.errorCode == "http.headTimeout")
    #expect(seen.closed)
    await server.stop()
  }
}
