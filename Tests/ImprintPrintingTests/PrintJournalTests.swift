// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: the print journal keeps an order's lines, not prepared bytes: reruns
// against another scheduler, with the colour split turned on or off, with another monochrome
// printer, after a split sent part-way, with a file named twice, a changed upload and a changed
// price list, each checked by what real printers (ippeveprinter, a private cupsd's queues)
// received.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

/// USD rates on A4, mono and colour.
private let journalPrices = priceListFixture("usd-a4.json")

@Suite(
  "PrintJournal: an order's lines printed once", .liveHandlesChecked, .tags(.slow),
  .skippedWhenQuick)
struct PrintJournalTests {
  /// `a.pdf` (5 A4 pages), `b.pdf` (3) and `c.pdf` (4, page 3 colour) and the price list in
  /// `folder`.
  private func inputs(_ folder: TemporaryFolder) throws {
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 5)), to: folder.file("a.pdf"))
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 3)), to: folder.file("b.pdf"))
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 4), colorPages: [3]),
      to: folder.file("c.pdf"))
    try Data(journalPrices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
  }

  /// The order of `files` in `folder` prepared into `folder/out` and sent to `printer` (the
  /// monochrome files to `mono`), with the journal `folder/print.json`.
  private func run(
    _ folder: TemporaryFolder, _ files: [String], printer: String, mono: String? = nil,
    split: Bool = false, access: PrintAccess = PrintAccess(), wait: Double? = nil
  ) async throws -> PrintedOrder {
    let order = #"{"schemaVersion":1,"files":[\#(files.joined(separator: ","))]}"#
    try Data(order.utf8).write(to: URL(fileURLWithPath: folder.file("order.json")))
    var target = PrintTarget(
      printer: printer, monoPrinter: mono, journal: folder.file("print.json"))
    target.access = access
    target.waitSeconds = wait
    let preparer = OrderPreparer(
      quoter: OrderQuoter(
        sandbox: DocumentSandbox(executable: imprintExecutable, workers: 1), jobs: 1))
    return try await OrderPrinter(preparer: preparer).run(
      order: folder.file("order.json"), prices: folder.file("prices.json"),
      output: folder.file("out"), options: PrepareOptions(splitColor: split), target: target)
  }

  /// A folder with the inputs and a colour printer, and a monochrome printer in a folder of
  /// its own (the printer keeps it).
  private func colorAndMono() throws -> (
    folder: TemporaryFolder, color: TestPrinter, mono: TestPrinter
  ) {
    let folder = TemporaryFolder()
    try inputs(folder)
    return (folder, try TestPrinter(folder: folder), try TestPrinter(folder: TemporaryFolder()))
  }

  /// The documents `printer` has spooled (it writes each before answering Send-Document).
  private func spooled(_ printer: TestPrinter) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? []).filter {
      $0.hasSuffix(".pdf")
    }.count
  }

  /// The jobs `scheduler` has had, finished or not (`lpstat -W all -o`).
  private func schedulerJobs(_ scheduler: TestScheduler) throws -> [String] {
    let listed = try runTool("lpstat", ["-h", scheduler.address, "-W", "all", "-o"])
    return listed.stdout.split(separator: "\n").map {
      String($0.split(separator: " ").first ?? "")
    }
  }

  @Test("a queue's jobs are the scheduler's: a rerun on another scheduler sends nothing there")
  func otherScheduler() async throws {
    let folderA = TemporaryFolder()
    let folderB = TemporaryFolder()
    try inputs(folderA)
    let printerA = try TestPrinter(folder: folderA)
    let schedulerA = try TestScheduler(folder: folderA)
    try schedulerA.addQueue("shop", device: printerA.uri)
    let printerB = try TestPrinter(folder: folderB)
    let schedulerB = try TestScheduler(folder: folderB)
    try schedulerB.addQueue("shop", device: printerB.uri)
    let files = [#"{"path":"a.pdf"}"#]
    let first = try await run(
      folderA, files, printer: "shop", access: PrintAccess(scheduler: schedulerA.address))
    let job = try #require(first.jobs?.first)
    #expect(first.jobs?.count == 1 && job.resumed == nil)
    #expect(job.scheduler == schedulerA.address && job.printer == "shop" && job.file == "a.pdf")
    #expect(try schedulerJobs(schedulerA) == ["shop-\(job.jobID)"])
    #expect(printerA.jobs(count: 1).count == 1)

    // CUPS_SERVER changed: scheduler B, which has a queue 'shop' too, waited for.
    let again = try await run(
      folderA, files, printer: "shop", access: PrintAccess(scheduler: schedulerB.address),
      wait: 60)
    #expect(again.failure == nil, "\(String(describing: again.failure))")
    let resumed = try #require(again.jobs?.first)
    #expect(again.jobs?.count == 1 && resumed.resumed == true && resumed.jobID == job.jobID)
    // The report names A, and A was asked: B never had a job, so it could not have said
    // 'completed' of it.
    #expect(resumed.scheduler == schedulerA.address)
    #expect(resumed.state == "completed")
    #expect(try schedulerJobs(schedulerB).isEmpty)
    #expect(try schedulerJobs(schedulerA) == ["shop-\(job.jobID)"])
    #expect(spooled(printerB) == 0 && spooled(printerA) == 1)
    let entry = try #require(try PrintJournal(path: folderA.file("print.json")).entries.first)
    #expect(entry.scheduler == schedulerA.address && entry.state == "completed")
  }

  @Test("a file sent whole is not sent again split, and a split one not again whole")
  func splitChanged() async throws {
    let (folder, color, mono) = try colorAndMono()
    let files = [#"{"path":"c.pdf","color":"auto"}"#]
    let whole = try await run(folder, files, printer: color.uri, mono: mono.uri)
    let job = try #require(whole.jobs?.first)
    #expect(whole.files.count == 1 && job.part == "whole" && spooled(color) == 1)
    // The printer's own uuid, as ipptool reads it.
    let attributes = try runTool(
      "ipptool", ["-tv", color.uri, "/usr/share/cups/ipptool/get-printer-attributes.test"])
    let uuid = try #require(job.printerUUID)
    #expect(uuid.hasPrefix("urn:uuid:") && attributes.stdout.contains("= \(uuid)"))

    let split = try await run(folder, files, printer: color.uri, mono: mono.uri, split: true)
    #expect(split.files.map(\.part) == ["color", "mono"])
    #expect(split.jobs?.count == 1)
    let resumed = try #require(split.jobs?.first)
    #expect(resumed.resumed == true && resumed.part == "whole" && resumed.jobID == job.jobID)
    #expect(resumed.document == folder.file("out/1-c.pdf") && resumed.printer == color.uri)
    #expect(spooled(color) == 1 && spooled(mono) == 0)

    // The reverse: split first, then whole.
    let other = TemporaryFolder()
    try inputs(other)
    let parts = try await run(other, files, printer: color.uri, mono: mono.uri, split: true)
    #expect(parts.jobs?.map(\.part) == ["color", "mono"])
    #expect(spooled(color) == 2 && spooled(mono) == 1)
    let again = try await run(other, files, printer: color.uri, mono: mono.uri)
    #expect(again.files.map(\.part) == ["whole"])
    #expect(again.jobs?.map(\.part) == ["color", "mono"])
    #expect(again.jobs?.allSatisfy { $0.resumed == true } == true)
    #expect(again.jobs?.map(\.jobID) == parts.jobs?.map(\.jobID))
    #expect(spooled(color) == 2 && spooled(mono) == 1)
  }

  @Test("a split sent is not sent again to another monochrome printer")
  func monoPrinterChanged() async throws {
    let folder = TemporaryFolder()
    try inputs(folder)
    let color = try TestPrinter(folder: folder)
    let firstFolder = TemporaryFolder()
    let secondFolder = TemporaryFolder()
    let first = try TestPrinter(folder: firstFolder)
    let second = try TestPrinter(folder: secondFolder)
    let files = [#"{"path":"c.pdf","color":"auto"}"#]
    let sent = try await run(folder, files, printer: color.uri, mono: first.uri, split: true)
    #expect(sent.jobs?.map(\.printer) == [color.uri, first.uri])
    let again = try await run(folder, files, printer: color.uri, mono: second.uri, split: true)
    #expect(again.jobs?.map(\.printer) == [color.uri, first.uri])
    #expect(again.jobs?.allSatisfy { $0.resumed == true } == true)
    #expect(spooled(color) == 1 && spooled(first) == 1 && spooled(second) == 0)
  }

  @Test("a split sent part-way: the same split sends only the rest; another is print.partlySent")
  func partlySent() async throws {
    let (folder, color, mono) = try colorAndMono()
    let files = [#"{"path":"c.pdf","color":"auto"}"#]
    // The monochrome printer cannot be reached: the colour part was sent, then the run failed,
    // reporting the colour part's job with the failure.
    let nowhere = "ipp://localhost:\(TestPrinter.freePort())/ipp/print"
    let stopped = try await run(folder, files, printer: color.uri, mono: nowhere, split: true)
    #expect(stopped.failure?.code == "print.unreachable", "\(String(describing: stopped.failure))")
    #expect(stopped.jobs?.map(\.part) == ["color"] && stopped.jobs?.first?.printer == color.uri)
    #expect(spooled(color) == 1)
    let recorded = try PrintJournal(path: folder.file("print.json")).entries
    #expect(recorded.map(\.part) == ["color"] && recorded.map(\.parts) == [2])
    let colorJob = try #require(recorded.first?.jobID)
    #expect(stopped.jobs?.first?.jobID == colorJob)

    // Split off: refused, naming the file, the part sent, its job and printer; nothing sent.
    let refused = await #expect(throws: PrintError.self) {
      try await run(folder, files, printer: color.uri, mono: mono.uri)
    }
    #expect(refused?.code == "print.partlySent")
    let message = refused?.message ?? ""
    #expect(message.hasPrefix("'c.pdf' was partly sent"), "\(message)")
    #expect(message.contains("the color part as job \(colorJob) on '\(color.uri)'"), "\(message)")
    #expect(refused?.hint?.contains(folder.file("print.json")) == true)
    #expect(spooled(color) == 1 && spooled(mono) == 0)

    // The same split: only the monochrome part is sent.
    let rest = try await run(folder, files, printer: color.uri, mono: mono.uri, split: true)
    #expect(rest.jobs?.map(\.part) == ["color", "mono"])
    #expect(rest.jobs?.map(\.resumed) == [true, nil])
    #expect(rest.jobs?.first?.jobID == colorJob)
    #expect(spooled(color) == 1 && spooled(mono) == 1)
    let received = try #require(mono.jobs(count: 1).values.first)
    #expect(received.attributes["print-color-mode"] == "monochrome")
    #expect(try pdfInfo(received.file)["Pages"] == "3")
    // Printed now: split off sends nothing and reports the two parts.
    let done = try await run(folder, files, printer: color.uri, mono: mono.uri)
    #expect(done.jobs?.map(\.part) == ["color", "mono"])
    #expect(spooled(color) == 1 && spooled(mono) == 1)
  }

  @Test("a file named twice prints twice, once each; a line inserted before shifts nothing")
  func namedTwice() async throws {
    let folder = TemporaryFolder()
    try inputs(folder)
    let printer = try TestPrinter(folder: folder)
    let twice = [#"{"path":"a.pdf"}"#, #"{"path":"a.pdf"}"#]
    let first = try await run(folder, twice, printer: printer.uri)
    #expect(first.jobs?.count == 2 && Set(first.jobs?.map(\.jobID) ?? []).count == 2)
    #expect(spooled(printer) == 2)
    let again = try await run(folder, twice, printer: printer.uri)
    #expect(again.jobs?.map(\.resumed) == [true, true])
    #expect(again.jobs?.map(\.jobID) == first.jobs?.map(\.jobID))
    #expect(spooled(printer) == 2)
    let inserted = try await run(folder, [#"{"path":"b.pdf"}"#] + twice, printer: printer.uri)
    #expect(inserted.jobs?.map(\.resumed) == [nil, true, true])
    #expect(inserted.jobs?.map(\.file) == ["b.pdf", "a.pdf", "a.pdf"])
    #expect(spooled(printer) == 3)
    // A third copy of the line is a third print.
    let third = try await run(folder, twice + [#"{"path":"a.pdf"}"#], printer: printer.uri)
    #expect(third.jobs?.map(\.resumed) == [true, true, nil])
    #expect(spooled(printer) == 4)
  }

  @Test("a changed upload of the same name is a new print; a changed price list is not")
  func changedUpload() async throws {
    let folder = TemporaryFolder()
    try inputs(folder)
    let printer = try TestPrinter(folder: folder)
    let files = [#"{"path":"a.pdf"}"#]
    let first = try await run(folder, files, printer: printer.uri)
    #expect(spooled(printer) == 1)
    // Prices up: the same print.
    try Data(journalPrices.replacingOccurrences(of: #""simplex":10"#, with: #""simplex":12"#).utf8)
      .write(to: URL(fileURLWithPath: folder.file("prices.json")))
    let repriced = try await run(folder, files, printer: printer.uri)
    #expect(repriced.quote.files.first?.rates["mono.simplex"]?.minor == 12)
    #expect(repriced.jobs?.map(\.resumed) == [true])
    #expect(repriced.jobs?.map(\.jobID) == first.jobs?.map(\.jobID))
    #expect(spooled(printer) == 1)
    // Another upload under the same name, the same pages and options: printed.
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 5), colorPages: [2]),
      to: folder.file("a.pdf"))
    let changed = try await run(folder, files, printer: printer.uri)
    #expect(changed.quote.files.first?.pages == 5)
    #expect(changed.files.first?.upload != first.files.first?.upload)
    #expect(changed.jobs?.map(\.resumed) == [nil])
    #expect(spooled(printer) == 2)
  }

  @Test("a journal an earlier imprint wrote (schema 1) is refused, never read as empty")
  func schemaOne() throws {
    let folder = TemporaryFolder()
    let path = folder.file("print.json")
    try Data(#"{"schemaVersion":1,"entries":[]}"#.utf8).write(to: URL(fileURLWithPath: path))
    let error = #expect(throws: PrintError.self) { try PrintJournal(path: path) }
    #expect(error?.code == "print.journalDamaged")
    #expect(error?.message.contains("written by an earlier imprint (schemaVersion 1)") == true)
    #expect(error?.hint?.hasPrefix("check what the printer printed, then remove") == true)
  }

  @Test("the upload's SHA-256 streamed equals sha256sum's, and past the limit is file.tooLarge")
  func uploadDigest() throws {
    let folder = TemporaryFolder()
    let path = folder.file("data.bin")
    // Past one 64 KiB block, not a whole number of them.
    let bytes = (0..<200_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let sum = try runTool("sha256sum", [path]).stdout.split(separator: " ").first.map(String.init)
    #expect(try SHA256.hex(ofFile: path, limit: 1 << 20) == sum)
    let error = #expect(throws: FileError.self) { try SHA256.hex(ofFile: path, limit: 1000) }
    #expect(error?.code == "file.tooLarge")
  }
}
