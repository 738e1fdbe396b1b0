// SPDX-License-Identifier: Apache-2.0
// ImprintService: libmicrohttpd's daemon (the one owner of CMHD): one epoll thread reads
// requests, suspends each connection while its work runs in a bounded pool, and resumes it to
// send the response (docs/architecture.md, "The service").

internal import CMHD
import Foundation
import ImprintCore
import Synchronization

/// What an `HTTPServer` calls for each request read whole.
typealias HTTPHandler = @Sendable (HTTPRequest) async -> HTTPResponse

/// What an `HTTPServer` asks of each request's head (method, path, `Authorization` header),
/// before its body is read: an answer that refuses it (401), or nil to go on.
typealias HeadGate = @Sendable (String, String, String?) -> HTTPResponse?

/// What an `HTTPServer` asks first, on its event thread, for each request read whole: the
/// answer when it is quick to make (health, readiness, metrics), nil to work it in the pool.
typealias InlineHandler = @Sendable (HTTPRequest) -> HTTPResponse?

/// One request on its way through the daemon: its head, its body as it arrives, and the
/// response its job made.
///
/// `@unchecked Sendable`: the event thread writes the head and body before the job is
/// submitted; the job writes `response` before `MHD_resume_connection`, after which only the
/// event thread reads it (the suspension orders the two threads).
private final class Exchange: @unchecked Sendable {
  let method: String
  let path: String
  let query: [String: String]
  let repeatedParameters: [String]
  let contentType: String?
  /// When the head arrived.
  let started = ContinuousClock.now
  /// The same, as wall-clock time (the access log's `time`).
  let startedAt = Date()
  /// The client's `X-Request-Id` when usable, else one made here; echoed in the answer.
  let requestID: String
  /// The `Idempotency-Key` header as sent, if any.
  var idempotencyKey: String?
  /// The `Content-Type` header's `charset` parameter, if any.
  var charset: String?
  var body: [UInt8] = []
  /// The body's bytes received (kept after `body` is handed to the job).
  var bytesIn = 0
  /// The body went over the limit (a chunked upload): answered 413 once it is read.
  var overLimit = false
  /// The bytes of the server's body budget this request holds (its declared length, or what
  /// a chunked body brought so far); given back when it completes.
  var reserved = 0
  /// A chunked body outgrew what the budget had left: answered 503 once it is read.
  var overBudget = false
  /// The reader of a `multipart/form-data` body; nil for other bodies.
  var form: MultipartReader?
  /// Why the body is refused once it is read (a multipart body that broke a rule).
  var refusal: ServiceError?
  /// The response to send; nil until it is made.
  var response: HTTPResponse?
  /// Whether the response was handed to libmicrohttpd.
  var queued = false
  /// The body did not arrive before the deadline: the connection was dropped.
  var timedOut = false
  /// The client left while the request waited for a worker: its work never started, and the
  /// connection is closed without an answer.
  var abandoned = false

  init(
    method: String, path: String, query: [String: String], repeatedParameters: [String],
    contentType: String?, requestID: String
  ) {
    self.method = method
    self.path = path
    self.query = query
    self.repeatedParameters = repeatedParameters
    self.contentType = contentType
    self.requestID = requestID
  }
}

/// A connection handle passed from the event thread to a job and back.
///
/// `@unchecked Sendable`: libmicrohttpd allows `MHD_resume_connection` from any thread, and a
/// suspended connection is not freed until it was resumed.
private struct ConnectionHandle: @unchecked Sendable {
  let raw: OpaquePointer
}

/// An HTTP/1.1 server over libmicrohttpd (`MHD_start_daemon_va`, epoll, suspend/resume).
///
/// Owns one daemon (`MHD_stop_daemon` in `stop`) and its listening socket. Keep-alive is
/// libmicrohttpd's; idle connections close after `connectionTimeout`.
///
/// `@unchecked Sendable`: `daemon` and `socket` are set once in `start`, before any callback,
/// and cleared in `stop` after the daemon stopped; the counters are behind a Mutex.
final class HTTPServer: @unchecked Sendable {
  /// The largest body read, in bytes.
  let maximumBodyBytes: Int
  /// The bytes of bodies held at once at most, all requests together (read, or being read).
  let bodyBudget: Int
  /// The bytes of `bodyBudget` held now.
  private let bodiesHeld = Mutex(0)
  /// What a multipart body may hold.
  let multipartLimits: MultipartLimits
  /// Seconds a connection may stay idle.
  let connectionTimeout: Int
  /// Connections open at most, and from one client address at most
  /// (`MHD_OPTION_CONNECTION_LIMIT`, `MHD_OPTION_PER_IP_CONNECTION_LIMIT`).
  let connectionLimits: (total: Int, perAddress: Int)
  /// Seconds a request's head may take to arrive, from its first byte.
  let headTimeout: Double
  /// Seconds a request may take from its head's arrival to its answer, the body's reading and
  /// the wait for a worker included.
  let requestTimeout: Double
  /// The pool requests are worked in.
  let pool: WorkPool
  private let handler: HTTPHandler
  private let inline: InlineHandler
  private let gate: HeadGate
  /// Told of every request as it completes (on the event thread: it must be quick).
  private let observer: @Sendable (CompletedRequest) -> Void
  private var daemon: OpaquePointer?
  private var socket: Int32 = -1
  /// The sockets of requests waiting for a worker, watched for their client leaving; set in
  /// `start`, stopped in `stop`.
  private var departures: DepartureWatch?
  /// The connections waiting for a head, cut when one takes too long; set in `start`, stopped
  /// in `stop`.
  private var heads: HeadWatch?
  /// The last token given to a suspended request (its pool job's id and its watch's token).
  private let lastToken = Atomic<UInt64>(0)
  /// Requests begun and not yet completed (their response sent or their connection closed).
  private let open = Mutex(0)
  /// Connections open now (libmicrohttpd's connection notices).
  private let connections = Atomic(0)
  /// Set once stopping began: responses say `Connection: close`.
  private let draining = Atomic(false)
  /// The answers of suspended requests not yet given, by token.
  ///
  /// `stop` gives them, once the drain time is over, to the requests still waiting or being
  /// worked; `closed` once it did: a request read after that is refused at once.
  private let unanswered = Mutex<(answers: [UInt64: Answer], closed: Bool)>(([:], false))
  /// The requests whose work runs now (`METHOD path` by token), from their handler's call to
  /// its return; what is left once `stop` ended is stuck (`workUnderWay`).
  private let working = Mutex<[UInt64: String]>([:])

