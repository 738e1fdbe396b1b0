// SPDX-License-Identifier: Apache-2.0
// Test support: an HTTP/1.1 client over a raw socket, for tests that send bytes no HTTP library
// would (malformed heads, smuggling shapes, pipelining) and read exactly what comes back.

import Foundation
import ImprintCore

#if canImport(Testing)
  import Testing
#endif

/// One answer read off a connection: status, headers in order, body (framed by its
/// Content-Length).
public struct RawHTTPAnswer: Sendable {
  public var status: Int
  /// The status line's reason phrase (`Request Timeout`).
  public var reason: String = ""
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]

  /// The value of header `name` (any case), if given.
  public func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }

  /// The body as text.
  public var text: String { String(decoding: body, as: UTF8.self) }

  /// The error document's `error.code`, if the body is one.
  public var errorCode: String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
      let error = object["error"] as? [String: Any]
    else { return nil }
    return error["code"] as? String
  }
}

/// What a raw connection saw: the answers, in order, and whether the server closed it.
public struct RawHTTPExchange: Sendable {
  public var answers: [RawHTTPAnswer]
  /// The server closed the connection (end of stream or reset) within the wait.
  public var closed: Bool
  /// Bytes received that were not a whole answer.
  public var rest: [UInt8]
}

/// A TCP connection to `127.0.0.1:port`, blocking, closed on deinit.
///
/// `@unchecked Sendable`: used by one thread at a time (a test hands it to the thread that
/// reads it, `onOwnThread`, and waits).
public final class RawHTTPConnection: @unchecked Sendable {
  private let socket: Int32
  private var received: [UInt8] = []
  private var ended = false

  /// Connects to the loopback port.
  ///
  /// - Parameters:
  ///   - port: the server's port on 127.0.0.1.
  ///   - source: the loopback address to connect from (`127.0.0.2`: another client address
  ///     to the server); the system's choice when nil.
  /// - Throws: `POSIXError` when the socket cannot be made, bound or connected.
  public init(port: Int, from source: String? = nil) throws {
    // The descriptor is kept only once connected: an init that throws with `socket` set runs
    // deinit, whose close would then close a descriptor number another thread may have been
    // given since (another test's connection).
    let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    if let source {
      var local = sockaddr_in()
      local.sin_family = sa_family_t(AF_INET)
      guard inet_pton(AF_INET, source, &local.sin_addr) == 1,
        withUnsafePointer(
          to: &local,
          {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
              bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
          }) == 0
      else {
        close(fd)
        throw POSIXError(.EADDRNOTAVAIL)
      }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 || (errno == EINTR && Self.finishConnect(fd)) else {
      close(fd)
      throw POSIXError(.ECONNREFUSED)
    }
    socket = fd
  }

  deinit { close(socket) }

  /// Ends the connection both ways (`shutdown`), as a client that leaves does.
  ///
  /// The server sees it closed, and a `read` waiting on another thread returns: the one call
  /// that may be made while another thread reads.
  public func leave() { shutdown(socket, Int32(SHUT_RDWR)) }

  /// Waits for a connection a signal interrupted to be made: whether it was.
  private static func finishConnect(_ socket: Int32) -> Bool {
    var fds = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
    var ready: Int32
    repeat { ready = poll(&fds, 1, 10_000) } while ready < 0 && errno == EINTR
    var failure: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    return ready > 0 && getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) == 0
      && failure == 0
  }

