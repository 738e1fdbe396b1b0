// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: the HTTP/1.1 server of `imprint serve` (the one owner of CImprintHTTP): a
// thread accepts connections, a thread per connection reads its requests with llhttp and
// writes their answers, the work runs in a bounded pool (docs/architecture.md, "The service").
//
// Why llhttp and not libmicrohttpd, used before: libmicrohttpd 0.9.75 (Debian 12) read request
// smuggling shapes leniently (a space before a header's colon, a header line with an empty
// name, folded lines, a Transfer-Encoding whose last coding is not chunked), left others
// without any answer (an unknown coding, ~460 query parameters) and answered some with its own
// HTML 500; its strict mode covers only a missing Host and spaces. llhttp (Node.js's parser,
// C sources in Debian's node-llhttp) refuses those shapes itself; HTTPHead adds the few rules it
// leaves to the server (issue #28). Owning the connection loop also makes the head watch, the
// departure watch and the raw target libmicrohttpd hid plain code.

internal import CImprintHTTP
import Foundation
import ImprintCore
import Synchronization

/// What an `HTTPServer` calls for each request read whole.
package typealias HTTPHandler = @Sendable (HTTPRequest) async -> HTTPResponse

/// What an `HTTPServer` asks of each request's head (method, path, `Authorization` header, and
/// the first query parameter whose name or value is not UTF-8 text without NUL, with what is
/// wrong with it), before its body is read: an answer that refuses it (401, 400), or nil to go
/// on.
package typealias HeadGate =
  @Sendable (String, String, String?, (name: String, problem: String)?) -> HTTPResponse?

/// What an `HTTPServer` asks first, on the connection's thread, for each request read whole:
/// the answer when it is quick to make (health, readiness, metrics), nil to work it in the pool.
package typealias InlineHandler = @Sendable (HTTPRequest) -> HTTPResponse?

