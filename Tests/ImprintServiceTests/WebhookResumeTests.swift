// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: webhooks kept across restarts (`imprint serve --jobs-dir`), against real
// servers and a real Python receiver: a webhook still being retried when the server stopped
// (SIGTERM) is called once after the restart, with the same body and Webhook-Id, and counted
// there; a job running when the server was killed (SIGKILL) is announced failed,
// service.interrupted, after the restart; a delivered webhook is never called again.

import Foundation
import ImprintTestSupport
import Testing

/// `url` escaped as a query parameter's value.
private func escaped(_ url: String) -> String {
  url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
}

/// Job `id`'s webhook as `server` reports it.
private func webhook(_ id: String, on server: ServiceProcess, in folder: TemporaryFolder)
  async throws -> [String: Any]
{
  try await server.request("GET", "/v1/jobs/\(id)").json?["webhook"]
    as? [String: Any] ?? [:]
}

/// Job `id`'s webhook as its record in the jobs folder `jobs` says.
private func recorded(_ id: String, in jobs: String) throws -> [String: Any] {
  let record = try JSONSerialization.jsonObject(
    with: Data(contentsOf: URL(fileURLWithPath: jobs + "/\(id)/job.json")))
  return (record as? [String: Any])?["webhook"] as? [String: Any] ?? [:]
}

/// A call's body as a JSON object.
private func object(_ body: String) throws -> [String: Any] {
  try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
}

/// A receiver and the arguments of servers on a jobs folder that may call it, in a new folder.
private struct Setup {
  let folder = TemporaryFolder()
  let jobs: String
  let receiver: WebhookReceiver
  let arguments: [String]
  /// A one-line QR manifest.
  let qr: String

  init() throws {
    jobs = folder.file("jobs")
    receiver = try WebhookReceiver(folder: folder)
    // Retries 20 s apart: a server is stopped or killed between a refused call and the next
    // however slow the machine (with the default 1 s, a loaded one made all three calls first).
    arguments = ["--jobs-dir", jobs, "--webhook-allow-private", "--webhook-backoff", "20"]
    qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "hook"}"#], in: folder)
  }

  /// A job on `server` whose webhook calls `/gated` with the gate closed, once its first call
  /// was refused (the next one is 20 s away).
  func refusedJob(on server: ServiceProcess) async throws -> String {
    try receiver.closeGate()
    let id = try acceptedID(
      try await postBatch(qr, on: server, query: "?callback=" + escaped(receiver.url("/gated"))))
    #expect(
      try await eventually {
        try await webhook(id, on: server, in: folder)["attempts"] as? Int == 1
      })
    return id
  }
}

@Suite(
  "imprint serve: webhooks across restarts (--jobs-dir)", .liveHandlesChecked, .onTestThreads,
  .serialized)
struct WebhookResumeTests {
  @Test(
    "a webhook refused while the server stops is called once after the restart; a delivered one never again"
  )
  func refusedThenResumed() async throws {
    let setup = try Setup()
    let (folder, jobs, receiver, arguments) = (
      setup.folder, setup.jobs, setup.receiver, setup.arguments
    )
    let first = try ServiceProcess(arguments)
    // One job announced at once.
    let delivered = try acceptedID(
      try await postBatch(setup.qr, on: first, query: "?callback=" + escaped(receiver.url("/hook")))
    )
    #expect(
      try await eventually {
        try await webhook(delivered, on: first, in: folder)["state"] as? String == "delivered"
      })
    // One whose receiver refuses: the server stops between its calls.
    let pending = try await setup.refusedJob(on: first)
    let stopped = first.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    let kept = try recorded(pending, in: jobs)
    #expect(kept["state"] as? String == "pending", "\(kept)")
    let made = try #require(kept["attempts"] as? Int)
    #expect((1...2).contains(made), "\(kept)")
    #expect((kept["error"] as? String)?.contains("HTTP 503") == true, "\(kept)")
    let refused = receiver.calls.filter { $0.path == "/gated" }
    #expect(refused.count >= made)

