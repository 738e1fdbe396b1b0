// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the limits that keep the service alive under load and slow clients:
// a full queue answered 503 with Retry-After, a request past --request-timeout answered 503, a
// body trickled or stalled past it dropped, an idle connection closed. A document worker stopped
// with SIGSTOP holds a request in the pool for as long as the test needs, so nothing depends on
// how fast the machine is.

import Foundation
import ImprintCore
import ImprintService
import ImprintTestSupport
import Testing

private let mixed = fixturesFolder + "/Documents/mixed.pdf"

/// A service with one document worker started, and that worker's pid.
private func serverWithWorker(_ change: (inout ServiceSettings) -> Void) async throws
  -> (InProcessService, Int32)
{
  let server = try InProcessService(settings: {
    $0.jobs = 1
    change(&$0)
  })
  // The first document starts the worker; with a 1 s deadline on a loaded machine that may
  // take longer than the deadline (its work canceled, the worker killed): asked again until a
  // worker answered in time.
  #expect(try await eventually(tries: 100) { try await inspect(server).status == 200 })
  let workers = server.workers
  try #require(workers.count == 1, "\(workers)")
  return (server, workers[0])
}

private func inspect(_ server: InProcessService) async throws -> HTTPExchange {
  try await server.request(
    "POST", "/v1/inspect?name=mixed.pdf", headers: ["Content-Type: application/pdf"], file: mixed)
}

/// A gauge or counter of `/metrics`.
private func metric(
  _ server: InProcessService, _ name: String, _ labels: [String: String] = [:]
) async throws -> Double? {
  try PrometheusText(try await server.get("/metrics").text).value(name, labels)
}

@Suite(
  "service routes: queue, deadlines and slow clients", .liveHandlesChecked, .onTestThreads)
struct LimitsTests {
  @Test("a full queue is 503 http.busy with Retry-After; the request being worked is answered")
  func queueFull() async throws {
    let (server, worker) = try await serverWithWorker { $0.queue = 0 }
    kill(worker, SIGSTOP)
    // Request A takes the one place and waits on the stopped worker.
    async let held = inspect(server)
    #expect(try await eventually { try await metric(server, "imprint_http_requests_running") == 1 })
    // Probes and scrapes are still answered; any other request is refused.
    #expect(try await server.request("GET", "/healthz").status == 200)
    let document = try await server.request("GET", "/openapi.json")
    #expect(document.status == 200)
    #expect(document.json?["openapi"] as? String != nil)
    let refused = try await server.request("POST", "/v1/qr?payload=x")
    #expect(refused.status == 503)
    #expect(refused.errorCode == "http.busy")
    #expect(refused.headers["retry-after"] == "1")
    // Counted when the answer has been written, which may be after the client read it.
    #expect(
      try await eventually {
        try await metric(server, "imprint_errors_total", ["code": "http.busy"]) == 1
      })
    kill(worker, SIGCONT)
    #expect(try await held.status == 200)
    #expect(try await server.request("POST", "/v1/qr?payload=x").status == 200)
    #expect(await server.stop().isComplete)
  }

  @Test("work that outlasts --request-timeout is 503 http.deadlineExceeded with Retry-After")
  func deadline() async throws {
    let (server, worker) = try await serverWithWorker { $0.requestTimeout = 1 }
    kill(worker, SIGSTOP)
    let late = try await inspect(server)
    kill(worker, SIGCONT)
    #expect(late.status == 503)
    #expect(late.errorCode == "http.deadlineExceeded")
    #expect(late.text.contains("within the request timeout of 1 s"))
    // A deadline passed under load: the client is told when to come back, as for a full queue.
    #expect(late.headers["retry-after"] == "1")
    // The worker, continued, serves the next request (asked again when the loaded machine
    // made one take longer than the 1 s deadline).
    #expect(try await eventually(tries: 100) { try await inspect(server).status == 200 })
    #expect(await server.stop().isComplete)
  }

  @Test("a body trickled or stalled past --request-timeout is dropped; an idle connection closes")
  func slowClients() async throws {
    let server = try InProcessService(settings: {
      $0.requestTimeout = 1
      $0.connectionTimeout = 2
    })
    // Raw sockets: a client sending 100 bytes of a 100 000-byte body every 0.1 s; one that
    // sends 3 bytes of 10 and stops; one that connects and sends nothing. Each waits at most
    // 60 s for the server to close, and reports what it saw.
    let port = server.port
    let head = "POST /v1/inspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
    let (trickle, sent): (RawHTTPExchange?, Int) = try await onOwnThread {
      let connection = try RawHTTPConnection(port: port)
      connection.send(head + "Content-Length: 100000\r\n\r\n")
      var sent = 0
      for _ in 0..<600 {
        connection.send(String(repeating: "%", count: 100))
        sent += 100
        let seen = connection.read(seconds: 0.1, settle: 0)
        if !seen.answers.isEmpty || seen.closed { return (seen, sent) }
      }
      return (nil, sent)
    }
    let stalled = try await onOwnThread {
      try rawExchange(port: port, Array((head + "Content-Length: 10\r\n\r\nabc").utf8), seconds: 60)
    }
    let idle = try await onOwnThread { try rawExchange(port: port, [], seconds: 60) }
    // Answered 408 before the body was all sent, and closed.
    for seen in [trickle, stalled] {
      #expect(seen?.answers.map { "\($0.status) \($0.reason)" } == ["408 Request Timeout"])
    }
    #expect(sent < 100_000)
    // A connection that never sent a request is closed without an answer.
    #expect(idle.closed && idle.answers.isEmpty && idle.rest.isEmpty)
    #expect(
      try await eventually {
        try await metric(server, "imprint_errors_total", ["code": "http.requestTimeout"]) == 2
      })
    #expect(try await server.request("GET", "/healthz").status == 200)
    #expect(await server.stop().isComplete)
  }
}