  /// Sends `bytes` whole (a reset by the server ends it early, silently).
  public func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes { raw in
        raw.baseAddress.map {
          Glibc.send(socket, $0 + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        } ?? -1
      }
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return }
      offset += sent
    }
  }

  /// Sends `text` as UTF-8.
  public func send(_ text: String) { send(Array(text.utf8)) }

  /// Sends `bytes` in pieces of 64 KiB, and stops once the server answered (it refused the
  /// body before reading it: a 413, a 401), as a client does that reads while it sends.
  public func sendUnlessAnswered(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      if poll(&fds, 1, 0) > 0 { return }
      let end = min(offset + 65536, bytes.count)
      send(Array(bytes[offset..<end]))
      offset = end
    }
  }

  /// Reads until the server closes the connection or `count` answers are whole.
  ///
  /// Gives up when `seconds` pass without a byte; after the answers expected, waits `settle`
  /// more seconds for any extra answer, or up to `seconds` for the close an answer with
  /// `Connection: close` announced (a loaded machine may take longer than `settle` to close).
  /// The answers to HEAD have no body (`bodiless`).
  public func read(
    answers count: Int = 1, seconds: Double = 10, settle: Double = 0.2, bodiless: Bool = false
  ) -> RawHTTPExchange {
    var answers: [RawHTTPAnswer] = []
    while true {
      while let answer = takeAnswer(bodiless: bodiless) { answers.append(answer) }
      if ended { break }
      let closing = answers.last?.header("Connection")?.lowercased() == "close"
      let wait = answers.count >= count && !closing ? settle : seconds
      guard fill(seconds: wait) else { break }
    }
    return RawHTTPExchange(answers: answers, closed: ended, rest: received)
  }

  /// Waits up to `seconds` for bytes; false when none came (or the stream ended).
  ///
  /// A signal that interrupts the wait or the read (the test process gets SIGCHLD for every
  /// program a test ran) is no answer: they are tried again.
  private func fill(seconds: Double) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    while true {
      let left = max(0, (deadline - ContinuousClock.now) / .milliseconds(1))
      let ready = poll(&fds, 1, Int32(left.rounded(.up)))
      if ready < 0 && errno == EINTR { continue }
      guard ready > 0 else { return false }
      break
    }
    var chunk = [UInt8](repeating: 0, count: 65536)
    var got = -1
    repeat {
      got = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    } while got < 0 && errno == EINTR
    guard got > 0 else {
      ended = true
      return false
    }
    received.append(contentsOf: chunk[..<got])
    return true
  }

  /// Takes one whole answer off the bytes received, if they hold one (an interim 1xx answer is
  /// one, without a body, and so is every answer to HEAD).
  private func takeAnswer(bodiless: Bool) -> RawHTTPAnswer? {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard received.count >= 4,
      let end = (0...(received.count - 4)).first(where: {
        received[$0..<$0 + 4].elementsEqual(separator)
      })
    else { return nil }
    let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines[0].split(separator: " ", maxSplits: 2)
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
    let reason = statusParts.count > 2 ? String(statusParts[2]) : ""
    var headers: [(String, String)] = []
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers.append(
        (
          String(line[..<colon]),
          line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        ))
    }
    // An interim answer (100 Continue) has no body.
    let length =
      bodiless || (100...199).contains(status)
      ? 0 : headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
    guard received.count >= end + 4 + length else { return nil }
    let body = Array(received[(end + 4)..<(end + 4 + length)])
    received.removeFirst(end + 4 + length)
    return RawHTTPAnswer(status: status, reason: reason, headers: headers, body: body)
  }
}

/// Sends `request` on a new connection to `port` and reads what comes back (see
/// `RawHTTPConnection.read`).
public func rawExchange(
  port: Int, _ request: [UInt8], answers: Int = 1, seconds: Double = 10, settle: Double = 0.2,
  bodiless: Bool = false
) throws -> RawHTTPExchange {
  let connection = try RawHTTPConnection(port: port)
  connection.send(request)
  return connection.read(answers: answers, seconds: seconds, settle: settle, bodiless: bodiless)
}

// MARK: - Requests as a route test sends them

/// One request's answer: status, content type, body and the response's headers.
public struct HTTPExchange: Sendable {
  /// The HTTP status (0 when no whole answer came).
  public let status: Int
  /// The `Content-Type` header.
  public let contentType: String
  /// The body.
  public let body: [UInt8]
  /// The response headers, names lowercased (the last of each).
  public let headers: [String: String]
  /// An answer of `status` with `headers` (names lowercased) and `body`.
  public init(status: Int, contentType: String, body: [UInt8], headers: [String: String]) {
    (self.status, self.contentType, self.body, self.headers) = (status, contentType, body, headers)
  }

  /// The body as text.
  public var text: String { String(decoding: body, as: UTF8.self) }

  /// The body as a JSON object (nil when it is not one).
  public var json: [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
  }

  /// The `error` object's `code`, for an error document.
  public var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
}

extension HTTPExchange {
  /// What of the server's private layout an error answer (status 400 or more) shows its
  /// client: the server's temporary folders (`imprint-serve-…`) and each of `hidden` (a configured printer's URI, say); empty when it shows
  /// none, or for an answer that is not an error.
  public func privateText(hidden: [String] = []) -> [String] {
    guard status >= 400 else { return [] }
    return (["imprint-serve-"] + hidden).filter { !$0.isEmpty && text.contains($0) }
  }
}

