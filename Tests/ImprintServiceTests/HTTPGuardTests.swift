// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the service against clients that try to hold or confuse it: query
// parameters and paths that are not text, a body's length given twice (request smuggling),
// options in both the query and the body, many connections from one address, a head sent a byte
// at a time, bodies past the body memory, plain and chunked: all with the raw client, in this
// process but for the one test that measures the server's resident memory (`imprint serve`).

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite(
  "imprint serve: connection limits, slow heads, request text and framing",
  .liveHandlesChecked, .onTestThreads)
struct HTTPGuardTests {
  @Test("connections from one address past --max-connections-per-ip are closed; others get in")
  func perAddressLimit() async throws {
    let server = try InProcessService(settings: {
      $0.maxConnections = 16
      $0.maxConnectionsPerIp = 8
    })
    let port = server.port
    // 30 idle sockets from 127.0.0.2 (the limits count addresses; the probe comes from
    // 127.0.0.1): without the per-address limit they take all 16 places and /healthz waits.
    let (closed, healthz, metrics) = try await onOwnThread {
      let held = try (0..<30).map { _ in try RawHTTPConnection(port: port, from: "127.0.0.2") }
      // The server accepts and closes those past the limit: counted as they close (at most
      // 20 s on a loaded machine), then once more after a pause for any closed beyond.
      var closed = Set<Int>()
      func look() {
        for (index, socket) in held.enumerated() where !closed.contains(index) {
          if socket.read(seconds: 0, settle: 0).closed { closed.insert(index) }
        }
      }
      let deadline = Date() + 20
      while closed.count < 22 && Date() < deadline {
        look()
        usleep(100_000)
      }
      usleep(500_000)
      look()
      // The probe asks on one connection: the open connections the server counts are the 8
      // it kept, and this one.
      let probe = try RawHTTPConnection(port: port)
      probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      let healthz = probe.read(seconds: 10, settle: 0).answers.first?.status
      probe.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
      let metrics = probe.read(seconds: 10, settle: 0).answers.first?.text ?? ""
      withExtendedLifetime(held) {}
      return (closed.count, healthz, metrics)
    }
    #expect(healthz == 200)
    // 8 kept, the other 22 closed by the server.
    #expect(closed == 22)
    #expect(try PrometheusText(metrics).value("imprint_http_connections") == 9, "\(metrics)")
    #expect(await server.stop().isComplete)
  }

  @Test("a head sent a byte at a time is cut after --head-timeout; an idle connection is not")
  func slowHead() async throws {
    let server = try InProcessService(settings: {
      $0.headTimeout = 2
      $0.connectionTimeout = 60
      $0.requestTimeout = 60
    })
    let port = server.port
    // Each client trickles one byte every 0.5 s for at most 20 s (the connection is never
    // idle) and reports whether the server closed it and how many bytes it sent.
    @Sendable func trickle(_ connection: RawHTTPConnection, limit: Int = 40) -> (
      closed: Bool, sent: Int
    ) {
      for sent in 0..<limit {
        connection.send("a")
        if connection.read(seconds: 0.5, settle: 0).closed { return (true, sent + 1) }
      }
      return (false, limit)
    }
    let health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    let slow = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
    let (first, answered, second, idle) = try await onOwnThread {
      let one = try RawHTTPConnection(port: port)
      one.send(slow)
      let first = trickle(one)
      // A kept-alive connection: one request answered, then the next head trickled.
      let two = try RawHTTPConnection(port: port)
      two.send(health)
      let answered = two.read(seconds: 20, settle: 0).answers.first
      two.send(slow)
      let second = trickle(two)
      // Idle for twice the head timeout, then a whole request: still served.
      let three = try RawHTTPConnection(port: port)
      sleep(4)
      three.send(health)
      let idle = three.read(seconds: 20, settle: 0).answers.first
      return (first, answered, second, idle)
    }
    for (name, trickled) in [("first", first), ("second", second)] {
      #expect(trickled.closed, "\(name): \(trickled)")
      #expect(trickled.sent < 40, "\(name): \(trickled)")
    }
    #expect(answered.map { "\($0.status) \($0.reason)" } == "200 OK")
    #expect(idle.map { "\($0.status) \($0.reason)" } == "200 OK")
    #expect(try await server.get("/healthz").status == 200)
    // The two cut connections are counted, the idle one is not.
    let metrics = try await server.get("/metrics").text
    #expect(metrics.contains("\nimprint_http_slow_heads_closed_total 2\n"), "\(metrics)")
    #expect(await server.stop().isComplete)
  }

