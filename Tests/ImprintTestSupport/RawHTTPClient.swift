// SPDX-License-Identifier: Apache-2.0
// Test support: an HTTP/1.1 client over a raw socket, for tests that send bytes no HTTP library
// would (malformed heads, smuggling shapes, pipelining) and read exactly what comes back.

import Foundation

/// One answer read off a connection: status, headers in order, body (framed by its
/// Content-Length).
public struct RawHTTPAnswer: Sendable {
  public var status: Int
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
public final class RawHTTPConnection {
  private let socket: Int32
  private var received: [UInt8] = []
  private var ended = false

  /// Connects to the loopback port.
  public init(port: Int) throws {
    socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(socket)
      throw POSIXError(.ECONNREFUSED)
    }
  }

  deinit { close(socket) }

  /// Sends `bytes` whole (a reset by the server ends it early, silently).
  public func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes { raw in
        raw.baseAddress.map {
          Glibc.send(socket, $0 + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        } ?? -1
      }
      guard sent > 0 else { return }
      offset += sent
    }
  }

  /// Sends `text` as UTF-8.
  public func send(_ text: String) { send(Array(text.utf8)) }

  /// Reads until the server closes the connection, `count` answers are whole, or `seconds`
  /// pass without a byte (then, after the answers expected, `settle` more seconds for any
  /// extra answer).
  public func read(answers count: Int = 1, seconds: Double = 10, settle: Double = 0.2)
    -> RawHTTPExchange
  {
    var answers: [RawHTTPAnswer] = []
    while true {
      while let answer = takeAnswer() { answers.append(answer) }
      if ended { break }
      let wait = answers.count >= count ? settle : seconds
      guard fill(seconds: wait) else { break }
    }
    return RawHTTPExchange(answers: answers, closed: ended, rest: received)
  }

  /// Waits up to `seconds` for bytes; false when none came (or the stream ended).
  private func fill(seconds: Double) -> Bool {
    var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    guard poll(&fds, 1, Int32(seconds * 1000)) > 0 else { return false }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let got = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    guard got > 0 else {
      ended = true
      return false
    }
    received.append(contentsOf: chunk[..<got])
    return true
  }

  /// Takes one whole answer off the bytes received, if they hold one (an interim 1xx answer is
  /// one, without a body).
  private func takeAnswer() -> RawHTTPAnswer? {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard received.count >= 4,
      let end = (0...(received.count - 4)).first(where: {
        received[$0..<$0 + 4].elementsEqual(separator)
      })
    else { return nil }
    let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines[0].split(separator: " ", maxSplits: 2)
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
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
      (100...199).contains(status)
      ? 0 : headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
    guard received.count >= end + 4 + length else { return nil }
    let body = Array(received[(end + 4)..<(end + 4 + length)])
    received.removeFirst(end + 4 + length)
    return RawHTTPAnswer(status: status, headers: headers, body: body)
  }
}

/// Sends `request` on a new connection to `port` and reads what comes back (see
/// `RawHTTPConnection.read`).
public func rawExchange(
  port: Int, _ request: [UInt8], answers: Int = 1, seconds: Double = 10, settle: Double = 0.2
) throws -> RawHTTPExchange {
  let connection = try RawHTTPConnection(port: port)
  connection.send(request)
  return connection.read(answers: answers, seconds: seconds, settle: settle)
}
