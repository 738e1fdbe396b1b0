// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: how `imprint serve` stops, against real servers and real SIGTERM: work
// stuck in a system call (a prepare job sending to a printer that takes the connection and
// never answers) does not hold the process past the drain; the server says what was stuck and
// exits 3; with --jobs-dir, a job the stop left running (a prepare job waiting for
// ippeveprinter) is written as the stop left it, and the restart says so (not a crash) and
// calls its webhook.

import Foundation
import ImprintTestSupport
import Testing

/// A printer that takes connections and never answers: it reads each until its client closes
/// it, and writes `connected` in `silent.log` of `folder` as each arrives.
private func silentPrinter(in folder: TemporaryFolder) throws -> (server: PythonServer, log: String)
{
  let log = folder.file("silent.log")
  let server = try PythonServer(
    handler: pythonFixture("silent_printer.py"), name: "silent", arguments: [log],
    stderr: folder.file("silent.err"), in: folder)
  return (server, log)
}

/// Whether the silent printer's log says a client connected.
private func connected(_ log: String) -> Bool {
  (try? String(contentsOfFile: log, encoding: .utf8))?.contains("connected") == true
}

@Suite(
  "imprint serve: the stop", .liveHandlesChecked, .onTestThreads, .serialized, .tags(.slow),
  .skippedWhenQuick)
struct StopTests {
  @Test(
    "SIGTERM while a prepare job is stuck sending to a printer that never answers: exit 3 after the drain, naming the job"
  )
  func stuckJobEndsTheProcess() async throws {
    let folder = TemporaryFolder()
    let printer = try silentPrinter(in: folder)
    let post = try printShop(
      in: folder, printer: "ipp://127.0.0.1:\(printer.server.port)/ipp/print")
    let server = try ServiceProcess(["--config", folder.file("serve.json"), "--drain-timeout", "2"])
    let id = try acceptedID(try await post("?prices=shop&printer=front", nil, server))
    // The job prepared its file and is sending it: libcups waits for the printer's answer.
    try #require(waitFor(tries: 30_000) { connected(printer.log) }, "the printer saw no job")
    kill(server.pid, SIGTERM)
    // A wait that only bounds a hang (the printer never answers), never a measure of time.
    try #require(waitFor(tries: 6_000) { isGone(server.pid) }, "the server still runs")
    let stopped = server.waitForExit()
    let record = (try? String(contentsOfFile: folder.file("jobs/\(id)/job.json"), encoding: .utf8))
    #expect(stopped.status == 3, "\(stopped.stderr)\n\(record ?? "no record")")
    let lines = stopped.stderr.split(separator: "\n").map(String.init)
    #expect(
      lines.contains(
        "error: the server stopped with work still stuck past the drain timeout of 2 s: "
          + "job '\(id)' (prepare)"), "\(stopped.stderr)")
    #expect(
      lines.last?.hasPrefix("hint: work that cannot be canceled (a prepare job sending to or")
        == true, "\(stopped.stderr)")
    #expect(!lines.contains("serve: stopped"))
  }

  @Test(
    "a prepare job waiting for its printer at a graceful SIGTERM is recorded as the stop left it: the restart says the server stopped, not a crash, its webhook called"
  )
  func stoppedPrepareJobRecorded() async throws {
    let folder = TemporaryFolder()
    // The print job stays processing for 10 s: the job waits for it (wait=true) past the drain.
    let printer = try TestPrinter(folder: folder, hook: "sleep 10")
    let post = try printShop(in: folder, printer: printer.uri)
    let receiver = try WebhookReceiver(folder: folder)
    let hook = receiver.url("/hook").addingPercentEncoding(withAllowedCharacters: .alphanumerics)
    let query = "?prices=shop&printer=front&wait=true&callback=" + (hook ?? "")
    let key = UUID().uuidString
    let arguments = ["--config", folder.file("serve.json"), "--webhook-allow-private"]
    let first = try ServiceProcess(arguments + ["--drain-timeout", "2"])
    let id = try acceptedID(try await post(query, key, first))
    // The printer has the order (its hook runs): the job waits for it to end.
    #expect(printer.jobs(count: 1).count == 1)
    let stopped = first.stop()
    #expect(stopped.status == 3, "\(stopped.stderr)")
    let message =
      "the server stopped while job '\(id)' was still running (it had not ended within the "
      + "drain timeout of 2 s); 1 of the 1 documents it had prepared had been sent to the printer"
    #expect(
      stopped.stderr.split(separator: "\n").contains { $0 == "serve: " + message },
      "\(stopped.stderr)")
    // Written before the process ended: failed, the stop's message, the webhook pending.
    let record = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: folder.file("jobs/\(id)/job.json"))))
        as? [String: Any])
    #expect(record["state"] as? String == "failed", "\(record)")
    #expect((record["error"] as? [String: Any])?["message"] as? String == message)
    #expect((record["webhook"] as? [String: Any])?["state"] as? String == "pending")
    #expect(receiver.calls.isEmpty)

    let second = try ServiceProcess(arguments)
    let report = try #require(try await second.request("GET", "/v1/jobs/\(id)").json)
    #expect(report["state"] as? String == "failed", "\(report)")
    let error = try #require(report["error"] as? [String: Any])
    #expect(error["code"] as? String == "service.interrupted")
    #expect(error["message"] as? String == message, "\(error)")
    #expect((error["hint"] as? String)?.contains("print-journal.json") == true, "\(error)")
    // Not taken for a crash: the start found nothing interrupted.
    #expect(!second.stop().stderr.contains("jobs.interrupted"))
    // The webhook left pending was called by the restart with the job's report.
    #expect(waitFor(tries: 6_000) { receiver.calls.count == 1 }, "\(receiver.calls)")
    let call = try #require(receiver.calls.first)
    #expect(call.id == id)
    let body = try JSONSerialization.jsonObject(with: Data(call.body.utf8)) as? [String: Any]
    #expect(((body?["error"] as? [String: Any])?["message"] as? String) == message, "\(call.body)")
    // Printed once: the retry after the restart is answered with the job.
    let third = try ServiceProcess(arguments)
    let retried = try await post(query, key, third)
    #expect(retried.status == 202 && retried.json?["job"] as? String == id, "\(retried.text)")
    let spooled = ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? [])
      .filter { $0.hasSuffix(".pdf") }
    #expect(spooled.count == 1, "\(spooled)")
    #expect(third.stop().status == 0)
  }
}
