// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: prepared files sent to CUPS queues by name, through a private cupsd
// (TestScheduler) whose queues point at ippeveprinter (TestPrinter): what the printer received,
// the scheduler's own record of the jobs (lpstat), the journal, an unknown queue, a scheduler
// that does not answer, and a scheduler that asks for credentials (users only it knows).

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing
import ImprintPrinting
import ImprintTestSupport
import Testing

/// IPP media-size dimensions (hundredths of a millimetre) of the ticket's media names.
private let mediaSizes = [
  "iso_a4_210x297mm": "x-dimension=21000 y-dimension=29700",
  "na_letter_8.5x11in": "x-dimension=21590 y-dimension=27940",
]

/// A scheduler with the queue `shop` for a printer, both in `folder`.
private struct Shop {
  let printer: TestPrinter
  let scheduler: TestScheduler

  init(in folder: TemporaryFolder, users: [String: String] = [:]) throws {
    printer = try TestPrinter(folder: folder)
    scheduler = try TestScheduler(folder: folder, users: users)
    try scheduler.addQueue("shop", device: printer.uri)
  }

  /// The jobs the scheduler has had, finished or not (`lpstat -W all -o`): id and user.
  func schedulerJobs() throws -> [(id: String, user: String)] {
    let listed = try runTool("lpstat", ["-h", scheduler.address, "-W", "all", "-o"])
    return listed.stdout.split(separator: "\n").map { line in
      let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
      return (words.first ?? "", words.count > 1 ? words[1] : "")
    }
  }

  /// What the printer received by the job's name (the scheduler's job ids are not the
  /// printer's), once `count` jobs arrived.
  func received(count: Int) -> [String: ReceivedJob] {
    var byName: [String: ReceivedJob] = [:]
    for job in printer.jobs(count: count).values {
      byName[job.attributes["job-name"] ?? ""] = job
    }
    return byName
  }
}

@Suite(
  "PrintSubmitter: CUPS queues by name on a private scheduler", .liveHandlesChecked, .tags(.slow),
  .skippedWhenQuick)
