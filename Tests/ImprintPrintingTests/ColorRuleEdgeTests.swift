// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: the colour rule's edge, as README states it: a page is colour when more
// than 0.001 % of its pixels at 50 dpi have a chroma above 8; 2 of A4's 241 605 pixels stay
// mono, 3 make it colour; one blue link, a line of them, a colour image on page 3 only.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintPrinting
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite("The colour rule's edge", .liveHandlesChecked)
struct ColorRuleEdgeTests {
  /// An A4 page of black text with `count` pure blue pixels of the 413 × 585 grid Imprint
  /// renders A4 on at 50 dpi, each filled exactly (edges on pixel boundaries).
  static func a4(bluePixels count: Int) -> [UInt8] {
    let (width, height) = (595.28, 841.89)
    let (sx, sy) = (413 / width, 585 / height)
    var content = "0 g BT /F1 24 Tf 72 760 Td (Imprint test page) Tj ET 0 0 1 rg"
    for index in 0..<count {
      // Pixels (100 + 2i, 300): apart, so that no two share an edge.
      let (column, row) = (Double(100 + 2 * index), 300.0)
      let x = column / sx
      let y = height - (row + 1) / sy
      content += String(format: " %.6f %.6f %.6f %.6f re", x, y, 1 / sx, 1 / sy)
    }
    content += count > 0 ? " f" : ""
    return HostileDocuments.pdf([
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)] /Resources << /Font << "
        + "/F1 3 0 R >> >> /Contents 5 0 R >>",
      HostileDocuments.stream(content),
    ])
  }

  @Test(
    "A4: 0 and 2 coloured pixels of 241 605 stay mono, 3 and 4 make the page colour",
    arguments: [(0, false), (2, false), (3, true), (4, true)])
  func a4Edge(pixels: Int, color: Bool) throws {
    let info = try DocumentEngine.inspect(
      Self.a4(bluePixels: pixels), file: "a4.pdf", colors: ColorRule())
    let verdict = try #require(info.colors?.first)
    #expect(verdict.color == color)
    // The area counted is exactly those pixels, computed here from the grid.
    #expect(verdict.coloredAreaPercent == (Double(pixels) / 241_605 * 1_000_000).rounded() / 10_000)
    // 0 counts any coloured pixel.
    var strict = ColorRule()
    strict.minimumAreaPercent = 0
    let strictVerdict = try DocumentEngine.inspect(
      Self.a4(bluePixels: pixels), file: "a4.pdf", colors: strict)
    #expect(strictVerdict.colors?.first?.color == (pixels > 0))
  }

  @Test(
    "a 1000 x 1000 image at 40 dpi (analysed pixel for pixel): 10 coloured pixels mono, 11 colour",
    arguments: [(10, false), (11, true)])
  func imageEdge(pixels: Int, color: Bool) throws {
    var grey = [UInt8](repeating: 200, count: 1000 * 1000 * 3)
    for index in 0..<pixels {
      let at = (500 * 1000 + 3 * index) * 3  // row 500, every third column
      grey[at] = 0
      grey[at + 1] = 0
      grey[at + 2] = 255
    }
    let png = try PNGEncoder.encode(
      width: 1000, height: 1000, format: .rgb8, pixels: grey, dpi: 40)
    let verdict = try #require(
      try DocumentEngine.inspect(png, file: "scan.png", colors: ColorRule()).colors?.first)
    #expect(verdict.color == color && verdict.coloredAreaPercent == Double(pixels) / 10_000)
  }

  @Test("blue link text (a line, one word) is colour; a black page mono; a colour image page 3")
  func blueLinks() async throws {
    let folder = TemporaryFolder()
    let pdf = try latexDocument(
      """
      A line of links: \\url{https://www.debian.org/doc/manuals/debian-reference/index.en.html}
      \\newpage
      Black text with one link, \\href{https://www.debian.org}{Debian}, and more black text.
      \\newpage
      Black text only.
      \\newpage
      A colour image: \\includegraphics[width=4cm]{IMAGE}
      """, hyperref: "colorlinks,urlcolor=blue", image: (30, 120, 200), in: folder,
      name: "links")
    let expected = [true, true, false, true]
    let sandbox = DocumentSandbox(executable: imprintExecutable)
    let info = try await sandbox.inspect(path: pdf, file: "links.pdf", colors: ColorRule())
    let colors = try #require(info.colors)
    #expect(colors.map(\.color) == expected)
    // One word is under the old 0.1 % default, a line of them over it: both are colour now.
    #expect(colors[1].coloredAreaPercent < 0.1 && colors[0].coloredAreaPercent > 0.1)

    let prepared = try await prepareOrder(
      in: folder, prices: colorTestPrices, files: [#"{"path":"links.pdf","color":"auto"}"#])
    let file = try #require(prepared.files.first)
    let quote = try #require(prepared.quote.files.first)
    #expect(quote.colorImpressions == 3 && quote.monoImpressions == 1)
    #expect(try splashColorPages(file.document, in: folder) == expected)
    #expect(try inkcovColorPages(file.document) == expected)

    // The same file ordered mono: no colour impression.
    let mono = try await prepareOrder(
      in: folder, prices: colorTestPrices, files: [#"{"path":"links.pdf","color":"mono"}"#],
      output: "mono")
    #expect(mono.quote.files.first?.colorImpressions == 0)
  }
}
