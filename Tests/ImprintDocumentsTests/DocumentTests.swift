// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: page counts, sizes, colour and thumbnails of generated fixtures, and
// every hostile case through the worker sandbox (Tests/Fixtures/Documents/make_fixtures.py).

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

let documents = fixturesFolder + "/Documents/"

func bytes(_ name: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: documents + name)))
}

/// The built `imprint`, which serves the sandbox's workers.
let worker = Bundle.main.bundleURL.appendingPathComponent("imprint").path

@Suite("Inspecting documents", .liveHandlesChecked)
struct InspectTests {
  @Test("a 3-page PDF: counts, sizes in mm with standard names, rotation applied")
  func mixed() throws {
    let info = try DocumentEngine.inspect(try bytes("mixed.pdf"), file: "mixed.pdf")
    #expect(info.type == .pdf && info.pages == 3)
    #expect(info.pageSizes.map(\.paper) == [.a4, .letter, .a5])
    #expect(info.pageSizes.map(\.orientation) == ["portrait", "landscape", "landscape"])
    #expect(info.pageSizes[0].widthMM == 210 && info.pageSizes[0].heightMM == 297)
    // Page 3 is A5 portrait with /Rotate 90: it prints landscape.
    #expect(info.pageSizes[2].widthMM == 210 && info.pageSizes[2].heightMM == 148)
    #expect(!info.encrypted && info.printAllowed)
    // pdfinfo agrees on the count.
    #expect(try pdfInfo(documents + "mixed.pdf")["Pages"] == "3")
  }

  @Test(
    "the same answer with and without poppler: colours off (quick reader alone) and on (poppler)",
    arguments: ["mixed.pdf", "objstreams.pdf"])
  func withoutPoppler(name: String) throws {
    let quick = try DocumentEngine.inspect(try bytes(name), file: name)
    let full = try DocumentEngine.inspect(try bytes(name), file: name, colors: ColorRule())
    #expect(quick.pages == 3 && quick.pages == full.pages)
    #expect(quick.pageSizes == full.pageSizes)
    #expect(quick.encrypted == full.encrypted && quick.printAllowed == full.printAllowed)
    #expect(quick.pageSizes.map(\.paper) == [.a4, .letter, .a5])
  }

  @Test("colour: the red page is colour, the text page mono, the empty page blank")
  func colors() throws {
    let info = try DocumentEngine.inspect(
      try bytes("mixed.pdf"), file: "mixed.pdf", colors: ColorRule())
    let colors = try #require(info.colors)
    #expect(colors.map(\.color) == [false, true, false])
    #expect(colors.map(\.blank) == [false, false, true])
    #expect(colors[1].magenta > 10 && colors[1].yellow > 10 && colors[1].cyan < 1)
    #expect(colors[0].black > 0 && colors[0].cyan == 0)
  }

