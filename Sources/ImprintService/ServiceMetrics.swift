// SPDX-License-Identifier: Apache-2.0
// ImprintService: what `/metrics` reports, counted as requests complete and written in the
// Prometheus text exposition format 0.0.4.

import Foundation
import ImprintCore
import ImprintHTTP
import Synchronization

/// The counters, histograms and gauges of a service, rendered for Prometheus.
///
/// Label values are bounded: a route is one of the service's routes or `unmatched`, a method
/// one of HTTP's or `other`, so that a client sending random paths cannot grow the output.
final class ServiceMetrics: Sendable {
  /// The latency histogram's upper bounds, in seconds.
  static let buckets: [Double] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
  ]
  /// The methods given their own label value.
  static let methods: Set<String> = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
  ]

  /// The requests counter's labels.
  private struct RequestKey: Hashable, Comparable {
    var route: String
    var method: String
    var status: Int

    static func < (lhs: RequestKey, rhs: RequestKey) -> Bool {
      (lhs.route, lhs.method, lhs.status) < (rhs.route, rhs.method, rhs.status)
    }
  }

  /// One route's latencies: counts per bucket (not cumulative), their sum and count.
  private struct Histogram {
    var counts = [Int](repeating: 0, count: ServiceMetrics.buckets.count)
    var sum = 0.0
    var count = 0
  }

  private struct State {
    var requests: [RequestKey: Int] = [:]
    var latency: [String: Histogram] = [:]
    var errors: [String: Int] = [:]
    var aborted = 0
    var abandoned = 0
    var webhooksDelivered = 0
    var webhooksFailed = 0
    var webhookCallsFailed = 0
  }

  /// The routes given their own label value.
  private let routes: Set<String>
  private let state = Mutex(State())

  /// Metrics labelling requests by `routes` (any other path is `unmatched`).
  init(routes: some Sequence<String>) {
    self.routes = Set(routes)
  }

  /// Counts one completed request.
  func record(_ request: CompletedRequest) {
    // A job's paths are counted under their templates (`/v1/jobs/{id}`): ids never become
    // label values.
    let route =
      routes.contains(request.path)
      ? request.path : ImprintService.routeKey(request.path) ?? "unmatched"
    let method = Self.methods.contains(request.method) ? request.method : "other"
    let seconds = request.durationMs / 1000
    state.withLock { state in
      if let code = request.errorCode { state.errors[code, default: 0] += 1 }
      if request.errorCode == CompletedRequest.clientGone { state.abandoned += 1 }
      guard let status = request.status else {
        state.aborted += 1
        return
      }
      state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
      var histogram = state.latency[route] ?? Histogram()
      if let bucket = Self.buckets.firstIndex(where: { seconds <= $0 }) {
        histogram.counts[bucket] += 1
      }
      histogram.sum += seconds
      histogram.count += 1
      state.latency[route] = histogram
    }
  }

  /// Counts one job's webhook: delivered or given up, after `failedCalls` calls that failed.
  func recordWebhook(delivered: Bool, failedCalls: Int) {
    state.withLock { state in
      if delivered { state.webhooksDelivered += 1 } else { state.webhooksFailed += 1 }
      state.webhookCallsFailed += failedCalls
    }
  }

  /// The gauges sampled when `/metrics` is read.
  struct Gauges {
    /// Requests begun and not yet completed (being read, waiting, worked or sent).
    var inFlight: Int
    /// Requests being worked.
    var running: Int
    /// Requests waiting for a turn.
    var queued: Int
    /// Requests kept waiting at most.
    var queueLimit: Int
    /// Document workers replaced after a crash, a hang or a limit.
    var workerRestarts: Int
    /// Document workers killed because their request or job was canceled.
    var workerCancels = 0
    /// Document workers alive now, idle or at work.
    var workers = 0
    /// Named price lists.
    var priceLists = 0
    /// Price lists reloaded, and reloads refused (the previous list kept).
    var priceListReloads = (loaded: 0, failed: 0)
    /// The long jobs: queued, running, finished and kept, their bytes, and those removed.
    var jobs = JobStore.Counts()
    /// Checks of the price lists' files for a change.
    var priceListChecks = 0
    /// Connections open now.
    var connections = 0
    /// Connections closed because a request's head came too slowly (`--head-timeout`).
    var slowHeadsCut = 0
    /// Bytes of request bodies held now, and at most (`--body-memory`).
    var bodyBytes = (held: 0, limit: 0)
    /// The jobs database's errors since the start by code; nil without a jobs database.
    var jobsDatabaseErrors: [String: Int]?
  }

  /// The exposition: every family's `# HELP` and `# TYPE` once, then its samples, in a fixed
  /// order (families as below, samples by label).
  func render(_ gauges: Gauges) -> String {
    let state = state.withLock { $0 }
    var out = ""
    func family(_ name: String, _ type: String, _ help: String) {
      out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }
    func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
      let text = labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
      out += name + (labels.isEmpty ? "" : "{\(text)}") + " \(value)\n"
    }
    // A family of one sample without labels: its name written once.
    func single(_ name: String, _ type: String, _ help: String, _ value: Int) {
      family(name, type, help)
      sample(name, [], "\(value)")
    }
    // Prometheus's `_info` convention: the value is 1, the facts are the labels.
    family("imprint_build_info", "gauge", "The server's build: its version, as imprint --version.")
    sample("imprint_build_info", [("version", ImprintVersion.current)], "1")
    family(
      "imprint_http_requests_total", "counter", "Requests answered, by route, method and status.")
    for (key, count) in state.requests.sorted(by: { $0.key < $1.key }) {
      sample(
        "imprint_http_requests_total",
        [("route", key.route), ("method", key.method), ("status", "\(key.status)")], "\(count)")
    }
    family(
      "imprint_http_request_duration_seconds", "histogram",
      "Time from a request's head to the end of its answer, by route.")
    for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
      var cumulative = 0
      for (bound, count) in zip(Self.buckets, histogram.counts) {
        cumulative += count
        sample(
          "imprint_http_request_duration_seconds_bucket",
          [("route", route), ("le", Self.number(bound))], "\(cumulative)")
      }
      sample(
        "imprint_http_request_duration_seconds_bucket", [("route", route), ("le", "+Inf")],
        "\(histogram.count)")
      sample(
        "imprint_http_request_duration_seconds_sum", [("route", route)],
        Self.number(histogram.sum))
      sample(
        "imprint_http_request_duration_seconds_count", [("route", route)], "\(histogram.count)")
    }
    single(
      "imprint_http_requests_aborted_total", "counter",
      "Requests whose connection ended before an answer was made.",
      state.aborted)
    single(
      "imprint_http_requests_abandoned_total", "counter",
      "Requests whose client left before their answer: work waiting never started, work under "
        + "way was canceled.",
      state.abandoned)
    family("imprint_errors_total", "counter", "Error answers and dropped requests, by error code.")
    for (code, count) in state.errors.sorted(by: { $0.key < $1.key }) {
      sample("imprint_errors_total", [("code", code)], "\(count)")
    }
    single(
      "imprint_http_requests_in_flight", "gauge",
      "Requests begun and not completed: read, waiting, worked or sent.",
      gauges.inFlight)
    single("imprint_http_requests_running", "gauge", "Requests being worked.", gauges.running)
    single("imprint_http_queue_depth", "gauge", "Requests waiting for a worker.", gauges.queued)
    single(
      "imprint_http_queue_limit", "gauge",
      "Requests kept waiting at most; more get 503.",
      gauges.queueLimit)
    single(
      "imprint_http_connections", "gauge",
      "Connections open: kept alive between requests, reading, waiting or answering.",
      gauges.connections)
    single(
      "imprint_http_body_bytes", "gauge",
      "Bytes of request bodies held in memory now (read, or being read), all requests together.",
      gauges.bodyBytes.held)
    single(
      "imprint_http_body_bytes_limit", "gauge",
      "Bytes of request bodies held at most (--body-memory); a body past it gets 503.",
      gauges.bodyBytes.limit)
    single(
      "imprint_http_slow_heads_closed_total", "counter",
      "Connections closed because a request's head took longer than --head-timeout to arrive.",
      gauges.slowHeadsCut)
    single(
      "imprint_sandbox_worker_restarts_total", "counter",
      "Document workers replaced after a crash, a hang or an exceeded limit.",
      gauges.workerRestarts)
    single(
      "imprint_sandbox_worker_cancels_total", "counter",
      "Document workers killed because their request or job was canceled (client gone, "
        + "deadline, DELETE, job limits, stop).",
      gauges.workerCancels)
    single(
      "imprint_sandbox_workers", "gauge",
      "Document worker processes alive, idle or at work.",
      gauges.workers)
    single(
      "imprint_price_lists", "gauge",
      "Named price lists the service quotes with.",
      gauges.priceLists)
    family(
      "imprint_price_list_reloads_total", "counter",
      "Price list reloads by result: loaded, or failed (the previous list kept).")
    sample(
      "imprint_price_list_reloads_total", [("result", "failed")],
      "\(gauges.priceListReloads.failed)")
    sample(
      "imprint_price_list_reloads_total", [("result", "loaded")],
      "\(gauges.priceListReloads.loaded)")
    family("imprint_jobs", "gauge", "Long jobs kept, by state: queued, running, finished.")
    for (state, count) in [
      ("finished", gauges.jobs.finished), ("queued", gauges.jobs.queued),
      ("running", gauges.jobs.running),
    ] {
      sample("imprint_jobs", [("state", state)], "\(count)")
    }
    single(
      "imprint_jobs_bytes", "gauge",
      "Bytes counted for the long jobs' files.",
      gauges.jobs.bytes)
    single(
      "imprint_jobs_removed_total", "counter",
      "Finished long jobs removed: by DELETE, or the oldest past the limits.",
      gauges.jobs.removed)
    if let errors = gauges.jobsDatabaseErrors {
      family(
        "imprint_jobs_database_errors_total", "counter",
        "Calls to the jobs database that failed, by error code (this replica's requests and claim loop)."
      )
      for (code, count) in errors.sorted(by: { $0.key < $1.key }) {
        sample("imprint_jobs_database_errors_total", [("code", code)], "\(count)")
      }
    }
    single(
      "imprint_price_list_checks_total", "counter",
      "Checks of the price lists' files for a change (a changed file is reloaded).",
      gauges.priceListChecks)
    family(
      "imprint_webhook_deliveries_total", "counter",
      "Long jobs' webhooks by result: delivered, or failed (every attempt failed).")
    sample(
      "imprint_webhook_deliveries_total", [("result", "delivered")], "\(state.webhooksDelivered)")
    sample("imprint_webhook_deliveries_total", [("result", "failed")], "\(state.webhooksFailed)")
    single(
      "imprint_webhook_calls_failed_total", "counter",
      "Webhook calls that failed (refused, unanswered, or answered other than 2xx).",
      state.webhookCallsFailed)
    return out
  }

  /// A label value with backslash, double quote and line feed escaped (the format's rule).
  static func escaped(_ value: String) -> String {
    // The backslash first, so that the escapes added after it stay single.
    value.replacingOccurrences(of: "\\", with: "\\\\")
      .replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "\n", with: "\\n")
  }

  /// A number as Go's `strconv.FormatFloat(v, 'g', -1, 64)` would write the common cases:
  /// integers without a fraction, others as Swift's shortest round-trip form.
  static func number(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return "\(value)"
  }
}