  /// A server that works `pool`'s width of requests at once with `handler`.
  init(
    maximumBodyBytes: Int, bodyBudget: Int, multipartLimits: MultipartLimits,
    connectionTimeout: Int,
    connectionLimits: (total: Int, perAddress: Int), headTimeout: Double,
    requestTimeout: Double, pool: WorkPool,
    observer: @escaping @Sendable (CompletedRequest) -> Void, gate: @escaping HeadGate,
    inline: @escaping InlineHandler, handler: @escaping HTTPHandler
  ) {
    self.gate = gate
    self.maximumBodyBytes = maximumBodyBytes
    self.bodyBudget = bodyBudget
    self.multipartLimits = multipartLimits
    self.connectionTimeout = connectionTimeout
    self.connectionLimits = connectionLimits
    self.headTimeout = headTimeout
    self.requestTimeout = requestTimeout
    self.pool = pool
    self.observer = observer
    self.inline = inline
    self.handler = handler
  }

  /// Whether `stop` began.
  var isDraining: Bool { draining.load(ordering: .acquiring) }

  /// Requests begun and not yet completed.
  var inFlight: Int { open.withLock { $0 } }

  /// The requests whose work runs now (`METHOD path`, in the order they arrived): after
  /// `stop`, the work that did not heed its cancellation (stuck in a system call).
  var workUnderWay: [String] {
    working.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
  }

  /// The bytes of bodies held now (read, or announced and being read).
  var bodyBytesHeld: Int { bodiesHeld.withLock { $0 } }

  /// Takes `bytes` of the body budget for `exchange`.
  ///
  /// - Returns: false, taking nothing, when they do not fit beside the bodies held.
  private func reserve(_ bytes: Int, for exchange: Exchange) -> Bool {
    let taken = bodiesHeld.withLock { held in
      guard bytes <= bodyBudget - held else { return false }
      held += bytes
      return true
    }
    if taken { exchange.reserved += bytes }
    return taken
  }

  /// Drops what a refused chunked body brought so far, and gives its bytes back to the budget
  /// at once (the rest of it is read and thrown away; the answer comes once it is all read).
  private func dropBody(of exchange: Exchange) {
    exchange.body = []
    exchange.form = nil
    let reserved = exchange.reserved
    exchange.reserved = 0
    if reserved > 0 { bodiesHeld.withLock { $0 -= reserved } }
  }

  /// Connections cut because their request's head took longer than `headTimeout`.
  var headsCut: Int { heads?.cut ?? 0 }

  /// Connections open now: kept alive between requests, reading, waiting or answering.
  var openConnections: Int { connections.load(ordering: .relaxed) }

