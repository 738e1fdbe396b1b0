// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint prepare`: the sample uploads as print-ready files and tickets, the
// report on stdout, and an order with an image refused with nothing written.

import Foundation
import ImprintCLI
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

@Suite("imprint prepare", .liveHandlesChecked, .tags(.slow), .skippedWhenQuick)
struct PrepareCLITests {
  static let examples = repositoryRoot + "/examples/"

  /// A copy of the sample order's two PDFs in `folder`, with an order naming them.
  private func order(in folder: TemporaryFolder, _ files: String) throws -> String {
    try FileManager.default.createDirectory(
      atPath: folder.file("uploads"), withIntermediateDirectories: true)
    for name in ["course-notes.pdf", "handout.pdf"] {
      try FileManager.default.copyItem(
        atPath: Self.examples + "uploads/" + name, toPath: folder.file("uploads/" + name))
    }
    let path = folder.file("order.json")
    try Data(
      #"{"schemaVersion":1,"store":"BOOSTER Campus Print (Sinchon)","files":[\#(files)]}"#.utf8
    ).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test("the sample PDFs: one line a file on stdout, the PDFs and tickets in -o, --json alike")
  func sample() async throws {
    let folder = TemporaryFolder()
    let order = try order(
      in: folder,
      #"{"path":"uploads/course-notes.pdf","copies":2,"duplex":"long-edge","extras":["staple"]},"#
        + #"{"path":"uploads/handout.pdf","nUp":2}"#)
    let prices = Self.examples + "prices-booster.json"
    let run = await imprint(["prepare", order, "--prices", prices, "-o", folder.file("out")])
    #expect(run.code == 0, "\(run.stderr)")
    #expect(run.stderr.isEmpty)
    let lines = run.stdout.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines.first?.hasPrefix(folder.file("out/1-course-notes.pdf") + ": ") == true)
    #expect(lines.first?.contains("2 copies, two-sided-long-edge, iso_a4_210x297mm") == true)
    #expect(
      FileManager.default.fileExists(atPath: folder.file("out/2-handout.ticket.json")))
    let pages = try pdfInfo(folder.file("out/1-course-notes.pdf"))["Pages"]
    let json = await imprint([
      "prepare", order, "--prices", prices, "-o", folder.file("again"), "--json",
    ])
    #expect(json.code == 0, "\(json.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(report?["schemaVersion"] as? Int == 1)
    let files = report?["files"] as? [[String: Any]]
    let ticket = files?.first?["ticket"] as? [String: Any]
    #expect(ticket?["sheetSides"] as? Int == pages.flatMap { Int($0) })
    #expect((ticket?["ipp"] as? [String: Any])?["finishings"] as? [String] == ["staple"])
  }

  @Test("--printer sends each file to an IPP printer and reports its job; a refusal is exit 1")
  func printer() async throws {
    let folder = TemporaryFolder()
    let order = try order(
      in: folder,
      #"{"path":"uploads/course-notes.pdf","duplex":"long-edge"},{"path":"uploads/handout.pdf"}"#
    )
    let printer = try TestPrinter(folder: folder)
    let prices = Self.examples + "prices-booster.json"
    let run = await imprint([
      "prepare", order, "--prices", prices, "-o", folder.file("out"), "--printer", printer.uri,
    ])
    #expect(run.code == 0, "\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(lines[2] == folder.file("out/1-course-notes.pdf") + ": job 1 on " + printer.uri)
    #expect(lines[3] == folder.file("out/2-handout.pdf") + ": job 2 on " + printer.uri)
    #expect(printer.jobs(count: 2).count == 2)
    let other = TemporaryFolder()
    let a3 = try self.order(in: other, #"{"path":"uploads/handout.pdf","paper":"A3"}"#)
    let refused = await imprint([
      "prepare", a3, "--prices", prices, "-o", folder.file("a3"), "--printer", printer.uri,
    ])
    #expect(refused.code == 1)
    #expect(
      refused.stderr.hasPrefix("error: the printer '\(printer.uri)' refused"), "\(refused.stderr)")
    // Refused part-way: the file sent is reported (its job), then the refusal, exit 1.
    let third = TemporaryFolder()
    let partWay = try self.order(
      in: third, #"{"path":"uploads/course-notes.pdf"},{"path":"uploads/handout.pdf","paper":"A3"}"#
    )
    let partly = await imprint([
      "prepare", partWay, "--prices", prices, "-o", folder.file("part"), "--printer", printer.uri,
    ])
    #expect(partly.code == 1)
    let reported = partly.stdout.split(separator: "\n").map(String.init)
    #expect(reported.last == folder.file("part/1-course-notes.pdf") + ": job 3 on " + printer.uri)
    #expect(!partly.stdout.contains("2-handout.pdf: job"), "\(partly.stdout)")
    #expect(partly.stderr.contains("refused 'uploads/handout.pdf'"), "\(partly.stderr)")
    #expect(printer.jobs(count: 3).count == 3)
  }

