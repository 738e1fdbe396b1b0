// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the limits that keep `imprint serve` alive under load and slow clients:
// a full queue answered 503 with Retry-After, a request past --request-timeout answered 503, a
// body trickled or stalled past it dropped, an idle connection closed. A document worker stopped
// with SIGSTOP holds a request in the pool for as long as the test needs, so nothing depends on
// how fast the machine is.

import Foundation
import ImprintTestSupport
import Testing

private let mixed = fixturesFolder + "/Documents/mixed.pdf"

/// A server with one document worker started, and that worker's pid.
private func serverWithWorker(_ arguments: [String], in folder: TemporaryFolder) throws
  -> (ServiceProcess, Int32)
{
  let server = try ServiceProcess(["-j", "1"] + arguments)
  #expect(try inspect(server, in: folder).status == 200)
  let workers = server.childProcesses
  try #require(workers.count == 1, "\(workers)")
  return (server, workers[0])
}

private func inspect(_ server: ServiceProcess, in folder: TemporaryFolder) throws -> HTTPExchange {
  try curlRequest(
    "POST", server.url("/v1/inspect?name=mixed.pdf"), body: mixed,
    headers: ["Content-Type: application/pdf"], in: folder)
}

/// A gauge or counter of `/metrics`.
private func metric(
  _ server: ServiceProcess, _ name: String, _ labels: [String: String] = [:],
  in folder: TemporaryFolder
) throws -> Double? {
  try PrometheusText(curlRequest("GET", server.url("/metrics"), in: folder).text).value(
    name, labels)
}

@Suite("imprint serve: queue, deadlines and slow clients", .liveHandlesChecked, .serialized)
struct LimitsTests {
  @Test("a full queue is 503 http.busy with Retry-After; the request being worked is answered")
  func queueFull() throws {
    let folder = TemporaryFolder()
    let (server, worker) = try serverWithWorker(["--queue", "0"], in: folder)
    kill(worker, SIGSTOP)
    // Request A takes the one place and waits on the stopped worker.
    let held = Process()
    held.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    held.arguments = [
      "-s", "-o", folder.file("held.json"), "-w", "%{http_code}", "-H",
      "Content-Type: application/pdf", "--data-binary", "@" + mixed,
      server.url("/v1/inspect?name=mixed.pdf"),
    ]
    let heldOutput = Pipe()
    held.standardOutput = heldOutput
    try held.run()
    #expect(try waitFor { try metric(server, "imprint_http_requests_running", in: folder) == 1 })
    // Probes and scrapes are still answered; any other request is refused.
    #expect(try curlRequest("GET", server.url("/healthz"), in: folder).status == 200)
    let document = try curlRequest("GET", server.url("/openapi.json"), in: folder)
    #expect(document.status == 200)
    #expect(document.json?["openapi"] as? String != nil)
    let refused = try curlRequest("POST", server.url("/v1/qr?payload=x"), in: folder)
    #expect(refused.status == 503)
    #expect(refused.errorCode == "http.busy")
    #expect(refused.headers["retry-after"] == "1")
    #expect(try metric(server, "imprint_errors_total", ["code": "http.busy"], in: folder) == 1)
    kill(worker, SIGCONT)
    held.waitUntilExit()
    let status = String(
      decoding: heldOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(status == "200")
    #expect(try curlRequest("POST", server.url("/v1/qr?payload=x"), in: folder).status == 200)
    #expect(server.stop().status == 0)
  }

  @Test("work that outlasts --request-timeout is 503 http.deadlineExceeded with Retry-After")
  func deadline() throws {
    let folder = TemporaryFolder()
    let (server, worker) = try serverWithWorker(["--request-timeout", "1"], in: folder)
    kill(worker, SIGSTOP)
    let late = try inspect(server, in: folder)
    kill(worker, SIGCONT)
    #expect(late.status == 503)
    #expect(late.errorCode == "http.deadlineExceeded")
    #expect(late.text.contains("within the request timeout of 1 s"))
    // A deadline passed under load: the client is told when to come back, as for a full queue.
    #expect(late.headers["retry-after"] == "1")
    // The worker, continued, serves the next request.
    #expect(try inspect(server, in: folder).status == 200)
    #expect(server.stop().status == 0)
  }

  @Test("a body trickled or stalled past --request-timeout is dropped; an idle connection closes")
  func slowClients() throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["--request-timeout", "1", "--connection-timeout", "2"])
    // Python sockets: a client sending 100 bytes of a 100 000-byte body every 0.1 s; one that
    // sends 3 bytes of 10 and stops; one that connects and sends nothing. Each waits at most
    // 60 s for the server to close, and reports what it saw.
    let script = """
      import json, select, socket, sys, time
      port = int(sys.argv[1])
      head = b"POST /v1/inspect HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/pdf\\r\\n"
      def closed(s, wait):
          ready, _, _ = select.select([s], [], [], wait)
          if not ready:
              return None
          try:
              return s.recv(65536)
          except ConnectionResetError:
              return b""
      report = {}
      s = socket.create_connection(("127.0.0.1", port))
      s.sendall(head + b"Content-Length: 100000\\r\\n\\r\\n")
      sent, answer = 0, None
      for _ in range(600):
          try:
              s.sendall(b"%" * 100)
              sent += 100
          except (BrokenPipeError, ConnectionResetError):
              answer = b""
              break
          answer = closed(s, 0.1)
          if answer is not None:
              break
      report["trickle"] = {"sent": sent, "answer": None if answer is None else answer.decode()}
      s = socket.create_connection(("127.0.0.1", port))
      s.sendall(head + b"Content-Length: 10\\r\\n\\r\\nabc")
      answer = closed(s, 60)
      report["stalled"] = None if answer is None else answer.decode()
      s = socket.create_connection(("127.0.0.1", port))
      answer = closed(s, 60)
      report["idle"] = None if answer is None else answer.decode()
      print(json.dumps(report))
      """
    let client = try runTool("python3", ["-c", script, "\(server.port)"])
    #expect(client.status == 0, "\(client.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(client.stdoutBytes)) as? [String: Any])
    let trickle = try #require(report["trickle"] as? [String: Any])
    // Answered 408 before the body was all sent, and closed.
    #expect((trickle["answer"] as? String ?? "").hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
    #expect((trickle["sent"] as? Int ?? 100_000) < 100_000)
    #expect((report["stalled"] as? String ?? "").hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
    // A connection that never sent a request is closed without an answer.
    #expect(report["idle"] as? String == "")
    #expect(
      try metric(server, "imprint_errors_total", ["code": "http.requestTimeout"], in: folder) == 2)
    #expect(try curlRequest("GET", server.url("/healthz"), in: folder).status == 200)
    #expect(server.stop().status == 0)
  }
}