  /// Listens on `address` and starts the daemon's thread.
  ///
  /// - Returns: the port listened on (the one chosen by the system when `address.port` is 0).
  /// - Throws: `ServiceError.listen` when the socket cannot be made, bound or listened on, or
  ///   the daemon does not start.
  func start(_ address: ListenAddress) throws(ServiceError) -> Int {
    precondition(daemon == nil, "HTTPServer.start called twice")
    let fd = try Self.listeningSocket(address)
    var options = [
      MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(fd), ptr_value: nil),
      MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: connectionTimeout, ptr_value: nil),
      MHD_OptionItem(option: .CONNECTION_LIMIT, value: connectionLimits.total, ptr_value: nil),
      MHD_OptionItem(
        option: .PER_IP_CONNECTION_LIMIT, value: connectionLimits.perAddress, ptr_value: nil),
      MHD_OptionItem(
        option: .NOTIFY_CONNECTION, value: unsafeBitCast(connectionNotice, to: Int.self),
        ptr_value: Unmanaged.passUnretained(self).toOpaque()),
      MHD_OptionItem(
        option: .URI_LOG_CALLBACK, value: unsafeBitCast(targetSeen, to: Int.self),
        ptr_value: Unmanaged.passUnretained(self).toOpaque()),
      MHD_OptionItem(
        option: .NOTIFY_COMPLETED, value: unsafeBitCast(requestCompleted, to: Int.self),
        ptr_value: Unmanaged.passUnretained(self).toOpaque()),
      MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
    ]
    let flags =
      MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
      | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
    let me = Unmanaged.passUnretained(self).toOpaque()
    // Before the daemon: its first request may need it.
    let watch = DepartureWatch()
    departures = watch
    let headWatch = HeadWatch(seconds: headTimeout)
    heads = headWatch
    let started = options.withUnsafeMutableBufferPointer { items -> OpaquePointer? in
      guard let first = items.baseAddress else { return nil }
      return withVaList([MHD_OPTION.ARRAY.rawValue, first, MHD_OPTION.END.rawValue]) {
        MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, me, $0)
      }
    }
    guard let started else {
      watch.stop()
      departures = nil
      headWatch.stop()
      heads = nil
      close(fd)
      throw .listen(address: address.description, call: "MHD_start_daemon", errno: EINVAL)
    }
    daemon = started
    socket = fd
    var bound = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &bound) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: bound.sin_port))
  }

  /// Stops taking connections, lets the requests already begun finish until `deadline` less
  /// `grace`, then answers those still waiting or being worked 503 (`http.stopping`, their
  /// work canceled: a document's worker is killed), waits until `deadline` for the answers to
  /// be sent, and stops the daemon (`MHD_stop_daemon`, which closes what is left: requests
  /// still being read) and closes the socket.
  ///
  /// - Parameters:
  ///   - deadline: when the stop must be over.
  ///   - grace: the time left, before `deadline`, for the requests cut short to be answered.
  ///   - drainSeconds: the drain timeout as configured, for the 503's message.
  func stop(until deadline: ContinuousClock.Instant, grace: Duration, drainSeconds: Double) {
    guard let daemon else { return }
    draining.store(true, ordering: .releasing)
    // New clients are refused at once (quiesce alone would leave them waiting in the backlog).
    let listening = MHD_quiesce_daemon(daemon)
    if listening >= 0 { shutdown(listening, Int32(SHUT_RDWR)) }
    while open.withLock({ $0 }) > 0 && ContinuousClock.now < deadline - grace { usleep(10_000) }
    // A suspended connection must be resumed before the daemon stops: every request still
    // waiting or being worked is answered now, and its work canceled (work that does not
    // heed it ends in the background; its answer goes nowhere).
    let cut = unanswered.withLock { table in
      defer { table = ([:], true) }
      return Array(table.answers.values)
    }
    for answer in cut {
      answer.give(
        .error(ServiceError.stoppedWhileWorking(path: answer.path, seconds: drainSeconds)))
      answer.cancelWork()
    }
    while open.withLock({ $0 }) > 0 && ContinuousClock.now < deadline { usleep(10_000) }
    MHD_stop_daemon(daemon)
    self.daemon = nil
    close(socket)
    socket = -1
    departures?.stop()
    departures = nil
    heads?.stop()
  }

  /// A socket bound to `address` and listening (`socket`, `setsockopt`, `bind`, `listen`).
  private static func listeningSocket(_ address: ListenAddress) throws(ServiceError) -> Int32 {
    let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      throw .listen(address: address.description, call: "socket", errno: errno)
    }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var socketAddress = sockaddr_in()
    socketAddress.sin_family = sa_family_t(AF_INET)
    socketAddress.sin_port = UInt16(address.port).bigEndian
    socketAddress.sin_addr = address.ipv4
    let bound = withUnsafePointer(to: &socketAddress) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      let code = errno
      close(fd)
      throw .listen(address: address.description, call: "bind", errno: code)
    }
    guard listen(fd, 128) == 0 else {
      let code = errno
      close(fd)
      throw .listen(address: address.description, call: "listen", errno: code)
    }
    return fd
  }

  /// libmicrohttpd's access handler for one call: the head (a new exchange), a piece of the
  /// body, or the end of the body (the job submitted, or the response it made queued).
  fileprivate func handle(
    _ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
    uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    guard let existing = state.pointee else {
      let target = heads?.headRead(connection)
      let (exchange, problem) = begin(connection, url: url, method: method, target: target)
      state.pointee = Unmanaged.passRetained(exchange).toOpaque()
      open.withLock { $0 += 1 }
      // While its body is read, a request idles at most its whole deadline: a client that
      // stops sending is closed then, one that trickles is refused at its next piece.
      if Double(connectionTimeout) > requestTimeout {
        _ = CMHD_set_connection_timeout(connection, UInt32(max(1, requestTimeout.rounded(.up))))
      }
      // A body whose length is given twice, or both by Content-Length and Transfer-Encoding,
      // could be read otherwise by a proxy in front (request smuggling): refused, and the
      // connection closed, so no byte after the head is read as a request (RFC 9112, 6.3).
      if let framing = framingProblem(connection, path: url) {
        exchange.response = .error(framing)
        return queue(exchange, on: connection, close: true)
      }
      // Refused from the head (no token, a path or query that is not text), before any of the
      // body is read; the connection is closed after the answer when a body was announced,
      // since it will not be read.
      if let refusal = gate(method, url, header(connection, "Authorization"))
        ?? problem.map(HTTPResponse.error)
      {
        exchange.response = refusal
        let announced =
          header(connection, "Transfer-Encoding") != nil
          || (header(connection, "Content-Length").flatMap { Int($0) } ?? 0) > 0
        return queue(exchange, on: connection, close: announced)
      }
      // 413 before the body is read, from its declared length (curl then sends none of it
      // after `Expect: 100-continue`).
      if let declared = header(connection, "Content-Length").flatMap({ Int($0) }),
        declared > maximumBodyBytes
      {
        exchange.response = .error(
          ServiceError.bodyTooLarge(path: url, bytes: declared, limit: maximumBodyBytes))
        return queue(exchange, on: connection, close: true)
      }
      // A declared body takes its bytes of the budget before any is read: refused 503 when
      // the bodies being received hold too much already.
      if let declared = header(connection, "Content-Length").flatMap({ Int($0) }), declared > 0,
        !reserve(declared, for: exchange)
      {
        exchange.response = .error(
          ServiceError.bodiesBusy(
            path: url, bytes: declared, held: bodyBytesHeld, limit: bodyBudget))
        return queue(exchange, on: connection, close: true)
      }
      if exchange.contentType == "multipart/form-data" {
        // A boundary RFC 2046 refuses (over 70 characters, or others than its set) is refused
        // here: libmicrohttpd's post processor would take it.
        guard header(connection, "Content-Type").flatMap(HTTPMessageHeaders.boundary) != nil,
          let reader = MultipartReader(connection, path: url, limits: multipartLimits)
        else {
          exchange.response = .error(
            ServiceError.malformedMultipart(
              path: url, problem: "its Content-Type gives no usable boundary"))
          return queue(exchange, on: connection, close: true)
        }
        exchange.form = reader
      }
      return .YES
    }
    let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeUnretainedValue()
    if uploadSize.pointee > 0 {
      if exchange.response == nil && overDeadline(exchange) {
        // The body is not all here in time: the connection is dropped (libmicrohttpd takes no
        // answer while a body is being read).
        exchange.timedOut = true
        return .NO
      }
      if exchange.response == nil && !exchange.overLimit && !exchange.overBudget, let upload {
        // A chunked body takes the budget as it grows (a declared one took it whole).
        let growth = exchange.bytesIn + uploadSize.pointee - exchange.reserved
        if exchange.bytesIn > maximumBodyBytes - uploadSize.pointee {
          exchange.overLimit = true
          dropBody(of: exchange)
        } else if growth > 0 && !reserve(growth, for: exchange) {
          exchange.overBudget = true
          dropBody(of: exchange)
        } else if let form = exchange.form {
          exchange.bytesIn += uploadSize.pointee
          if exchange.refusal == nil, let problem = form.read(upload, count: uploadSize.pointee) {
            exchange.refusal = problem
          }
        } else {
          exchange.bytesIn += uploadSize.pointee
          upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
            exchange.body.append(
              contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
          }
        }
      }
      uploadSize.pointee = 0
      return .YES
    }
    if exchange.queued { return .YES }
    // Resumed after its client left: the connection is closed, with no answer.
    if exchange.abandoned { return .NO }
    if exchange.response != nil { return queue(exchange, on: connection, close: false) }
    if exchange.overLimit {
      exchange.response = .error(
        ServiceError.bodyTooLarge(path: url, bytes: nil, limit: maximumBodyBytes))
      return queue(exchange, on: connection, close: true)
    }
    if exchange.overBudget {
      exchange.response = .error(
        ServiceError.bodiesBusy(path: url, bytes: nil, held: bodyBytesHeld, limit: bodyBudget))
      return queue(exchange, on: connection, close: true)
    }
    var parts: [FormPart]?
    if let form = exchange.form {
      exchange.form = nil
      if exchange.refusal == nil {
        switch form.finish() {
        case .success(let read): parts = read
        case .failure(let problem): exchange.refusal = problem
        }
      }
    }
    if let refusal = exchange.refusal {
      exchange.response = .error(refusal)
      return queue(exchange, on: connection, close: false)
    }
    let request = HTTPRequest(
      method: exchange.method, path: exchange.path, query: exchange.query,
      repeatedParameters: exchange.repeatedParameters, contentType: exchange.contentType,
      charset: exchange.charset, body: exchange.body, parts: parts,
      idempotencyKey: exchange.idempotencyKey,
      deadline: exchange.started + .seconds(requestTimeout))
    exchange.body = []
    // Probes and scrapes are answered here, so that a full pool never fails them.
    if let response = inline(request) {
      exchange.response = response
      return queue(exchange, on: connection, close: false)
    }
    let token = lastToken.wrappingAdd(1, ordering: .relaxed).newValue
    let answer = Answer(
      exchange: exchange, connection: ConnectionHandle(raw: connection), token: token,
      departures: departures
    ) { [weak self] token in
      _ = self?.unanswered.withLock { $0.answers.removeValue(forKey: token) }
    }
    // Suspended only while `stop` will answer it: a request read after it did is refused.
    let registered = unanswered.withLock { table in
      guard !table.closed else { return false }
      table.answers[token] = answer
      return true
    }
    guard registered else {
      exchange.response = .error(ServiceError.stopping)
      return queue(exchange, on: connection, close: true)
    }
    let handler = handler
    MHD_suspend_connection(connection)
    // The deadline's own answer, unless the work's came first: a job still waiting leaves the
    // queue, work under way is canceled (a document's worker killed).
    let path = exchange.path
    let seconds = requestTimeout
    let pool = pool
    let timer = DeadlineTimer(at: exchange.started + .seconds(requestTimeout)) {
      answer.give(.error(ServiceError.deadlineExceeded(path: path, seconds: seconds)))
      if !pool.cancel(token) { answer.cancelWork() }
    }
    // A client that leaves takes its job out of the queue, or cancels its work under way: a
    // burst of abandoned requests does not hold the pool or the document workers.
    let socket = CMHD_connection_socket(connection)
    if socket >= 0 {
      departures?.watch(socket, token: token) {
        answer.clientLeft()
        if !pool.cancel(token) { answer.cancelWork() }
        timer.cancel()
        answer.abandon()
      }
    }
    let accepted = pool.submit(id: token) { [weak self] in
      // Not worked: a request whose deadline passed while it waited, or whose client left
      // before its job was queued.
      guard !answer.isGiven else { return }
      guard !answer.hasClientLeft else {
        timer.cancel()
        answer.abandon()
        return
      }
      self?.working.withLock { $0[token] = request.method + " " + path }
      let response = await answer.work { await handler(request) }
      self?.working.withLock { _ = $0.removeValue(forKey: token) }
      timer.cancel()
      answer.give(response)
    }
    guard accepted else {
      timer.cancel()
      answer.give(.error(ServiceError.busy(queued: pool.queueLimit)))
      return .YES
    }
    return .YES
  }

  /// Whether `exchange`'s deadline passed.
  private func overDeadline(_ exchange: Exchange) -> Bool {
    ContinuousClock.now - exchange.started > .seconds(requestTimeout)
  }

  /// A new exchange from the request's head: query parameters and content type read from
  /// libmicrohttpd (`MHD_get_connection_values_n`, `MHD_lookup_connection_value`), and the
  /// problem when the path (`target`, as sent) or a query parameter, decoded, is not UTF-8 text
  /// or holds a NUL byte (libmicrohttpd's C strings would end there and lose the rest).
  private func begin(
    _ connection: OpaquePointer, url: String, method: String, target: [UInt8]?
  ) -> (Exchange, ServiceError?) {
    let collected = QueryCollector()
    _ = MHD_get_connection_values_n(
      connection, .GET_ARGUMENT_KIND,
      { cls, _, key, keySize, value, valueSize in
        guard let cls, let key else { return .YES }
        let collector = Unmanaged<QueryCollector>.fromOpaque(cls).takeUnretainedValue()
        let nameBytes = UnsafeRawBufferPointer(start: key, count: keySize)
        let valueBytes = UnsafeRawBufferPointer(
          start: value, count: value == nil ? 0 : valueSize)
        collector.take(Array(nameBytes), Array(valueBytes))
        return .YES
      }, Unmanaged.passUnretained(collected).toOpaque())
    var problem = collected.problem
    if problem == nil, let target {
      let path =
        target.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        .first.map(Array.init) ?? []
      if let found = RequestText.problem(RequestText.percentDecoded(path)) {
        problem = .invalidPath(path: String(decoding: path, as: UTF8.self), problem: found)
      }
    }
    // An empty `Content-Type:` declares no type: read as a request without the header.
    let contentType = header(connection, "Content-Type").map(HTTPMessageHeaders.mediaType)
      .flatMap { $0.isEmpty ? nil : $0 }
    let requestID = header(connection, "X-Request-Id").flatMap(Self.usableRequestID)
    let exchange = withExtendedLifetime(collected) {
      Exchange(
        method: method, path: url, query: collected.values,
        repeatedParameters: collected.repeated, contentType: contentType,
        requestID: requestID ?? UUID().uuidString.lowercased())
    }
    exchange.idempotencyKey = header(connection, "Idempotency-Key")
    exchange.charset = header(connection, "Content-Type").flatMap(HTTPMessageHeaders.charset)
    return (exchange, problem)
  }

  /// Why the body's framing is ambiguous: `Content-Length` given more than once, or with
  /// `Transfer-Encoding`; nil when it is not.
  private func framingProblem(_ connection: OpaquePointer, path: String) -> ServiceError? {
    let lengths = HeaderValues()
    _ = MHD_get_connection_values_n(
      connection, .HEADER_KIND,
      { cls, _, key, keySize, value, valueSize in
        guard let cls, let key else { return .YES }
        let name = String(
          decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
        guard name.lowercased() == "content-length" else { return .YES }
        let collector = Unmanaged<HeaderValues>.fromOpaque(cls).takeUnretainedValue()
        collector.values.append(
          String(
            decoding: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize),
            as: UTF8.self))
        return .YES
      }, Unmanaged.passUnretained(lengths).toOpaque())
    let found = withExtendedLifetime(lengths) { lengths.values }
    if found.count > 1 {
      return .ambiguousFraming(
        path: path,
        found: found.map { "Content-Length: \(SafeText.excerpt($0, limit: 20))" }
          .joined(separator: ", "))
    }
    if let length = found.first, let encoding = header(connection, "Transfer-Encoding") {
      return .ambiguousFraming(
        path: path,
        found: "Content-Length: \(SafeText.excerpt(length, limit: 20)) and Transfer-Encoding: "
          + SafeText.excerpt(encoding, limit: 40))
    }
    return nil
  }

  /// A connection opened or closed (`MHD_OPTION_NOTIFY_CONNECTION`).
  fileprivate func connectionNoticed(_ connection: OpaquePointer, opened: Bool) {
    connections.add(opened ? 1 : -1, ordering: .relaxed)
    if opened { heads?.opened(connection) } else { heads?.closed(connection) }
  }

  /// A request line arrived (`MHD_OPTION_URI_LOG_CALLBACK`): its target as sent.
  fileprivate func targetNoticed(_ connection: OpaquePointer, _ target: UnsafePointer<CChar>) {
    let bytes = UnsafeRawBufferPointer(start: target, count: strlen(target))
    heads?.targetRead(connection, Array(bytes))
  }

  /// A request ended (`MHD_OPTION_NOTIFY_COMPLETED`): its connection waits for the next head.
  fileprivate func requestEnded(_ connection: OpaquePointer) {
    heads?.requestEnded(connection)
  }

  /// `text` when it is a request id worth echoing and logging: 1 to 128 characters among
  /// letters, digits and `-._:`; nil otherwise (a new id is made rather than reflecting bytes
  /// into headers and logs).
  static func usableRequestID(_ text: String) -> String? {
    guard (1...128).contains(text.utf8.count),
      text.utf8.allSatisfy({
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
          || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || Array("-._:".utf8).contains($0)
      })
    else { return nil }
    return text
  }

  /// The value of request header `name`, if given.
  private func header(_ connection: OpaquePointer, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
  }

  /// The `Server` header of every answer: the build's version, as `imprint --version` gives it.
  static let serverHeader = "imprint/" + ImprintVersion.current

  /// Hands the exchange's response to libmicrohttpd (`MHD_create_response_from_buffer`, copied,
  /// or `MHD_create_response_from_callback` for a file, read as it is sent by `fileReader`;
  /// `MHD_queue_response`; the response released with `MHD_destroy_response`).
  private func queue(_ exchange: Exchange, on connection: OpaquePointer, close: Bool) -> MHD_Result
  {
    guard let response = exchange.response else { return .NO }
    exchange.queued = true
    let made: OpaquePointer?
    if let file = response.file {
      // libmicrohttpd holds the file while the response lives (released by `fileReaderFreed`).
      let reader = Unmanaged.passRetained(file).toOpaque()
      made = MHD_create_response_from_callback(
        UInt64(file.size), ResponseFile.blockSize, fileReader, reader, fileReaderFreed)
      if made == nil { Unmanaged<ResponseFile>.fromOpaque(reader).release() }
    } else {
      made = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
          bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
      }
    }
    guard let made else { return .NO }
    defer { MHD_destroy_response(made) }
    MHD_add_response_header(made, "Content-Type", response.contentType)
    MHD_add_response_header(made, "X-Request-Id", exchange.requestID)
    MHD_add_response_header(made, "Server", Self.serverHeader)
    for header in response.headers { MHD_add_response_header(made, header.name, header.value) }
    if close || isDraining { MHD_add_response_header(made, "Connection", "close") }
    return MHD_queue_response(connection, UInt32(response.status), made)
  }

  /// libmicrohttpd's completion notice: the observer is told, the exchange released.
  fileprivate func completed(_ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
    guard let existing = state.pointee else { return }
    let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeRetainedValue()
    state.pointee = nil
    if exchange.reserved > 0 { bodiesHeld.withLock { $0 -= exchange.reserved } }
    let elapsed = ContinuousClock.now - exchange.started
    let milliseconds =
      Double(elapsed.components.seconds) * 1000
      + Double(elapsed.components.attoseconds / 1_000_000_000) / 1_000_000
    let answered = exchange.queued ? exchange.response : nil
    observer(
      CompletedRequest(
        time: Self.timestamp(exchange.startedAt), requestId: exchange.requestID,
        method: exchange.method, path: exchange.path, status: answered?.status,
        bytesIn: exchange.bytesIn, bytesOut: answered?.bodyBytes ?? 0,
        durationMs: (milliseconds * 1000).rounded() / 1000,
        errorCode: answered?.errorCode
          ?? (answered?.file?.wasCut == true ? CompletedRequest.fileShortened : nil)
          ?? (exchange.timedOut
            ? CompletedRequest.requestTimeout
            : exchange.abandoned ? CompletedRequest.clientGone : nil)))
    open.withLock { $0 -= 1 }
  }

  /// `date` as ISO 8601 in UTC with milliseconds (`2026-12-01T16:04:05.123Z`).
  static func timestamp(_ date: Date) -> String {
    var time = timespec()
    let seconds = date.timeIntervalSince1970
    time.tv_sec = Int(seconds.rounded(.down))
    var parts = tm()
    gmtime_r(&time.tv_sec, &parts)
    let millis = min(999, Int(((seconds - seconds.rounded(.down)) * 1000).rounded(.down)))
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let fraction = String(millis + 1000).dropFirst()
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
  }
}

