// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: a print job canceled on the printer while `--wait` follows it (CUPS's
// ippeveprinter, whose job hook holds the job until the test has canceled it with ipptool's
// Cancel-Job): `imprint prepare` reports print.canceled with the printer's reasons and exits 1;
// a batch records the end in its journal, and a rerun reports it without sending again.

import Foundation
import ImprintCLI
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

@Suite(
  "Print jobs canceled on the printer while followed", .liveHandlesChecked, .tags(.slow),
  .skippedWhenQuick)
struct PrintCancelTests {
  /// USD rates on A4.
  private static let prices = priceListFixture("usd-a4.json")

  /// A printer whose hook holds each job (processing) until `release` exists, for at most
  /// about a quarter of an hour, and the order `order.json` of the 3-page `a.pdf` with its price list.
  private func setUp(_ folder: TemporaryFolder) throws -> TestPrinter {
    let release = folder.file("release")
    let printer = try TestPrinter(
      folder: folder,
      hook: "i=0; while [ ! -e '\(release)' ] && [ $i -lt 18000 ]; do sleep 0.05; i=$((i+1)); done")
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 3)), to: folder.file("a.pdf"))
    try Data(Self.prices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
    try Data(#"{"schemaVersion":1,"files":[{"path":"a.pdf"}]}"#.utf8).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    try Data(
      """
      {
        NAME "Cancel the job the hook holds"
        OPERATION Cancel-Job
        GROUP operation-attributes-tag
        ATTR charset attributes-charset utf-8
        ATTR language attributes-natural-language en
        ATTR uri printer-uri $uri
        ATTR integer job-id $job
        ATTR name requesting-user-name $user
        STATUS successful-ok
      }
      """.utf8
    ).write(to: URL(fileURLWithPath: folder.file("cancel.test")))
    return printer
  }

  /// Cancels the job the printer's hook holds, with ipptool's Cancel-Job, and returns its id.
  ///
  /// Waits until the hook holds job number `count` (the printer has the whole document and is
  /// processing it), cancels it, then lets the hook end.
  private func cancelHeldJob(_ printer: TestPrinter, _ folder: TemporaryFolder, count: Int)
    async throws -> Int
  {
    // Preparing can take minutes while the whole suite runs on two cores: up to a quarter of
    // an hour for the job to come, looked for without holding a thread the command needs.
    var held: [Int: ReceivedJob] = [:]
    let deadline = Date().addingTimeInterval(900)
    while held.count < count && Date() < deadline {
      try await Task.sleep(for: .milliseconds(50))
      held = printer.jobs(count: 0)
    }
    let id = try #require(held.keys.max(), "the printer got no job")
    try #require(held.count == count, "\(held.count) jobs held, expected \(count)")
    let cancel = try runTool(
      "ipptool", ["-t", "-d", "job=\(id)", printer.uri, folder.file("cancel.test")])
    #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
    FileManager.default.createFile(atPath: folder.file("release"), contents: Data())
    return id
  }

  /// The job's state as ipptool reads it from the printer.
  private func ipptoolState(_ printer: TestPrinter, job: Int) throws -> String? {
    let run = try runTool(
      "ipptool",
      ["-tv", "\(printer.uri)/\(job)", "/usr/share/cups/ipptool/get-job-attributes.test"])
    let line = run.stdout.split(separator: "\n").first { $0.contains("job-state (enum) = ") }
    return line.flatMap { $0.components(separatedBy: "= ").last }
  }

  @Test("imprint prepare --wait: a job canceled on the printer is print.canceled, exit 1")
  func prepare() async throws {
    let folder = TemporaryFolder()
    let printer = try setUp(folder)
    let arguments = [
      "prepare", folder.file("order.json"), "--prices", folder.file("prices.json"), "-o",
      folder.file("out"), "--printer", printer.uri, "--wait", "--wait-timeout", "900",
    ]
    let run = Task { await imprint(arguments) }
    let id = try await cancelHeldJob(printer, folder, count: 1)
    let result = await run.value
    #expect(result.code == 1, "\(result.stdout)\(result.stderr)")
    #expect(try ipptoolState(printer, job: id) == "canceled")
    // The job's line says how it ended, with the printer's reasons; the error names the job,
    // the file and the printer, and the hint says what to do.
    #expect(
      result.stdout.contains(
        "/out/1-a.pdf: job \(id) on \(printer.uri): canceled (job-canceled-by-user"),
      "\(result.stdout)")
    #expect(
      result.stderr.hasPrefix(
        "error: job \(id) of 'a.pdf' on '\(printer.uri)' was canceled (job-canceled-by-user"),
      "\(result.stderr)")
    #expect(result.stderr.contains("hint: the file was not printed completely"))
    // The prepared file stays.
    #expect(try pdfInfo(folder.file("out/1-a.pdf"))["Pages"] == "3")
  }

  @Test("imprint batch --wait: the cancel is the job's error and journal's; a rerun sends nothing")
  func batch() async throws {
    let folder = TemporaryFolder()
    let printer = try setUp(folder)
    try Data(
      (#"{"id":"P-1","kind":"print","file":"order.json","prices":"prices.json","#
        + #""printer":"\#(printer.uri)"}"# + "\n").utf8
    ).write(to: URL(fileURLWithPath: folder.file("manifest.jsonl")))
    let arguments = [
      "batch", folder.file("manifest.jsonl"), "-o", folder.file("out"), "--wait", "--wait-timeout",
      "900", "-q",
    ]
    let run = Task { await imprint(arguments) }
    let id = try await cancelHeldJob(printer, folder, count: 1)
    let first = await run.value
    #expect(first.code == 1, "\(first.stderr)")
    let results = try String(contentsOfFile: folder.file("out/results.jsonl"), encoding: .utf8)
    let result = try #require(
      try JSONSerialization.jsonObject(with: Data(results.utf8)) as? [String: Any])
    let error = result["error"] as? [String: Any]
    #expect(result["status"] as? String == "failed")
    #expect(error?["code"] as? String == "print.canceled", "\(results)")
    #expect(
      (error?["message"] as? String)?.hasPrefix(
        "job \(id) of 'a.pdf' on '\(printer.uri)' was canceled (job-canceled-by-user") == true,
      "\(results)")
    let journal = try PrintJournal(path: folder.file("out/.state/P-1.print.json"))
    #expect(journal.entries.map(\.state) == ["canceled"])
    #expect(journal.entries.first?.stateReasons?.contains("job-canceled-by-user") == true)

    // The rerun reads the end from the journal: the same failure, nothing sent again.
    let again = await imprint(arguments)
    #expect(again.code == 1, "\(again.stderr)")
    let rerun = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: folder.file("out/results.jsonl"))))
        as? [String: Any])
    #expect((rerun["error"] as? [String: Any])?["code"] as? String == "print.canceled")
    let spooled = try FileManager.default.contentsOfDirectory(atPath: printer.spool).filter {
      $0.hasSuffix(".pdf")
    }
    #expect(spooled.count == 1, "\(spooled)")
    #expect(printer.jobs(count: 1).count == 1)
  }
}
