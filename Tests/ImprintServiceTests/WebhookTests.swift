// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: webhooks of long jobs against the service in this process and a real
// Python http.server: the report POSTed when a job ends, retried after a failure, given up after the
// last attempt (logged and counted); callback URLs into private, loopback and link-local
// networks refused.

import Foundation
import ImprintHTTP
import ImprintNetwork
import ImprintTestSupport
import Testing

@testable import ImprintService

/// `url` escaped as a query parameter's value.
private func escaped(_ url: String) -> String {
  url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
}

@Suite("service routes: webhooks", .liveHandlesChecked, .onTestThreads)
struct WebhookTests {
  @Test("the report is POSTed when the job ends; retried after a 500; given up after 3 calls")
  func delivered() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let server = try InProcessService(settings: { $0.webhookAllowPrivate = true })
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)

    let id = try acceptedID(
      try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url("/hook"))))
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done")
    #expect(await eventually { receiver.calls.count == 1 })
    let call = try #require(receiver.calls.first)
    #expect(call.path == "/hook")
    #expect(call.type == "application/json")
    #expect(call.id == id)
    let sent = try #require(
      try JSONSerialization.jsonObject(with: Data(call.body.utf8)) as? [String: Any])
    #expect(sent["job"] as? String == id)
    #expect(sent["state"] as? String == "done")
    #expect((sent["summary"] as? [String: Any])?["ok"] as? Int == 1)
    #expect(sent["results"] == nil)
    #expect(sent["resultsFile"] as? String == "/v1/jobs/\(id)/files/results.jsonl")
    #expect((sent["files"] as? [String])?.contains("qr/W-1.png") == true)
    var report: [String: Any] = [:]
    try await eventually {
      report = try await server.request("GET", "/v1/jobs/\(id)").json ?? [:]
      return (report["webhook"] as? [String: Any])?["state"] as? String != "pending"
    }
    let hook = try #require(report["webhook"] as? [String: Any])
    #expect(hook["state"] as? String == "delivered")
    #expect(hook["attempts"] as? Int == 1)
    #expect(hook["status"] as? Int == 204)
    #expect(hook["url"] as? String == receiver.url("/hook"))

    // A 500 first: called again, and taken.
    let flaky = try acceptedID(
      try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url("/flaky"))))
    _ = try await waitForJob(flaky, on: server)
    #expect(await eventually { receiver.calls.filter { $0.path == "/flaky" }.count == 2 })
    try await eventually {
      let hook =
        try await server.request("GET", "/v1/jobs/\(flaky)")
        .json?["webhook"] as? [String: Any]
      return hook?["state"] as? String == "delivered" && hook?["attempts"] as? Int == 2
    }

    // Always 503: three calls, then given up, logged and counted.
    let down = try acceptedID(
      try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url("/down"))))
    _ = try await waitForJob(down, on: server)
    var failed: [String: Any] = [:]
    try await eventually {
      failed =
        try await server.request("GET", "/v1/jobs/\(down)").json?["webhook"]
        as? [String: Any] ?? [:]
      return failed["state"] as? String == "failed"
    }
    #expect(failed["attempts"] as? Int == 3)
    #expect((failed["error"] as? String)?.contains("HTTP 503") == true, "\(failed)")
    #expect(receiver.calls.filter { $0.path == "/down" }.count == 3)
    let metrics = try await server.request("GET", "/metrics").text
    #expect(metrics.contains("imprint_webhook_deliveries_total{result=\"delivered\"} 2\n"))
    #expect(metrics.contains("imprint_webhook_deliveries_total{result=\"failed\"} 1\n"))
    // Calls that failed: the flaky one's first, and the three of /down.
    #expect(metrics.contains("imprint_webhook_calls_failed_total 4\n"), "\(metrics)")
    let stopped = await server.stop()
    let stderr = server.log.joined(separator: "\n")
    #expect(stopped.isComplete)
    #expect(
      stderr.contains(
        "serve: webhook of job \(down) to \(receiver.url("/down")) failed after 3 attempts: "
          + "the server answered HTTP 503"), "\(stderr)")
  }

  @Test("a callback answered with a redirect is called once, not followed, and failed at once")
  func redirected() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let server = try InProcessService(settings: { $0.webhookAllowPrivate = true })
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)
    var ids: [String: String] = [:]
    for path in ["/moved-307", "/moved-301-bare"] {
      ids[path] = try acceptedID(
        try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url(path)))
      )
    }
    for (path, id) in ids {
      _ = try await waitForJob(id, on: server)
      var hook: [String: Any] = [:]
      try await eventually {
        hook =
          try await server.request("GET", "/v1/jobs/\(id)").json?["webhook"]
          as? [String: Any] ?? [:]
        return hook["state"] as? String != "pending"
      }
      let status = path.split(separator: "-")[1]
      #expect(hook["state"] as? String == "failed", "\(path): \(hook)")
      #expect(hook["attempts"] as? Int == 1, "\(path): \(hook)")
      let error = hook["error"] as? String ?? ""
      #expect(error.hasPrefix("the server answered HTTP \(status), a redirect"), "\(error)")
    }
    // Neither called twice, and the location (/hook) never called.
    #expect(receiver.calls.map(\.path).sorted() == ["/moved-301-bare", "/moved-307"])
    let metrics = try await server.request("GET", "/metrics").text
    #expect(metrics.contains("imprint_webhook_deliveries_total{result=\"failed\"} 2\n"))
    #expect(metrics.contains("imprint_webhook_calls_failed_total 2\n"), "\(metrics)")
    let stopped = await server.stop()
    let stderr = server.log.joined(separator: "\n")
    #expect(stopped.isComplete)
    let id = try #require(ids["/moved-307"])
    #expect(
      stderr.contains(
        "serve: webhook of job \(id) to \(receiver.url("/moved-307")) failed after 1 attempt: "
          + "the server answered HTTP 307, a redirect"), "\(stderr)")
  }

  @Test("--webhook-secret-file: every call signed as Standard Webhooks says (checked by Python)")
  func signed() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    // 32 fixed bytes: the key a receiver decodes from the secret.
    let key = (0..<32).map { UInt8($0 * 7 + 3) }
    let secret = "whsec_" + Data(key).base64EncodedString()
    let file = folder.file("webhook-secret")
    try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: file))
    chmod(file, 0o600)
    let server = try InProcessService(settings: {
      $0.webhookAllowPrivate = true
      $0.webhookSecretFile = file
    })
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)
    var ids: [String] = []
    // A delivery at once, and one retried after a 500: each call signed.
    for path in ["/hook", "/flaky"] {
      ids.append(
        try acceptedID(
          try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url(path)))))
    }
    #expect(await eventually { receiver.signedCalls.count == 3 })
    let calls = receiver.signedCalls
    #expect(Set(calls.map(\.id)) == Set(ids))
    // Python's hmac, base64 and the clock check each call as a Standard Webhooks receiver does.
    let lines = try calls.map { call in
      String(
        decoding: try JSONSerialization.data(
          withJSONObject: [call.id, call.timestamp, call.signature, call.body]),
        as: UTF8.self)
    }
    let check = try runTool(
      "python3",
      [
        "-c",
        pythonFixture("webhook_signature_check.py"), secret,
      ], stdin: Array(lines.joined(separator: "\n").utf8))
    #expect(check.stdout == String(repeating: "ok\n", count: 3), "\(check.stdout)\(check.stderr)")
    let stopped = await server.stop()
    let stderr = server.log.joined(separator: "\n")
    #expect(stopped.isComplete)
    #expect(!stderr.contains(secret))

    // Without a secret: no signature headers.
    let plain = try InProcessService(settings: { $0.webhookAllowPrivate = true })
    let unsigned = try acceptedID(
      try await postBatch(qr, on: plain, query: "?callback=" + escaped(receiver.url("/hook"))))
    #expect(await eventually { receiver.signedCalls.contains { $0.id == unsigned } })
    let call = try #require(receiver.signedCalls.first { $0.id == unsigned })
    #expect(call.timestamp.isEmpty && call.signature.isEmpty)
    #expect(await plain.stop().isComplete)
  }

  @Test(
    "a webhook secret file others may read, or not whsec_ and 24 to 64 bytes, stops the start",
    arguments: [
      ("whsec_" + Data(repeating: 1, count: 32).base64EncodedString(), 0o644, "cannot be used"),
      ("s3cret-" + String(repeating: "k", count: 40), 0o600, "does not start with 'whsec_'"),
      ("whsec_not base64!", 0o600, "is not 'whsec_' followed by base64"),
      ("whsec_" + Data(repeating: 1, count: 16).base64EncodedString(), 0o600, "of 16 bytes"),
      ("whsec_" + Data(repeating: 1, count: 65).base64EncodedString(), 0o600, "of 65 bytes"),
    ])
  func badSecrets(text: String, mode: Int, expected: String) throws {
    let folder = TemporaryFolder()
    let file = folder.file("webhook-secret")
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    chmod(file, mode_t(mode))
    let run = try runTool(
      imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--webhook-secret-file", file])
    #expect(run.status == 1)
    #expect(
      run.stderr.hasPrefix("error: the webhook secret file '\(file)' "), "\(run.stderr)")
    #expect(run.stderr.contains(expected), "\(run.stderr)")
    #expect(run.stderr.contains("openssl rand -base64 32"), "\(run.stderr)")
    // The secret is never shown.
    #expect(!run.stderr.contains(String(text.dropFirst(6).prefix(12))), "\(run.stderr)")
  }

  @Test("imprint serve --webhook-attempts, --webhook-timeout, --webhook-backoff: calls as set")
  func callSettings() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    // /gated holds each call 5 s, then refuses it: past a 1-s timeout, within the default 10.
    try receiver.closeGate()
    let server = try ServiceProcess([
      "--webhook-allow-private", "--webhook-attempts", "2", "--webhook-timeout", "1",
      "--webhook-backoff", "2.5",
    ])
    defer { _ = server.stop() }
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)
    let id = try acceptedID(
      try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url("/gated"))))
    var hook: [String: Any] = [:]
    #expect(
      try await eventually {
        hook =
          try await server.request("GET", "/v1/jobs/\(id)").json?["webhook"]
          as? [String: Any] ?? [:]
        return hook["state"] as? String == "failed"
      })
    // Two calls, each ended by the 1-s timeout (never the receiver's 503 after 5 s).
    #expect(hook["attempts"] as? Int == 2, "\(hook)")
    #expect((hook["error"] as? String)?.contains("longer than 1 second") == true, "\(hook)")
    let arrivals = receiver.arrivals("/gated")
    try #require(arrivals.count == 2, "\(arrivals)")
    // The second after the first one's second and the 2.5-s backoff: 3.5 s (with the default
    // backoff, 1 s, it would come 2 s after).
    #expect(arrivals[1] - arrivals[0] >= 3.0, "\(arrivals)")
  }

  @Test("a callback's user name and password never appear in its report, a refusal or a log line")
  func credentials() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let server = try InProcessService(settings: { $0.webhookAllowPrivate = true })
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)
    // The receiver's /down answers 503: three calls, a failure logged with the URL.
    let url = receiver.url("/down").replacingOccurrences(
      of: "http://", with: "http://hook-user:s3cret@")
    let shown = receiver.url("/down").replacingOccurrences(of: "http://", with: "http://***@")
    let id = try acceptedID(
      try await postBatch(qr, on: server, query: "?callback=" + escaped(url)))
    _ = try await waitForJob(id, on: server)
    var report = try await server.request("GET", "/v1/jobs/\(id)")
    try await eventually {
      report = try await server.request("GET", "/v1/jobs/\(id)")
      return (report.json?["webhook"] as? [String: Any])?["state"] as? String == "failed"
    }
    #expect(receiver.calls.filter { $0.path == "/down" }.count == 3)
    #expect((report.json?["webhook"] as? [String: Any])?["url"] as? String == shown)
    #expect(!report.text.contains("s3cret") && !report.text.contains("hook-user"))
    // Refused (link-local stays refused): the message shows the URL without them too.
    let refused = try await postBatch(
      qr, on: server, query: "?callback=" + escaped("http://hook-user:s3cret@169.254.1.1/hook"))
    #expect(refused.status == 422)
    #expect(refused.errorCode == "http.callbackRefused")
    #expect(refused.text.contains("http://***@169.254.1.1/hook"), "\(refused.text)")
    #expect(!refused.text.contains("s3cret") && !refused.text.contains("hook-user"))
    let stopped = await server.stop()
    let stderr = server.log.joined(separator: "\n")
    #expect(stopped.isComplete)
    #expect(stderr.contains("serve: webhook of job \(id) to \(shown) failed after 3"))
    #expect(!stderr.contains("s3cret"), "\(stderr)")
  }

  @Test(
    "only the authority's user name and password are hidden",
    arguments: [
      ("https://u:p@host/hook", "https://***@host/hook"),
      ("http://user@host:8080/a?b=c", "http://***@host:8080/a?b=c"),
      ("http://a@b:c@host/x", "http://***@host/x"),
      ("http://@host/", "http://***@host/"),
      ("http://host/path@x?q=a@b#f@g", "http://host/path@x?q=a@b#f@g"),
      ("http://host?u=a@b", "http://host?u=a@b"),
      ("not a url @ all", "not a url @ all"),
      ("http://", "http://"),
    ])
  func hiddenCredentials(url: String, shown: String) {
    #expect(WebhookStatus.withoutCredentials(url) == shown)
  }

  @Test("a photo download's errors are answered with NetworkError's status, 422 as before")
  func networkErrorStatus() {
    let errors: [NetworkError] = [
      .photoDownload(url: "u", reason: "r"),
      .photoAddressRefused(url: "u", detail: "d", never: true),
    ]
    for error in errors {
      #expect(ServiceStatus.of(error) == 422 && ServiceStatus.of(error) == error.status)
    }
  }

  @Test("callbacks to loopback, private and link-local addresses or other schemes are refused")
  func refused() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)
    let server = try InProcessService()
    for url in [
      receiver.url("/hook"), "http://10.1.2.3/hook", "http://[::1]:\(receiver.port)/hook",
      "http://169.254.169.254/latest/meta-data", "ftp://example.com/hook", "not a url",
    ] {
      let answer = try await postBatch(qr, on: server, query: "?callback=" + escaped(url))
      #expect(answer.status == 422, "\(url): \(answer.text)")
      #expect(answer.errorCode == "http.callbackRefused", "\(url)")
    }
    let loopback = try await postBatch(
      qr, on: server, query: "?callback=" + escaped(receiver.url("/hook")))
    #expect(loopback.text.contains("loopback"), "\(loopback.text)")
    let metrics = try await server.request("GET", "/metrics").text
    #expect(metrics.contains("imprint_jobs{state=\"queued\"} 0\n"))
    #expect(metrics.contains("imprint_jobs{state=\"finished\"} 0\n"))
    #expect(await server.stop().isComplete)
    // Allowing private networks never allows link-local ones (cloud metadata).
    let allowing = try InProcessService(settings: { $0.webhookAllowPrivate = true })
    let metadata = try await postBatch(
      qr, on: allowing, query: "?callback=" + escaped("http://169.254.169.254/latest/meta-data"))
    #expect(metadata.status == 422)
    #expect(metadata.errorCode == "http.callbackRefused")
    #expect(
      try await postBatch(qr, on: allowing, query: "?callback=" + escaped(receiver.url("/hook")))
        .status == 202)
    #expect(await allowing.stop().isComplete)
    #expect(receiver.calls.count <= 1)
  }
}