/// An HTTP/1.1 server: a listening socket, an accepting thread, a thread per connection.
///
/// Owns the listening socket (closed by `stop`) and, through `HTTPConnection`, each accepted
/// socket. Keep-alive and pipelining as RFC 9112 says; idle connections close after
/// `connectionTimeout`.
///
/// `@unchecked Sendable`: `listening`, `wake` and the accepting thread are set once in `start`,
/// before any connection, and cleared in `stop`; everything shared is atomic or behind a Mutex.
package final class HTTPServer: @unchecked Sendable {
  /// The largest body read, in bytes.
  package let maximumBodyBytes: Int
  /// The bytes of bodies held at once at most, all requests together (read, or being read).
  package let bodyBudget: Int
  /// The bytes of `bodyBudget` held now.
  private let bodiesHeld = Mutex(0)
  /// What a multipart body may hold.
  package let multipartLimits: MultipartLimits
  /// Seconds a connection may stay idle.
  package let connectionTimeout: Int
  /// Connections open at most, and from one client address at most.
  package let connectionLimits: (total: Int, perAddress: Int)
  /// Seconds a request's head may take to arrive, from its first byte.
  package let headTimeout: Double
  /// Seconds a request may take from its head's arrival to its answer, the body's reading and
  /// the wait for a worker included.
  package let requestTimeout: Double
  /// The pool requests are worked in.
  package let pool: WorkPool
  package let handler: HTTPHandler
  package let inline: InlineHandler
  package let gate: HeadGate
  /// Told of every request as it completes (on its connection's thread).
  package let observer: @Sendable (CompletedRequest) -> Void

  private var listening: Int32 = -1
  /// An eventfd that wakes the accepting thread: to stop, or when a connection closed while
  /// the server was at its limit.
  private var wake: Int32 = -1
  private let acceptorDone = DispatchSemaphore(value: 0)
  private var acceptorRunning = false
  /// The open connections' sockets, and how many each client address holds.
  private let table = Mutex<(sockets: Set<Int32>, perAddress: [UInt32: Int])>(([], [:]))
  /// The last token given to a request worked in the pool.
  private let lastToken = Atomic<UInt64>(0)
  /// Requests begun and not yet completed (their answer sent or their connection closed).
  private let open = Mutex(0)
  /// Set once stopping began: answers say `Connection: close`.
  private let draining = Atomic(false)
  /// Connections cut because their request's head took longer than `headTimeout`.
  private let cutHeads = Atomic(0)
  /// The answers of requests waiting for a worker or being worked, by token.
  ///
  /// `stop` gives them, once the drain time is over, to the requests still waiting or being
  /// worked; `closed` once it did: a request read after that is refused at once.
  private let unanswered = Mutex<(answers: [UInt64: Answer], closed: Bool)>(([:], false))
  /// The requests whose work runs now (`METHOD path` by token), from their handler's call to
  /// its return; what is left once `stop` ended is stuck (`workUnderWay`).
  private let working = Mutex<[UInt64: String]>([:])

  /// A server that works `pool`'s width of requests at once with `handler`.
  package init(
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
  package var isDraining: Bool { draining.load(ordering: .acquiring) }

  /// Requests begun and not yet completed.
  package var inFlight: Int { open.withLock { $0 } }

  /// The requests whose work runs now (`METHOD path`, in the order they arrived): after
  /// `stop`, the work that did not heed its cancellation (stuck in a system call).
  package var workUnderWay: [String] {
    working.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
  }

  /// The bytes of bodies held now (read, or announced and being read).
  package var bodyBytesHeld: Int { bodiesHeld.withLock { $0 } }

  /// Connections cut because their request's head took longer than `headTimeout`.
  package var headsCut: Int { cutHeads.load(ordering: .relaxed) }

  /// Connections open now: kept alive between requests, reading, waiting or answering.
  package var openConnections: Int { table.withLock { $0.sockets.count } }

  /// Listens on `address` and starts the accepting thread.
  ///
  /// - Returns: the port listened on (the one chosen by the system when `address.port` is 0).
  /// - Throws: `HTTPError.listen` when the socket cannot be made, bound or listened on.
  package func start(_ address: ListenAddress) throws(HTTPError) -> Int {
    precondition(listening < 0, "HTTPServer.start called twice")
    let fd = try Self.listeningSocket(address)
    listening = fd
    wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
    precondition(wake >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
    acceptorRunning = true
    let thread = Thread { [self] in
      acceptLoop()
      acceptorDone.signal()
    }
    thread.name = "imprint-accept"
    thread.start()
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
  /// be sent, and closes what is left (connections idle or still sending a request).
  ///
  /// - Parameters:
  ///   - deadline: when the stop must be over.
  ///   - grace: the time left, before `deadline`, for the requests cut short to be answered.
  ///   - drainSeconds: the drain timeout as configured, for the 503's message.
  package func stop(until deadline: ContinuousClock.Instant, grace: Duration, drainSeconds: Double)
  {
    guard acceptorRunning else { return }
    acceptorRunning = false
    draining.store(true, ordering: .releasing)
    // New clients are refused at once: the listening socket is shut, and the accepting thread
    // ends.
    shutdown(listening, Int32(SHUT_RDWR))
    signalWake()
    acceptorDone.wait()
    while open.withLock({ $0 }) > 0 && ContinuousClock.now < deadline - grace { usleep(10_000) }
    // Every request still waiting or being worked is answered now, and its work canceled (work
    // that does not heed it ends in the background; its answer goes nowhere).
    let cut = unanswered.withLock { table in
      defer { table = ([:], true) }
      return Array(table.answers.values)
    }
    for answer in cut {
      answer.give(
        .error(HTTPError.stoppedWhileWorking(path: answer.path, seconds: drainSeconds)))
      answer.cancelWork()
    }
    // The answers are sent, and the work canceled ends (a killed worker's request returns).
    while open.withLock({ $0 }) > 0 || !working.withLock({ $0.isEmpty }),
      ContinuousClock.now < deadline
    {
      usleep(10_000)
    }
    // What is left (idle connections, requests still arriving) is closed: each connection's
    // thread sees its socket shut and ends.
    for socket in table.withLock({ $0.sockets }) { shutdown(socket, Int32(SHUT_RDWR)) }
    let closing = ContinuousClock.now + .seconds(2)
    while openConnections > 0 && ContinuousClock.now < closing { usleep(5_000) }
    close(listening)
    listening = -1
  }

  /// A socket bound to `address` and listening (`socket`, `setsockopt`, `bind`, `listen`).
  private static func listeningSocket(_ address: ListenAddress) throws(HTTPError) -> Int32 {
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

  private func signalWake() {
    var one: UInt64 = 1
    _ = write(wake, &one, 8)
  }

  /// Accepts connections until `stop`: while `connectionLimits.total` are open, new clients
  /// wait in the kernel's backlog; one from an address that holds `connectionLimits.perAddress`
  /// already is reset at once.
  private func acceptLoop() {
    var fds = [
      pollfd(fd: listening, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
    ]
    while !isDraining {
      let full = openConnections >= connectionLimits.total
      fds[0].events = full ? 0 : Int16(POLLIN)
      fds[0].revents = 0
      fds[1].revents = 0
      let ready = poll(&fds, 2, full ? 100 : -1)
      if ready < 0 && errno != EINTR { break }
      if fds[1].revents != 0 {
        var value: UInt64 = 0
        _ = read(wake, &value, 8)
      }
      if isDraining { break }
      guard fds[0].revents != 0 else { continue }
      var peer = sockaddr_in()
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let client = withUnsafeMutablePointer(to: &peer) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          accept4(listening, $0, &length, Int32(SOCK_CLOEXEC.rawValue))
        }
      }
      if client < 0 {
        // Out of descriptors or memory: back off a little rather than spin.
        if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
          usleep(50_000)
        }
        if errno == EINVAL || errno == EBADF { break }
        continue
      }
      let address = peer.sin_addr.s_addr
      let admitted = table.withLock { table -> Bool in
        guard table.perAddress[address, default: 0] < connectionLimits.perAddress else {
          return false
        }
        table.perAddress[address, default: 0] += 1
        table.sockets.insert(client)
        return true
      }
      guard admitted else {
        // Reset, not closed: the client learns at once (as libmicrohttpd did).
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close(client)
        continue
      }
      var one: Int32 = 1
      setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
      let connection = HTTPConnection(socket: client, server: self)
      let thread = Thread {
        connection.run()
        self.closed(client, address: address)
      }
      thread.name = "imprint-connection"
      thread.stackSize = 1 << 20
      thread.start()
    }
  }

  /// A connection's thread ended: its socket is closed and its slot given back.
  private func closed(_ socket: Int32, address: UInt32) {
    let wasFull = table.withLock { table -> Bool in
      let full = table.sockets.count >= connectionLimits.total
      table.sockets.remove(socket)
      table.perAddress[address, default: 1] -= 1
      if table.perAddress[address] == 0 { table.perAddress.removeValue(forKey: address) }
      return full
    }
    close(socket)
    if wasFull { signalWake() }
  }

  // MARK: What connections share

  /// Takes `bytes` of the body budget.
  ///
  /// - Returns: false, taking nothing, when they do not fit beside the bodies held.
  package func reserve(_ bytes: Int) -> Bool {
    bodiesHeld.withLock { held in
      guard bytes <= bodyBudget - held else { return false }
      held += bytes
      return true
    }
  }

  /// Gives `bytes` of the body budget back.
  package func release(_ bytes: Int) {
    if bytes > 0 { bodiesHeld.withLock { $0 -= bytes } }
  }

  /// A request's head was read: it is in flight until `requestEnded`.
  package func requestBegan() { open.withLock { $0 += 1 } }

  /// A request was answered, or its connection closed.
  package func requestEnded() { open.withLock { $0 -= 1 } }

  /// A connection was cut for a slow head.
  package func headCut() { cutHeads.add(1, ordering: .relaxed) }

  /// Hands `request` to the pool, its answer given to `answer` (by its work, the deadline, or
  /// the stop); false when the stop answers no more requests.
  package func submit(_ request: HTTPRequest, answer: Answer) -> Bool {
    let registered = unanswered.withLock { table in
      guard !table.closed else { return false }
      table.answers[answer.token] = answer
      return true
    }
    guard registered else { return false }
    let handler = handler
    let token = answer.token
    let path = request.path
    let executor = pool.executor
    let accepted = pool.submit(id: token) { [weak self] in
      // Not worked: a request whose deadline passed while it waited, or whose client left
      // before its job was queued.
      guard !answer.isGiven else { return }
      guard !answer.hasClientLeft else {
        answer.abandon()
        return
      }
      self?.working.withLock { $0[token] = request.method + " " + path }
      let response = await answer.work(on: executor) { await handler(request) }
      self?.working.withLock { _ = $0.removeValue(forKey: token) }
      answer.give(response)
    }
    if !accepted { answer.give(.error(HTTPError.busy(queued: pool.queueLimit))) }
    return true
  }

  /// A new token for a request worked in the pool.
  package func nextToken() -> UInt64 { lastToken.wrappingAdd(1, ordering: .relaxed).newValue }

  /// The answer under `token` was given or abandoned: `stop` no longer answers it.
  package func settled(_ token: UInt64) {
    _ = unanswered.withLock { $0.answers.removeValue(forKey: token) }
  }

  /// `text` when it is a request id worth echoing and logging: 1 to 128 characters among
  /// letters, digits and `-._:`; nil otherwise (a new id is made rather than reflecting bytes
  /// into headers and logs).
  package static func usableRequestID(_ text: String) -> String? {
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

  /// The largest JSON body or JSON part (an order, a profile) taken, in bytes: options and
  /// profiles are a few KiB, and decoding JSON costs many times its size.
  package static let jsonByteLimit = 1 << 20
  /// The bytes of the body budget a JSON body or part takes per byte while it is worked:
  /// Foundation's JSON objects cost up to 27 times the text (measured: an array of small
  /// numbers, 22 MB of text, 600 MB at the peak; a long string 5.7 times).
  package static let jsonWorkFactor = 32

  /// The `Server` header of every answer: the build's version, as `imprint --version` gives it.
  package static let serverHeader = "imprint/" + ImprintVersion.current
}

/// The one answer a request worked in the pool gets: its work's, its deadline's or the stop's,
/// whichever comes first, or none when its client left; giving it wakes the connection's
/// thread (an eventfd), which sends it.
///
/// `@unchecked Sendable`: the answer is written once under `state`'s lock and read by the
/// connection's thread after its wake-up.
package final class Answer: @unchecked Sendable {
  package enum Outcome {
    case response(HTTPResponse)
    /// The client left: no answer is sent.
    case abandoned
  }

  package let token: UInt64
  /// The request's path, for the stop's message.
  package let path: String
  private let wake: Int32
  private let settled: @Sendable (UInt64) -> Void
  private let state = Mutex<Outcome?>(nil)
  private let left = Atomic(false)
  /// The task working the request, once it runs; `canceled` once `cancelWork` was called.
  private let working = Mutex<(task: Task<HTTPResponse, Never>?, canceled: Bool)>((nil, false))

  /// An answer for the request under `token`, waking `wake` (an eventfd) once given.
  package init(
    token: UInt64, path: String, wake: Int32, settled: @escaping @Sendable (UInt64) -> Void
  ) {
    self.token = token
    self.path = path
    self.wake = wake
    self.settled = settled
  }

  /// Runs `make` in a task of its own on `executor`, which `cancelWork` cancels (at once when
  /// it was called before), and returns what it made.
  package func work(
    on executor: any TaskExecutor, _ make: @escaping @Sendable () async -> HTTPResponse
  ) async -> HTTPResponse {
    let task = Task(executorPreference: executor) { await make() }
    let canceled = working.withLock { working in
      working.task = task
      return working.canceled
    }
    if canceled { task.cancel() }
    return await task.value
  }

  /// Cancels the request's work (its document's worker is killed); nothing when it ended.
  package func cancelWork() {
    let task = working.withLock { working in
      working.canceled = true
      return working.task
    }
    task?.cancel()
  }

  /// Whether an answer was given (or the request abandoned).
  package var isGiven: Bool { state.withLock { $0 != nil } }

  /// What was given, once it was.
  package var outcome: Outcome? { state.withLock { $0 } }

  /// Whether the client was seen leaving.
  package var hasClientLeft: Bool { left.load(ordering: .acquiring) }

  /// Notes that the client left.
  package func clientLeft() { left.store(true, ordering: .releasing) }

  /// Gives `response`, unless an answer was given already.
  package func give(_ response: HTTPResponse) { settle(.response(response)) }

  /// Gives no answer (its client left before its work began), unless one was given already.
  package func abandon() { settle(.abandoned) }

  private func settle(_ outcome: Outcome) {
    let first = state.withLock { state -> Bool in
      guard state == nil else { return false }
      state = outcome
      return true
    }
    guard first else { return }
    settled(token)
    var one: UInt64 = 1
    _ = write(wake, &one, 8)
  }
}
