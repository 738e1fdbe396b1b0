// SPDX-License-Identifier: Apache-2.0
// ImprintBatchTests: batch `print` jobs: orders prepared into their folders and sent to a real
// IPP printer (CUPS's ippeveprinter on a free port), checked by what it received; reruns that
// never print a file twice; one bad order failing alone. Called as a library (no CLI).

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

@testable import ImprintBatch

/// USD rates for mono and colour on A4, A3 and Letter.
private let prices = priceListFixture("usd-a4-a3-letter.json")

@Suite("imprint batch: print jobs", .liveHandlesChecked, .tags(.slow), .skippedWhenQuick)
struct BatchPrintTests {
  /// A folder with `a.pdf` (5 A4 pages), `b.pdf` (3), `prices.json`, and one order file per
  /// entry of `orders` (its files' JSON).
  private func inputs(_ folder: TemporaryFolder, orders: [String: String]) throws {
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 5)), to: folder.file("a.pdf"))
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 3)), to: folder.file("b.pdf"))
    try write(prices, to: folder.file("prices.json"))
    for (name, files) in orders {
      try write(#"{"schemaVersion":1,"store":"S","files":[\#(files)]}"#, to: folder.file(name))
    }
  }

  private func write(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  }

  /// The manifest `lines` in `folder`.
  private func manifest(_ folder: TemporaryFolder, _ lines: [String]) throws -> String {
    let path = folder.file("manifest.jsonl")
    try write(lines.joined(separator: "\n") + "\n", to: path)
    return path
  }

  private func options(_ folder: TemporaryFolder) throws -> BatchOptions {
    var options = BatchOptions(
      outputFolder: folder.file("out"), placeholder: try CardInput.shippedPlaceholder())
    options.jobs = 2
    options.sandbox = DocumentSandbox(executable: imprintExecutable, workers: 2)
    return options
  }

  private func results(_ options: BatchOptions) throws -> [String: ItemResult] {
    let lines = try String(contentsOfFile: options.resultsFile, encoding: .utf8)
      .split(separator: "\n")
    var byID: [String: ItemResult] = [:]
    for line in lines {
      let result = try JSONDecoder().decode(ItemResult.self, from: Data(line.utf8))
      byID[result.id] = result
    }
    return byID
  }

  /// The documents the printer has spooled (it writes each before answering Send-Document).
  private func spooled(_ printer: TestPrinter) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? []).filter {
      $0.hasSuffix(".pdf")
    }.sorted()
  }

  /// The `jobs` of a print job's report.
  private func reportedJobs(_ options: BatchOptions, _ id: String) throws -> [[String: Any]] {
    let data = try Data(
      contentsOf: URL(fileURLWithPath: options.outputFolder + "/prints/\(id)/report.json"))
    let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return report["jobs"] as? [[String: Any]] ?? []
  }

  @Test("print jobs to a CUPS queue that asks for credentials: refused without, sent once with")
  func queueWithCredentials() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let scheduler = try TestScheduler(folder: folder, users: ["clerk": "s3cret"])
    try scheduler.addQueue("front-desk", device: printer.uri)
    try inputs(folder, orders: ["o1.json": #"{"path":"a.pdf","copies":2}"#])
    let path = try manifest(
      folder,
      [
        #"{"id":"P-1","kind":"print","file":"o1.json","prices":"prices.json","printer":"front-desk"}"#
      ])
    var options = try options(folder)
    options.printAccess.scheduler = scheduler.address
    let refused = try await BatchRunner.run(manifest: path, options: options)
    #expect(refused.failed == 1)
    #expect(try results(options)["P-1"]?.error?.code == "print.unauthorized")
    options.printAccess.credentials = PrintCredentials(user: "clerk", password: "s3cret")
    let sent = try await BatchRunner.run(manifest: path, options: options)
    let reason = try results(options)["P-1"]?.error?.message ?? ""
    #expect(sent.ok == 1, "\(reason)")
    let jobs = try reportedJobs(options, "P-1")
    #expect(jobs.count == 1 && jobs.first?["printer"] as? String == "front-desk")
    // A rerun (the outputs removed, so the job runs again) sends nothing: the journal.
    try FileManager.default.removeItem(atPath: folder.file("out/prints/P-1"))
    let again = try await BatchRunner.run(manifest: path, options: options)
    #expect(again.ok == 1)
    #expect(try reportedJobs(options, "P-1").first?["resumed"] as? Bool == true)
    let listed = try runTool("lpstat", ["-h", scheduler.address, "-W", "all", "-o"])
    #expect(listed.stdout.split(separator: "\n").count == 1, "\(listed.stdout)")
    #expect(listed.stdout.contains("clerk"))
    #expect(printer.jobs(count: 1).values.first?.attributes["copies"] == "2")
  }

  @Test("orders prepared and printed: pages, copies, sides, media and colour as received")
  func printed() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    try inputs(
      folder,
      orders: [
        "o1.json":
          #"{"path":"a.pdf","nUp":4,"duplex":"long-edge","copies":2,"color":"color","extras":["staple"]}"#,
        "o2.json":
          #"{"path":"b.pdf","duplex":"short-edge","paper":"Letter","copies":3,"color":"mono"},"#
          + #"{"path":"a.pdf","pages":"2-4"}"#,
        "bad.json": #"{"path":"missing.pdf"}"#,
      ])
    try FileManager.default.createDirectory(
      atPath: folder.file("uploads/orders"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: folder.file("b.pdf"), toPath: folder.file("uploads/b.pdf"))
    try write(
      #"{"schemaVersion":1,"store":"S","files":[{"path":"b.pdf","nUp":2}]}"#,
      to: folder.file("uploads/orders/o4.json"))
    let uri = printer.uri
    let path = try manifest(
      folder,
      [
        #"{"id":"P-1","kind":"print","file":"o1.json","prices":"prices.json","printer":"\#(uri)"}"#,
        #"{"id":"P-2","kind":"print","file":"o2.json","prices":"prices.json","printer":"\#(uri)"}"#,
        #"{"id":"P-3","kind":"print","file":"bad.json","prices":"prices.json","printer":"\#(uri)"}"#,
        #"{"id":"P-4","kind":"print","file":"uploads/orders/o4.json","prices":"prices.json","filesRoot":"uploads"}"#,
        #"{"id":"P-5","kind":"print","file":"o1.json"}"#,
      ])
    let options = try options(folder)
    let summary = try await BatchRunner.run(manifest: path, options: options)
    #expect(summary.ok == 3 && summary.failed == 2, "\(summary)")
    let first = try results(options)
    #expect(first["P-3"]?.error?.code == "file.notFound")
    #expect(first["P-5"]?.error?.code == "batch.badLine")
    #expect(first["P-5"]?.error?.message.contains("needs 'file' (the order) and 'prices'") == true)
    #expect(
      first["P-1"]?.outputs == [
        "prints/P-1/1-a.pdf", "prints/P-1/1-a.ticket.json", "prints/P-1/report.json",
      ])
    // Prepared only: the files of an order whose files lie under its filesRoot.
    #expect(first["P-4"]?.status == .ok)
    #expect(try pdfInfo(folder.file("out/prints/P-4/1-b.pdf"))["Pages"] == "2")
    #expect(try reportedJobs(options, "P-4").isEmpty)

    // Three files sent; what the printer got, against the values worked out by hand.
    let received = printer.jobs(count: 3)
    #expect(received.count == 3 && spooled(printer).count == 3)
    let jobIDs = try ["P-1", "P-2"].flatMap { try reportedJobs(options, $0) }.map {
      try #require($0["jobID"] as? Int)
    }
    #expect(jobIDs.count == 3)
    let expected: [(pages: String, copies: String, sides: String, media: String, mode: String)] =
      [
        // 5 pages 4-up: 2 impressions, duplex: no blank back.
        ("2", "2", "two-sided-long-edge", "iso_a4_210x297mm", "color"),
        // 3 pages duplex: 3 impressions and a blank back.
        ("4", "3", "two-sided-short-edge", "na_letter_8.5x11in", "monochrome"),
        ("3", "1", "one-sided", "iso_a4_210x297mm", "monochrome"),
      ]
    for (id, want) in zip(jobIDs, expected) {
      let got = try #require(received[id], "job \(id)")
      #expect(try pdfInfo(got.file)["Pages"] == want.pages)
      #expect(got.attributes["copies"] == want.copies)
      #expect(got.attributes["sides"] == want.sides)
      #expect(got.attributes["media"] == want.media)
      #expect(got.attributes["print-color-mode"] == want.mode)
    }
    #expect(received[jobIDs[0]]?.attributes["finishings"] == "staple")

    // A rerun skips every job that finished and sends nothing again.
    let again = try await BatchRunner.run(manifest: path, options: options)
    #expect(again.skipped == 3 && again.failed == 2, "\(again)")
    #expect(spooled(printer).count == 3)
  }

  @Test("a job that fails part-way sends, on every rerun, only what it has not sent")
  func partial() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    // The printer offers no A3: the second file is refused after the first was sent.
    try inputs(folder, orders: ["o.json": #"{"path":"a.pdf"},{"path":"b.pdf","paper":"A3"}"#])
    let path = try manifest(
      folder,
      [
        #"{"id":"P-1","kind":"print","file":"o.json","prices":"prices.json","printer":"\#(printer.uri)"}"#
      ])
    let options = try options(folder)
    for _ in 0..<2 {
      let summary = try await BatchRunner.run(manifest: path, options: options)
      #expect(summary.failed == 1)
      #expect(try results(options)["P-1"]?.error?.code == "print.refused")
      #expect(spooled(printer).count == 1)
      // The report says what the printer took: a.pdf's job (resumed on the rerun).
      #expect(try reportedJobs(options, "P-1").map { $0["file"] as? String } == ["a.pdf"])
    }
    let journal = try PrintJournal(path: options.outputFolder + "/.state/P-1.print.json")
    #expect(journal.entries.count == 1 && journal.entries.first?.sent == true)
    #expect(journal.entries.first?.document == "1-a.pdf")

    // The order corrected: the first file is not sent again, the second is.
    try write(
      #"{"schemaVersion":1,"store":"S","files":[{"path":"a.pdf"},{"path":"b.pdf"}]}"#,
      to: folder.file("o.json"))
    let fixed = try await BatchRunner.run(manifest: path, options: options)
    #expect(fixed.ok == 1)
    #expect(try results(options)["P-1"]?.status == .ok)
    #expect(spooled(printer).count == 2)
    let jobs = try reportedJobs(options, "P-1")
    #expect(jobs.count == 2)
    #expect(jobs.first?["resumed"] as? Bool == true && jobs.first?["jobID"] as? Int == 1)
    #expect(jobs.last?["resumed"] == nil)
    #expect(printer.jobs(count: 2).count == 2)
  }

  @Test("waited for: an aborted printer job fails its print job, and so again on a rerun")
  func waited() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder, hook: #"[ "$IPP_COPIES" = 3 ] && exit 3; exit 0"#)
    try inputs(
      folder, orders: ["o1.json": #"{"path":"a.pdf"}"#, "o2.json": #"{"path":"b.pdf","copies":3}"#])
    let uri = printer.uri
    let path = try manifest(
      folder,
      [
        #"{"id":"P-1","kind":"print","file":"o1.json","prices":"prices.json","printer":"\#(uri)"}"#,
        #"{"id":"P-2","kind":"print","file":"o2.json","prices":"prices.json","printer":"\#(uri)"}"#,
      ])
    var options = try options(folder)
    options.printWaitSeconds = 60
    let summary = try await BatchRunner.run(manifest: path, options: options)
    #expect(summary.ok == 1 && summary.failed == 1)
    let first = try results(options)
    #expect(first["P-1"]?.status == .ok)
    #expect(first["P-2"]?.error?.code == "print.aborted")
    #expect(try reportedJobs(options, "P-1").first?["state"] as? String == "completed")
    #expect(try reportedJobs(options, "P-2").first?["state"] as? String == "aborted")
    let journal = try PrintJournal(path: options.outputFolder + "/.state/P-2.print.json")
    #expect(journal.entries.map(\.state) == ["aborted"])

    let again = try await BatchRunner.run(manifest: path, options: options)
    #expect(again.skipped == 1 && again.failed == 1)
    #expect(try results(options)["P-2"]?.error?.code == "print.aborted")
    #expect(try reportedJobs(options, "P-2").first?["resumed"] as? Bool == true)
    #expect(spooled(printer).count == 2)
  }

  @Test("a job created but not confirmed sent is print.unconfirmed; nothing is sent again")
  func unconfirmed() async throws {
    let folder = TemporaryFolder()
    try inputs(folder, orders: ["o.json": #"{"path":"a.pdf"}"#])
    // No printer on this port: prepared, then print.unreachable.
    let nowhere = "ipp://localhost:\(TestPrinter.freePort())/ipp/print"
    let line =
      #"{"id":"P-1","kind":"print","file":"o.json","prices":"prices.json","printer":"URI"}"#
    var path = try manifest(folder, [line.replacingOccurrences(of: "URI", with: nowhere)])
    let options = try options(folder)
    #expect(try await BatchRunner.run(manifest: path, options: options).failed == 1)
    #expect(try results(options)["P-1"]?.error?.code == "print.unreachable")

    // A run stopped between Create-Job and the end of Send-Document leaves this entry.
    let printer = try TestPrinter(folder: folder)
    let ticket = try JSONDecoder().decode(
      JobTicket.self,
      from: Data(contentsOf: URL(fileURLWithPath: folder.file("out/prints/P-1/1-a.ticket.json"))))
    let key = PrintJournal.lineKey(
      identity: PrintJournal.lineIdentity(
        upload: try SHA256.hex(ofFile: folder.file("a.pdf"), limit: 1 << 30), line: ticket.quote,
        pages: nil, extras: []),
      occurrence: 0)
    let journalPath = options.outputFolder + "/.state/P-1.print.json"
    try write(
      #"{"schemaVersion":2,"entries":[{"key":"\#(key)","file":"a.pdf","part":"whole","#
        + #""parts":1,"document":"1-a.pdf","printer":"\#(printer.uri)","jobID":7,"sent":false}]}"#,
      to: journalPath)
    path = try manifest(folder, [line.replacingOccurrences(of: "URI", with: printer.uri)])
    #expect(try await BatchRunner.run(manifest: path, options: options).failed == 1)
    let error = try #require(try results(options)["P-1"]?.error)
    #expect(error.code == "print.unconfirmed")
    #expect(error.message.contains("job 7 on '\(printer.uri)'"), "\(error.message)")
    #expect(error.hint?.contains(journalPath) == true)
    #expect(spooled(printer).isEmpty)

    // A damaged journal is never taken for an empty one.
    try write("{", to: journalPath)
    #expect(try await BatchRunner.run(manifest: path, options: options).failed == 1)
    #expect(try results(options)["P-1"]?.error?.code == "print.journalDamaged")
    #expect(spooled(printer).isEmpty)
    // Nor is one an earlier imprint wrote (schema 1: prepared files, queues without their
    // scheduler), even one recording nothing of this order.
    try write(
      #"{"schemaVersion":1,"entries":[{"document":"1-b.pdf","digest":"00","#
        + #""printer":"shop","jobID":3,"sent":true}]}"#, to: journalPath)
    #expect(try await BatchRunner.run(manifest: path, options: options).failed == 1)
    let earlier = try #require(try results(options)["P-1"]?.error)
    #expect(earlier.code == "print.journalDamaged")
    #expect(earlier.message.contains("written by an earlier imprint (schemaVersion 1)"))
    #expect(earlier.message.contains(journalPath), "\(earlier.message)")
    #expect(earlier.hint?.contains("check what the printer printed, then remove") == true)
    #expect(spooled(printer).isEmpty)
  }

  /// The PNG size (width, height) of `path`.
  private func pngSize(_ path: String) throws -> (Int, Int) {
    let header = try #require(pngHeader(Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
    return (header.width, header.height)
  }

  @Test("split with previews: parts to their printers; an option changed sends nothing again")
  func splitAndPreviews() async throws {
    let folder = TemporaryFolder()
    let monoFolder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let monoPrinter = try TestPrinter(folder: monoFolder)
    try inputs(folder, orders: ["o.json": #"{"path":"c.pdf","color":"auto","duplex":"long-edge"}"#])
    // Five A4 pages, page 4 colour: duplex sheets [1, 2] [3, 4] [5]; the second is colour.
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 5), colorPages: [4]),
      to: folder.file("c.pdf"))
    let line = { (size: Int) in
      #"{"id":"P-1","kind":"print","file":"o.json","prices":"prices.json","printer":"\#(printer.uri)","#
        + #""monoPrinter":"\#(monoPrinter.uri)","splitColor":true,"previews":true,"#
        + #""previewSize":\#(size),"wait":true}"#
    }
    var path = try manifest(folder, [line(64)])
    let options = try options(folder)
    let summary = try await BatchRunner.run(manifest: path, options: options)
    #expect(summary.ok == 1, "\(summary)")
    let first = try #require(try results(options)["P-1"])
    let color = (1...2).map { "prints/P-1/1-c.color.side-\($0).png" }
    let mono = (1...4).map { "prints/P-1/1-c.mono.side-\($0).png" }
    #expect(
      first.outputs
        == ["prints/P-1/1-c.color.pdf", "prints/P-1/1-c.color.ticket.json"] + color
        + ["prints/P-1/1-c.mono.pdf", "prints/P-1/1-c.mono.ticket.json"] + mono
        + ["prints/P-1/report.json"])
    for preview in color + mono {
      let (width, height) = try pngSize(options.outputFolder + "/" + preview)
      #expect(max(width, height) == 64 && min(width, height) == 45, "\(preview)")
    }
    // Each part on its own printer: the colour sheet (both its sides) and the other two
    // sheets with the blank back of the odd last one.
    let colorJobs = printer.jobs(count: 1)
    let monoJobs = monoPrinter.jobs(count: 1)
    #expect(colorJobs.count == 1 && monoJobs.count == 1)
    let colorJob = try #require(colorJobs.values.first)
    let monoJob = try #require(monoJobs.values.first)
    #expect(try pdfInfo(colorJob.file)["Pages"] == "2")
    #expect(colorJob.attributes["print-color-mode"] == "auto")
    #expect(try pdfInfo(monoJob.file)["Pages"] == "4")
    #expect(monoJob.attributes["print-color-mode"] == "monochrome")
    // Waited for, as the line asks (the batch itself does not wait).
    let jobs = try reportedJobs(options, "P-1")
    #expect(jobs.map { $0["state"] as? String } == ["completed", "completed"])
    #expect(jobs.map { $0["printer"] as? String } == [printer.uri, monoPrinter.uri])

    // Unchanged: skipped.
    #expect(try await BatchRunner.run(manifest: path, options: options).skipped == 1)
    // Another preview size: prepared again with the new previews; the same files, already
    // sent, are not sent again.
    path = try manifest(folder, [line(96)])
    #expect(try await BatchRunner.run(manifest: path, options: options).ok == 1)
    let (width, height) = try pngSize(options.outputFolder + "/" + color[0])
    #expect(max(width, height) == 96)
    #expect(try reportedJobs(options, "P-1").map { $0["resumed"] as? Bool } == [true, true])
    #expect(spooled(printer).count == 1 && spooled(monoPrinter).count == 1)
    let journal = try PrintJournal(path: options.outputFolder + "/.state/P-1.print.json")
    #expect(journal.entries.map(\.document) == ["1-c.color.pdf", "1-c.mono.pdf"])
    #expect(journal.entries.map(\.state) == ["completed", "completed"])
  }

  @Test("a job done without --wait is followed on a rerun with --wait, and not sent again")
  func waitLater() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    try inputs(folder, orders: ["o.json": #"{"path":"b.pdf"}"#])
    let uri = printer.uri
    let path = try manifest(
      folder,
      [
        #"{"id":"P-1","kind":"print","file":"o.json","prices":"prices.json","printer":"\#(uri)"}"#,
        #"{"id":"P-2","kind":"print","file":"o.json","prices":"prices.json","printer":"\#(uri)","wait":false}"#,
      ])
    var options = try options(folder)
    options.jobs = 1
    #expect(try await BatchRunner.run(manifest: path, options: options).ok == 2)
    #expect(try reportedJobs(options, "P-1").first?["state"] == nil)
    options.printWaitSeconds = 60
    let again = try await BatchRunner.run(manifest: path, options: options)
    // P-2 says it never waits, so it is done; P-1 waits now: it asks the printer about the job
    // it sent. (ippeveprinter forgets a finished job after 60 s: on a loaded machine the rerun
    // may come later, and the printer then answers that it does not know the job.)
    #expect(again.skipped == 1, "\(again)")
    #expect(try results(options)["P-2"]?.status == .skipped)
    #expect(try reportedJobs(options, "P-2").first?["state"] == nil)
    let job = try #require(try reportedJobs(options, "P-1").first)
    #expect(job["resumed"] as? Bool == true)
    if let error = try results(options)["P-1"]?.error {
      #expect(error.code == "print.jobUnknown", "\(error)")
    } else {
      #expect(job["state"] as? String == "completed")
    }
    #expect(spooled(printer).count == 2)
  }
}