struct PrintQueueTests {
  @Test("each file reaches the queue's printer whole, with its copies, sides, media and colour")
  func received() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(
      in: folder,
      files: [
        #"{"path":"a.pdf","nUp":2,"duplex":"long-edge","copies":2,"color":"color"}"#,
        #"{"path":"a.pdf","pages":"1-3","duplex":"long-edge","paper":"Letter"}"#,
      ])
    let shop = try Shop(in: folder)
    #expect(try shop.scheduler.queues() == ["shop"])
    let access = PrintAccess(scheduler: shop.scheduler.address)
    let jobs = try PrintSubmitter.submit(order.files, printer: "shop", access: access)
    #expect(jobs.map(\.document) == order.files.map(\.document))
    #expect(jobs.allSatisfy { $0.printer == "shop" } && Set(jobs.map(\.jobID)).count == 2)
    // The scheduler's own list has the two jobs, as shop-ID.
    #expect(Set(try shop.schedulerJobs().map(\.id)) == Set(jobs.map { "shop-\($0.jobID)" }))
    let received = shop.received(count: 2)
    #expect(received.count == 2)
    for file in order.files {
      let name = (file.document as NSString).lastPathComponent
      let got = try #require(received[name], "\(name)")
      // The scheduler passes the PDF on untouched: the bytes prepared, the pages quoted.
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: got.file))
          == Data(contentsOf: URL(fileURLWithPath: file.document)))
      #expect(try pdfInfo(got.file)["Pages"] == "\(file.ticket.sheetSides)")
      // The scheduler's backend leaves out one copy, the default.
      #expect((got.attributes["copies"] ?? "1") == "\(file.ticket.ipp.copies)")
      #expect(got.attributes["sides"] == file.ticket.ipp.sides)
      #expect(got.attributes["print-color-mode"] == file.ticket.ipp.printColorMode)
      // The scheduler's backend sends the paper as media-col: its size in 1/100 mm.
      let size = try #require(mediaSizes[file.ticket.ipp.media])
      #expect(got.attributes["media-col"]?.contains("{\(size)}") == true, "\(got.attributes)")
    }
    // By hand: 2 copies, 2-up landscape sheets (long-edge pages: short-edge paper), colour;
    // then Letter, monochrome (the order's default).
    let first = try #require(received[(order.files[0].document as NSString).lastPathComponent])
    #expect(
      first.attributes["copies"] == "2" && first.attributes["sides"] == "two-sided-short-edge")
    #expect(first.attributes["print-color-mode"] == "color")
    let second = try #require(received[(order.files[1].document as NSString).lastPathComponent])
    #expect(second.attributes["media-col"]?.contains("x-dimension=21590") == true)
    #expect(second.attributes["print-color-mode"] == "monochrome")
    // Followed on the scheduler to their end.
    let waited = try PrintSubmitter.wait(for: jobs, seconds: 60, access: access)
    #expect(waited.map(\.state) == ["completed", "completed"])
  }

  @Test("a rerun with the journal sends nothing to the queue again")
  func journal() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(in: folder, files: [#"{"path":"a.pdf"}"#])
    let shop = try Shop(in: folder)
    let access = PrintAccess(scheduler: shop.scheduler.address)
    let journal = try PrintJournal(path: folder.file("print.json"))
    let first = try PrintSubmitter.submit(
      order.files, printer: "shop", journal: journal, access: access)
    #expect(first.map(\.resumed) == [nil])
    let again = try PrintSubmitter.submit(
      order.files, printer: "shop", journal: try PrintJournal(path: folder.file("print.json")),
      access: access)
    #expect(again.map(\.resumed) == [true] && again.map(\.jobID) == first.map(\.jobID))
    #expect(try shop.schedulerJobs().map(\.id) == ["shop-\(first[0].jobID)"])
  }

  @Test("an unknown queue is print.unknownPrinter, naming it and the scheduler, before preparing")
  func unknownQueue() async throws {
    let folder = TemporaryFolder()
    let shop = try Shop(in: folder)
    let access = PrintAccess(scheduler: shop.scheduler.address)
    let error = #expect(throws: PrintError.self) {
      try PrintSubmitter.lookUp("front-desk", access: access)
    }
    #expect(error == .unknownPrinter(printer: "front-desk", scheduler: shop.scheduler.address))
    #expect(error?.code == "print.unknownPrinter")
    #expect(error?.hint?.contains("lpstat -e") == true)
    // OrderPrinter asks before preparing: no output folder.
    try HostileDocuments.write(
      try NumberedPages.drawn([.a4]), to: folder.file("a.pdf"))
    try Data(printerPrices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
    try Data(#"{"schemaVersion":1,"files":[{"path":"a.pdf"}]}"#.utf8).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    var target = PrintTarget(printer: "shop", monoPrinter: "front-desk")
    target.access = access
    let preparer = OrderPreparer(
      quoter: OrderQuoter(
        sandbox: DocumentSandbox(executable: imprintExecutable, workers: 1), jobs: 1))
    await #expect(
      throws: PrintError.unknownPrinter(printer: "front-desk", scheduler: shop.scheduler.address)
    ) {
      try await OrderPrinter(preparer: preparer).run(
        order: folder.file("order.json"), prices: folder.file("prices.json"),
        output: folder.file("out"), target: target)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out")))
  }

  @Test("a scheduler that does not answer is print.unreachable, naming it")
  func schedulerDown() async throws {
    let address = "127.0.0.1:\(TestPrinter.freePort())"
    let error = #expect(throws: PrintError.self) {
      try PrintSubmitter.lookUp("shop", access: PrintAccess(scheduler: address))
    }
    #expect(error?.code == "print.unreachable")
    #expect(error?.message.contains("'shop'") == true && error?.message.contains(address) == true)
  }

  @Test(
    "names that are neither IPP URIs nor queue names are refused without asking anyone",
    arguments: ["lpd://host/queue", "", "front desk", "a/b", "shop@host", "q#1", "x\u{7}"])
  func badNames(name: String) {
    #expect(throws: PrintError.self) { try PrintSubmitter.checkPrinter(name) }
    #expect((try? PrintSubmitter.checkPrinter("front-desk_2")) != nil)
  }

  @Test("a scheduler that asks for credentials: none or wrong ones are print.unauthorized")
  func credentials() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(in: folder, files: [#"{"path":"a.pdf"}"#])
    let shop = try Shop(in: folder, users: ["clerk": "s3cret-2"])
    let scheduler = shop.scheduler.address
    let none = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(
        order.files, printer: "shop", access: PrintAccess(scheduler: scheduler))
    }
    #expect(none?.code == "print.unauthorized")
    #expect(none?.message.hasPrefix("the printer 'shop' asks for credentials") == true)
    #expect(none?.hint?.contains("--password-file") == true)
    let wrong = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(
        order.files, printer: "shop",
        access: PrintAccess(
          scheduler: scheduler, credentials: PrintCredentials(user: "clerk", password: "s3cret")))
    }
    #expect(wrong?.code == "print.unauthorized")
    #expect(wrong?.message.contains("refused the credentials of 'clerk'") == true)
    // Nothing was queued by the two refusals.
    #expect(try shop.schedulerJobs().isEmpty)
    let jobs = try PrintSubmitter.submit(
      order.files, printer: "shop",
      access: PrintAccess(
        scheduler: scheduler, credentials: PrintCredentials(user: "clerk", password: "s3cret-2")))
    // The scheduler queued it as clerk's, and the printer got it.
    let listed = try shop.schedulerJobs()
    #expect(listed.map(\.id) == ["shop-\(jobs[0].jobID)"] && listed.map(\.user) == ["clerk"])
    #expect(shop.received(count: 1).count == 1)
  }
}