/// The one answer a suspended request gets: its work's or its deadline's, whichever comes first,
/// or none when its client left before its work began; giving it resumes the connection.
///
/// `@unchecked Sendable`: `given` decides who writes `exchange.response` (or `.abandoned`), once,
/// before `MHD_resume_connection`; the event thread reads it after (see `Exchange`).
private final class Answer: @unchecked Sendable {
  private let exchange: Exchange
  private let connection: ConnectionHandle
  private let token: UInt64
  private let departures: DepartureWatch?
  /// Called with the token once the answer is given (or the request abandoned).
  private let settled: @Sendable (UInt64) -> Void
  private let given = Atomic(false)
  private let left = Atomic(false)
  /// The task working the request, once it runs; `canceled` once `cancelWork` was called.
  private let working = Mutex<(task: Task<HTTPResponse, Never>?, canceled: Bool)>((nil, false))

  init(
    exchange: Exchange, connection: ConnectionHandle, token: UInt64, departures: DepartureWatch?,
    settled: @escaping @Sendable (UInt64) -> Void
  ) {
    self.exchange = exchange
    self.connection = connection
    self.token = token
    self.departures = departures
    self.settled = settled
  }

  /// The request's path (read on any thread: set before the connection was suspended).
  var path: String { exchange.path }

