// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: following print jobs to their end on a real IPP printer (CUPS's
// ippeveprinter, whose job hook completes, aborts or holds a job): the states reported against
// what ipptool reads from the printer, the printer's reasons, a timeout, a printer that is gone
// and a job it does not know.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

/// USD rates on A4.
private let prices = priceListFixture("usd-a4.json")

@Suite(
  "OrderPrinter: jobs followed to their end", .liveHandlesChecked, .tags(.slow), .skippedWhenQuick)
struct PrintWaitTests {
  /// An order of `files` (each of the 3-page `a.pdf`) in `folder`, printed to `printer`,
  /// waiting up to `seconds` for its jobs.
  private func printed(
    in folder: TemporaryFolder, files: [String], printer: String, seconds: Double
  ) async throws -> PrintedOrder {
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 3)), to: folder.file("a.pdf"))
    try Data(prices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
    let order = #"{"schemaVersion":1,"files":[\#(files.joined(separator: ","))]}"#
    try Data(order.utf8).write(to: URL(fileURLWithPath: folder.file("order.json")))
    var target = PrintTarget(printer: printer)
    target.waitSeconds = seconds
    let preparer = OrderPreparer(
      quoter: OrderQuoter(
        sandbox: DocumentSandbox(executable: imprintExecutable, workers: 1), jobs: 1))
    return try await OrderPrinter(preparer: preparer).run(
      order: folder.file("order.json"), prices: folder.file("prices.json"),
      output: folder.file("out"), target: target)
  }

  /// The job's state as ipptool reads it from the printer (Get-Job-Attributes on its job URI).
  private func ipptoolState(_ printer: String, job: Int) throws -> String? {
    let run = try runTool(
      "ipptool", ["-tv", "\(printer)/\(job)", "/usr/share/cups/ipptool/get-job-attributes.test"])
    let line = run.stdout.split(separator: "\n").first { $0.contains("job-state (enum) = ") }
    return line.flatMap { $0.components(separatedBy: "= ").last }
  }

  @Test("completed and aborted jobs with the printer's reasons; an abort is print.aborted")
  func ended() async throws {
    let folder = TemporaryFolder()
    // The printer's job hook fails for three copies: ippeveprinter aborts that job.
    let printer = try TestPrinter(folder: folder, hook: #"[ "$IPP_COPIES" = 3 ] && exit 3; exit 0"#)
    let order = try await printed(
      in: folder, files: [#"{"path":"a.pdf"}"#, #"{"path":"a.pdf","copies":3}"#],
      printer: printer.uri, seconds: 60)
    let jobs = try #require(order.jobs)
    #expect(jobs.count == 2)
    #expect(jobs[0].state == "completed")
    #expect(jobs[0].stateReasons?.contains("job-completed-successfully") == true)
    #expect(jobs[1].state == "aborted")
    #expect(jobs[1].stateReasons?.contains("aborted-by-system") == true, "\(jobs[1])")
    // What the printer says, read by another client.
    #expect(try ipptoolState(printer.uri, job: jobs[0].jobID) == "completed")
    #expect(try ipptoolState(printer.uri, job: jobs[1].jobID) == "aborted")
    let failure = try #require(order.failure)
    #expect(failure.code == "print.aborted")
    #expect(
      failure.message.hasPrefix(
        "job \(jobs[1].jobID) of 'a.pdf' on '\(printer.uri)' was aborted ("),
      "\(failure.message)")
    #expect(failure.message.contains("aborted-by-system"))
    #expect(failure.hint != nil)
    // The report carries the states (not the failure: it is the caller's error).
    let report = JSONOutput.pretty(order)
    #expect(report.contains(#""state" : "aborted""#) && !report.contains("failure"), "\(report)")
  }

  @Test("a job still processing when the time is up is print.timeout with its last state")
  func timeout() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder, hook: "sleep 4")
    let order = try await printed(
      in: folder, files: [#"{"path":"a.pdf"}"#], printer: printer.uri, seconds: 0.5)
    let job = try #require(order.jobs?.first)
    #expect(job.state == "processing" || job.state == "pending", "\(job)")
    let failure = try #require(order.failure)
    #expect(failure.code == "print.timeout")
    #expect(failure.message.contains("job \(job.jobID) of 'a.pdf'"), "\(failure.message)")
    #expect(
      failure.message.contains("is still \(job.state ?? "") after 0.5 s"), "\(failure.message)")
  }

  @Test("a printer gone is print.unreachable; a job it does not know is print.jobUnknown")
  func unreachable() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let order = try await printed(
      in: folder, files: [#"{"path":"a.pdf"}"#], printer: printer.uri, seconds: 60)
    let job = try #require(order.jobs?.first)
    #expect(job.state == "completed" && order.failure == nil)

    var unknown = job
    unknown.jobID = 999
    unknown.state = nil
    let notKnown = #expect(throws: PrintError.self) {
      try PrintSubmitter.wait(for: [unknown], seconds: 5)
    }
    #expect(notKnown?.code == "print.jobUnknown")
    #expect(notKnown?.message.contains("job 999 of 'a.pdf'") == true)

    let nowhere = "ipp://localhost:\(TestPrinter.freePort())/ipp/print"
    var gone = job
    gone.printer = nowhere
    gone.state = nil
    let error = #expect(throws: PrintError.self) {
      try PrintSubmitter.wait(for: [gone], seconds: 5)
    }
    #expect(error?.code == "print.unreachable")
    #expect(error?.message.contains(nowhere) == true)
  }
}