  @Test("--printer QUEUE through CUPS_SERVER's scheduler; --password-file for one that asks")
  func queue() async throws {
    let folder = TemporaryFolder()
    let order = try order(in: folder, #"{"path":"uploads/handout.pdf"}"#)
    let printer = try TestPrinter(folder: folder)
    let scheduler = try TestScheduler(folder: folder, users: ["clerk": "s3cret"])
    try scheduler.addQueue("front-desk", device: printer.uri)
    /// The built imprint, as a shop runs it, with CUPS_SERVER naming the private scheduler.
    func prepare(_ queue: String, _ output: String, _ extra: [String] = []) throws -> ToolResult {
      try runTool(
        "/usr/bin/env",
        [
          "CUPS_SERVER=\(scheduler.address)", imprintExecutable, "prepare", order, "--prices",
          Self.examples + "prices-booster.json", "-o", folder.file(output), "--printer", queue,
        ] + extra)
    }
    let unknown = try prepare("back-office", "unknown")
    #expect(unknown.status == 1)
    #expect(
      unknown.stderr.hasPrefix(
        "error: the CUPS scheduler at '\(scheduler.address)' has no queue named 'back-office'\n"
          + "hint: 'lpstat -e' lists"), "\(unknown.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("unknown")))
    let none = try prepare("front-desk", "none")
    #expect(none.status == 1)
    #expect(
      none.stderr.hasPrefix("error: the printer 'front-desk' asks for credentials"),
      "\(none.stderr)")
    let password = folder.file("password")
    try Data("clerk:s3cret\n".utf8).write(to: URL(fileURLWithPath: password))
    chmod(password, 0o644)
    let exposed = try prepare("front-desk", "exposed", ["--password-file", password])
    #expect(exposed.status == 1 && exposed.stderr.contains("mode is 644"), "\(exposed.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("exposed")))
    chmod(password, 0o600)
    let printed = try prepare("front-desk", "out", ["--password-file", password, "--wait"])
    #expect(printed.status == 0, "\(printed.stderr)")
    let last = printed.stdout.split(separator: "\n").last.map(String.init) ?? ""
    #expect(last.hasPrefix(folder.file("out/1-handout.pdf") + ": job "), "\(printed.stdout)")
    #expect(last.contains(" on front-desk: completed"), "\(last)")
    #expect(printer.jobs(count: 1).count == 1)
  }