  @Test("a small blue word is colour (as a printer counts it), mono only past a larger allowance")
  func hyperlink() throws {
    let page = try bytes("hyperlink.pdf")
    var lenient = ColorRule()
    lenient.minimumAreaPercent = 0.1
    let verdict = try #require(
      try DocumentEngine.inspect(page, file: "h.pdf", colors: ColorRule()).colors?.first)
    // 6-point "link": 0.0075 % of the page (18 of A4's 241 605 pixels at 50 dpi).
    #expect(verdict.color && verdict.coloredAreaPercent == 0.0075)
    #expect(
      try DocumentEngine.inspect(page, file: "h.pdf", colors: lenient).colors?[0].color == false)
  }

  @Test("encrypted: an error without the password, counted with it; no-print is reported")
  func encrypted() throws {
    #expect(throws: DocumentError.encrypted(file: "e.pdf", passwordGiven: false)) {
      _ = try DocumentEngine.inspect(try bytes("encrypted.pdf"), file: "e.pdf")
    }
    #expect(throws: DocumentError.encrypted(file: "e.pdf", passwordGiven: true)) {
      _ = try DocumentEngine.inspect(try bytes("encrypted.pdf"), file: "e.pdf", password: "wrong")
    }
    let opened = try DocumentEngine.inspect(
      try bytes("encrypted.pdf"), file: "e.pdf", password: "secret")
    #expect(opened.pages == 3 && opened.encrypted)
    let noPrint = try DocumentEngine.inspect(try bytes("noprint.pdf"), file: "n.pdf")
    #expect(noPrint.encrypted && !noPrint.printAllowed)
  }

  @Test("images are one page, sized from pixels and DPI")
  func images() throws {
    let png = try DocumentEngine.inspect(
      [UInt8](
        try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/assets/placeholder-photo.png"))
      ),
      file: "p.png")
    #expect(png.type == .png && png.pages == 1)
    #expect(abs(png.pageSizes[0].widthMM - 400 / 96 * 25.4) < 0.1)  // no pHYs: 96 dpi
  }

  @Test("thumbnails fit the box, keep the aspect, and are white behind the page")
  func thumbnails() throws {
    let png = try DocumentEngine.thumbnail(
      try bytes("mixed.pdf"), file: "m.pdf", page: 2, size: 256, format: .png)
    let header = try #require(pngHeader(png))
    #expect(header.width == 256 && header.height == 198)  // Letter landscape 792 x 612
    let jpeg = try DocumentEngine.thumbnail(
      try bytes("mixed.pdf"), file: "m.pdf", page: 1, size: 128, format: .jpeg)
    #expect(jpeg.starts(with: [0xFF, 0xD8, 0xFF]))
    #expect(throws: DocumentError.pageOutOfRange(file: "m.pdf", page: 4, pages: 3)) {
      _ = try DocumentEngine.thumbnail(
        try bytes("mixed.pdf"), file: "m.pdf", page: 4, size: 64, format: .png)
    }
  }
}

@Suite("Hostile files, through the worker sandbox", .liveHandlesChecked)
struct HostileTests {
  static let cases: [(String, String)] = [
    ("empty.pdf", "document.empty"), ("html.pdf", "document.unsupportedType"),
    ("truncated.pdf", "pdf.damaged"), ("brokenxref.pdf", "pdf.brokenXref"),
    ("zeropages.pdf", "pdf.noPages"), ("countlies.pdf", "pdf.countMismatch"),
    ("cycle.pdf", "pdf.pageTreeCycle"), ("huge-page.pdf", "pdf.pageTooLarge"),
    ("huge.png", "image.tooLarge"), ("bomb.pdf", "pdf.imageTooLarge"),
    ("encrypted.pdf", "pdf.encrypted"),
  ]

  @Test(
    "each case has its own error code, names the file, and leaves no thumbnail", arguments: cases)
  func hostile(name: String, code: String) async throws {
    let sandbox = DocumentSandbox(executable: worker)
    let folder = TemporaryFolder()
    do {
      // With colours every page renders, so every check that guards rendering applies.
      _ = try await sandbox.inspect(path: documents + name, file: name, colors: ColorRule())
      Issue.record("\(name) must fail")
    } catch let error as any ImprintError {
      #expect(error.code == code, "\(name): \(error.message)")
      #expect(error.message.contains("'\(name)'"))
    }
    do {
      try await sandbox.thumbnails(
        path: documents + name, file: name, size: 128, format: .png, output: folder.file("t.png"))
      Issue.record("\(name) must fail")
    } catch let error as any ImprintError {
      #expect(error.code == code, "\(name): \(error.message)")
    }
    #expect(folder.contents().isEmpty)
  }

