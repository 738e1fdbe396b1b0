// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: an order's parts claimed before they are sent (`PrintTarget.claims`):
// each part claimed once, just before its job is made; a part another run claimed is not sent
// and stops the order with print.claimedByAnother; a run that may not claim sends nothing more
// (print.unclaimed). Checked by what a real printer (ippeveprinter) received.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Synchronization
import Testing

/// Claims answered by a script, each asked recorded.
private final class ScriptedClaims: PrintClaims {
  /// The parts asked for, as `file part`, in order.
  let asked = Mutex<[String]>([])
  /// The printers' jobs told, as `file part printer-job`, in order.
  let created = Mutex<[String]>([])
  /// The printers' jobs given back (canceled unsent), as `file part printer-job`, in order.
  let withdrawn = Mutex<[String]>([])
  /// The answer for a file's part: true (claimed), false (another run's) or an error.
  let answer: @Sendable (String, String) -> Result<Bool, PrintError>
  /// The error to throw when told a file's part was created, if any.
  let refuseCreated: @Sendable (String, String) -> PrintError?

  init(
    refuseCreated: @escaping @Sendable (String, String) -> PrintError? = { _, _ in nil },
    _ answer: @escaping @Sendable (String, String) -> Result<Bool, PrintError>
  ) {
    self.answer = answer
    self.refuseCreated = refuseCreated
  }

  func claim(line key: String, part: String, file: String) throws(PrintError) -> Bool {
    asked.withLock { $0.append("\(file) \(part)") }
    return try answer(file, part).get()
  }

  func created(line key: String, part: String, file: String, printer: String, jobID: Int)
    throws(PrintError)
  {
    created.withLock { $0.append("\(file) \(part) \(jobID)") }
    if let refused = refuseCreated(file, part) { throw refused }
  }

  func withdrawn(line key: String, part: String, file: String, jobID: Int) throws(PrintError) {
    withdrawn.withLock { $0.append("\(file) \(part) \(jobID)") }
  }
}

@Suite(
  "PrintClaims: each part claimed before it is sent", .liveHandlesChecked, .tags(.slow),
  .skippedWhenQuick)