#if canImport(Testing)
  /// Records an issue when `exchange` is an error answer naming the server's private folders
  /// or any of `hidden` (a printer's URI): a client reads its own names (its parts, its
  /// order's files, a printer's configured name), never the server's.
  public func expectClientView(
    _ exchange: HTTPExchange, hiding hidden: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let shown = exchange.privateText(hidden: hidden)
    #expect(
      shown.isEmpty, "the \(exchange.status) answer shows \(shown): \(exchange.text)",
      sourceLocation: sourceLocation)
  }
#endif

/// A server on a loopback port: an `InProcessService` (route tests) or a `ServiceProcess` (a
/// spawned `imprint serve`, for the tests whose subject is the process).
public protocol LoopbackServer {
  /// The port it listens on, at `127.0.0.1`.
  var port: Int { get }
}

extension ServiceProcess: LoopbackServer {}

/// One part of a `multipart/form-data` body, as `curl -F` would send it.
public enum FormItem: Sendable {
  /// A text field: `name=value` (no file name, no type).
  case field(String, String)
  /// The file at `path`, named by its last component (or `filename`), of type `type` (guessed
  /// from the extension when nil, as curl guesses: `application/octet-stream` for others).
  case file(String, path: String, filename: String? = nil, type: String? = nil)
  /// Bytes sent as a file named `filename`, of type `type` (none when nil).
  case bytes(String, [UInt8], filename: String, type: String? = nil)
}

/// A `multipart/form-data` body and the `Content-Type` that announces it.
public struct MultipartBody: Sendable {
  /// The boundary between parts.
  public let boundary: String
  /// The body's bytes, closing boundary included.
  public let bytes: [UInt8]
  /// `multipart/form-data; boundary=...`.
  public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

  /// The body of `items`, in order.
  ///
  /// - Throws: when a file cannot be read.
  public init(_ items: [FormItem], boundary: String = "imprint-test-" + UUID().uuidString)
    throws
  {
    self.boundary = boundary
    var body: [UInt8] = []
    for item in items {
      let (name, filename, type, content): (String, String?, String?, [UInt8])
      switch item {
      case .field(let field, let value):
        (name, filename, type, content) = (field, nil, nil, Array(value.utf8))
      case .file(let field, let path, let given, let declared):
        let file = given ?? (path as NSString).lastPathComponent
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        (name, filename, type, content) = (field, file, declared ?? Self.guessedType(file), bytes)
      case .bytes(let field, let bytes, let file, let declared):
        (name, filename, type, content) = (field, file, declared, bytes)
      }
      var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
      if let filename { head += "; filename=\"\(filename)\"" }
      if let type { head += "\r\nContent-Type: \(type)" }
      body += Array((head + "\r\n\r\n").utf8) + content + Array("\r\n".utf8)
    }
    bytes = body + Array("--\(boundary)--\r\n".utf8)
  }

  /// The type curl gives a file part by its extension.
  static func guessedType(_ filename: String) -> String {
    let types = [
      "gif": "image/gif", "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
      "svg": "image/svg+xml", "txt": "text/plain", "htm": "text/html", "html": "text/html",
      "pdf": "application/pdf", "xml": "application/xml",
    ]
    return types[(filename as NSString).pathExtension.lowercased()] ?? "application/octet-stream"
  }
}

