// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: what an operator sees of the service (in this process): `/metrics`
// scraped and read by a strict parser of the exposition format, the counts moving as requests
// are made; a killed document worker counted as a restart; the JSON access log read back against
// what the client sent and received.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintTestSupport
import Testing

@testable import ImprintService

private let documents = fixturesFolder + "/Documents/"

/// Scrapes `/metrics` and reads it strictly.
private func scrape(_ server: InProcessService) async throws -> PrometheusText {
  let answer = try await server.request("GET", "/metrics")
  #expect(answer.status == 200)
  #expect(answer.contentType == "text/plain; version=0.0.4; charset=utf-8")
  return try PrometheusText(answer.text)
}

@Suite("service routes: metrics and access logs", .liveHandlesChecked, .onTestThreads)
struct OperationsTests {
  @Test("/metrics parses strictly and its counters, histograms and error codes follow requests")
  func metricsFollowRequests() async throws {
    let server = try InProcessService(settings: { $0.queue = 7 })
    let before = try await scrape(server)
    #expect(before.types["imprint_http_requests_total"] == "counter")
    #expect(before.types["imprint_http_request_duration_seconds"] == "histogram")
    #expect(before.types["imprint_http_queue_depth"] == "gauge")
    #expect(before.value("imprint_http_requests_total", healthz) == nil)
    #expect(before.value("imprint_http_queue_limit") == 7)

    for _ in 0..<3 {
      #expect(try await server.request("GET", "/healthz").status == 200)
    }
    #expect(try await server.request("GET", "/no/such?x=1").status == 404)
    #expect(try await server.request("PATCH", "/healthz").status == 405)
    // A method the parser does not know: the route's 405 all the same, its methods in Allow.
    let brew = try await server.request("BREW", "/healthz")
    #expect(brew.status == 405 && brew.headers["allow"] == "GET, HEAD", "\(brew.text)")
    let json = ["Content-Type: application/json"]
    let bad = try await server.request(
      "POST", "/v1/qr", headers: json, body: Array(("{\"payload\": ").utf8))
    #expect(bad.status == 400)
    let qr = try await server.request("POST", "/v1/qr?payload=metrics")
    #expect(qr.status == 200)

    // A request is counted once its answer is written, which may be just after the client read
    // it: scraped again until the last request and every scrape before are counted and only
    // this scrape is in flight (each scrape is counted by a later one).
    var after = try await scrape(server)
    var scrapesBefore = 1
    let scraped = ["route": "/metrics", "method": "GET", "status": "200"]
    let counted = try await eventually {
      if after.value("imprint_http_requests_total", qrMade) == 1,
        after.value("imprint_http_requests_total", scraped) == Double(scrapesBefore),
        after.value("imprint_http_requests_in_flight") == 1
      {
        return true
      }
      after = try await scrape(server)
      scrapesBefore += 1
      return false
    }
    #expect(counted)
    #expect(after.value("imprint_http_requests_total", healthz) == 3)
    #expect(after.value("imprint_http_requests_total", scraped) == Double(scrapesBefore))
    // One each.
    for (route, method, status) in [
      ("unmatched", "GET", "404"), ("/healthz", "PATCH", "405"), ("/healthz", "other", "405"),
      ("/v1/qr", "POST", "400"), ("/v1/qr", "POST", "200"),
    ] {
      let labels = ["route": route, "method": method, "status": status]
      #expect(after.value("imprint_http_requests_total", labels) == 1, "\(labels)")
    }
    #expect(after.value("imprint_errors_total", ["code": "http.notFound"]) == 1)
    #expect(after.value("imprint_errors_total", ["code": "http.methodNotAllowed"]) == 2)
    #expect(after.value("imprint_errors_total", ["code": "json.syntax"]) == 1)
    // Five /healthz latencies (three GET, the two 405s): in the +Inf bucket and the count; the sum
    // is positive and below the test's own duration.
    #expect(
      after.value(
        "imprint_http_request_duration_seconds_bucket", ["route": "/healthz", "le": "+Inf"])
        == 5)
    #expect(after.value("imprint_http_request_duration_seconds_count", ["route": "/healthz"]) == 5)
    let sum = try #require(
      after.value("imprint_http_request_duration_seconds_sum", ["route": "/healthz"]))
    #expect(sum > 0 && sum < 60)
    // Nothing waits or runs; the scrape itself, answered on the event thread, is in flight.
    #expect(after.value("imprint_http_queue_depth") == 0)
    #expect(after.value("imprint_http_requests_running") == 0)
    #expect(after.value("imprint_http_requests_in_flight") == 1)
    #expect(after.value("imprint_sandbox_worker_restarts_total") == 0)
    #expect(await server.stop().isComplete)
  }

  @Test("a document worker killed while idle is replaced and counted in /metrics")
  func workerRestartCounted() async throws {
    let server = try InProcessService(settings: { $0.jobs = 1 })
    func inspect() async throws -> HTTPExchange {
      try await server.request(
        "POST", "/v1/inspect?name=mixed.pdf", headers: ["Content-Type: application/pdf"],
        file: documents + "mixed.pdf")
    }
    #expect(try await inspect().status == 200)
    let workers = server.workers
    try #require(workers.count == 1, "\(workers)")
    kill(workers[0], SIGKILL)
    // The dead worker's request fails with its own error; the next one gets a new worker.
    var answers: [Int] = []
    for _ in 0..<2 { answers.append(try await inspect().status) }
    #expect(answers.last == 200, "\(answers)")
    let metrics = try await scrape(server)
    #expect(metrics.value("imprint_sandbox_worker_restarts_total") == 1)
    #expect(metrics.value("imprint_sandbox_worker_cancels_total") == 0)
    let replacement = server.workers
    #expect(replacement.count == 1 && replacement != workers)
    // The gauge counts the one worker alive, as /proc lists it.
    #expect(metrics.value("imprint_sandbox_workers") == 1)
    #expect(await server.stop().isComplete)
  }

  @Test("label values are escaped as the format says, and numbers written as Go writes them")
  func exposition() async throws {
    #expect(ServiceMetrics.escaped(#"a"b\c"# + "\nd") == #"a\"b\\c\nd"#)
    #expect(ServiceMetrics.number(30) == "30")
    #expect(ServiceMetrics.number(0.0025) == "0.0025")
    let metrics = ServiceMetrics(routes: ["/a"])
    metrics.record(
      CompletedRequest(
        time: Timestamp(milliseconds: 0), requestId: "r", method: "GET", path: "/a", status: 200,
        bytesIn: 0,
        bytesOut: 2, durationMs: 2, errorCode: nil))
    metrics.record(
      CompletedRequest(
        time: Timestamp(milliseconds: 0), requestId: "r", method: "GET", path: "/a", status: 200,
        bytesIn: 0,
        bytesOut: 2, durationMs: 20_000, errorCode: nil))
    metrics.record(
      CompletedRequest(
        time: Timestamp(milliseconds: 0), requestId: "r", method: "POST", path: "/a", status: nil,
        bytesIn: 0,
        bytesOut: 0, durationMs: 1, errorCode: nil))
    let text = metrics.render(
      ServiceMetrics.Gauges(inFlight: 0, running: 0, queued: 0, queueLimit: 1, workerRestarts: 0))
    let parsed = try PrometheusText(text)
    let bucket = "imprint_http_request_duration_seconds_bucket"
    // 2 ms falls in le=0.0025, 20 s in le=30; the buckets are cumulative.
    #expect(parsed.value(bucket, ["route": "/a", "le": "0.001"]) == 0)
    #expect(parsed.value(bucket, ["route": "/a", "le": "0.0025"]) == 1)
    #expect(parsed.value(bucket, ["route": "/a", "le": "10"]) == 1)
    #expect(parsed.value(bucket, ["route": "/a", "le": "30"]) == 2)
    let sum = try #require(
      parsed.value("imprint_http_request_duration_seconds_sum", ["route": "/a"]))
    #expect(abs(sum - 20.002) < 1e-9)
    #expect(parsed.value("imprint_http_requests_aborted_total") == 1)
    // The parser is strict: the same text with a bucket dropped or a sample doubled is refused.
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let withoutInf = lines.filter { !$0.contains("le=\"+Inf\"") }.joined(separator: "\n")
    #expect(throws: ExpositionError.self) { try PrometheusText(withoutInf) }
    let doubled = text + "imprint_http_queue_depth 0\n"
    #expect(throws: ExpositionError.self) { try PrometheusText(doubled) }
  }

  @Test("--access-log: one JSON line per request, its id echoed or made, no query in the path")
  func accessLog() async throws {
    let server = try InProcessService(settings: { $0.accessLog = true })
    // A request with an id, one with an unusable id, an upload whose query carries a password,
    // and a 404.
    let pdf = try FileIO.read(documents + "mixed.pdf", limit: 1 << 30)
    let exchanges = [
      try await server.get("/healthz", headers: ["X-Request-Id: order-17.attempt:2"]),
      try await server.get("/readyz", headers: ["X-Request-Id: bad id with spaces"]),
      try await server.request(
        "POST", "/v1/inspect?name=mixed.pdf&password=hunter2",
        headers: ["Content-Type: application/pdf"], body: pdf),
      try await server.get("/v2/nothing?token=hunter2"),
    ]
    let answers: [[Any]] = exchanges.map {
      [$0.status, $0.headers["x-request-id"] as Any, $0.body.count]
    }
    #expect(await server.stop().isComplete)
    let log = server.log.joined(separator: "\n")
    #expect(!log.contains("hunter2"))
    let lines = server.accessLog
    #expect(lines.allSatisfy { $0.hasPrefix("{") && server.log.contains($0) })
    try #require(lines.count == 4, "\(log)")
    // A line is written once its answer is sent, so the next request, on a connection of its
    // own, may be logged first: the lines are put in the order the requests were sent.
    let sent = ["/healthz", "/readyz", "/v1/inspect", "/v2/nothing"]
    let records = try lines.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }.sorted {
      (sent.firstIndex(of: $0["path"] as? String ?? "") ?? 9)
        < (sent.firstIndex(of: $1["path"] as? String ?? "") ?? 9)
    }
    #expect(Set(records.compactMap { $0["path"] as? String }) == Set(sent))
    let required: Set = [
      "time", "requestId", "method", "path", "status", "bytesIn", "bytesOut", "durationMs",
    ]
    for (record, answer) in zip(records, answers) {
      #expect(required.isSubset(of: Set(record.keys)), "\(record)")
      #expect(Set(record.keys).subtracting(required).subtracting(["errorCode"]).isEmpty)
      #expect(record["status"] as? Int == answer[0] as? Int)
      #expect(record["requestId"] as? String == answer[1] as? String)
      #expect(record["bytesOut"] as? Int == answer[2] as? Int)
      #expect((record["path"] as? String)?.contains("?") == false)
      let time = try #require(record["time"] as? String)
      #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(time)")
      #expect((record["durationMs"] as? Double ?? -1) >= 0)
    }
    #expect(answers[0][1] as? String == "order-17.attempt:2")
    // An id that is not usable is replaced by a UUID, not echoed.
    let made = try #require(answers[1][1] as? String)
    #expect(UUID(uuidString: made) != nil)
    #expect(records[2]["path"] as? String == "/v1/inspect")
    #expect(records[2]["method"] as? String == "POST")
    #expect(records[2]["bytesIn"] as? Int == pdf.count)
    #expect(records[3]["errorCode"] as? String == "http.notFound")
    #expect(records[0]["errorCode"] == nil)
  }

  @Test("without --access-log nothing is logged per request")
  func accessLogOff() async throws {
    let server = try InProcessService()
    #expect(try await server.request("GET", "/healthz").status == 200)
    #expect(await server.stop().isComplete)
    #expect(server.accessLog.isEmpty)
    #expect(!server.log.contains { $0.contains("\"method\":") })
  }
}

private let healthz = ["route": "/healthz", "method": "GET", "status": "200"]
/// The labels of a QR code made.
private let qrMade = ["route": "/v1/qr", "method": "POST", "status": "200"]