struct PrintClaimsTests {
  /// `a.pdf` (2 A4 pages), `b.pdf` (3, page 2 colour) and `c.pdf` (1) with the price list
  /// and the order in `folder`.
  private func inputs(_ folder: TemporaryFolder) throws {
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 2)), to: folder.file("a.pdf"))
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 3), colorPages: [2]),
      to: folder.file("b.pdf"))
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 1)), to: folder.file("c.pdf"))
    try Data(priceListFixture("usd-a4.json").utf8).write(
      to: URL(fileURLWithPath: folder.file("prices.json")))
    let order =
      #"{"schemaVersion":1,"files":[{"path":"a.pdf"},{"path":"b.pdf","color":"auto"},{"path":"c.pdf"}]}"#
    try Data(order.utf8).write(to: URL(fileURLWithPath: folder.file("order.json")))
  }

  /// A folder with the inputs, and a printer.
  private func prepared() throws -> (TemporaryFolder, TestPrinter) {
    let folder = TemporaryFolder()
    try inputs(folder)
    return (folder, try TestPrinter(folder: folder))
  }

  /// The order in `folder` prepared (its colour file split) and sent to `printer` with
  /// `claims`.
  private func run(_ folder: TemporaryFolder, _ printer: TestPrinter, _ claims: ScriptedClaims)
    async throws -> PrintedOrder
  {
    var target = PrintTarget(printer: printer.uri, journal: folder.file("print.json"))
    target.claims = claims
    let preparer = OrderPreparer(
      quoter: OrderQuoter(
        sandbox: DocumentSandbox(executable: imprintExecutable, workers: 1), jobs: 1))
    return try await OrderPrinter(preparer: preparer).run(
      order: folder.file("order.json"), prices: folder.file("prices.json"),
      output: folder.file("out"), options: PrepareOptions(splitColor: true), target: target)
  }

  @Test("every part claimed once, in the order's order, and each sent once")
  func allClaimed() async throws {
    let (folder, printer) = try prepared()
    let claims = ScriptedClaims { _, _ in .success(true) }
    let printed = try await run(folder, printer, claims)
    #expect(printed.failure == nil)
    let asked = claims.asked.withLock { $0 }
    #expect(asked == ["a.pdf whole", "b.pdf color", "b.pdf mono", "c.pdf whole"], "\(asked)")
    #expect(printed.jobs?.count == 4)
    // Each printer's job told before its document was sent, the ids the printer gave.
    let told = claims.created.withLock { $0 }
    #expect(told == (printed.jobs ?? []).map { "\($0.file) \($0.part) \($0.jobID)" }, "\(told)")
    #expect(printer.jobs(count: 4).count == 4)
  }

  @Test("a run that may not record the printer's job: the job is canceled, its document not sent")
  func refusedAtCreation() async throws {
    let (folder, printer) = try prepared()
    let lost = PrintError.unclaimed(
      file: "b.pdf", part: "color", reason: "this replica no longer holds the job")
    let refusal: @Sendable (String, String) -> PrintError? = { file, part in
      file == "b.pdf" && part == "color" ? lost : nil
    }
    let claims = ScriptedClaims(refuseCreated: refusal) { _, _ in .success(true) }
    let printed = try await run(folder, printer, claims)
    #expect(printed.failure == lost)
    #expect(printed.jobs?.map { "\($0.file) \($0.part)" } == ["a.pdf whole"])
    // The printer made a job for b.pdf's colour part, which was canceled without a document.
    try await expectColorPartCanceled(claims, printer)
    let journal = try PrintJournal(path: folder.file("print.json"))
    #expect(journal.entries.map { "\($0.file) \($0.part)" } == ["a.pdf whole"])
  }

  @Test("a journal that cannot be written: the job is canceled unsent and its claim given back")
  func journalUnwritable() async throws {
    let (folder, printer) = try prepared()
    let journal = folder.file("print.json")
    // Once b.pdf's colour job is told, the journal's path becomes a folder holding a file: its
    // next write (that job's entry) fails.
    let inTheWay: @Sendable (String, String) -> PrintError? = { file, part in
      if file == "b.pdf" && part == "color" {
        try? FileManager.default.removeItem(atPath: journal)
        try? FileManager.default.createDirectory(
          atPath: journal + "/in-the-way", withIntermediateDirectories: true)
      }
      return nil
    }
    let claims = ScriptedClaims(refuseCreated: inTheWay) { _, _ in .success(true) }
    await #expect(throws: FileError.self) { _ = try await run(folder, printer, claims) }
    // The job told for b.pdf's colour part is the one given back, and it was canceled.
    try await expectColorPartCanceled(claims, printer)
    let told = claims.created.withLock { $0 }
    #expect(claims.withdrawn.withLock { $0 } == told.suffix(1))
  }

  /// Checks that `claims` were told two jobs, the second b.pdf's colour part's, which
  /// `printer` holds canceled (no document: only the first job printed).
  private func expectColorPartCanceled(_ claims: ScriptedClaims, _ printer: TestPrinter)
    async throws
  {
    let told = claims.created.withLock { $0 }
    #expect(told.count == 2 && told[1].hasPrefix("b.pdf color "), "\(told)")
    let canceledID = try #require(told.last?.split(separator: " ").last.map(String.init))
    let attributes = try runTool(
      "ipptool",
      ["-tv", "\(printer.uri)/\(canceledID)", "/usr/share/cups/ipptool/get-job-attributes.test"])
    #expect(
      attributes.stdout.contains("job-state (enum) = canceled"), "\(attributes.stdout)")
    try await Task.sleep(for: .milliseconds(500))
    #expect(printer.jobs(count: 0).count == 1)
  }

  @Test("a part another run claimed is not sent: the order stops there, print.claimedByAnother")
  func claimedByAnother() async throws {
    let (folder, printer) = try prepared()
    let claims = ScriptedClaims { file, part in .success(!(file == "b.pdf" && part == "mono")) }
    let printed = try await run(folder, printer, claims)
    #expect(printed.failure == .claimedByAnother(file: "b.pdf", part: "mono"))
    #expect(printed.failure?.code == "print.claimedByAnother")
    #expect(claims.asked.withLock { $0 } == ["a.pdf whole", "b.pdf color", "b.pdf mono"])
    // The two parts claimed before it were sent; nothing after it.
    #expect(printed.jobs?.map { "\($0.file) \($0.part)" } == ["a.pdf whole", "b.pdf color"])
    #expect(printer.jobs(count: 2).count == 2)
    try await Task.sleep(for: .milliseconds(500))
    #expect(printer.jobs(count: 0).count == 2)
    // The journal records only what was sent: a run after it asks for the rest again.
    let journal = try PrintJournal(path: folder.file("print.json"))
    #expect(
      journal.entries.map { "\($0.file) \($0.part) \($0.sent)" } == [
        "a.pdf whole true", "b.pdf color true",
      ])
  }

  @Test("a run that may not claim (its lease lost) sends nothing more: print.unclaimed")
  func unclaimed() async throws {
    let (folder, printer) = try prepared()
    let lost = PrintError.unclaimed(
      file: "a.pdf", part: "whole", reason: "this replica no longer holds the job")
    let claims = ScriptedClaims { _, _ in .failure(lost) }
    let printed = try await run(folder, printer, claims)
    #expect(printed.failure == lost)
    #expect(printed.jobs?.isEmpty == true)
    #expect(claims.asked.withLock { $0 } == ["a.pdf whole"])
    try await Task.sleep(for: .milliseconds(500))
    #expect(printer.jobs(count: 0).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: folder.file("print.json")))
  }
}