extension LoopbackServer {
  /// Sends one request on a new connection and waits for its answer.
  ///
  /// The request is `METHOD target HTTP/1.1` with `Host`, the `headers` given (`"Name: value"`)
  /// and, when `body` is not nil, `Content-Length` and the body. Nothing else is added: no
  /// `Content-Type` unless given. A body is sent in pieces, and no more once the server answered
  /// (a 413 before the body was read).
  ///
  /// The socket is written and read on a thread of its own (`onOwnThread`), never on one of
  /// Swift's cooperative threads: those are as many as the machine has cores, shared by every
  /// suite, and a test blocking one while it waits would hold up the others. (An in-process
  /// service works its requests and jobs on threads of its own, `WorkPool` and `JobStore`.)
  ///
  /// Every error answer is also held to `expectClientView`: it names none of the server's
  /// private folders.
  ///
  /// - Parameters:
  ///   - method: `GET`, `POST`, ...
  ///   - target: the path and query (`/v1/qr?payload=x`).
  ///   - headers: header lines, `"Name: value"`.
  ///   - body: the body's bytes; nil for none (no `Content-Length` either).
  ///   - seconds: how long the answer may take to come.
  /// - Returns: the answer; status 0 when the connection closed before a whole answer.
  /// - Throws: `POSIXError` when the connection cannot be made.
  public func request(
    _ method: String, _ target: String, headers: [String] = [], body: [UInt8]? = nil,
    seconds: Double = 600
  ) async throws -> HTTPExchange {
    let port = port
    let exchange = try await onOwnThread {
      let connection = try RawHTTPConnection(port: port)
      var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
      for header in headers { head += header + "\r\n" }
      if let body { head += "Content-Length: \(body.count)\r\n" }
      connection.send(head + "\r\n")
      if let body { connection.sendUnlessAnswered(body) }
      let seen = connection.read(
        answers: 1, seconds: seconds, settle: 0, bodiless: method == "HEAD")
      return seen.answers.first.map(HTTPExchange.init)
        ?? HTTPExchange(status: 0, contentType: "", body: [], headers: [:])
    }
    #if canImport(Testing)
      expectClientView(exchange)
    #endif
    return exchange
  }

  /// Sends a `multipart/form-data` body of `form` (see `request(_:_:headers:body:seconds:)`).
  public func request(
    _ method: String, _ target: String, headers: [String] = [], form: [FormItem],
    seconds: Double = 600
  ) async throws -> HTTPExchange {
    let body = try MultipartBody(form)
    return try await request(
      method, target, headers: headers + ["Content-Type: \(body.contentType)"], body: body.bytes,
      seconds: seconds)
  }

  /// Sends `json` (JSON text, sent as it is) with `Content-Type: application/json`.
  public func request(
    _ method: String, _ target: String, headers: [String] = [], json: String,
    seconds: Double = 600
  ) async throws -> HTTPExchange {
    try await request(
      method, target, headers: headers + ["Content-Type: application/json"],
      body: Array(json.utf8), seconds: seconds)
  }

  /// Sends the bytes of the file at `path` as the body.
  public func request(
    _ method: String, _ target: String, headers: [String] = [], file path: String,
    seconds: Double = 600
  ) async throws -> HTTPExchange {
    try await request(
      method, target, headers: headers,
      body: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), seconds: seconds)
  }

  /// `GET target`.
  public func get(_ target: String, headers: [String] = []) async throws -> HTTPExchange {
    try await request("GET", target, headers: headers)
  }
}

/// Threads of the test process's own, for the service suites and the waits of `eventually`.
///
/// Swift's global pool has one thread a core, and other suites' blocking calls may hold them
/// all for a minute, during which a test's next step does not run (a job of a few seconds ran
/// and ended unseen; a printer's request timed out before the SIGTERM meant to catch it).
/// Started as needed; the tests on them may block (`.onTestThreads`).
///
/// 64: as many as there may be tests blocked at once (a tool run, a spawned server's exit), so
/// that another test's next step or an `eventually` still finds a thread. With 8, once the
/// route suites ran their tests side by side, blocked tests held all of them for seconds and a
/// webhook's retry, 1 s away, went by unseen (WebhookResumeTests, StopTests).
public let testExecutor = ThreadExecutor(name: "test-thread", threads: 64)

/// Asks `condition` every 10 ms until it holds, at most `tries` times, sleeping between (not
/// holding a thread), on `testExecutor`: a wait for something a server does, never a
/// measure of time.
///
/// - Returns: whether it held.
@discardableResult
public func eventually<Failure: Error>(
  tries: Int = 3000, _ condition: () async throws(Failure) -> Bool
) async throws(Failure) -> Bool {
  try await withTaskExecutorPreference(testExecutor) { () async throws(Failure) -> Bool in
    for _ in 0..<tries {
      if try await condition() { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
  }
}

extension HTTPExchange {
  /// The answer read off a raw connection.
  public init(_ answer: RawHTTPAnswer) {
    var fields: [String: String] = [:]
    for (name, value) in answer.headers { fields[name.lowercased()] = value }
    self.init(
      status: answer.status, contentType: fields["content-type"] ?? "", body: answer.body,
      headers: fields)
  }
}
