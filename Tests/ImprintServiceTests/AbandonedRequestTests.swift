// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: clients that leave while their request waits behind a full pool: their
// work is taken out of the queue (never started), counted, logged, and the requests after them
// are queued and answered, where the queue would otherwise have stayed full.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite(
  "service routes: clients that leave while their request waits", .liveHandlesChecked,
  .onTestThreads)
struct AbandonedRequestTests {
  @Test("two clients gone from a full queue: their work never starts, two others take their place")
  func abandonedWorkCancelled() async throws {
    let document = fixturesFolder + "/Documents/mixed.pdf"
    // One request worked at a time, two kept waiting; a document may take its time.
    let server = try InProcessService(settings: {
      $0.jobs = 1
      $0.queue = 2
      $0.timeout = 600
      $0.accessLog = true
    })
    let warm = try await server.request(
      "POST", "/v1/inspect", headers: ["Content-Type: application/pdf"], file: document)
    #expect(warm.status == 200)
    let workers = server.workers
    try #require(workers.count == 1, "\(workers)")
    // The worker stopped: the next inspect holds the pool's one place until it is continued.
    kill(workers[0], SIGSTOP)
    defer { kill(workers[0], SIGCONT) }
    let port = server.port
    /// A connection that sent a POST of `body` to `target` and waits for its answer.
    func send(_ target: String, _ body: [UInt8] = [], type: String? = nil) throws
      -> RawHTTPConnection
    {
      let connection = try RawHTTPConnection(port: port)
      var head = "POST \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n"
      if let type { head += "Content-Type: \(type)\r\n" }
      connection.send(Array((head + "\r\n").utf8) + body)
      return connection
    }
    /// The answer `connection` gets, read on a thread of its own.
    func answer(_ connection: RawHTTPConnection) async throws -> RawHTTPAnswer {
      let seen = await onOwnThread { connection.read(answers: 1, seconds: 120, settle: 0) }
      return try #require(seen.answers.first, "connection closed before an answer: \(seen.rest)")
    }
    /// `/metrics` once `condition` holds for it.
    func wait(_ what: String, _ condition: @escaping (PrometheusText) -> Bool) async throws
      -> PrometheusText
    {
      var metrics = try PrometheusText(try await server.get("/metrics").text)
      let held = try await eventually(tries: 6000) {
        metrics = try PrometheusText(try await server.get("/metrics").text)
        return condition(metrics)
      }
      try #require(held, "timed out waiting for \(what)")
      return metrics
    }
    let (depth, running) = ("imprint_http_queue_depth", "imprint_http_requests_running")
    let abandoned = "imprint_http_requests_abandoned_total"
    let holder = try send(
      "/v1/inspect?name=held.pdf", try FileIO.read(document, limit: 1 << 30),
      type: "application/pdf")
    _ = try await wait("the held inspect") { $0.value(running) == 1 && $0.value(depth) == 0 }
    var gone = try [1, 2].map { try send("/v1/qr?payload=abandoned-\($0)") }
    _ = try await wait("two queued") { $0.value(depth) == 2 }
    // The queue is full: one more is refused at once (503 http.busy), before the two left.
    let refused = try await answer(try send("/v1/qr?payload=refused"))
    #expect(refused.status == 503)
    #expect(refused.errorCode == "http.busy")
    gone.removeAll()
    let afterLeaving = try await wait("two abandoned") {
      $0.value(abandoned) == 2 && $0.value(depth) == 0
    }
    #expect(afterLeaving.value(abandoned) == 2)
    let kept = try [1, 2].map { try send("/v1/qr?payload=kept-\($0)") }
    _ = try await wait("two queued again") { $0.value(depth) == 2 }
    kill(workers[0], SIGCONT)
    // The held request and the two queued after the departures are answered.
    let held = try await answer(holder)
    let files = (try? JSONSerialization.jsonObject(with: Data(held.body))) as? [String: Any]
    let info = ((files?["files"] as? [[String: Any]])?.first?["info"]) as? [String: Any]
    #expect(held.status == 200 && info?["pages"] as? Int == 3, "\(held.text)")
    var keptAnswers: [RawHTTPAnswer] = []
    for connection in kept { keptAnswers.append(try await answer(connection)) }
    #expect(keptAnswers.map(\.status) == [200, 200])
    #expect(keptAnswers.map { $0.header("Content-Type") } == ["image/png", "image/png"])
    let final = try await wait("all answered") { $0.value(running) == 0 && $0.value(depth) == 0 }
    // Only the two kept QR codes were made: the abandoned ones' work never ran.
    #expect(
      final.value(
        "imprint_http_requests_total", ["route": "/v1/qr", "method": "POST", "status": "200"])
        == 2)
    #expect(final.value("imprint_errors_total", ["code": "http.clientGone"]) == 2)
    #expect(final.value(abandoned) == 2)
    #expect(await server.stop().isComplete)
    // The access log: the two abandoned requests without a status, as http.clientGone.
    let records = try server.accessLog.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let goneRecords = records.filter { $0["errorCode"] as? String == "http.clientGone" }
    #expect(goneRecords.count == 2, "\(server.log)")
    #expect(goneRecords.allSatisfy { $0["status"] == nil && $0["path"] as? String == "/v1/qr" })
  }
}