  @Test("a directory is refused before any worker runs")
  func directory() async {
    let sandbox = DocumentSandbox(executable: worker)
    await #expect(throws: FileError.isDirectory(path: fixturesFolder)) {
      _ = try await sandbox.inspect(path: fixturesFolder, file: fixturesFolder)
    }
  }

  @Test("a content stream that burns CPU is stopped at the CPU limit; the caller goes on")
  func cpu() async throws {
    var limits = SandboxLimits()
    limits.cpuSeconds = 1
    let sandbox = DocumentSandbox(executable: worker, limits: limits, workers: 1)
    await #expect(throws: DocumentError.cpuLimit(file: "cpu.pdf", seconds: 1)) {
      _ = try await sandbox.inspect(
        path: documents + "cpu.pdf", file: "cpu.pdf", colors: ColorRule())
    }
    // The dead worker is replaced: the next file works.
    let info = try await sandbox.inspect(path: documents + "mixed.pdf", file: "mixed.pdf")
    #expect(info.pages == 3)
  }

  @Test("a file slower than the wall-clock limit is stopped")
  func timeout() async throws {
    var limits = SandboxLimits()
    limits.wallSeconds = 0.5
    let sandbox = DocumentSandbox(executable: worker, limits: limits, workers: 1)
    await #expect(throws: DocumentError.timeout(file: "cpu.pdf", seconds: 0.5)) {
      _ = try await sandbox.inspect(
        path: documents + "cpu.pdf", file: "cpu.pdf", colors: ColorRule())
    }
  }

  @Test(
    "the imprint executable's forked workers: answers, a CPU-limit death replaced, no worker left")
  func forkedWorkers() throws {
    // The CLI forks its first workers before it has threads; run it as a program to use them.
    let files = ["cpu.pdf", "mixed.pdf", "objstreams.pdf", "countlies.pdf", "hyperlink.pdf"]
    let result = try runTool(
      worker,
      ["inspect", "--json", "--colors", "--cpu-limit", "1", "-j", "2"]
        + files.map { documents + $0 })
    #expect(result.status == 1)
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let entries = try #require(report["files"] as? [[String: Any]])
    #expect(entries.count == 5)
    func code(_ index: Int) -> String? {
      (entries[index]["error"] as? [String: Any])?["code"] as? String
    }
    func pages(_ index: Int) -> Int? {
      (entries[index]["info"] as? [String: Any])?["pages"] as? Int
    }
    #expect(code(0) == "document.cpuLimit")
    #expect(code(3) == "pdf.countMismatch")
    #expect(pages(1) == 3 && pages(2) == 3 && pages(4) == 1)
    // Every worker, forked (its command line is the CLI's) or started later (`__worker
    // --memory-mb 1531`), is gone with the command; the odd limit singles them out.
    let left = try runTool("pgrep", ["-f", "imprint .*(--memory-limit|--memory-mb) 1531"]).stdout
    #expect(left.isEmpty)
  }

  @Test("many files at once on a pool of workers give the same answers as one at a time")
  func parallel() async throws {
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<12 {
        group.addTask {
          try await sandbox.inspect(path: documents + "mixed.pdf", file: "m.pdf").pages
        }
      }
      for try await pages in group { #expect(pages == 3) }
    }
  }
}

@Suite("Thumbnails shared out among workers", .liveHandlesChecked)
struct SharedThumbnailTests {
  /// A 12-page PDF whose page N has N small squares (so every page differs); with `hugePage`,
  /// that page is 200 × 200 inches.
  static func twelvePages(_ folder: TemporaryFolder, hugePage: Int? = nil) throws -> String {
    let size = Size(width: 200, height: 100)
    let document = try VectorDocument(format: .pdf, size: size)
    for page in 1...12 {
      let huge = Size(width: 14_400, height: 14_400)
      try document.page(size: page == hugePage ? huge : size) { canvas in
        for square in 0..<page {
          canvas.fill(
            Rect(x: Double(square * 15 + 5), y: 40, width: 10, height: 10),
            color: Color(red: 0, green: 0, blue: 0))
        }
      }
    }
    let path = folder.file("twelve.pdf")
    try Data(try document.finish()).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test("all pages by two workers: the same files, bytes and order as by one")
  func sameAsOne() async throws {
    let folder = TemporaryFolder()
    let path = try Self.twelvePages(folder)
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    try FileManager.default.createDirectory(
      atPath: folder.file("one"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: folder.file("two"), withIntermediateDirectories: true)
    let one = try await sandbox.thumbnails(
      path: path, file: "twelve.pdf", pages: "all", size: 64, format: .png,
      output: folder.file("one/t.png"))
    let two = try await sandbox.thumbnails(
      path: path, file: "twelve.pdf", pages: "all", size: 64, format: .png,
      output: folder.file("two/t.png"), parallel: 2)
    #expect(one.count == 12 && two.count == 12)
    #expect(two.map { ($0 as NSString).lastPathComponent } == (1...12).map { "t-\($0).png" })
    for (a, b) in zip(one, two) {
      #expect(FileManager.default.contents(atPath: a) == FileManager.default.contents(atPath: b))
    }
    // A range past the end is the single worker's error, and nothing is written.
    await #expect(throws: DocumentError.self) {
      try await sandbox.thumbnails(
        path: path, file: "twelve.pdf", pages: "5-20", size: 64, format: .png,
        output: folder.file("two/e.png"), parallel: 2)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("two/e-5.png")))
  }