@Suite("PrintCredentials: the password file", .liveHandlesChecked, .tags(.slow), .skippedWhenQuick)
struct PrintCredentialsTests {
  /// Writes `text` to a file of `mode` in `folder` and reads it.
  private func read(_ text: String, mode: mode_t = 0o600, in folder: TemporaryFolder) throws
    -> PrintCredentials
  {
    let path = folder.file("password")
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    chmod(path, mode)
    return try PrintCredentials(file: path)
  }

  @Test("one line user:password; the password keeps its colons; one final line break dropped")
  func reads() throws {
    let folder = TemporaryFolder()
    #expect(
      try read("clerk:s3cret\n", in: folder) == PrintCredentials(user: "clerk", password: "s3cret"))
    #expect(try read("clerk:a:b:\r\n", mode: 0o400, in: folder).password == "a:b:")
    #expect("\(try read("clerk:s3cret", in: folder))" == "clerk:(password)")
  }

  @Test(
    "a file its group or others may read or write is refused, naming its mode",
    arguments: [0o640, 0o604, 0o620, 0o666] as [mode_t])
  func exposed(mode: mode_t) throws {
    let folder = TemporaryFolder()
    let error = #expect(throws: PrintError.self) {
      try read("clerk:s3cret\n", mode: mode, in: folder)
    }
    #expect(error?.code == "print.passwordFile")
    #expect(error?.message.contains("mode is \(String(mode, radix: 8))") == true)
    #expect(error?.message.contains(folder.file("password")) == true)
  }

  @Test(
    "text that is not one user:password line is print.passwordFile",
    arguments: ["clerk\n", ":s3cret", "clerk:", "clerk:a\nb:c\n", "clerk:a\u{0}", ""])
  func malformed(text: String) throws {
    let folder = TemporaryFolder()
    let error = #expect(throws: PrintError.self) { try read(text, in: folder) }
    #expect(error?.code == "print.passwordFile")
  }

  @Test("a missing file, a folder, a FIFO and a file past 4 KiB are file errors, read bounded")
  func files() throws {
    let folder = TemporaryFolder()
    #expect(throws: FileError.notFound(path: folder.file("none"))) {
      try PrintCredentials(file: folder.file("none"))
    }
    #expect(throws: FileError.isDirectory(path: folder.path)) {
      try PrintCredentials(file: folder.path)
    }
    mkfifo(folder.file("fifo"), 0o600)
    let fifo = #expect(throws: FileError.self) { try PrintCredentials(file: folder.file("fifo")) }
    #expect(fifo?.code == "file.notRegular")
    let large = #expect(throws: FileError.self) {
      try read("clerk:" + String(repeating: "x", count: 5000), in: folder)
    }
    #expect(large?.code == "file.tooLarge")
    let long = #expect(throws: PrintError.self) {
      try read("clerk:" + String(repeating: "x", count: 200), in: folder)
    }
    #expect(long?.code == "print.passwordFile")
  }
}
