// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: colour is decided on what prints. Pages whose only colour is in
// annotations the print-ready file does not carry (hyperref's link boxes, annotations without
// the print flag or without an appearance) are monochrome; `inspect`'s verdicts, the quote's
// colour impressions and the prepared file's colour sides agree page by page, the prepared
// file checked from outside (pdftoppm's pixels, Ghostscript's inkcov).

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintPrinting
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

/// USD rates: mono 10, colour 30 an impression, A4 and Letter paper 2 a sheet (the colour
/// tests' price list).
let colorTestPrices = #"""
  {"schemaVersion":1,"store":"Copy Corner","version":"v1","currency":"USD",
   "rates":{"default":{"mono":{"simplex":10,"duplex":8},"color":{"simplex":30,"duplex":25}}},
   "paper":{"A4":{"plain":2},"Letter":{"plain":2}},
   "defaults":{"paper":"A4"}}
  """#

/// Each page of the PDF at `path` coloured or not, as pdftoppm (poppler's Splash renderer,
/// not the cairo one Imprint draws with) renders it at 50 dpi: a pixel is coloured when
/// max(R,G,B) − min(R,G,B) > 8, a page colour when more than 0.001 % of its pixels are.
func splashColorPages(_ path: String, in folder: TemporaryFolder) throws -> [Bool] {
  let prefix = folder.file("splash-\(UUID().uuidString)")
  let result = try runTool("pdftoppm", ["-r", "50", path, prefix])
  #expect(result.status == 0, "\(result.stderr)")
  let name = (prefix as NSString).lastPathComponent
  let pages = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    .filter { $0.hasPrefix(name + "-") && $0.hasSuffix(".ppm") }
    .sorted { pageNumber($0) < pageNumber($1) }
  return try pages.map { page in
    let ppm = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file(page))))
    let (width, height, start) = try #require(ppmHeader(ppm))
    var colored = 0
    var index = start
    while index + 2 < ppm.count {
      let (r, g, b) = (ppm[index], ppm[index + 1], ppm[index + 2])
      if max(r, g, b) - min(r, g, b) > 8 { colored += 1 }
      index += 3
    }
    // More than 1 in 100 000 pixels, in integers.
    return colored * 100_000 > width * height
  }
}

/// The page number of pdftoppm's `prefix-N.ppm` (zero-padded to the count's digits).
private func pageNumber(_ name: String) -> Int {
  Int(name.split(separator: "-").last?.split(separator: ".").first ?? "") ?? 0
}

/// Each page of the PDF at `path` colour or not by Ghostscript's inkcov device (the ink a
/// printer would put down): colour when any of cyan, magenta and yellow is above 0.
func inkcovColorPages(_ path: String) throws -> [Bool] {
  let result = try runTool("gs", ["-q", "-dSAFER", "-o", "-", "-sDEVICE=inkcov", path])
  #expect(result.status == 0, "\(result.stderr)")
  return result.stdout.split(separator: "\n").filter { $0.contains("CMYK") }.map { line in
    let values = line.split(separator: " ").prefix(3).compactMap { Double($0) }
    return values.contains { $0 > 0 }
  }
}

/// A LaTeX document made with pdflatex (Debian's texlive) in `folder`: `body` between
/// `\begin{document}` and `\end{document}`, with graphicx and hyperref (`options`); with
/// `image`, a 60 × 40 PNG of that RGB colour is written first and `IMAGE` in `body` names it.
func latexDocument(
  _ body: String, hyperref options: String = "", image: (UInt8, UInt8, UInt8)? = nil,
  in folder: TemporaryFolder, name: String
) throws -> String {
  var body = body
  if let (red, green, blue) = image {
    try writeColorPNG(to: folder.file(name + "-image.png"), red: red, green: green, blue: blue)
    body = body.replacingOccurrences(of: "IMAGE", with: folder.file(name + "-image.png"))
  }
  let source = folder.file(name + ".tex")
  let text = """
    \\documentclass{article}
    \\usepackage{graphicx}
    \\usepackage[\(options)]{hyperref}
    \\begin{document}
    \(body)
    \\end{document}

    """
  try Data(text.utf8).write(to: URL(fileURLWithPath: source))
  let result = try runTool(
    "pdflatex",
    ["-interaction=batchmode", "-halt-on-error", "-output-directory", folder.path, source])
  #expect(result.status == 0, "pdflatex: \(result.stdout)")
  return folder.file(name + ".pdf")
}

/// A 60 × 40 PNG of one colour (RGB), written to `path`.
func writeColorPNG(to path: String, red: UInt8, green: UInt8, blue: UInt8) throws {
  let image = try RasterImage(width: 60, height: 40)
  try image.draw { canvas in
    canvas.fill(
      Rect(x: 0, y: 0, width: 60, height: 40), color: Color(red: red, green: green, blue: blue))
  }
  try Data(try image.png()).write(to: URL(fileURLWithPath: path))
}

/// The page of a 40-line LaTeX document whose lines are all links: hyperref's default link
/// boxes (red around internal links, cyan around URLs), which no printer prints.
let linkBoxLines = (1...40).map {
  "Item \($0): see \\hyperlink{t}{the target} or \\url{https://example.org/\($0)}.\\par"
}.joined(separator: "\n")

@Suite("Colour decided on what prints", .liveHandlesChecked)
struct PrintedColorTests {
  /// One page each: what annotation it holds, and whether the print-ready file shows colour.
  ///
  /// Object 4 is a red form XObject, the squares' appearance.
  static let annotations: [(entries: String, color: Bool, what: String)] = [
    ("", false, "black text alone"),
    (
      "/Annots [<< /Type /Annot /Subtype /Link /Rect [72 640 300 680] /C [1 0 0] "
        + "/Border [0 0 3] >>]", false, "a red link box, print flag clear (hyperref)"
    ),
    (
      "/Annots [<< /Type /Annot /Subtype /Link /Rect [72 640 300 680] /C [1 0 0] "
        + "/Border [0 0 3] /F 4 >>]", false, "a red link box, print flag, no appearance"
    ),
    (
      "/Annots [<< /Type /Annot /Subtype /Square /Rect [72 500 300 700] /F 4 "
        + "/AP << /N 4 0 R >> >>]", true, "a printable square, red appearance"
    ),
    (
      "/Annots [<< /Type /Annot /Subtype /Square /Rect [72 500 300 700] /F 6 "
        + "/AP << /N 4 0 R >> >>]", false, "the same square, hidden"
    ),
    (
      "/Annots [<< /Type /Annot /Subtype /Square /Rect [72 500 300 700] /F 0 "
        + "/AP << /N 4 0 R >> >>]", false, "the same square, print flag clear"
    ),
    // poppler's printing mode leaves every link out; the prepared file draws this one in.
    (
      "/Annots [<< /Type /Annot /Subtype /Link /Rect [72 500 300 700] /F 4 "
        + "/AP << /N 4 0 R >> >>]", true, "a printable link with a red appearance"
    ),
  ]

  /// A PDF of `annotations`, one A4 page each with black text: 1 catalog, 2 page tree, 3 font,
  /// 4 the red appearance, then the pages, then their contents.
  static func annotated() -> [UInt8] {
    let count = annotations.count
    var objects = [
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [\((0..<count).map { "\(5 + $0) 0 R" }.joined(separator: " "))]"
        + " /Count \(count) >>",
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
      HostileDocuments.stream(
        "1 0 0 rg 0 0 228 200 re f", "/Type /XObject /Subtype /Form /BBox [0 0 228 200] "),
    ]
    for (index, row) in annotations.enumerated() {
      objects.append(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595.28 841.89] /Resources << /Font << "
          + "/F1 3 0 R >> >> /Contents \(5 + count + index) 0 R \(row.entries) >>")
    }
    for row in annotations {
      objects.append(HostileDocuments.stream("0 g BT /F1 20 Tf 72 760 Td (\(row.what)) Tj ET"))
    }
    return HostileDocuments.pdf(objects)
  }

  @Test("annotations count only as the print-ready file carries them: inspect, quote, prepared")
  func annotationKinds() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(Self.annotated(), to: folder.file("doc.pdf"))
    let expected = Self.annotations.map(\.color)
    let info = try DocumentEngine.inspect(
      try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.file("doc.pdf")))),
      file: "doc.pdf", colors: ColorRule())
    #expect(info.colors?.map(\.color) == expected)
    // A screen shows the boxes (poppler draws them from /C and /Border): colour there.
    #expect(
      try screenColors(folder.file("doc.pdf")) == [false, true, true, true, false, true, true])
    let prepared = try await prepareOrder(
      in: folder, prices: colorTestPrices, files: [#"{"path":"doc.pdf","color":"auto"}"#])
    let file = try #require(prepared.files.first)
    #expect(prepared.quote.files.first?.colorImpressions == expected.filter { $0 }.count)
    #expect(try splashColorPages(file.document, in: folder) == expected)
    #expect(try inkcovColorPages(file.document) == expected)
  }

  @Test("hyperref's link boxes: 40 link lines, a black page, a colour image on page 3; 1-up, 2-up")
  func hyperrefBoxes() async throws {
    let folder = TemporaryFolder()
    let pdf = try latexDocument(
      """
      \(linkBoxLines)
      \\newpage
      \\hypertarget{t}{Target}: black text only.
      \\newpage
      A colour image: \\includegraphics[width=4cm]{IMAGE}
      """, image: (200, 30, 30), in: folder, name: "boxes")
    // The boxes are really there, without the print flag (hyperref writes no /F).
    let dump = try runTool("qpdf", ["--qdf", "--object-streams=disable", pdf, "-"]).stdout
    #expect(dump.components(separatedBy: "/Subtype /Link").count - 1 >= 80)
    #expect(!dump.contains("/F 4"))
    let expected = [false, false, true]
    let sandbox = DocumentSandbox(executable: imprintExecutable)
    let info = try await sandbox.inspect(path: pdf, file: "boxes.pdf", colors: ColorRule())
    #expect(info.colors?.map(\.color) == expected)
    // The screen's rule (link boxes drawn) finds colour on page 1: the boxes were the cause.
    #expect(try screenColors(pdf) == [true, false, true])

    try FileManager.default.copyItem(atPath: pdf, toPath: folder.file("boxes-order.pdf"))
    let prepared = try await prepareOrder(
      in: folder, prices: colorTestPrices, files: [#"{"path":"boxes-order.pdf","color":"auto"}"#],
      options: PrepareOptions(splitColor: true))
    let quote = try #require(prepared.quote.files.first)
    #expect(quote.colorImpressions == 1 && quote.monoImpressions == 2)
    // The split's colour part holds page 3 alone; its file is colour, the mono part is not.
    let parts = Dictionary(uniqueKeysWithValues: prepared.files.map { ($0.part, $0) })
    #expect(parts["color"]?.ticket.split?.pages == "3")
    #expect(parts["mono"]?.ticket.split?.pages == "1-2")
    let color = try #require(parts["color"]?.document)
    let mono = try #require(parts["mono"]?.document)
    #expect(try splashColorPages(color, in: folder) == [true])
    #expect(try splashColorPages(mono, in: folder) == [false, false])
    #expect(try inkcovColorPages(color) == [true] && inkcovColorPages(mono) == [false, false])

    // The whole file prepared (no split), 1-up: each side as inspected.
    let whole = try await prepareOrder(
      in: folder, prices: colorTestPrices, files: [#"{"path":"boxes-order.pdf","color":"auto"}"#],
      output: "whole")
    let document = try #require(whole.files.first?.document)
    #expect(try splashColorPages(document, in: folder) == expected)
    #expect(try inkcovColorPages(document) == expected)

    // 2-up: the first side holds pages 1 and 2 (mono), the second page 3 (colour).
    let twoUp = try await prepareOrder(
      in: folder, prices: colorTestPrices,
      files: [#"{"path":"boxes-order.pdf","color":"auto","nUp":2}"#], output: "two-up")
    let sides = try #require(twoUp.files.first?.document)
    #expect(twoUp.quote.files.first?.colorImpressions == 1)
    #expect(twoUp.quote.files.first?.monoImpressions == 1)
    #expect(try splashColorPages(sides, in: folder) == [false, true])
    #expect(try inkcovColorPages(sides) == [false, true])
  }

  @Test("when libqpdf cannot make the printable pages, the pages are rendered for printing")
  func fallback() throws {
    let data = DocumentBytes(copying: Self.annotated())
    let document = try PDFDocument(data: data, password: nil)
    // Asked for one page fewer than the file has, libqpdf refuses (its count differs), as it
    // refuses a file it cannot read: poppler's printing mode decides instead.
    let verdicts = try DocumentEngine.printedColors(
      data, document: document, pages: Self.annotations.count - 1, file: "doc.pdf", password: nil,
      rule: ColorRule())
    // No link box, hidden or non-printing annotation counts; the printable square does.
    #expect(verdicts.map(\.color) == [false, false, false, true, false, false])
  }

  /// Each page's verdict as a screen shows it (every annotation drawn), by the same rule.
  private func screenColors(_ path: String) throws -> [Bool] {
    let data = try DocumentBytes(mapping: path)
    let document = try PDFDocument(data: data, password: nil)
    var verdicts: [Bool] = []
    for index in 0..<document.pageCount {
      guard let size = document.pageSize(index) else {
        Issue.record("page \(index + 1) has no size")
        return []
      }
      let image = try RasterImage(
        width: Int((size.width * 50 / 72).rounded()), height: Int((size.height * 50 / 72).rounded())
      )
      try image.draw { canvas in
        canvas.scale(
          Double(image.width) / size.width, Double(image.height) / size.height)
        _ = document.render(page: index, on: canvas)
      }
      verdicts.append(DocumentEngine.analyse(image, page: index + 1, rule: ColorRule()).color)
    }
    return verdicts
  }
}