  /// Runs `make` in a task of its own, which `cancelWork` cancels (at once when it was called
  /// before), and returns what it made.
  func work(_ make: @escaping @Sendable () async -> HTTPResponse) async -> HTTPResponse {
    let task = Task { await make() }
    let canceled = working.withLock { working in
      working.task = task
      return working.canceled
    }
    if canceled { task.cancel() }
    return await task.value
  }

  /// Cancels the request's work (its document's worker is killed); nothing when it ended.
  func cancelWork() {
    let task = working.withLock { working in
      working.canceled = true
      return working.task
    }
    task?.cancel()
  }

  /// Whether an answer was given (or the request abandoned).
  var isGiven: Bool { given.load(ordering: .acquiring) }

  /// Whether the client was seen leaving.
  var hasClientLeft: Bool { left.load(ordering: .acquiring) }

  /// Notes that the client left.
  func clientLeft() { left.store(true, ordering: .releasing) }

  /// Stops watching the client's socket (before the connection may be resumed).
  func stopWatching() { departures?.unwatch(token) }

  /// Gives `response` and resumes the connection, unless an answer was given already.
  func give(_ response: HTTPResponse) {
    resume { $0.response = response }
  }

  /// Resumes the connection to close it without an answer (its client left before its work
  /// began), unless an answer was given already.
  func abandon() {
    resume { $0.abandoned = true }
  }