  @Test("--wait reports how each job ended; an aborted job is exit 1 with the printer's reason")
  func wait() async throws {
    let folder = TemporaryFolder()
    let order = try order(
      in: folder, #"{"path":"uploads/handout.pdf"},{"path":"uploads/handout.pdf","copies":3}"#)
    // The printer's hook fails the job of three copies: ippeveprinter aborts it.
    let printer = try TestPrinter(folder: folder, hook: #"[ "$IPP_COPIES" = 3 ] && exit 3; exit 0"#)
    let prices = Self.examples + "prices-booster.json"
    let run = await imprint([
      "prepare", order, "--prices", prices, "-o", folder.file("out"), "--printer", printer.uri,
      "--wait", "--wait-timeout", "60",
    ])
    #expect(run.code == 1, "\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(
      lines[2].hasPrefix(
        folder.file("out/1-handout.pdf") + ": job 1 on " + printer.uri
          + ": completed (job-completed-successfully"), "\(lines)")
    #expect(
      lines[3].hasPrefix(
        folder.file("out/2-handout.pdf") + ": job 2 on " + printer.uri + ": aborted ("),
      "\(lines)")
    #expect(
      run.stderr.hasPrefix("error: job 2 of 'uploads/handout.pdf' on '\(printer.uri)' was aborted"),
      "\(run.stderr)")
    let usage = await imprint([
      "prepare", order, "--prices", prices, "-o", folder.file("again"), "--wait",
    ])
    #expect(usage.code == 2 && usage.stderr.contains("--wait needs --printer <uri|queue>"))
  }

  @Test("the sample order: its two PDFs and its photo, on A3 with the JPEG as it is")
  func sampleOrder() async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "prepare", Self.examples + "order-booster.json", "--prices",
      Self.examples + "prices-booster.json", "-o", folder.file("out"),
    ])
    #expect(run.code == 0, "\(run.stderr)")
    #expect(run.stdout.split(separator: "\n").count == 3)
    let photo = folder.file("out/3-poster-photo.pdf")
    #expect(try pdfInfo(photo)["Page size"]?.contains("(A3)") == true)
    #expect(try runTool("pdfimages", ["-j", photo, folder.file("img")]).status == 0)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: folder.file("img-000.jpg")))
        == Data(contentsOf: URL(fileURLWithPath: Self.examples + "uploads/poster-photo.jpg")))
  }

  @Test("--split-color: an auto file's colour and monochrome sheets, a file and a line each")
  func splitColor() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 5), colorPages: [4]),
      to: folder.file("notes.pdf"))
    try Data(
      #"""
      {"schemaVersion":1,"store":"S","version":"v1","currency":"USD",
       "rates":{"default":{"mono":{"simplex":10,"duplex":8},"color":{"simplex":30,"duplex":25}}},
       "paper":{"A4":{"plain":2}},"extras":{"staple":{"per":"copy","amount":10}}}
      """#.utf8
    ).write(to: URL(fileURLWithPath: folder.file("prices.json")))
    try Data(
      (#"{"schemaVersion":1,"files":[{"path":"notes.pdf","color":"auto","duplex":"long-edge","#
        + #""copies":2,"extras":["staple"]}]}"#).utf8
    ).write(to: URL(fileURLWithPath: folder.file("order.json")))
    let run = await imprint([
      "prepare", folder.file("order.json"), "--prices", folder.file("prices.json"), "-o",
      folder.file("out"), "--split-color",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    // Sheets [1, 2] [3, 4] [5]: the second has the colour page. Its share: (8 + 25 + paper 2)
    // × 2 copies + the staple's 10 a copy = 90; the mono part's: (8 + 8 + 10 + 2 × 2) × 2 = 60.
    #expect(
      run.stdout.split(separator: "\n").map(String.init) == [
        folder.file("out/1-notes.color.pdf")
          + ": 2 impressions, 2 copies, two-sided-long-edge, iso_a4_210x297mm, auto, "
          + "color part: sheets 2, USD 0.90 of USD 1.50",
        folder.file("out/1-notes.mono.pdf")
          + ": 3 impressions + 1 blank back, 2 copies, two-sided-long-edge, iso_a4_210x297mm, "
          + "monochrome, mono part: sheets 1,3, USD 0.60 of USD 1.50",
      ])
    // The line the parts share is the one `imprint quote` gives for the same order.
    let quoted = await imprint([
      "quote", folder.file("order.json"), "--prices", folder.file("prices.json"), "--json",
    ])
    #expect(quoted.code == 0, "\(quoted.stderr)")
    let quote = try JSONSerialization.jsonObject(with: Data(quoted.stdout.utf8)) as? [String: Any]
    let line = (quote?["files"] as? [[String: Any]])?.first
    #expect((line?["subtotal"] as? [String: Any])?["minor"] as? Int == 150)
    var shared = 0
    for part in ["color", "mono"] {
      let ticket =
        try JSONSerialization.jsonObject(
          with: Data(
            contentsOf: URL(fileURLWithPath: folder.file("out/1-notes.\(part).ticket.json"))))
        as? [String: Any]
      let share = (ticket?["split"] as? [String: Any])?["share"] as? [String: Any]
      shared += (share?["subtotal"] as? [String: Any])?["minor"] as? Int ?? 0
      #expect(
        ((share?["extras"] as? [String: Any])?["staple"] as? [String: Any])?["minor"] as? Int
          == (part == "color" ? 20 : nil), "\(part)")
    }
    #expect(shared == 150)
    #expect(try pdfInfo(folder.file("out/1-notes.color.pdf"))["Pages"] == "2")
    #expect(try pdfInfo(folder.file("out/1-notes.mono.pdf"))["Pages"] == "4")
    let ticket =
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: folder.file("out/1-notes.mono.ticket.json"))))
      as? [String: Any]
    let split = ticket?["split"] as? [String: Any]
    #expect(split?["part"] as? String == "mono" && split?["pages"] as? String == "1-2,5")
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/1-notes.pdf")))
  }

  @Test(
    "--previews: a PNG a sheet side, listed in --json; --preview-size alone or too small: exit 2")
  func previews() async throws {
    let folder = TemporaryFolder()
    let order = try order(in: folder, #"{"path":"uploads/handout.pdf","nUp":2}"#)
    let prices = Self.examples + "prices-booster.json"
    let run = await imprint([
      "prepare", order, "--prices", prices, "-o", folder.file("out"), "--previews",
      "--preview-size", "128", "--json",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    let file = (report?["files"] as? [[String: Any]])?.first
    let previews = try #require(file?["previews"] as? [String])
    let sides = try #require(pdfInfo(folder.file("out/1-handout.pdf"))["Pages"].flatMap { Int($0) })
    #expect(previews == (1...sides).map { folder.file("out/1-handout.side-\($0).png") })
    for preview in previews {
      let header = try #require(
        pngHeader(Array(try Data(contentsOf: URL(fileURLWithPath: preview)))))
      #expect(max(header.width, header.height) == 128, "\(preview)")
    }
    let text = await imprint([
      "prepare", order, "--prices", prices, "-o", folder.file("text"), "--previews",
    ])
    // Without --preview-size: the library's default box.
    let unsized = try #require(
      pngHeader(
        Array(try Data(contentsOf: URL(fileURLWithPath: folder.file("text/1-handout.side-1.png")))))
    )
    #expect(max(unsized.width, unsized.height) == OrderPreparer.defaultPreviewSize)
    #expect(
      text.stdout.hasSuffix(
        ", \(sides) preview\(sides == 1 ? "" : "s") (\(folder.file("text/1-handout.side-1.png")), ...)\n"
      ),
      "\(text.stdout)")
    for (arguments, message) in [
      (["--preview-size", "128"], "--preview-size needs --previews"),
      (["--previews", "--preview-size", "8"], "expects an integer from 16 to 2048"),
    ] {
      let refused = await imprint(
        ["prepare", order, "--prices", prices, "-o", folder.file("no")] + arguments)
      #expect(refused.code == 2 && refused.stderr.contains(message), "\(refused.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("no")))
  }

  @Test("usage errors: --prices and -o are required (exit 2)")
  func usage() async throws {
    let folder = TemporaryFolder()
    let order = try order(in: folder, #"{"path":"uploads/handout.pdf"}"#)
    let noPrices = await imprint(["prepare", order, "-o", folder.file("out")])
    #expect(noPrices.code == 2 && noPrices.stderr.contains("missing --prices <file>"))
    let noOutput = await imprint([
      "prepare", order, "--prices", Self.examples + "prices-booster.json",
    ])
    #expect(noOutput.code == 2 && noOutput.stderr.contains("missing -o <dir>"))
    let monoAlone = await imprint([
      "prepare", order, "--prices", Self.examples + "prices-booster.json", "-o",
      folder.file("out"), "--mono-printer", "ipp://localhost:631/ipp/print",
    ])
    #expect(monoAlone.code == 2 && monoAlone.stderr.contains("--mono-printer needs --printer"))
    // A timeout without --wait would be ignored: refused, with a printer or without.
    for printer in [[], ["--printer", "ipp://localhost:631/ipp/print"]] {
      let timeoutAlone = await imprint(
        [
          "prepare", order, "--prices", Self.examples + "prices-booster.json", "-o",
          folder.file("out"), "--wait-timeout", "60",
        ] + printer)
      #expect(timeoutAlone.code == 2, "\(timeoutAlone.stderr)")
      #expect(timeoutAlone.stderr.contains("--wait-timeout needs --wait"), "\(timeoutAlone.stderr)")
      #expect(timeoutAlone.stdout.isEmpty)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out")))
  }
}