    try receiver.openGate()
    let second = try ServiceProcess(arguments)
    var hook: [String: Any] = [:]
    #expect(
      try await eventually {
        hook = try await webhook(pending, on: second, in: folder)
        return hook["state"] as? String != "pending"
      })
    #expect(hook["state"] as? String == "delivered", "\(hook)")
    #expect(hook["status"] as? Int == 204)
    // The calls before the restart count toward the attempts.
    #expect(hook["attempts"] as? Int == made + 1, "\(hook)")
    // Written to the job's record just after the delivery is told (a loaded machine may read
    // the record first).
    #expect(
      try await eventually {
        try recorded(pending, in: jobs)["state"] as? String == "delivered"
      })
    let metrics = try PrometheusText(
      try await second.request("GET", "/metrics").text)
    #expect(metrics.value("imprint_webhook_deliveries_total", ["result": "delivered"]) == 1)
    #expect(metrics.value("imprint_webhook_deliveries_total", ["result": "failed"]) == 0)
    #expect(metrics.value("imprint_webhook_calls_failed_total") == 0)
    let report = try #require(
      try await second.request("GET", "/v1/jobs/\(pending)").json)
    #expect(second.stop().status == 0)

    // Called once after the restart, with the body and id of the calls before it.
    let calls = receiver.calls.filter { $0.path == "/gated" }
    #expect(calls.count == refused.count + 1, "\(calls.map(\.body))")
    let last = try #require(calls.last)
    #expect(calls.allSatisfy { $0.body == last.body && $0.id == pending })
    #expect(last.type == "application/json")
    var expected = report
    expected["webhook"] = nil
    expected["results"] = nil
    #expect(NSDictionary(dictionary: try object(last.body)) == NSDictionary(dictionary: expected))
    #expect(try object(last.body)["state"] as? String == "done")
    // The webhook delivered before the stop was not called again.
    let hooks = receiver.calls.filter { $0.path == "/hook" }
    #expect(hooks.count == 1 && hooks.first?.id == delivered)

    // A third start finds nothing pending: no call, both still delivered as they were.
    let third = try ServiceProcess(arguments)
    #expect(try await webhook(delivered, on: third, in: folder)["attempts"] as? Int == 1)
    #expect(try await webhook(pending, on: third, in: folder)["attempts"] as? Int == made + 1)
    let thirdMetrics = try PrometheusText(
      try await third.request("GET", "/metrics").text)
    #expect(thirdMetrics.value("imprint_webhook_deliveries_total", ["result": "delivered"]) == 0)
    #expect(third.stop().status == 0)
    #expect(receiver.calls.count == calls.count + hooks.count)
  }

  @Test("SIGKILL while a batch runs: after the restart its webhook carries service.interrupted")
  func killedThenAnnounced() async throws {
    let setup = try Setup()
    let (folder, jobs, receiver, arguments) = (
      setup.folder, setup.jobs, setup.receiver, setup.arguments
    )
    let first = try ServiceProcess(arguments + ["-j", "1"])
    let slow = try writeManifest(
      (0..<3000).map { #"{"id": "C-\#($0)", "kind": "card", "profile": "p.json"}"# },
      in: folder, name: "slow.jsonl")
    let query = "?callback=" + escaped(receiver.url("/hook"))
    let profile = FormItem.file(
      "p.json", path: repositoryRoot + "/assets/samples/profiles/harbor-lamp.json")
    let running = try acceptedID(
      try await postBatch(slow, files: [profile], on: first, query: query))
    let queued = try acceptedID(
      try await postBatch(slow, files: [profile], on: first, query: query))
    // Killed once some of its items ended.
    let state = jobs + "/\(running)/output/.state"
    #expect(
      waitFor(tries: 30_000) {
        ((try? FileManager.default.contentsOfDirectory(atPath: state)) ?? []).count >= 3
      })
    kill(first.pid, SIGKILL)
    _ = first.waitForExit()
    #expect(receiver.calls.isEmpty)
    #expect(try recorded(running, in: jobs)["state"] as? String == "pending")

    let second = try ServiceProcess(arguments)
    #expect(try await eventually { receiver.calls.count == 2 })
    let report = try #require(
      try await second.request("GET", "/v1/jobs/\(running)").json)
    for id in [running, queued] {
      let call = try #require(receiver.calls.first { $0.id == id })
      let sent = try object(call.body)
      #expect(sent["job"] as? String == id)
      #expect(sent["state"] as? String == "failed", "\(sent)")
      let error = try #require(sent["error"] as? [String: Any])
      #expect(error["code"] as? String == "service.interrupted")
      #expect(
        (error["message"] as? String)?.contains(
          id == running ? "was running when the server stopped" : "was queued when") == true,
        "\(error)")
      #expect(
        try await eventually {
          try await webhook(id, on: second, in: folder)["state"] as? String == "delivered"
        })
    }
    // The report sent is the job's, as the restarted server serves it.
    var expected = report
    expected["webhook"] = nil
    expected["results"] = nil
    let sent = try object(try #require(receiver.calls.first { $0.id == running }).body)
    #expect(NSDictionary(dictionary: sent) == NSDictionary(dictionary: expected))
    let metrics = try PrometheusText(
      try await second.request("GET", "/metrics").text)
    #expect(metrics.value("imprint_webhook_deliveries_total", ["result": "delivered"]) == 2)
    #expect(second.stop().status == 0)
    #expect(receiver.calls.count == 2)
  }

  @Test("a job past --jobs-kept at the restart goes with its pending webhook, and the log says so")
  func removedAtRestart() async throws {
    let setup = try Setup()
    let (folder, jobs, receiver, arguments) = (
      setup.folder, setup.jobs, setup.receiver, setup.arguments
    )
    let first = try ServiceProcess(arguments)
    let pending = try await setup.refusedJob(on: first)
    let newer = try acceptedID(try await postBatch(setup.qr, on: first))
    #expect(try await waitForJob(newer, on: first).json?["state"] as? String == "done")
    #expect(first.stop().status == 0)
    let before = receiver.calls.count
    try receiver.openGate()

    let second = try ServiceProcess(arguments + ["--jobs-kept", "1"])
    #expect(try await second.request("GET", "/v1/jobs/\(pending)").status == 404)
    let stopped = second.stop()
    #expect(stopped.status == 0)
    let removed = stopped.stderr.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }.filter { $0["event"] as? String == "jobs.removed" }
    #expect(removed.map { $0["path"] as? String } == [jobs + "/\(pending)"], "\(stopped.stderr)")
    #expect(
      (removed.first?["reason"] as? String)?.hasSuffix(
        "; its webhook, still pending, is not called") == true, "\(removed)")
    #expect(receiver.calls.count == before)
  }

  @Test(
    "a job removed (DELETE) while its webhook is pending: the webhook is kept and called after a restart, once"
  )
  func removedJobWebhookResumed() async throws {
    let setup = try Setup()
    let (folder, jobs, receiver, arguments) = (
      setup.folder, setup.jobs, setup.receiver, setup.arguments
    )
    let first = try ServiceProcess(arguments)
    let removed = try await setup.refusedJob(on: first)
    let report = try #require(
      try await first.request("GET", "/v1/jobs/\(removed)").json)
    let deleted = try await first.request("DELETE", "/v1/jobs/\(removed)")
    #expect(deleted.status == 200, "\(deleted.text)")
    #expect(!FileManager.default.fileExists(atPath: jobs + "/\(removed)"))
    // The delivery outlives the job's folder: kept, pending, with its calls so far.
    let kept = jobs + "/.webhooks/\(removed).json"
    func keptFile() throws -> [String: Any] {
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: kept)))
        as? [String: Any] ?? [:]
    }
    #expect(try keptFile()["job"] as? String == removed)
    #expect(try keptFile()["callback"] as? String == receiver.url("/gated"))
    let stopped = first.stop()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    let status = try #require(try keptFile()["webhook"] as? [String: Any])
    #expect(status["state"] as? String == "pending", "\(status)")
    let made = try #require(status["attempts"] as? Int)
    let refused = receiver.calls.filter { $0.path == "/gated" }
    #expect(made >= 1 && refused.count >= made, "\(refused.count) calls, \(status)")

    try receiver.openGate()
    let second = try ServiceProcess(arguments)
    #expect(
      waitFor(tries: 6_000) { receiver.calls.filter { $0.path == "/gated" }.count > refused.count },
      "the removed job's webhook was not called after the restart")
    #expect(
      await eventually { !FileManager.default.fileExists(atPath: kept) },
      "still kept once delivered")
    // The job stays removed; the call is the one made before the restart: the same id, the same
    // body (the report as it was, without results and webhook).
    #expect(try await second.request("GET", "/v1/jobs/\(removed)").status == 404)
    let metrics = try PrometheusText(
      try await second.request("GET", "/metrics").text)
    #expect(metrics.value("imprint_webhook_deliveries_total", ["result": "delivered"]) == 1)
    let restarted = second.stop()
    #expect(restarted.status == 0)
    #expect(!restarted.stderr.contains("jobs.skipped"), "\(restarted.stderr)")
    let calls = receiver.calls.filter { $0.path == "/gated" }
    #expect(calls.count == refused.count + 1)
    let last = try #require(calls.last)
    #expect(calls.allSatisfy { $0.id == removed && $0.body == last.body })
    var expected = report
    expected["webhook"] = nil
    expected["results"] = nil
    #expect(NSDictionary(dictionary: try object(last.body)) == NSDictionary(dictionary: expected))
    // Delivered: a third start calls nothing; a file there that is no pending webhook is
    // skipped, said and left where it is.
    let planted = jobs + "/.webhooks/\(UUID().uuidString.lowercased()).json"
    try Data("not a webhook".utf8).write(to: URL(fileURLWithPath: planted))
    let third = try ServiceProcess(arguments)
    let ended = third.stop()
    #expect(ended.status == 0)
    #expect(receiver.calls.filter { $0.path == "/gated" }.count == calls.count)
    let skipped = ended.stderr.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }.filter { $0["event"] as? String == "jobs.skipped" && $0["path"] as? String == planted }
    #expect(skipped.count == 1, "\(ended.stderr)")
    #expect(FileManager.default.fileExists(atPath: planted))
  }
}