  private func resume(_ settle: (Exchange) -> Void) {
    guard
      given.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        .exchanged
    else { return }
    // The socket leaves the watch before libmicrohttpd may close it (it does so only resumed).
    stopWatching()
    settled(token)
    settle(exchange)
    MHD_resume_connection(connection.raw)
  }
}

/// libmicrohttpd's post processor over one `multipart/form-data` body, handing its pieces to a
/// `MultipartCollector`.
///
/// Owns one post processor (`MHD_create_post_processor`), destroyed once: by `finish`, or when
/// released (a connection closed mid-body).
private final class MultipartReader {
  private var raw: OpaquePointer?
  private let collector: MultipartCollector

  /// A reader for the body of `connection`, whose `Content-Type` (multipart/form-data with a
  /// boundary) the post processor reads itself; nil when it gives no usable boundary.
  init?(_ connection: OpaquePointer, path: String, limits: MultipartLimits) {
    collector = MultipartCollector(path: path, limits: limits)
    // The buffer holds a part's headers and twice the boundary: 4 KB plus the longest name.
    let buffer = 4096 + 2 * limits.maximumNameBytes
    guard
      let made = MHD_create_post_processor(
        connection, buffer, multipartPiece, Unmanaged.passUnretained(collector).toOpaque())
    else { return nil }
    raw = made
  }

