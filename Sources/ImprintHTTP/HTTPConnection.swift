// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: one connection of the HTTP server, on a thread of its own: its requests read
// with llhttp, checked (HTTPHead), worked (inline or in the pool) and answered in turn.

internal import CImprintHTTP
import Foundation
import ImprintCore

/// One request being read or worked: its head's reading, its body as it arrives.
private final class Exchange {
  package let method: String
  package let path: String
  package let query: [String: String]
  package let repeatedParameters: [String]
  package let contentType: String?
  package let charset: String?
  package let idempotencyKey: String?
  package let requestID: String
  /// When the head was read whole.
  package let started = ContinuousClock.now
  /// The same, as wall-clock time (the access log's `time`).
  package let startedAt = Date()
  package var body: [UInt8] = []
  /// The body's bytes received.
  package var bytesIn = 0
  /// The bytes of the server's body budget this request holds.
  package var reserved = 0
  /// The body went over the limit (a chunked upload): answered 413 once it is read.
  package var overLimit = false
  /// A chunked body outgrew what the budget had left: answered 503 once it is read.
  package var overBudget = false
  /// The reader of a `multipart/form-data` body; nil for other bodies.
  package var form: MultipartParser?
  /// The answer decided from the head (a refusal of a request without a body), or why the
  /// body is refused once it is read.
  package var answer: HTTPResponse?

  /// Whether the body is JSON, which the route decodes whole.
  package var isJSON: Bool {
    contentType == "application/json" || contentType?.hasSuffix("+json") == true
  }

  /// The bytes of the body budget a byte of this body takes.
  package var workFactor: Int { isJSON ? HTTPServer.jsonWorkFactor : 1 }

  /// The largest body taken.
  package func limit(_ server: HTTPServer) -> Int {
    isJSON ? min(HTTPServer.jsonByteLimit, server.maximumBodyBytes) : server.maximumBodyBytes
  }

  package init(
    method: String, path: String, query: QueryParameters, head: HTTPHead, requestID: String
  ) {
    self.method = method
    self.path = path
    self.query = query.values
    self.repeatedParameters = query.repeated
    // An empty `Content-Type:` declares no type: read as a request without the header.
    let type = head.value("content-type")
    contentType = type.map(HTTPMessageHeaders.mediaType).flatMap { $0.isEmpty ? nil : $0 }
    charset = type.flatMap(HTTPMessageHeaders.charset)
    idempotencyKey = head.value("idempotency-key")
    self.requestID = requestID
  }
}

/// The llhttp callbacks' way back to their connection (`llhttp_t.data`).
private func connection(of parser: UnsafeMutablePointer<llhttp_t>?) -> HTTPConnection {
  guard let data = parser?.pointee.data else {
    preconditionFailure("an llhttp callback without its connection")
  }
  return Unmanaged<HTTPConnection>.fromOpaque(data).takeUnretainedValue()
}

