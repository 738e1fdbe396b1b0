// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: work that is stopped stops for real, against a real `imprint serve`: a
// job canceled while its document is in a worker, a client that leaves while its request is
// worked, a request past its deadline, and SIGTERM with a request or a job's document in a
// worker past the drain time. The worker processes are found under the server's children in
// /proc, and each must be gone.

import Foundation
import ImprintTestSupport
import Synchronization
import Testing

/// Limits far beyond the tests' waits: only a cancellation can end a worker drawing the bomb
/// in time.
private let longLimits = ["--cpu-limit", "3600", "--timeout", "3600"]

/// The CPU time process `pid` has used, in clock ticks (utime + stime of /proc/PID/stat); nil
/// once it is gone.
private func cpuTicks(_ pid: Int32) -> Int? {
  guard let stat = procText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
    return nil
  }
  // After the command's closing parenthesis: state (field 3), ..., utime (14), stime (15).
  let fields = stat[stat.index(after: close)...].split(separator: " ")
  guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
    return nil
  }
  return user + system
}

/// Whether process `pid` is gone: no /proc entry, or a zombie not yet reaped.
func isGone(_ pid: Int32) -> Bool {
  guard let stat = procText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
    return true
  }
  return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
}

/// The server's one document worker once it is drawing.
///
/// It exists and has used half a second of CPU time (an idle worker uses next to none): a wait
/// for the worker, bounded.
private func drawingWorker(of server: ServiceProcess) throws -> Int32 {
  var worker: Int32?
  let found = waitFor(tries: 30_000) {
    let children = server.childProcesses
    guard children.count == 1, let ticks = cpuTicks(children[0]) else { return false }
    worker = children[0]
    return ticks >= sysconf(Int32(_SC_CLK_TCK)) / 2
  }
  try #require(found, "no worker drawing: \(server.childProcesses)")
  return try #require(worker)
}

/// The server's metrics once each of `counts` holds (a wait, bounded; an issue when it ran out).
private func metrics(of server: ServiceProcess, once counts: [String: Double]) async throws
  -> PrometheusText
{
  var metrics = try PrometheusText("")
  let settled = try await eventually {
    metrics = try PrometheusText(try await server.request("GET", "/metrics").text)
    return counts.allSatisfy { metrics.value($0.key) == $0.value }
  }
  #expect(settled, "\(counts): \(metrics)")
  return metrics
}

/// A client posting a file on a connection of its own, in the background: its answer read on a
/// thread of its own until it is whole or the server closes the connection.
private final class PendingRequest: Sendable {
  private let connection: RawHTTPConnection
  private let answered = Mutex<HTTPExchange?>(nil)

  init(port: Int, target: String, file: String, type: String) throws {
    let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    connection = try RawHTTPConnection(port: port)
    connection.send(
      "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: \(type)\r\n"
        + "Content-Length: \(body.count)\r\n\r\n")
    connection.send(body)
    // The thread holds the request until the answer came or the connection closed (the
    // server's stop closes it, and so does its end).
    Thread { [self] in
      let seen = connection.read(answers: 1, seconds: 3600, settle: 0)
      let answer =
        seen.answers.first.map(HTTPExchange.init)
        ?? HTTPExchange(status: 0, contentType: "", body: [], headers: [:])
      answered.withLock { $0 = answer }
    }.start()
  }

  /// The client leaves: its connection is closed both ways, as when a client is killed.
  func leave() { connection.leave() }

  /// Whether the answer came (or the connection closed without one).
  var ended: Bool { answered.withLock { $0 != nil } }

  /// The answer once `ended` (bounded by the caller's `waitFor`): status 0 when the connection
  /// closed before a whole answer.
  func answer() -> HTTPExchange {
    answered.withLock { $0 } ?? HTTPExchange(status: 0, contentType: "", body: [], headers: [:])
  }
}

/// A server (one request worked at a time, the long limits, `arguments`) drawing a thumbnail of
/// the CPU bomb for a client in the background.
private struct DrawingBomb {
  let folder = TemporaryFolder()
  let server: ServiceProcess
  /// The client's request.
  let request: PendingRequest
  /// The worker drawing it; nil when not waited for (`drawing` false).
  let worker: Int32?

