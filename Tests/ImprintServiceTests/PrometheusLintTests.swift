// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `/metrics` of the service (in this process), after requests of every kind (each
// route's successes and errors, a batch job with its webhook, a price-list reload), read by
// Prometheus's own Python client and held to promtool's naming rules; the linter itself shown
// to find what it looks for.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

private let samples = repositoryRoot + "/assets/samples/"
private let documents = fixturesFolder + "/Documents/"

@Suite(
  "service routes: /metrics against Prometheus's parser and lint rules", .liveHandlesChecked,
  .onTestThreads)
struct PrometheusLintTests {
  @Test("the linter reports a parse error and every naming rule a family breaks")
  func linterFindsProblems() async throws {
    let folder = TemporaryFolder()
    let broken = try PrometheusLint("imprint_x{route=\"/a\" 1\n", in: folder)
    #expect(broken.problems.count == 1)
    #expect(broken.problems.first?.hasPrefix("parse: ") == true, "\(broken.problems)")
    let exposition = """
      # TYPE jobs_done counter
      jobs_done 3
      # HELP wait_milliseconds Time waited.
      # TYPE wait_milliseconds gauge
      wait_milliseconds{queueName="a"} 2
      # HELP size_bucket Sizes.
      # TYPE size_bucket gauge
      size_bucket{le="1"} 1
      # HELP used_gauge Used.
      # TYPE used_gauge gauge
      used_gauge 1
      # HELP run_ms Runs.
      # TYPE run_ms gauge
      run_ms 1
      # HELP fine_total Fine.
      # TYPE fine_total counter
      fine_total 1

      """
    let lint = try PrometheusLint(exposition, in: folder)
    #expect(lint.samples == 6)
    #expect(lint.families["fine_total"] == "counter")
    #expect(
      Set(lint.problems) == [
        "jobs_done: no help text",
        "jobs_done: counter metrics should have \"_total\" suffix",
        "wait_milliseconds: use base unit \"seconds\" instead of \"milliseconds\"",
        "wait_milliseconds: label names should be written in 'snake_case': queueName",
        "size_bucket: non-histogram metrics should not have \"_bucket\" suffix",
        "size_bucket: non-histogram metrics should not have \"le\" label",
        "used_gauge: metric name should not include type \"gauge\"",
        "run_ms: metric names should not contain abbreviated units",
      ], "\(lint.problems)")
  }

  @Test("/metrics after every kind of request parses with prometheus_client and lints clean")
  func metricsLintClean() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let server = try InProcessService(settings: {
      $0.priceLists = ["booster": samples + "prices-booster.json"]
      $0.webhookAllowPrivate = true
    })
    let fresh = try PrometheusLint(
      try await server.request("GET", "/metrics").text, in: folder)
    #expect(fresh.problems.isEmpty, "\(fresh.problems)")

    let json = "application/json"
    let pdf = "application/pdf"
    let profile = samples + "profiles/sora-park.json"
    let mixed = documents + "mixed.pdf"
    // Each route's successes and errors: status, method, path, the body's file and its type.
    let requests: [(Int, String, String, String?, String?)] = [
      (200, "GET", "/healthz", nil, nil), (200, "GET", "/readyz", nil, nil),
      (200, "GET", "/openapi.json", nil, nil), (404, "GET", "/v2/x", nil, nil),
      (405, "PUT", "/healthz", nil, nil), (200, "POST", "/v1/qr?payload=lint", nil, nil),
      (400, "POST", "/v1/qr?level=H", nil, nil), (200, "POST", "/v1/card", profile, json),
      (200, "POST", "/v1/card?format=png&dpi=100", profile, json),
      (200, "POST", "/v1/inspect?name=mixed.pdf", mixed, pdf),
      (422, "POST", "/v1/inspect", documents + "truncated.pdf", pdf),
      (200, "POST", "/v1/thumbnail?size=64", mixed, pdf),
    ]
    for (status, method, path, body, type) in requests {
      let answer = try await server.request(
        method, path, headers: type.map { ["Content-Type: \($0)"] } ?? [],
        body: try body.map { try FileIO.read($0, limit: 1 << 30) })
      #expect(answer.status == status, "\(method) \(path): \(answer.text.prefix(300))")
    }
    let order = folder.file("order.json")
    try Data(
      #"{"schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "files": [{"path": "doc.pdf", "copies": 2}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: order))
    for (prices, status) in [("booster", 200), ("none", 404)] {
      let answer = try await server.request(
        "POST", "/v1/quote?prices=" + prices,
        form: [
          .file("order", path: order, type: "application/json"), .file("doc.pdf", path: mixed),
        ])
      #expect(answer.status == status, "quote \(prices): \(answer.text.prefix(300))")
    }
    // A batch job with a webhook, its report and a file fetched, then removed.
    let manifest = try writeManifest(
      [#"{"id": "L-1", "kind": "qr", "payload": "lint"}"#], in: folder)
    let hook =
      "?callback="
      + (receiver.url("/hook").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    let id = try acceptedID(try await postBatch(manifest, on: server, query: hook))
    #expect(try await waitForJob(id, on: server).json?["state"] as? String == "done")
    #expect(await eventually { receiver.calls.count == 1 })
    let file = try await server.request("GET", "/v1/jobs/\(id)/files/qr%2FL-1.png")
    #expect(file.status == 200)
    try await eventually {
      let report = try await server.request("GET", "/v1/jobs/\(id)").json
      return (report?["webhook"] as? [String: Any])?["state"] as? String == "delivered"
    }
    #expect(try await server.request("DELETE", "/v1/jobs/\(id)").status == 200)
    // A price-list reload (what SIGHUP asks of `imprint serve`), counted once it is logged.
    server.service.reloadPriceLists()
    try await eventually {
      try await server.request("GET", "/metrics").text.contains(
        "imprint_price_list_reloads_total{result=\"loaded\"} 1\n")
    }

    let scraped = try await server.request("GET", "/metrics")
    #expect(scraped.status == 200)
    let lint = try PrometheusLint(scraped.text, in: folder)
    #expect(lint.problems.isEmpty, "\(lint.problems)")
    // Every family the exposition declares was read, of the type it declares, with its samples.
    let declared = scraped.text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
    #expect(lint.families.count == declared.count)
    for line in declared {
      let words = line.split(separator: " ").map(String.init)
      #expect(lint.families[words[2]] == words[3], "\(line)")
    }
    for (family, type) in [
      ("imprint_http_requests_total", "counter"),
      ("imprint_http_request_duration_seconds", "histogram"),
      ("imprint_errors_total", "counter"), ("imprint_jobs", "gauge"),
      ("imprint_webhook_deliveries_total", "counter"),
      ("imprint_price_list_reloads_total", "counter"), ("imprint_http_queue_depth", "gauge"),
      ("imprint_sandbox_workers", "gauge"), ("imprint_sandbox_worker_cancels_total", "counter"),
      ("imprint_http_connections", "gauge"), ("imprint_http_slow_heads_closed_total", "counter"),
    ] {
      #expect(lint.families[family] == type, "\(family)")
    }
    // Labelled samples of every kind were there to be read: routes and codes, a job, a webhook.
    for sample in [
      "imprint_http_requests_total{route=\"/v1/quote\",method=\"POST\",status=\"404\"} 1\n",
      "imprint_http_request_duration_seconds_bucket{route=\"/v1/card\",le=\"+Inf\"} 2\n",
      "imprint_errors_total{code=\"http.unknownPriceList\"} 1\n",
      "imprint_webhook_deliveries_total{result=\"delivered\"} 1\n",
      "imprint_http_requests_total{route=\"/v1/jobs/{id}\",method=\"DELETE\",status=\"200\"} 1\n",
    ] {
      #expect(scraped.text.contains(sample), "\(sample)")
    }
    #expect(lint.samples > 100)
    // The workers gauge counts the service's worker processes, as /proc lists them (idle now:
    // the inspect and thumbnail requests started them).
    let workers = server.workers.count
    #expect(workers >= 1)
    #expect(scraped.text.contains("\nimprint_sandbox_workers \(workers)\n"), "\(workers)")
    #expect(await server.stop().isComplete)
  }
}