  deinit { if let raw { MHD_destroy_post_processor(raw) } }

  /// Hands `count` bytes of the body to the post processor (`MHD_post_process`).
  ///
  /// - Returns: the problem, when the body broke a rule or a limit.
  func read(_ bytes: UnsafePointer<CChar>, count: Int) -> ServiceError? {
    guard let raw else { return nil }
    guard MHD_post_process(raw, bytes, count) == .YES else {
      return collector.failure
        ?? .malformedMultipart(
          path: collector.path,
          problem: "a part's headers are malformed or longer than the limit, or text lies "
            + "outside the parts")
    }
    return nil
  }

  /// Ends the body (`MHD_destroy_post_processor`, which says whether it ended at its closing
  /// boundary).
  ///
  /// - Returns: the parts, or the problem.
  func finish() -> Result<[FormPart], ServiceError> {
    guard let raw else { preconditionFailure("MultipartReader.finish called twice") }
    self.raw = nil
    let complete = MHD_destroy_post_processor(raw) == .YES
    if let failure = collector.failure { return .failure(failure) }
    guard complete else {
      return .failure(
        .malformedMultipart(path: collector.path, problem: "it ends before its closing boundary"))
    }
    guard !collector.parts.isEmpty else {
      return .failure(.malformedMultipart(path: collector.path, problem: "it holds no part"))
    }
    return .success(collector.parts)
  }
}

/// The post processor's iterator: one piece of one part (a C function: the collector comes
/// through `cls`).
private let multipartPiece: MHD_PostDataIterator = {
  cls, _, key, filename, contentType, encoding, data, offset, size in
  guard let cls else { return .NO }
  let collector = Unmanaged<MultipartCollector>.fromOpaque(cls).takeUnretainedValue()
  let bytes = UnsafeRawBufferPointer(
    start: data.map { UnsafeRawPointer($0) }, count: data == nil ? 0 : size)
  let taken = collector.piece(
    name: key.map { String(cString: $0) }, filename: filename.map { String(cString: $0) },
    contentType: contentType.map { String(cString: $0) },
    transferEncoding: encoding.map { String(cString: $0) }, offset: offset, bytes: bytes)
  return taken ? .YES : .NO
}

/// The query parameters of one request, gathered by `MHD_get_connection_values_n`' iterator,
/// and the first that is not UTF-8 text without NUL.
private final class QueryCollector {
  var values: [String: String] = [:]
  var repeated: [String] = []
  var problem: ServiceError?