  init(_ arguments: [String], drawing: Bool = true) throws {
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    server = try ServiceProcess(["-j", "1"] + arguments + longLimits)
    request = try PendingRequest(
      port: server.port, target: "/v1/thumbnail?name=bomb.pdf", file: bomb,
      type: "application/pdf")
    worker = drawing ? try drawingWorker(of: server) : nil
  }
}

@Suite(
  "imprint serve: stopped work stops its document workers", .liveHandlesChecked, .onTestThreads)
struct CanceledWorkTests {
  @Test("DELETE a job whose document is in a worker: the worker is killed, the job canceled")
  func deleteKillsWorker() async throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    let manifest = try writeManifest(
      [
        #"{"id": "T-1", "kind": "thumb", "file": "bomb.pdf"}"#,
        #"{"id": "Q-1", "kind": "qr", "payload": "never"}"#,
      ], in: folder)
    let server = try ServiceProcess(["-j", "1"] + longLimits)
    let id = try acceptedID(
      try await postBatch(manifest, files: [.file("bomb.pdf", path: bomb)], on: server))
    let worker = try drawingWorker(of: server)
    let removal = try await server.request("DELETE", "/v1/jobs/\(id)")
    #expect(removal.status == 202, "\(removal.text)")
    // Its worker is killed, not left to draw until its limits.
    try #require(waitFor { isGone(worker) }, "worker \(worker) still runs")
    let ended = try await waitForJob(id, on: server)
    #expect(ended.json?["state"] as? String == "canceled", "\(ended.text)")
    let error = ended.json?["error"] as? [String: Any]
    #expect(error?["code"] as? String == "service.jobCanceled", "\(ended.text)")
    // The item under way ended with the job's code; the line after it never ran.
    let results = try #require(ended.json?["results"] as? [[String: Any]], "\(ended.text)")
    #expect(results.count == 1)
    #expect(results.first?["id"] as? String == "T-1")
    #expect(results.first?["status"] as? String == "failed")
    let itemError = results.first?["error"] as? [String: Any]
    #expect(itemError?["code"] as? String == "service.jobCanceled", "\(results)")
    #expect(
      itemError?["message"] as? String
        == "job '\(id)', item 'T-1' was stopped part-way: the job was canceled")
    #expect((ended.json?["summary"] as? [String: Any])?["failed"] as? Int == 1)
    #expect(!(ended.json?["files"] as? [String] ?? []).contains { $0.hasPrefix("thumbs/") })
    let metrics = try PrometheusText(
      try await server.request("GET", "/metrics").text)
    #expect(metrics.value("imprint_sandbox_worker_cancels_total") == 1)
    #expect(metrics.value("imprint_sandbox_worker_restarts_total") == 0)
    #expect(metrics.value("imprint_sandbox_workers") == 0)
    #expect(server.childProcesses.isEmpty)
    #expect(server.stop().status == 0)
  }

  @Test("a client that leaves while its document is drawn: its worker is killed, the next served")
  func departureKillsWorker() async throws {
    let drawing = try DrawingBomb(["--access-log"])
    let (folder, server) = (drawing.folder, drawing.server)
    let worker = try #require(drawing.worker)
    // The client leaves: its connection is closed.
    drawing.request.leave()
    try #require(waitFor { isGone(worker) }, "worker \(worker) still runs")
    // Counted once the request and the worker are settled (a wait, bounded).
    let metrics = try await metrics(
      of: server,
      once: ["imprint_http_requests_abandoned_total": 1, "imprint_sandbox_worker_cancels_total": 1])
    #expect(metrics.value("imprint_sandbox_worker_restarts_total") == 0)
    #expect(metrics.value("imprint_sandbox_workers") == 0)
    // The pool's place and the sandbox's worker are free for the next request.
    let next = try await server.request(
      "POST", "/v1/inspect", form: [.file("file", path: "\(fixturesFolder)/Documents/mixed.pdf")])
    #expect(next.status == 200, "\(next.text)")
    #expect(server.childProcesses.count == 1)
    let stopped = server.stop()
    #expect(stopped.status == 0)
    // Logged as a client gone, with no status.
    let line = try #require(
      stopped.stderr.split(separator: "\n").first { $0.contains("\"path\":\"/v1/thumbnail\"") })
    #expect(line.contains("\"errorCode\":\"http.clientGone\""), "\(line)")
    #expect(!line.contains("\"status\""), "\(line)")
  }

  @Test("SIGTERM with a request worked past the drain time: it is answered 503, the server exits")
  func stopCutsWork() async throws {
    let drawing = try DrawingBomb(["--drain-timeout", "10"])
    let (server, held) = (drawing.server, drawing.request)
    let worker = try #require(drawing.worker)
    kill(server.pid, SIGTERM)
    // The server ends (a wait that only bounds a hang: the bomb would draw for far longer).
    try #require(waitFor(tries: 30_000) { isGone(server.pid) }, "the server still runs")
    let stopped = server.waitForExit()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    #expect(stopped.stderr.split(separator: "\n").last == "serve: stopped", "\(stopped.stderr)")
    try #require(waitFor(tries: 30_000) { held.ended })
    let answer = held.answer()
    #expect(answer.status == 503, "\(answer.text)")
    #expect(answer.errorCode == "http.stopping", "\(answer.text)")
    #expect(answer.headers["retry-after"] == "1")
    #expect(answer.headers["connection"] == "close")
    #expect(
      (answer.json?["error"] as? [String: Any])?["message"] as? String
        == "'/v1/thumbnail' was still being worked when the server stopped; its work was "
        + "canceled after the drain timeout of 10 s")
    #expect(await eventually { isGone(worker) })
  }

  @Test("a request past its deadline has its work canceled: 503, its worker killed")
  func deadlineKillsWorker() async throws {
    // The worker is not waited for: on a loaded machine the 10 s may pass before it drew long
    // enough to be told from an idle one, and it is then gone before it is seen.
    let drawing = try DrawingBomb(["--request-timeout", "10"], drawing: false)
    let (server, late) = (drawing.server, drawing.request)
    try #require(waitFor(tries: 30_000) { late.ended })
    let answer = late.answer()
    #expect(answer.status == 503, "\(answer.text)")
    #expect(answer.errorCode == "http.deadlineExceeded", "\(answer.text)")
    // The work no one waits for is canceled: its worker is killed, not left to draw on to its
    // limits, and none is started again.
    let metrics = try await metrics(
      of: server, once: ["imprint_sandbox_worker_cancels_total": 1, "imprint_sandbox_workers": 0])
    #expect(metrics.value("imprint_sandbox_worker_restarts_total") == 0)
    #expect(await eventually { server.childProcesses.isEmpty }, "\(server.childProcesses)")
    #expect(server.stop().status == 0)
  }

  @Test("SIGTERM while a job's document is in a worker: the item is cut short, the job logged")
  func stopCutsJob() async throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    let manifest = try writeManifest(
      [#"{"id": "T-1", "kind": "thumb", "file": "bomb.pdf"}"#], in: folder)
    let server = try ServiceProcess(["-j", "1", "--drain-timeout", "10"] + longLimits)
    let id = try acceptedID(
      try await postBatch(manifest, files: [.file("bomb.pdf", path: bomb)], on: server))
    let worker = try drawingWorker(of: server)
    kill(server.pid, SIGTERM)
    try #require(waitFor(tries: 30_000) { isGone(server.pid) }, "the server still runs")
    let stopped = server.waitForExit()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    // The job ended within the drain time, its one item cut short (it ended, failed), so it
    // is logged; without the cut it would still have been drawing when the server exited.
    let lines = stopped.stderr.split(separator: "\n").map(String.init)
    #expect(
      lines.contains(
        "serve: job '\(id)' was canceled after 1 of its items ended: the server stopped"),
      "\(stopped.stderr)")
    #expect(lines.last == "serve: stopped")
    #expect(await eventually { isGone(worker) })
  }
}