/// One accepted connection: reads requests, answers them in order, until either side closes,
/// it idles for the connection timeout, or a request asks for the close (or breaks the
/// protocol: then it is answered 4xx and closed).
///
/// Owns its llhttp parser and settings (allocated, freed at the end of `run`) and an eventfd
/// woken when a pooled request's answer is given; the socket is the server's, closed after
/// `run` returns.
///
/// `@unchecked Sendable`: made on the accepting thread and handed to its own thread before
/// `run`; only that thread touches it after (a pooled request's answer reaches it through
/// `Answer`, which is Sendable, and the eventfd).
package final class HTTPConnection: @unchecked Sendable {
  package let socket: Int32
  private let server: HTTPServer
  private let parser: UnsafeMutablePointer<llhttp_t>
  private let settings: UnsafeMutablePointer<llhttp_settings_t>
  private let wake: Int32
  private var buffer = [UInt8](repeating: 0, count: 64 << 10)
  /// Bytes received after a request's end, not yet parsed (a pipelined request).
  private var leftover: [UInt8] = []

  // The request being read.
  private var head = HTTPHead()
  /// The head's bytes as received (from its first byte; may run into the body).
  private var headBytes: [UInt8] = []
  private var field: [UInt8] = []
  private var value: [UInt8] = []
  private var readingValue = false
  private var headComplete = false
  /// When the head's first byte arrived.
  private var headStarted: ContinuousClock.Instant?
  private var exchange: Exchange?
  /// What a callback found wrong (llhttp's own errors come with its reason).
  private var problem: HTTPError?
  /// The head was refused with a body announced: the answer is sent and the connection closed.
  private var refusedAtHead: HTTPResponse?
  private var messageDone = false
  /// The chunk being read: bytes left of its data, and the two bytes after its data (which
  /// must be CRLF; llhttp 8 skips them unread).
  private var chunkLeft: UInt64 = 0
  private var afterChunk: [UInt8] = []
  private var checkingChunkEnd = false
  /// The bytes being parsed now (for `afterChunk`).
  private var span: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
  /// When the socket last received bytes.
  private var lastReceived = ContinuousClock.now

  package init(socket: Int32, server: HTTPServer) {
    self.socket = socket
    self.server = server
    parser = .allocate(capacity: 1)
    settings = .allocate(capacity: 1)
    wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
  }

  /// Serves the connection until it ends.
  package func run() {
    defer {
      parser.deallocate()
      settings.deallocate()
      if wake >= 0 { close(wake) }
    }
    guard wake >= 0 else { return }
    var timeout = timeval(tv_sec: server.connectionTimeout, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    llhttp_settings_init(settings)
    installCallbacks()
    llhttp_init(parser, HTTP_REQUEST, settings)
    parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    withExtendedLifetime(self) {
      while serveOne() {}
    }
  }

  // MARK: Reading

  /// Reads, works and answers one request.
  ///
  /// - Returns: whether the connection stays open for another.
  private func serveOne() -> Bool {
    resetRequest()
    while true {
      if !leftover.isEmpty {
        let bytes = leftover
        leftover = []
        if headStarted == nil { headStarted = .now }
        if let keep = bytes.withUnsafeBytes({ feed($0) }) { return keep }
        continue
      }
      switch receive() {
      case .bytes(let count):
        if headStarted == nil { headStarted = .now }
        lastReceived = .now
        let keep = buffer.withUnsafeBytes { feed(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        if let keep { return keep }
      case .closed:
        // The client closed: a request it had begun goes in the log without an answer.
        if let exchange {
          complete(exchange, response: nil, errorCode: CompletedRequest.clientGone)
        }
        return false
      case .timedOut:
        return timedOut()
      }
    }
  }

  private enum Received {
    case bytes(Int)
    case closed
    case timedOut
  }

  /// Waits for bytes until the next timeout: the idle timeout between requests; the head
  /// timeout from a head's first byte; the request's deadline while its body arrives (and the
  /// idle timeout since the last bytes).
  private func receive() -> Received {
    let now = ContinuousClock.now
    var until = lastReceived + .seconds(server.connectionTimeout)
    if exchange == nil, let headStarted {
      until = min(until, headStarted + .milliseconds(Int64(server.headTimeout * 1000)))
    }
    if let exchange {
      until = min(until, exchange.started + .milliseconds(Int64(server.requestTimeout * 1000)))
    }
    let left = now.duration(to: until).components
    let milliseconds = max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000)
    var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    let ready = poll(&fds, 1, Int32(clamping: milliseconds))
    if ready == 0 { return .timedOut }
    if ready < 0 { return errno == EINTR ? receive() : .closed }
    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    if count > 0 { return .bytes(count) }
    if count < 0 && (errno == EINTR || errno == EAGAIN) { return receive() }
    return .closed
  }

  /// A timeout passed while reading: an idle connection is closed; a head or body that did not
  /// arrive in time is answered 408 and its connection closed.
  private func timedOut() -> Bool {
    if let exchange {
      let seconds =
        ContinuousClock.now - exchange.started >= .milliseconds(Int64(server.requestTimeout * 1000))
        ? server.requestTimeout : Double(server.connectionTimeout)
      respond(
        .error(HTTPError.bodyTimeout(path: exchange.path, seconds: seconds)), to: exchange,
        close: true)
      return false
    }
    guard headStarted != nil else { return false }
    server.headCut()
    refuse(.headTimeout(seconds: server.headTimeout))
    return false
  }

  /// Parses `bytes` (llhttp_execute).
  ///
  /// - Returns: nil to read more; otherwise whether the connection stays open once the
  ///   request they ended was answered.
  private func feed(_ bytes: UnsafeRawBufferPointer) -> Bool? {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
    if !headComplete {
      headBytes.append(contentsOf: bytes.prefix(HTTPHead.byteLimit + 4 - headBytes.count))
    }
    // The bytes after a chunk's data that arrived in this span.
    if checkingChunkEnd && afterChunk.count < 2 {
      afterChunk.append(contentsOf: bytes.prefix(2 - afterChunk.count))
    }
    span = bytes
    let code = llhttp_execute(parser, base.assumingMemoryBound(to: CChar.self), bytes.count)
    span = UnsafeRawBufferPointer(start: nil, count: 0)
    if code == HPE_OK {
      if !headComplete && headBytes.count > HTTPHead.byteLimit {
        refuse(.headTooLarge(limit: HTTPHead.byteLimit, fields: HTTPHead.fieldLimit))
        return false
      }
      return nil
    }
    if code == HPE_PAUSED, let refusal = refusedAtHead {
      respond(refusal, to: exchange, close: true)
      return false
    }
    if code == HPE_PAUSED && messageDone {
      if let position = llhttp_get_error_pos(parser) {
        let at = UnsafeRawPointer(position) - base
        if at < bytes.count { leftover = Array(bytes[at...]) }
      }
      llhttp_resume(parser)
      return finishRequest()
    }
    // A method llhttp does not know (QUERY, BREW) on a well-formed request line: the router's
    // 405 naming the route's methods (404 for no route), then the connection closed, since the
    // rest of the message is not read.
    if code == HPE_INVALID_METHOD, problem == nil, let request = unknownMethodRequest() {
      let exchange = Exchange(
        method: request.method, path: request.path, query: QueryParameters([]), head: HTTPHead(),
        requestID: UUID().uuidString.lowercased())
      server.requestBegan()
      _ = work(request, for: exchange, close: true)
      return false
    }
    // A protocol error: llhttp's, or a callback's.
    let reason = llhttp_get_error_reason(parser).map { String(cString: $0) } ?? ""
    let error =
      problem
      ?? (code == HPE_UNEXPECTED_CONTENT_LENGTH
        // Content-Length twice, or with Transfer-Encoding: a proxy in front may frame it
        // otherwise (request smuggling).
        ? .ambiguousFraming(path: displayPath, found: framingFound())
        : .malformedRequest(
          problem: reason.isEmpty ? String(cString: llhttp_errno_name(code)) : reason))
    if let exchange {
      respond(.error(error), to: exchange, close: true)
    } else {
      refuse(error)
    }
    return false
  }

  /// The request of a head whose request line is `METHOD /path HTTP/1.x` with a method that is a
  /// token llhttp does not know, without its headers or body; nil for anything else.
  private func unknownMethodRequest() -> HTTPRequest? {
    let start = headBytes.firstIndex { $0 != 0x0D && $0 != 0x0A } ?? 0
    guard let end = headBytes[start...].firstIndex(of: 0x0D), end + 1 < headBytes.count,
      headBytes[end + 1] == 0x0A
    else { return nil }
    let parts = headBytes[start..<end].split(separator: 0x20, omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, parts[0].count <= 32,
      parts[0].allSatisfy(HTTPHead.isTokenCharacter),
      ["HTTP/1.1", "HTTP/1.0"].contains(String(decoding: parts[2], as: UTF8.self))
    else { return nil }
    var line = HTTPHead()
    line.target = Array(parts[1])
    guard let (path, _) = line.pathAndQuery() else { return nil }
    let decoded = RequestText.percentDecoded(path)
    guard RequestText.problem(decoded) == nil else { return nil }
    return HTTPRequest(
      method: String(decoding: parts[0], as: UTF8.self),
      path: String(decoding: decoded, as: UTF8.self),
      query: [:], repeatedParameters: [], contentType: nil, body: [],
      deadline: .now + .milliseconds(Int64(server.requestTimeout * 1000)))
  }

  /// The framing headers of a head llhttp refused as ambiguous, as the message shows them
  /// (`Content-Length: 5 and Transfer-Encoding: chunked`).
  private func framingFound() -> String {
    // From the head's bytes: llhttp stops at the second header, before its value.
    var lengths: [String] = []
    var coding: String?
    for line in headBytes.split(separator: 0x0A).dropFirst() {
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
      let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
      let value = String(decoding: line[(colon + 1)...], as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
      if name == "content-length" {
        lengths.append("Content-Length: \(SafeText.excerpt(value, limit: 20))")
      } else if name == "transfer-encoding" {
        coding = coding ?? value
      }
      if line.count <= 1 { break }
    }
    guard let coding else { return lengths.joined(separator: ", ") }
    return (lengths.first ?? "Content-Length") + " and Transfer-Encoding: "
      + SafeText.excerpt(coding, limit: 40)
  }

  /// Answers a request whose head could not be taken, and closes: logged with what is known of
  /// it.
  private func refuse(_ error: HTTPError) {
    let exchange = Exchange(
      method: head.method.isEmpty ? "-" : head.method,
      path: head.pathAndQuery().map { String(decoding: $0.path, as: UTF8.self) } ?? "-",
      query: QueryParameters([]), head: HTTPHead(), requestID: UUID().uuidString.lowercased())
    server.requestBegan()
    respond(.error(error), to: exchange, close: true)
  }

  private func resetRequest() {
    head = HTTPHead()
    headBytes = []
    field = []
    value = []
    readingValue = false
    headComplete = false
    headStarted = nil
    exchange = nil
    problem = nil
    refusedAtHead = nil
    messageDone = false
    chunkLeft = 0
    afterChunk = []
    checkingChunkEnd = false
  }

  // MARK: llhttp's callbacks

  private func installCallbacks() {
    settings.pointee.on_message_begin = { parser in
      let me = connection(of: parser)
      me.head = HTTPHead()
      return 0
    }
    settings.pointee.on_url = { parser, at, length in
      let me = connection(of: parser)
      me.head.target.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
      return 0
    }
    settings.pointee.on_header_field = { parser, at, length in
      let me = connection(of: parser)
      if me.readingValue { me.endField() }
      me.field.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
      return 0
    }
    settings.pointee.on_header_value = { parser, at, length in
      let me = connection(of: parser)
      me.readingValue = true
      me.value.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
      return 0
    }
    settings.pointee.on_header_value_complete = { parser in
      let me = connection(of: parser)
      me.readingValue = true
      me.endField()
      return me.head.fields.count > HTTPHead.fieldLimit
        ? me.fail(.headTooLarge(limit: HTTPHead.byteLimit, fields: HTTPHead.fieldLimit)) : 0
    }
    settings.pointee.on_headers_complete = { parser in
      connection(of: parser).headRead()
    }
    settings.pointee.on_body = { parser, at, length in
      connection(of: parser).bodyRead(UnsafeRawBufferPointer(start: at, count: length))
    }
    settings.pointee.on_chunk_header = { parser in
      let me = connection(of: parser)
      me.chunkLeft = parser?.pointee.content_length ?? 0
      return 0
    }
    settings.pointee.on_chunk_complete = { parser in
      let me = connection(of: parser)
      guard me.checkingChunkEnd else { return 0 }
      me.checkingChunkEnd = false
      defer { me.afterChunk = [] }
      guard me.afterChunk == [0x0D, 0x0A] else {
        return me.fail(.malformedRequest(problem: "a chunk's data is not followed by CRLF"))
      }
      return 0
    }
    settings.pointee.on_message_complete = { parser in
      let me = connection(of: parser)
      me.messageDone = true
      return Int32(HPE_PAUSED.rawValue)
    }
  }

  /// Stops the parser with `error` (llhttp_execute returns HPE_USER).
  private func fail(_ error: HTTPError) -> Int32 {
    problem = error
    return Int32(HPE_USER.rawValue)
  }

  private func endField() {
    head.fields.append((field, value))
    field = []
    value = []
    readingValue = false
  }

  /// The head was read whole (llhttp's on_headers_complete): checked, and either refused or
  /// taken, its body then read.
  ///
  /// - Returns: 0 to read the body; `HPE_PAUSED` when refused with a body announced (the
  ///   answer is sent and the connection closed); `HPE_USER` for a broken head.
  private func headRead() -> Int32 {
    headComplete = true
    head.method = String(
      cString: llhttp_method_name(llhttp_method_t(UInt32(parser.pointee.method))))
    head.major = Int(parser.pointee.http_major)
    head.minor = Int(parser.pointee.http_minor)
    // The head's own bytes: leading blank lines dropped (RFC 9112, 2.2), up to its blank line.
    let start = headBytes.firstIndex { $0 != 0x0D && $0 != 0x0A } ?? 0
    var end = Int.max
    var index = start
    while index + 3 < headBytes.count {
      if headBytes[index] == 0x0D && headBytes[index + 1] == 0x0A && headBytes[index + 2] == 0x0D
        && headBytes[index + 3] == 0x0A
      {
        end = index + 4
        break
      }
      index += 1
    }
    guard end - start <= HTTPHead.byteLimit else {
      return fail(.headTooLarge(limit: HTTPHead.byteLimit, fields: HTTPHead.fieldLimit))
    }
    head.raw = Array(headBytes[start..<end])
    if let found = head.problem() {
      switch found {
      case .malformed(let text): return fail(.malformedRequest(problem: text))
      case .unsupportedVersion(let version): return fail(.unsupportedVersion(found: version))
      case .unsupportedCoding(let coding):
        return fail(.unsupportedTransferCoding(path: displayPath, coding: coding))
      case .expectation(let text): return fail(.expectationFailed(path: displayPath, found: text))
      }
    }
    guard let (rawPath, rawQuery) = head.pathAndQuery() else {
      return fail(
        .malformedRequest(problem: "its target is not a path beginning with '/' nor an http URL"))
    }
    let decodedPath = RequestText.percentDecoded(rawPath)
    let path = String(decoding: decodedPath, as: UTF8.self)
    let query = QueryParameters(rawQuery)
    let requestID = head.value("x-request-id").flatMap(HTTPServer.usableRequestID)
    let exchange = Exchange(
      method: head.method, path: path, query: query, head: head,
      requestID: requestID ?? UUID().uuidString.lowercased())
    self.exchange = exchange
    server.requestBegan()
    let chunked = !head.values("transfer-encoding").isEmpty
    let declared = head.value("content-length").flatMap { Int($0) }
    let announced = chunked || (declared ?? 0) > 0
    // Refused from the head, before any of the body is read (`AdmissionCheck.ordered`); the
    // connection is closed after the answer when a body was announced, since it will not be
    // read.
    var candidate = HeadCandidate(
      method: head.method, path: path, rawPath: Array(rawPath),
      pathProblem: RequestText.problem(decodedPath), authorization: head.value("authorization"),
      queryProblem: query.problem, declared: declared, isJSON: exchange.isJSON,
      limit: exchange.limit(server), workFactor: exchange.workFactor,
      mediaType: exchange.contentType, contentType: head.value("content-type"))
    for admission in AdmissionCheck.ordered {
      let refusal = admission.check(server, &candidate)
      exchange.reserved = candidate.reserved
      if let refusal { return refuseHead(refusal, announced: announced) }
    }
    exchange.form = candidate.form
    if announced, head.minor == 1, head.value("expect")?.lowercased() == "100-continue" {
      let line = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
      _ = line.withUnsafeBytes { send(all: $0) }
    }
    return 0
  }

  /// The path as the client sent it, for messages of a head refused before it was decoded.
  private var displayPath: String {
    head.pathAndQuery().map { String(decoding: $0.path, as: UTF8.self) } ?? "-"
  }

  private func refuseHead(_ response: HTTPResponse, announced: Bool) -> Int32 {
    if announced {
      refusedAtHead = response
      return Int32(HPE_PAUSED.rawValue)
    }
    exchange?.answer = response
    return 0
  }

  /// A piece of the body (llhttp's on_body).
  private func bodyRead(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    guard let exchange else { return 0 }
    let count = bytes.count
    if parser.pointee.flags & UInt16(F_CHUNKED.rawValue) != 0 {
      chunkLeft -= UInt64(count)
      if chunkLeft == 0 {
        // The two bytes after the data, as far as this span holds them.
        checkingChunkEnd = true
        if let data = bytes.baseAddress, let start = span.baseAddress {
          let end = data + count - start
          afterChunk = Array(span[end..<min(span.count, end + 2)])
        }
      }
    }
    exchange.bytesIn += count
    guard exchange.answer == nil, !exchange.overLimit, !exchange.overBudget else { return 0 }
    // A chunked body takes the budget as it grows (a declared one took it whole).
    let growth = exchange.bytesIn * exchange.workFactor - exchange.reserved
    if exchange.bytesIn > exchange.limit(server) {
      exchange.overLimit = true
      drop(exchange)
    } else if growth > 0 && !server.reserve(growth) {
      exchange.overBudget = true
      drop(exchange)
    } else if growth > 0 {
      exchange.reserved += growth
    }
    guard !exchange.overLimit, !exchange.overBudget else { return 0 }
    if let form = exchange.form {
      if let problem = form.read(bytes) {
        exchange.answer = .error(problem)
        exchange.form = nil
      }
    } else {
      exchange.body.append(contentsOf: bytes)
    }
    return 0
  }

  /// Drops what a refused chunked body brought so far, and gives its bytes back to the budget
  /// at once (the rest of it is read and thrown away; the answer comes once it is all read).
  private func drop(_ exchange: Exchange) {
    exchange.body = []
    exchange.form = nil
    server.release(exchange.reserved)
    exchange.reserved = 0
  }

  // MARK: Working and answering

  /// The request was read whole: answered from what its reading found, inline, or by its work
  /// in the pool.
  ///
  /// - Returns: whether the connection stays open.
  private func finishRequest() -> Bool {
    guard let exchange else { return false }
    let keepAlive = llhttp_should_keep_alive(parser) != 0
    if exchange.overLimit {
      let limit = exchange.limit(server)
      return respond(
        .error(
          exchange.isJSON && limit < server.maximumBodyBytes
            ? HTTPError.jsonTooLarge(path: exchange.path, bytes: nil, limit: limit)
            : HTTPError.bodyTooLarge(path: exchange.path, bytes: nil, limit: limit)),
        to: exchange, close: true)
    }
    if exchange.overBudget {
      return respond(
        .error(
          HTTPError.bodiesBusy(
            path: exchange.path, bytes: nil, held: server.bodyBytesHeld,
            limit: server.bodyBudget)), to: exchange, close: true)
    }
    var parts: [FormPart]?
    if exchange.answer == nil, let form = exchange.form {
      exchange.form = nil
      switch form.finish() {
      case .success(let read): parts = read
      case .failure(let problem): exchange.answer = .error(problem)
      }
    }
    if let answer = exchange.answer { return respond(answer, to: exchange, close: !keepAlive) }
    let request = HTTPRequest(
      method: exchange.method, path: exchange.path, query: exchange.query,
      repeatedParameters: exchange.repeatedParameters, contentType: exchange.contentType,
      charset: exchange.charset, body: exchange.body, parts: parts,
      idempotencyKey: exchange.idempotencyKey,
      deadline: exchange.started + .milliseconds(Int64(server.requestTimeout * 1000)))
    exchange.body = []
    // Probes and scrapes are answered here, so that a full pool never fails them.
    return work(request, for: exchange, close: !keepAlive)
  }

  /// Answers `request`: inline when it is a probe, else by its work in the pool.
  ///
  /// - Returns: whether the connection stays open.
  private func work(_ request: HTTPRequest, for exchange: Exchange, close: Bool) -> Bool {
    if let response = server.inline(request) {
      return respond(response, to: exchange, close: close)
    }
    let answer = Answer(token: server.nextToken(), path: exchange.path, wake: wake) {
      [server] token in server.settled(token)
    }
    guard server.submit(request, answer: answer) else {
      return respond(.error(HTTPError.stopping), to: exchange, close: true)
    }
    switch waitFor(answer, deadline: request.deadline) {
    case .response(let response): return respond(response, to: exchange, close: close)
    case .abandoned:
      complete(exchange, response: nil, errorCode: CompletedRequest.clientGone)
      return false
    }
  }

  /// Waits for `answer`: given by its work or the stop, or by its deadline (the work canceled),
  /// or the request abandoned when its client leaves first (its work canceled).
  private func waitFor(_ answer: Answer, deadline: ContinuousClock.Instant) -> Answer.Outcome {
    var fds = [
      pollfd(fd: socket, events: CImprintHTTP_POLLRDHUP, revents: 0),
      pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      if let outcome = answer.outcome { return outcome }
      let left = ContinuousClock.now.duration(to: deadline).components
      let milliseconds = max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000)
      fds[0].revents = 0
      fds[1].revents = 0
      let ready = poll(&fds, 2, Int32(clamping: milliseconds))
      if ready < 0 && errno == EINTR { continue }
      if fds[1].revents != 0 {
        var value: UInt64 = 0
        _ = read(wake, &value, 8)
        continue
      }
      if fds[0].revents != 0 {
        // Its client left: its job leaves the queue, or its work under way is canceled.
        answer.clientLeft()
        if !server.pool.cancel(answer.token) { answer.cancelWork() }
        answer.abandon()
        // Stops watching the socket (still readable-hung-up) while the work ends.
        fds[0].events = 0
        continue
      }
      if ready == 0 {
        answer.give(
          .error(
            HTTPError.deadlineExceeded(path: answer.path, seconds: server.requestTimeout)))
        if !server.pool.cancel(answer.token) { answer.cancelWork() }
      }
    }
  }

  /// Sends `response` and logs the request.
  ///
  /// - Returns: whether the connection stays open (not `close`, not draining, and sent whole).
  @discardableResult
  private func respond(_ response: HTTPResponse, to exchange: Exchange?, close: Bool) -> Bool {
    let closing = close || server.isDraining
    var lines = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
    lines += "Date: \(Self.httpDate())\r\n"
    lines += "Server: \(HTTPServer.serverHeader)\r\n"
    if let exchange { lines += "X-Request-Id: \(exchange.requestID)\r\n" }
    lines += "Content-Type: \(response.contentType)\r\n"
    let length = response.file?.size ?? response.body.count
    lines += "Content-Length: \(length)\r\n"
    for header in response.headers { lines += "\(header.name): \(header.value)\r\n" }
    if closing { lines += "Connection: close\r\n" }
    lines += "\r\n"
    let isHead = exchange?.method == "HEAD"
    // The head and an in-memory body in one write: one segment for a small answer (a client
    // reading once gets all of it), one system call.
    var bytes = Array(lines.utf8)
    if !isHead && response.file == nil { bytes += response.body }
    var sent = bytes.withUnsafeBytes { send(all: $0) }
    if sent && !isHead, let file = response.file { sent = sendFile(file) }
    if let exchange {
      let errorCode =
        response.errorCode
        ?? (response.file?.wasCut == true ? CompletedRequest.fileShortened : nil)
      complete(exchange, response: isHead ? bodyless(response) : response, errorCode: errorCode)
    }
    if closing || !sent {
      lingeringClose()
      return false
    }
    return true
  }

  /// Ends the connection after an answer that closes it: the writing side is shut (the client
  /// reads the whole answer, then the end), and what the client still sends (a body not read)
  /// is read and dropped for up to two seconds, so that closing with unread bytes does not reset
  /// the connection before the client read the answer.
  private func lingeringClose() {
    shutdown(socket, Int32(SHUT_WR))
    let until = ContinuousClock.now + .seconds(2)
    var dropped = 0
    while dropped < 8 << 20 {
      let left = ContinuousClock.now.duration(to: until).components
      let milliseconds = left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000
      guard milliseconds > 0 else { return }
      var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      guard poll(&fds, 1, Int32(clamping: milliseconds)) > 0 else { return }
      let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return }
      dropped += count
    }
  }

  /// What a HEAD answer sent: its headers, no body.
  private func bodyless(_ response: HTTPResponse) -> HTTPResponse {
    var copy = response
    copy.body = []
    copy.file = nil
    return copy
  }

  /// Logs the request as it completed, and gives its body's bytes back to the budget.
  private func complete(_ exchange: Exchange, response: HTTPResponse?, errorCode: String?) {
    self.exchange = nil
    server.release(exchange.reserved)
    // After a large body, the heap's free pages go back to the system (glibc keeps them
    // otherwise: 220 MB held for good after two 20 MB JSON bodies). Not after every request:
    // the trim walks every arena.
    if exchange.bytesIn >= Self.trimAfter || exchange.reserved >= 8 * Self.trimAfter {
      _ = malloc_trim(0)
    }
    exchange.reserved = 0
    let elapsed = ContinuousClock.now - exchange.started
    let milliseconds =
      Double(elapsed.components.seconds) * 1000
      + Double(elapsed.components.attoseconds / 1_000_000_000) / 1_000_000
    server.observer(
      CompletedRequest(
        time: Timestamp(exchange.startedAt), requestId: exchange.requestID,
        method: exchange.method, path: exchange.path, status: response?.status,
        bytesIn: exchange.bytesIn, bytesOut: response?.bodyBytes ?? 0,
        durationMs: (milliseconds * 1000).rounded() / 1000, errorCode: errorCode))
    server.requestEnded()
  }

  /// The body size after which the heap is trimmed.
  package static let trimAfter = 1 << 20

  /// Writes all of `bytes` (`send`, blocking up to the connection timeout at a time).
  private func send(all bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var offset = 0
    while offset < bytes.count {
      let sent = Glibc.send(socket, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return false }
      offset += sent
    }
    return true
  }

  /// Sends `file` a block at a time; false when it ended early (it was cut while sent) or the
  /// client stopped reading.
  private func sendFile(_ file: ResponseFile) -> Bool {
    var position: UInt64 = 0
    while position < UInt64(file.size) {
      let got = buffer.withUnsafeMutableBytes { block in
        block.baseAddress.map { file.read(at: position, into: $0, maximum: block.count) }
          ?? ResponseFile.endWithError
      }
      guard got > 0 else { return false }
      let sent = buffer.withUnsafeBytes { send(all: UnsafeRawBufferPointer(rebasing: $0[..<got])) }
      guard sent else { return false }
      position += UInt64(got)
    }
    return true
  }

  /// The reason phrase of `status` (RFC 9110, 15).
  package static func reason(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 204: "No Content"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 410: "Gone"
    case 413: "Content Too Large"
    case 415: "Unsupported Media Type"
    case 417: "Expectation Failed"
    case 422: "Unprocessable Content"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 503: "Service Unavailable"
    case 505: "HTTP Version Not Supported"
    case 507: "Insufficient Storage"
    default: "Status"
    }
  }

  /// Now as an HTTP date (RFC 9110, 5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`).
  package static func httpDate() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = [
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
      + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
  }
}