  /// Takes one parameter's decoded name and value.
  func take(_ name: [UInt8], _ value: [UInt8]) {
    let key = String(decoding: name, as: UTF8.self)
    if problem == nil {
      if let found = RequestText.problem(name) {
        problem = .invalidParameter(name: key, problem: "has a name that \(found)")
      } else if let found = RequestText.problem(value) {
        problem = .invalidParameter(name: key, problem: found)
      }
    }
    if values[key] != nil { repeated.append(key) }
    values[key] = String(decoding: value, as: UTF8.self)
  }
}

/// The values of one request header, gathered by `MHD_get_connection_values_n`' iterator.
private final class HeaderValues {
  var values: [String] = []
}

/// Checks on the text of a request's path and query parameters.
enum RequestText {
  /// What is wrong with `bytes` as text: a NUL byte, or bytes that are not UTF-8; nil when
  /// they are fine.
  static func problem(_ bytes: [UInt8]) -> String? {
    if let index = bytes.firstIndex(of: 0) {
      return "must be UTF-8 text without NUL; found a NUL byte (%00) at byte \(index)"
    }
    if String(validating: bytes, as: UTF8.self) == nil {
      let shown = bytes.prefix(48).map { $0 < 0x80 ? String(UnicodeScalar($0)) : "%" + hex($0) }
      return "must be UTF-8 text without NUL; found bytes that are not UTF-8 ('"
        + SafeText.excerpt(shown.joined(), limit: 120) + "')"
    }
    return nil
  }

  /// A byte as two uppercase hexadecimal digits.
  static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }

  /// `bytes` with each `%HH` escape decoded (others kept as they are).
  static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
        let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
      {
        out.append(high << 4 | low)
        index += 3
      } else {
        out.append(bytes[index])
        index += 1
      }
    }
    return out
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// The access handler libmicrohttpd calls (a C function: the server comes through `cls`).
private let accessHandler: MHD_AccessHandlerCallback = {
  cls, connection, url, method, _, upload, uploadSize, state in
  guard let cls, let connection, let uploadSize, let state else { return .NO }
  let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
  return server.handle(
    connection, url: url.map { String(cString: $0) } ?? "/",
    method: method.map { String(cString: $0) } ?? "GET", upload: upload,
    uploadSize: uploadSize, state: state)
}

/// The content reader of a file response (`MHD_ContentReaderCallback`): `ResponseFile.read`.
private let fileReader: MHD_ContentReaderCallback = { reader, position, buffer, maximum in
  guard let reader, let buffer else { return ResponseFile.endWithError }
  return Unmanaged<ResponseFile>.fromOpaque(reader).takeUnretainedValue().read(
    at: position, into: buffer, maximum: maximum)
}

/// Releases the file of a response libmicrohttpd destroyed (`MHD_ContentReaderFreeCallback`).
private let fileReaderFreed: MHD_ContentReaderFreeCallback = { reader in
  guard let reader else { return }
  Unmanaged<ResponseFile>.fromOpaque(reader).release()
}

/// The completion notice libmicrohttpd calls when a request ends (`MHD_OPTION_NOTIFY_COMPLETED`).
private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, state, _ in
  guard let cls else { return }
  let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
  if let connection { server.requestEnded(connection) }
  if let state { server.completed(state) }
}

/// A request's deadline: runs its handler once at `deadline`, unless cancelled first.
///
/// A dispatch timer, not a sleeping task: the runtime keeps a cancelled `Task.sleep`'s wake-up
/// job queued until its deadline, so every answered request left one behind for
/// `--request-timeout` seconds (120 by default), the server's memory growing with its request
/// rate until the first ones expired; a cancelled dispatch source is released at once.
private final class DeadlineTimer: @unchecked Sendable {
  // @unchecked: a dispatch source may be cancelled from any thread.
  private let source: DispatchSourceTimer

  init(at deadline: ContinuousClock.Instant, _ handler: @escaping @Sendable () -> Void) {
    let left = ContinuousClock.now.duration(to: deadline).components
    let seconds = Double(left.seconds) + Double(left.attoseconds) / 1e18
    source = DispatchSource.makeTimerSource(queue: .global())
    source.schedule(deadline: .now() + max(0, seconds))
    source.setEventHandler(handler: handler)
    source.resume()
  }

  /// Stops the timer: its handler will not run (one already running ends).
  func cancel() { source.cancel() }
}

/// The connection notice libmicrohttpd calls when a connection opens or closes
/// (`MHD_OPTION_NOTIFY_CONNECTION`; `MHD_CONNECTION_NOTIFY_STARTED` is 0; closed: before its
/// socket is).
private let connectionNotice: MHD_NotifyConnectionCallback = { cls, connection, _, code in
  guard let cls, let connection else { return }
  Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().connectionNoticed(
    connection, opened: code.rawValue == 0)
}

/// The URI log callback libmicrohttpd calls with each request's target as sent, before it
/// decodes it (`MHD_OPTION_URI_LOG_CALLBACK`); it keeps no per-request pointer (returns NULL).
private let targetSeen:
  @convention(c) (
    UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?
  ) -> UnsafeMutableRawPointer? = { cls, target, connection in
    guard let cls, let target, let connection else { return nil }
    Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().targetNoticed(connection, target)
    return nil
  }
