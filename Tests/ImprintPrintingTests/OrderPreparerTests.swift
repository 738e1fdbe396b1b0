// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: print-ready files from orders, checked from outside: pdfinfo's pages
// and sizes, pdftotext's positions of each page's number, pdffonts, pdfimages, qpdf --check,
// and the same bytes twice.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing
import ImprintPrinting
import ImprintTestSupport
import Testing

/// One row of the table: a fixture, the options of its one file, and what the sheets must be.
struct PrepareCase: Sendable, CustomTestStringConvertible {
  /// The fixture's pages.
  var pages: [NumberedPage]
  /// Whether the fixture is drawn by cairo (embedded font, an image) or hand-written
  /// (`/Rotate`).
  var drawn = true
  /// The file's options in the order (JSON members).
  var options: String
  /// Pages per sheet side.
  var nUp: Int
  /// Two-sided.
  var duplex = false
  /// The pages the range selects, when not all.
  var selected: [Int]?
  /// The paper in points, portrait.
  var paper = (width: 595.276, height: 841.89)

  var testDescription: String { "\(pages.count) pages, \(options)" }
}

/// USD rates for mono and colour, simplex and duplex, on A4 and Letter.
private let prices = #"""
  {"schemaVersion":1,"store":"Copy Corner","version":"v1","currency":"USD",
   "rates":{"default":{"mono":{"simplex":10,"duplex":8},"color":{"simplex":30,"duplex":25}}},
   "paper":{"A4":{"plain":2},"Letter":{"plain":2}},
   "extras":{"staple":{"per":"copy","amount":10},"lamination":{"per":"sheet","amount":40}},
   "defaults":{"paper":"A4"}}
  """#

/// Columns and rows of each n-up grid, and whether its sheet is landscape (CUPS, pdfjam).
private let grids: [Int: (columns: Int, rows: Int, landscape: Bool)] = [
  1: (1, 1, false), 2: (2, 1, true), 4: (2, 2, false), 6: (3, 2, true), 9: (3, 3, false),
  16: (4, 4, false),
]

private let a4 = NumberedPage.a4

@Suite("OrderPreparer: print-ready files as quoted", .liveHandlesChecked)
struct OrderPreparerTests {
  static let cases: [PrepareCase] = [
    PrepareCase(pages: Array(repeating: a4, count: 5), options: #""nUp":1"#, nUp: 1),
    PrepareCase(
      pages: Array(repeating: a4, count: 5), options: #""nUp":2,"duplex":"long-edge""#, nUp: 2,
      duplex: true),
    PrepareCase(
      pages: Array(repeating: a4, count: 8), options: #""nUp":2,"duplex":"short-edge""#, nUp: 2,
      duplex: true),
    PrepareCase(pages: Array(repeating: a4, count: 7), options: #""nUp":4"#, nUp: 4),
    PrepareCase(
      pages: Array(repeating: a4, count: 7), options: #""nUp":6,"duplex":"short-edge""#, nUp: 6,
      duplex: true),
    PrepareCase(pages: Array(repeating: a4, count: 10), options: #""nUp":9"#, nUp: 9),
    PrepareCase(
      pages: Array(repeating: a4, count: 17), options: #""nUp":16,"duplex":"long-edge""#,
      nUp: 16, duplex: true),
    PrepareCase(
      pages: Array(repeating: a4, count: 3), options: #""duplex":"long-edge""#, nUp: 1,
      duplex: true),
    PrepareCase(
      pages: Array(repeating: a4, count: 8), options: #""pages":"2-4,6,8-","nUp":2"#, nUp: 2,
      selected: [2, 3, 4, 6, 8]),
    PrepareCase(
      pages: [a4, .a4Landscape, a4, .a4Landscape], options: #""nUp":1"#, nUp: 1),
    PrepareCase(
      pages: [a4, .a4Landscape, a4, NumberedPage(420, 595)], options: #""nUp":2"#, nUp: 2),
    PrepareCase(
      pages: [
        a4, NumberedPage(595.276, 841.89, rotate: 90), a4,
        NumberedPage(595.276, 841.89, rotate: 270), NumberedPage(595.276, 841.89, rotate: 180),
      ],
      drawn: false, options: #""nUp":4"#, nUp: 4),
    PrepareCase(
      pages: [NumberedPage(595.276, 841.89, rotate: 90), a4], drawn: false,
      options: #""nUp":1,"paper":"Letter""#, nUp: 1, paper: (612, 792)),
    PrepareCase(
      pages: [a4, .a4Landscape, NumberedPage(612, 792)], options: #""nUp":1,"paper":"Letter""#,
      nUp: 1, paper: (612, 792)),
  ]

  @Test("pages, sheets, cells, orientation, fonts, images and qpdf --check", arguments: cases)
  func table(_ row: PrepareCase) async throws {
    let folder = TemporaryFolder()
    let input = folder.file("doc.pdf")
    let bytes = row.drawn ? try NumberedPages.drawn(row.pages) : NumberedPages.written(row.pages)
    try HostileDocuments.write(bytes, to: input)
    let prepared = try await prepare(in: folder, files: [#"{"path":"doc.pdf",\#(row.options)}"#])
    let file = try #require(prepared.files.first)
    #expect(file.document == folder.file("out/1-doc.pdf"))
    #expect(file.ticketPath == folder.file("out/1-doc.ticket.json"))

    // The counts, computed here from the table, not taken from the quote.
    let selected = row.selected ?? Array(1...row.pages.count)
    let impressions = (selected.count + row.nUp - 1) / row.nUp
    let blank = row.duplex && impressions % 2 == 1 ? 1 : 0
    #expect(file.ticket.impressions == impressions)
    #expect(prepared.quote.files.first?.impressions == impressions)
    #expect(file.ticket.blankBacks == blank && file.ticket.sheetSides == impressions + blank)
    let info = try pdfInfo(file.document)
    #expect(info["Pages"] == "\(impressions + blank)")

    // Every sheet side has the paper's size, landscape for 2-up and 6-up.
    let grid = try #require(grids[row.nUp])
    let sheetWidth = grid.landscape ? row.paper.height : row.paper.width
    let sheetHeight = grid.landscape ? row.paper.width : row.paper.height
    let sheets = try wordsByPage(file.document)
    #expect(sheets.count == impressions + blank)
    for sheet in sheets {
      #expect(abs(sheet.width - sheetWidth) < 0.5 && abs(sheet.height - sheetHeight) < 0.5)
    }
    // Each selected page in its cell, in reading order, upright or turned a quarter
    // counter-clockwise (its top mark to the left) when its orientation differs from the cell's.
    let cellWidth = sheetWidth / Double(grid.columns)
    let cellHeight = sheetHeight / Double(grid.rows)
    for (index, number) in selected.enumerated() {
      let sheet = sheets[index / row.nUp]
      let cell = index % row.nUp
      let centre = (
        x: (Double(cell % grid.columns) + 0.5) * cellWidth,
        y: (Double(cell / grid.columns) + 0.5) * cellHeight
      )
      let mark = try #require(sheet.words.first { $0.text == "P\(number)" }, "page \(number)")
      let top = try #require(sheet.words.first { $0.text == "T\(number)" }, "page \(number)")
      #expect(abs(mark.x - centre.x) < cellWidth * 0.15, "page \(number): \(mark) in \(centre)")
      #expect(abs(mark.y - centre.y) < cellHeight * 0.15, "page \(number): \(mark) in \(centre)")
      let turned = row.pages[number - 1].displayedLandscape != (cellWidth > cellHeight)
      if turned {
        #expect(top.x < mark.x - 10 && abs(top.y - mark.y) < 10, "page \(number) turned")
      } else {
        #expect(top.y < mark.y - 10 && abs(top.x - mark.x) < 10, "page \(number) upright")
      }
    }
    // Nothing else printed: every number mark is a selected page's, once; the blank back is
    // blank.
    let marks = sheets.flatMap(\.words).map(\.text).filter { $0.hasPrefix("P") }
    #expect(marks.sorted() == selected.map { "P\($0)" }.sorted())
    if blank == 1 { #expect(sheets.last?.words.isEmpty == true) }

    // Text is still text in the same fonts; images keep their pixels; the file is sound.
    #expect(try fontList(file.document) == fontList(input))
    #expect(try imageSizes(file.document) == imageSizes(input).filter { _ in selected.contains(1) })
    let check = try runTool("qpdf", ["--check", file.document])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
  }

  @Test("the ticket: copies, sides, media, colour, finishings and the quote's line")
  func ticket() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: a4, count: 3)), to: folder.file("a.pdf"))
    let prepared = try await prepare(
      in: folder,
      files: [
        #"{"path":"a.pdf","copies":3,"duplex":"short-edge","color":"color","extras":["staple","lamination"]}"#,
        #"{"path":"a.pdf","paper":"Letter","nUp":2}"#,
      ])
    #expect(
      prepared.files.map { ($0.document as NSString).lastPathComponent } == [
        "1-a.pdf", "2-a.pdf",
      ])
    let first = prepared.files[0].ticket
    #expect(first.ipp.copies == 3 && first.ipp.sides == "two-sided-short-edge")
    #expect(first.ipp.media == "iso_a4_210x297mm" && first.ipp.printColorMode == "color")
    #expect(first.ipp.finishings == ["staple"] && first.extrasWithoutFinishing == ["lamination"])
    #expect(first.quote == prepared.quote.files[0])
    let second = prepared.files[1].ticket
    #expect(second.ipp.copies == 1 && second.ipp.sides == "one-sided")
    #expect(second.ipp.media == "na_letter_8.5x11in" && second.ipp.printColorMode == "monochrome")
    #expect(second.ipp.finishings == ["none"])
    // The ticket on disk is the one returned, with IPP's own attribute names.
    let text = try String(contentsOfFile: prepared.files[0].ticketPath, encoding: .utf8)
    #expect(text.contains(#""print-color-mode" : "color""#))
    #expect(text.contains(#""multiple-document-handling" : "separate-documents-collated-copies""#))
    let decoded = try JSONDecoder().decode(JobTicket.self, from: Data(text.utf8))
    #expect(decoded == first)
  }

  @Test(
    "an image on the paper: one side, the paper's size, its pixels kept (an upright JPEG as it is)",
    arguments: [
      ("progressive.jpg", "60 40", true), ("rotated.jpg", "40 60", false),
      ("cmyk.jpg", "60 40", false), ("alpha.png", "60 40", false),
    ])
  func image(name: String, pixels: String, passedThrough: Bool) async throws {
    let folder = TemporaryFolder()
    let original = fixturesFolder + "/Images/" + name
    try FileManager.default.copyItem(atPath: original, toPath: folder.file(name))
    let prepared = try await prepare(
      in: folder, files: [#"{"path":"\#(name)","paper":"Letter","copies":2}"#])
    let file = try #require(prepared.files.first)
    #expect(file.ticket.impressions == 1 && file.ticket.ipp.media == "na_letter_8.5x11in")
    let info = try pdfInfo(file.document)
    #expect(info["Pages"] == "1")
    #expect(info["Page size"]?.hasPrefix("612 x 792 pts") == true, "\(info)")
    // The image's own pixels (an alpha channel rides along as a soft mask).
    let images = try imageSizes(file.document)
    #expect(images.first?.hasPrefix("\(pixels) ") == true, "\(images)")
    if passedThrough {
      let extracted = folder.file("x")
      #expect(try runTool("pdfimages", ["-j", file.document, extracted]).status == 0)
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: extracted + "-000.jpg"))
          == Data(contentsOf: URL(fileURLWithPath: original)))
    }
    let check = try runTool("qpdf", ["--check", file.document])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
  }

  @Test("the same order twice gives the same bytes")
  func deterministic() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: a4, count: 5)), to: folder.file("a.pdf"))
    let order = [#"{"path":"a.pdf","nUp":4,"duplex":"long-edge"}"#]
    let first = try await prepare(in: folder, files: order, output: "one")
    let second = try await prepare(in: folder, files: order, output: "two")
    for (a, b) in zip(first.files, second.files) {
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: a.document))
          == Data(contentsOf: URL(fileURLWithPath: b.document)))
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: a.ticketPath))
          == Data(contentsOf: URL(fileURLWithPath: b.ticketPath)))
    }
  }

  @Test(
    "a file that cannot be prepared fails with its code, naming it, and nothing is written",
    arguments: [
      ("Documents/noprint.pdf", "pdf.printNotAllowed"),
      ("Documents/huge.png", "image.tooLarge"),
    ])
  func refused(fixture: String, code: String) async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(try NumberedPages.drawn([a4]), to: folder.file("a.pdf"))
    let name = (fixture as NSString).lastPathComponent
    try FileManager.default.copyItem(
      atPath: fixturesFolder + "/" + fixture, toPath: folder.file(name))
    let error = await #expect(throws: DocumentError.self) {
      try await prepare(in: folder, files: [#"{"path":"a.pdf"}"#, #"{"path":"\#(name)"}"#])
    }
    #expect(error?.code == code)
    #expect(error?.message.contains("'\(name)'") == true)
    #expect(error?.hint != nil)
    #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.file("out"))) == [])
  }

  private func prepare(in folder: TemporaryFolder, files: [String], output: String = "out")
    async throws -> PreparedOrder
  {
    try await prepareOrder(in: folder, prices: prices, files: files, output: output)
  }
}

/// Writes `prices` and an order of `files` into `folder`, and prepares it into `output` there.
func prepareOrder(
  in folder: TemporaryFolder, prices: String, files: [String], output: String = "out",
  options: PrepareOptions = PrepareOptions()
) async throws -> PreparedOrder {
  try Data(prices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
  let order = #"{"schemaVersion":1,"files":[\#(files.joined(separator: ","))]}"#
  try Data(order.utf8).write(to: URL(fileURLWithPath: folder.file("order.json")))
  let preparer = OrderPreparer(
    quoter: OrderQuoter(
      sandbox: DocumentSandbox(executable: imprintExecutable, workers: 2), jobs: 2))
  return try await preparer.prepare(
    order: folder.file("order.json"), prices: folder.file("prices.json"),
    output: folder.file(output), options: options)
}

/// `pdffonts`' rows without the object numbers and subset tags: name, type, encoding, emb, sub,
/// uni.
private func fontList(_ path: String) throws -> [String] {
  let result = try runTool("pdffonts", [path])
  return result.stdout.split(separator: "\n").dropFirst(2).map { line in
    let columns = line.split(separator: " ", omittingEmptySubsequences: true)
    let name = columns.first.map { String($0.split(separator: "+").last ?? $0) } ?? ""
    return ([name] + columns.dropFirst().dropLast(2).map(String.init)).joined(separator: " ")
  }.sorted()
}

/// `pdfimages -list`'s width, height, colour, components and bits per component of each image.
private func imageSizes(_ path: String) throws -> [String] {
  let result = try runTool("pdfimages", ["-list", path])
  return result.stdout.split(separator: "\n").dropFirst(2).map { line in
    let columns = line.split(separator: " ", omittingEmptySubsequences: true)
    return columns.count > 8 ? columns[3...7].joined(separator: " ") : String(line)
  }
}

@Suite("OrderPreparer: what a page carries besides its content", .liveHandlesChecked)
struct OrderPreparerPageTests {
  /// A one-page A4 order of `pdf`, prepared 1-up into `folder/out`.
  private func prepareOne(_ pdf: [UInt8], in folder: TemporaryFolder) async throws
    -> PreparedFile
  {
    try HostileDocuments.write(pdf, to: folder.file("p.pdf"))
    let order = try await prepareOrder(
      in: folder, prices: prices, files: [#"{"path":"p.pdf"}"#])
    return try #require(order.files.first)
  }

  @Test("a printable form field's value is drawn into the page (a form XObject would drop it)")
  func formField() async throws {
    let folder = TemporaryFolder()
    let pdf = HostileDocuments.pdf([
      "<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] >> >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595.276 841.89] /Annots [4 0 R] "
        + "/Resources << >> /Contents 6 0 R >>",
      "<< /Type /Annot /Subtype /Widget /F 4 /FT /Tx /T (name) /V (Filled) /Rect [100 700 300 730] "
        + "/P 3 0 R /AP << /N 5 0 R >> >>",
      HostileDocuments.stream(
        "BT /F1 14 Tf 2 8 Td (Filled) Tj ET",
        "/Type /XObject /Subtype /Form /BBox [0 0 200 30] "
          + "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> "
      ),
      HostileDocuments.stream("0 g"),
    ])
    let file = try await prepareOne(pdf, in: folder)
    let text = try runTool("pdftotext", [file.document, "-"]).stdout
    #expect(text.contains("Filled"), "\(text)")
    #expect(try runTool("qpdf", ["--check", file.document]).status == 0)
  }

  @Test("a page with bleed is placed by its TrimBox: the trimmed page fills the paper, centred")
  func trimBox() async throws {
    let folder = TemporaryFolder()
    // A4 trimmed inside 30 pt of bleed; the mark sits at the trim box's centre.
    let pdf = HostileDocuments.pdf([
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 655.276 901.89] "
        + "/TrimBox [30 30 625.276 871.89] "
        + "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> "
        + "/Contents 4 0 R >>",
      HostileDocuments.stream(
        "BT /F1 20 Tf 313 443 Td (P1) Tj ET BT /F1 20 Tf 313 820 Td (T1) Tj ET"),
    ])
    let file = try await prepareOne(pdf, in: folder)
    let page = try #require(try wordsByPage(file.document).first)
    let mark = try #require(page.words.first { $0.text == "P1" })
    // At 100 %: the trim box is A4, so its centre lands on the paper's centre.
    #expect(abs(mark.x - (313 - 30 + 11)) < 3 && abs(mark.y - (841.89 - 443 + 30 - 7)) < 4)
    #expect(abs(page.width - 595.276) < 0.5 && abs(page.height - 841.89) < 0.5)
  }

  @Test("a file whose page count changed since the quote is document.changedSinceQuote")
  func changedSinceQuote() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 3)), to: folder.file("p.pdf"))
    try Data(prices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
    try Data(#"{"schemaVersion":1,"files":[{"path":"p.pdf"}]}"#.utf8).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    let quoter = OrderQuoter(
      sandbox: DocumentSandbox(executable: imprintExecutable, workers: 1), jobs: 1)
    var quoted = try await quoter.quote(
      order: folder.file("order.json"), prices: folder.file("prices.json"))
    // The file is replaced by a 4-page one after it was quoted.
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 4)), to: folder.file("p.pdf"))
    quoted.files[0].info.pages = 3
    try FileManager.default.createDirectory(
      atPath: folder.file("out"), withIntermediateDirectories: true)
    let error = await #expect(throws: DocumentError.self) {
      try await OrderPreparer(quoter: quoter).prepare(quoted, output: folder.file("out"))
    }
    #expect(error == .changedSinceQuote(file: "p.pdf", quotedPages: 3, pages: 4))
    #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.file("out"))) == [])
  }
}