  @Test("a page that fails takes the file's other thumbnails with it, by one worker or two")
  func allOrNothing() async throws {
    let folder = TemporaryFolder()
    let path = try Self.twelvePages(folder, hugePage: 10)
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    for parallel in [1, 2] {
      let out = folder.file("out\(parallel)")
      try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
      await #expect(throws: DocumentError.self) {
        try await sandbox.thumbnails(
          path: path, file: "twelve.pdf", pages: "all", size: 64, format: .png,
          output: out + "/t.png", parallel: parallel)
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [])
    }
  }
}

@Suite("Colour analysis", .liveHandlesChecked)
struct ColorAnalysisTests {
  @Test("ink estimates by hand: half red, three tenths grey 0x66, the rest white")
  func byHand() throws {
    let image = try RasterImage(width: 10, height: 10)
    try image.draw { canvas in
      canvas.fill(
        Rect(x: 0, y: 0, width: 10, height: 10), color: Color(red: 255, green: 255, blue: 255))
      canvas.fill(Rect(x: 0, y: 0, width: 10, height: 5), color: Color(red: 255, green: 0, blue: 0))
      canvas.fill(
        Rect(x: 0, y: 5, width: 10, height: 3), color: Color(red: 102, green: 102, blue: 102))
    }
    let verdict = DocumentEngine.analyse(image, page: 1, rule: ColorRule())
    // Red: M = Y = 1, C = K = 0 on 50 pixels; grey 0x66: K = 153/255 = 0.6 on 30 pixels.
    #expect(verdict.cyan == 0 && verdict.magenta == 50 && verdict.yellow == 50)
    #expect(verdict.black == 18 && verdict.coloredAreaPercent == 50)
    #expect(verdict.color && !verdict.blank)
  }

  @Test("equals the per-pixel formula on 400 pseudo-random colours")
  func matchesFormula() throws {
    var state: UInt64 = 42
    func next() -> UInt8 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
    let colours = (0..<400).map { _ in (next(), next(), next()) }
    let image = try RasterImage(width: 20, height: 20)
    try image.draw { canvas in
      for (index, (r, g, b)) in colours.enumerated() {
        canvas.fill(
          Rect(x: Double(index % 20), y: Double(index / 20), width: 1, height: 1),
          color: Color(red: r, green: g, blue: b))
      }
    }
    var c = 0.0
    var m = 0.0
    var y = 0.0
    var k = 0.0
    var colored = 0
    for (r, g, b) in colours {
      let high = Double(max(r, g, b)) / 255
      k += 1 - high
      if max(r, g, b) - min(r, g, b) > 8 { colored += 1 }
      guard high > 0 else { continue }
      c += (high - Double(r) / 255) / high
      m += (high - Double(g) / 255) / high
      y += (high - Double(b) / 255) / high
    }
    func percent(_ value: Double) -> Double { (value / 400 * 10_000).rounded() / 100 }
    let verdict = DocumentEngine.analyse(image, page: 1, rule: ColorRule())
    #expect(abs(verdict.cyan - percent(c)) <= 0.01 && abs(verdict.magenta - percent(m)) <= 0.01)
    #expect(abs(verdict.yellow - percent(y)) <= 0.01 && abs(verdict.black - percent(k)) <= 0.01)
    #expect(verdict.coloredAreaPercent == Double(colored) / 4)
  }
}