  @Test(
    "a query parameter or path with NUL or bytes that are not UTF-8 is 400, nothing served",
    arguments: [
      ("/v1/qr?payload=abc%00def", "http.invalidParameter", "parameter 'payload'", "NUL"),
      ("/v1/qr?payload=%C0%AF", "http.invalidParameter", "parameter 'payload'", "not UTF-8"),
      ("/v1/qr?payload=%ED%A0%80", "http.invalidParameter", "parameter 'payload'", "not UTF-8"),
      ("/v1/qr?pay%00load=x", "http.invalidParameter", "has a name that", "NUL"),
      ("/v1/card?template=classic%00x", "http.invalidParameter", "parameter 'template'", "NUL"),
      ("/v1/jobs/abc%00", "http.invalidPath", "the path '/v1/jobs/abc%00'", "NUL"),
      ("/v1/jobs/%C0%AF", "http.invalidPath", "the path '/v1/jobs/%C0%AF'", "not UTF-8"),
    ])
  func requestText(target: String, code: String, names: String, found: String) async throws {
    let server = try InProcessService()
    let method = target.hasPrefix("/v1/jobs") ? "GET" : "POST"
    let answer = try await server.request(method, target)
    #expect(answer.status == 400, "\(answer.text)")
    #expect(answer.errorCode == code, "\(answer.text)")
    let message = try #require(
      (answer.json?["error"] as? [String: Any])?["message"] as? String, "\(answer.text)")
    #expect(message.contains(names), "\(message)")
    #expect(message.contains(found), "\(message)")
    #expect(await server.stop().isComplete)
  }

  @Test("a query parameter in UTF-8 is taken whole: é encoded and read back by zbarimg")
  func utf8Parameter() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let png = try await server.request("POST", "/v1/qr?payload=caf%C3%A9%20%2B1")
    #expect(png.status == 200, "\(png.text)")
    let path = folder.file("code.png")
    try Data(png.body).write(to: URL(fileURLWithPath: path))
    // zbarimg's bytes as they are (-Sbinary: its text mode guesses a legacy charset for é).
    let read = try runTool("zbarimg", ["-q", "--raw", "--nodbus", "-Sbinary", path])
    #expect(read.stdoutBytes == Array("café +1".utf8), "\(read.stdout)")
    #expect(await server.stop().isComplete)
  }

  @Test("a body's length given twice is 400 http.ambiguousFraming and the connection closed")
  func smuggling() async throws {
    let server = try InProcessService()
    let port = server.port
    // Raw sockets: the bytes after the head would be a second request if they were read.
    let smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    let heads = [
      "twoLengths": "POST /v1/qr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
        + "\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n",
      "lengthAndChunked": "POST /v1/qr HTTP/1.1\r\nHost: x\r\nContent-Type: "
        + "application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "0\r\n\r\n",
    ]
    for (name, head) in heads.sorted(by: { $0.key < $1.key }) {
      let seen = try await onOwnThread {
        try rawExchange(port: port, Array((head + smuggled).utf8), answers: 2, seconds: 20)
      }
      #expect(seen.answers.count == 1, "\(name): \(seen.answers.map(\.status))")
      let answer = try #require(seen.answers.first, "\(name)")
      #expect("\(answer.status) \(answer.reason)" == "400 Bad Request", "\(name)")
      #expect(seen.closed, "\(name): left open")
      #expect(answer.errorCode == "http.ambiguousFraming", "\(name): \(answer.text)")
      let error = HTTPExchange(answer).json?["error"] as? [String: Any]
      #expect((error?["message"] as? String ?? "").contains("Content-Length: 5"), "\(answer.text)")
    }
    #expect(await server.stop().isComplete)
  }

  @Test("bodies past --body-memory are refused 503 http.bodiesBusy before they are read")
  func bodyMemory() async throws {
    let megabytes8 = 8 << 20
    // `imprint serve` itself: its resident memory is measured, which in this process would
    // count every other test's too.
    let server = try ServiceProcess([
      "--max-body", "\(megabytes8)", "--body-memory", "\(2 * megabytes8)",
      "--request-timeout", "600", "--connection-timeout", "600",
    ])
    func residentKB() throws -> Int {
      let status = try #require(procText("/proc/\(server.pid)/status"))
      let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
      return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
    let before = try residentKB()
    // 20 clients each announce an 8 MiB body; a client not answered within a second sends all
    // of it but its last byte and holds it there. An answered one reads until the server
    // closes the connection.
    let port = server.port
    let (held, answers) = try await onOwnThread {
      let head =
        "POST /v1/inspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
        + "Content-Length: \(megabytes8)\r\n\r\n"
      let body = [UInt8](repeating: 0x25, count: megabytes8 - 1)
      var held: [RawHTTPConnection] = []
      var answers: [RawHTTPExchange] = []
      for _ in 0..<20 {
        let connection = try RawHTTPConnection(port: port)
        connection.send(head)
        let seen = connection.read(seconds: 1, settle: 10)
        if seen.answers.isEmpty && !seen.closed {
          connection.send(body)
          held.append(connection)
        } else {
          answers.append(seen)
        }
      }
      return (held, answers)
    }
    let during = try residentKB()
    // Two bodies fit in the 16 MiB; the 18 others were refused from their head.
    #expect(held.count == 2)
    #expect(answers.count == 18)
    for seen in answers {
      let answer = try #require(seen.answers.first)
      #expect("\(answer.status) \(answer.reason)" == "503 Service Unavailable", "\(answer.text)")
      #expect(answer.errorCode == "http.bodiesBusy", "\(answer.text)")
      #expect(answer.header("Retry-After") == "1", "\(answer.headers)")
      #expect(seen.closed, "left open: \(answer.text)")
    }
    // The server holds two bodies' worth, not twenty (160 MiB); 48 MiB leaves room for the
    // rest of its life.
    #expect(during - before < 48 * 1024, "VmRSS \(before) kB -> \(during) kB")
    // The held bodies given back once their clients left: a body is read again.
    for connection in held { connection.leave() }
    let mixed = fixturesFolder + "/Documents/mixed.pdf"
    #expect(
      try await eventually {
        try await server.request(
          "POST", "/v1/inspect?name=mixed.pdf", headers: ["Content-Type: application/pdf"],
          file: mixed
        ).status == 200
      })
    #expect(server.stop().status == 0)
  }

  @Test("chunked bodies take --body-memory as they grow: past it 503, past --max-body 413")
  func chunkedBodyMemory() async throws {
    let megabyte = 1 << 20
    let server = try InProcessService(settings: {
      $0.maxBody = 8 * megabyte
      $0.bodyMemory = 16 * megabyte
      $0.requestTimeout = 600
      $0.connectionTimeout = 600
    })
    func metric(_ name: String) async throws -> Int? {
      let text = try await server.request("GET", "/metrics").text
      return try PrometheusText(text).value(name).map { Int($0) }
    }
    #expect(try await metric("imprint_http_body_bytes_limit") == 16 * megabyte)
    let port = server.port
    /// A chunked body's head sent on a new connection (closed by the server once answered).
    @Sendable func start() throws -> RawHTTPConnection {
      let connection = try RawHTTPConnection(port: port)
      connection.send(
        "POST /v1/inspect?name=x.pdf HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
          + "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n")
      return connection
    }
    /// `total` bytes of body, in chunks of 256 KiB.
    @Sendable func send(_ connection: RawHTTPConnection, _ total: Int) {
      let piece = 256 * 1024
      let chunk =
        Array("\(String(piece, radix: 16))\r\n".utf8) + Array(repeating: 0x25, count: piece) + [
          13, 10,
        ]
      for _ in 0..<(total / piece) { connection.send(chunk) }
    }
    /// The last chunk, then the answer, read until the server closes the connection.
    @Sendable func answer(_ connection: RawHTTPConnection) -> (RawHTTPAnswer?, closed: Bool) {
      connection.send("0\r\n\r\n")
      let seen = connection.read(seconds: 60, settle: 10)
      return (seen.answers.first, seen.closed)
    }
    // Two chunked bodies of 6 MiB without their last chunk: held, 12 of the 16 MiB.
    let held = try await onOwnThread {
      let held = [try start(), try start()]
      for connection in held { send(connection, 6 * megabyte) }
      return held
    }
    // The server counts the two bodies as it reads them (the kernel may still hold some).
    #expect(try await eventually { try await metric("imprint_http_body_bytes") == 12 * megabyte })
    // A third of 32 MiB outgrows the budget at 4 MiB; the rest is read and dropped (a send
    // returns once the server took all but the sockets' buffers). A fourth of 1 MiB still
    // fits: the third's 4 MiB were given back when it was refused.
    let (fourth, third) = try await onOwnThread {
      let third = try start()
      send(third, 32 * megabyte)
      let fourth = try start()
      send(fourth, megabyte)
      return (answer(fourth), answer(third))
    }
    for connection in held { connection.leave() }
    // The third body's bytes were given back when it was refused, the two held when their
    // client closed them.
    #expect(try await eventually { try await metric("imprint_http_body_bytes") == 0 })
    // The fourth is read and worked: its bytes are no document.
    let worked = try #require(fourth.0)
    #expect("\(worked.status) \(worked.reason)" == "422 Unprocessable Content", "\(worked.text)")
    #expect(worked.errorCode == "document.unsupportedType", "\(worked.text)")
    #expect(fourth.closed)
    let refused = try #require(third.0)
    #expect("\(refused.status) \(refused.reason)" == "503 Service Unavailable", "\(refused.text)")
    #expect(refused.errorCode == "http.bodiesBusy", "\(refused.text)")
    #expect(refused.header("Retry-After") == "1", "\(refused.headers)")
    #expect(third.closed)
    // 9 MiB: over --max-body.
    let overLimit = try await onOwnThread {
      let big = try start()
      send(big, 9 * megabyte)
      return answer(big)
    }
    let tooLarge = try #require(overLimit.0)
    #expect("\(tooLarge.status) \(tooLarge.reason)" == "413 Content Too Large", "\(tooLarge.text)")
    #expect(tooLarge.errorCode == "http.bodyTooLarge", "\(tooLarge.text)")
    #expect(overLimit.closed)
    #expect(try await metric("imprint_http_body_bytes") == 0)
    // A chunked body that fits is read and worked (the file in chunks of 64 KiB).
    let mixed = try FileIO.read(fixturesFolder + "/Documents/mixed.pdf", limit: 1 << 30)
    var chunked = Array(
      ("POST /v1/inspect?name=mixed.pdf HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf"
        + "\r\nTransfer-Encoding: chunked\r\n\r\n").utf8)
    for start in stride(from: 0, to: mixed.count, by: 65536) {
      let piece = mixed[start..<min(start + 65536, mixed.count)]
      chunked += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
    }
    chunked += Array("0\r\n\r\n".utf8)
    let request = chunked
    let fits = try await onOwnThread {
      try rawExchange(port: port, request, seconds: 60, settle: 0)
    }
    #expect(fits.answers.first?.status == 200, "\(fits.answers.first?.text ?? "")")
    #expect(await server.stop().isComplete)
  }

  @Test("/v1/qr with options in both the query and a JSON body is 400 naming the parameter")
  func qrQueryAndBody() async throws {
    let server = try InProcessService()
    let answer = try await server.request(
      "POST", "/v1/qr?payload=from-query", json: #"{"payload": "from-body"}"#)
    #expect(answer.status == 400, "\(answer.text)")
    #expect(answer.errorCode == "http.invalidParameter")
    #expect(answer.text.contains("parameter 'payload' is given in the query"), "\(answer.text)")
    // Either alone is served.
    let body = try await server.request("POST", "/v1/qr", json: #"{"payload": "from-body"}"#)
    #expect(body.status == 200)
    #expect(try await server.request("POST", "/v1/qr?payload=q").status == 200)
    #expect(await server.stop().isComplete)
  }
}
