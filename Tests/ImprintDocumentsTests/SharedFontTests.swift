// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the pages of one document share their fonts (poppler made every font of
// a page's resources again for each page drawn). Each font is made once a document, whatever
// page names it and under which resource name; pages whose /Font dictionary names a font
// directly are drawn as poppler draws them; and every page is the same, pixel for pixel, as
// pdftoppm's (poppler's Splash, a font made a page).

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite struct SharedFontTests {
  /// Five pages of 200 x 100 pt sharing fonts: Helvetica and Times-Bold (not embedded),
  /// DejaVu Sans Mono (embedded TrueType) and a Type 3 font, named differently from page to
  /// page; page 3 reaches them through an indirect /Font dictionary and an annotation whose
  /// appearance sets text; page 4 names Courier directly; page 5 names a font that is no
  /// dictionary, beside one that is.
  static func document() throws -> [UInt8] {
    let mono = [UInt8](
      try Data(
        contentsOf: URL(
          fileURLWithPath: fixturesFolder
            + "/../../Sources/ImprintGraphics/Resources/fonts/dejavu/DejaVuSansMono.ttf")))
    func stream(_ text: String, _ dictionary: String = "") -> [UInt8] {
      Array("<<\(dictionary)/Length \(text.utf8.count)>>stream\n\(text)\nendstream".utf8)
    }
    func page(_ resources: String, contents: Int, extra: String = "") -> [UInt8] {
      Array(
        ("<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Resources \(resources)"
          + "/Contents \(contents) 0 R\(extra)>>").utf8)
    }
    let text = { (font: String, size: Int, y: Int, words: String) in
      "BT /\(font) \(size) Tf 10 \(y) Td (\(words)) Tj ET"
    }
    let widths = Array(repeating: "602", count: 95).joined(separator: " ")
    let objects: [[UInt8]] = [
      Array("<</Type/Catalog/Pages 2 0 R>>".utf8),  // 1
      Array("<</Type/Pages/Kids[3 0 R 4 0 R 5 0 R 6 0 R 7 0 R]/Count 5>>".utf8),  // 2
      page("<</Font<</F1 8 0 R/F2 9 0 R/M 10 0 R>>>>", contents: 14),  // 3
      page("<</Font<</F1 8 0 R/F9 9 0 R/T 11 0 R/Mono 10 0 R>>>>", contents: 15),  // 4
      page("<</Font 12 0 R>>", contents: 16, extra: "/Annots[13 0 R]"),  // 5
      page("<</Font<</F1 8 0 R/D<</Type/Font/Subtype/Type1/BaseFont/Courier>>>>>>", contents: 17),
      page("<</Font<</F1 8 0 R/N 21 0 R>>>>", contents: 22),  // 7
      Array("<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>".utf8),  // 8
      Array("<</Type/Font/Subtype/Type1/BaseFont/Times-Bold>>".utf8),  // 9
      Array(
        ("<</Type/Font/Subtype/TrueType/BaseFont/DejaVuSansMono/FirstChar 32/LastChar 126"
          + "/Widths[\(widths)]/Encoding/WinAnsiEncoding/FontDescriptor 19 0 R>>").utf8),  // 10
      Array(
        ("<</Type/Font/Subtype/Type3/FontMatrix[0.001 0 0 0.001 0 0]/FontBBox[0 0 1000 1000]"
          + "/CharProcs<</sq 18 0 R>>/Encoding<</Type/Encoding/Differences[65/sq]>>"
          + "/FirstChar 65/LastChar 65/Widths[1000]/Resources<<>>>>").utf8),  // 11
      Array("<</F1 8 0 R/T 11 0 R/M 10 0 R>>".utf8),  // 12
      Array("<</Type/Annot/Subtype/Square/Rect[100 10 190 60]/AP<</N 23 0 R>>>>".utf8),  // 13
      stream(
        text("F1", 14, 70, "Shared fonts") + text("F2", 12, 50, "Times")
          + text("M", 10, 30, "mono 123")),  // 14
      stream(
        text("F9", 16, 70, "Times again") + text("T", 20, 40, "AAA") + text("Mono", 9, 20, "{mono}")
      ),  // 15
      // 16
      stream(text("F1", 10, 70, "Indirect") + text("T", 12, 40, "AA") + text("M", 11, 20, "m")),
      stream(text("D", 14, 60, "Courier, direct") + text("F1", 8, 30, "and Helvetica")),  // 17
      stream("1000 0 0 0 1000 1000 d1 100 100 800 800 re f"),  // 18
      Array(
        ("<</Type/FontDescriptor/FontName/DejaVuSansMono/Flags 33/FontBBox[-558 -375 718 1042]"
          + "/ItalicAngle 0/Ascent 928/Descent -236/CapHeight 729/StemV 80/FontFile2 20 0 R>>")
          .utf8),  // 19
      Array("<</Length \(mono.count)>>stream\n".utf8) + mono + Array("\nendstream".utf8),  // 20
      Array("42".utf8),  // 21: no font
      stream(text("F1", 12, 60, "Helvetica") + text("N", 12, 30, "not drawn")),  // 22
      stream(
        text("F1", 9, 20, "Note") + " 0 0 1 RG 1 1 88 48 re S",
        "/Type/XObject/Subtype/Form/BBox[0 0 90 50]/Resources<</Font<</F1 8 0 R>>>>"),  // 23
    ]
    return HostileDocuments.pdf(bytes: objects)
  }

  /// Page `index` (0-based) drawn at 256 x 128 px by `document`.
  static func draw(_ document: borrowing SplashDocument, page index: Int) throws -> [UInt32] {
    let image = try RasterImage(width: 256, height: 128)
    try document.render(page: index, scale: 256.0 / 200, into: image)
    var pixels: [UInt32] = []
    image.withMutablePixels { base, stride in
      for y in 0..<128 {
        let row = base + y * stride / 4
        for x in 0..<256 { pixels.append(row[x] & 0xFF_FFFF) }
      }
    }
    return pixels
  }

  @Test("each font is made once a document; every page is pdftoppm's, pixel for pixel")
  func sharedFonts() throws {
    let pdf = try Self.document()
    let document = try SplashDocument(data: DocumentBytes(copying: pdf), password: nil)
    var drawn: [[UInt32]] = []
    // Fonts made so far, and pages drawn with the document's fonts, after each page. Page 1:
    // F1, F2, M. Page 2: F1 found; F9 (Times-Bold again under another name: poppler's font
    // carries its name), T and Mono made. Page 3 (an indirect /Font dictionary) finds F1, T
    // and M. Page 4 names Courier directly: drawn as poppler draws it. Page 5: F1 found, N
    // (no dictionary) made as no font.
    let counts = [(3, 1), (6, 2), (6, 3), (6, 3), (7, 4)]
    for index in 0..<5 {
      drawn.append(try Self.draw(document, page: index))
      let (made, pages) = document.fontCounts
      #expect(made == counts[index].0 && pages == counts[index].1, "after page \(index + 1)")
    }
    // Drawn again, every page is the same.
    for index in [4, 0, 2] {
      let again = try Self.draw(document, page: index)
      #expect(again == drawn[index], "page \(index + 1) drawn again")
    }
    // pdftoppm, every pixel: at 92.16 dpi, 256 x 128 px.
    let folder = try TemporaryFolder()
    try Data(pdf).write(to: URL(fileURLWithPath: folder.file("fonts.pdf")))
    let result = try runTool(
      "pdftoppm", ["-r", "92.16", folder.file("fonts.pdf"), folder.file("p")])
    try #require(result.status == 0, "\(result.stderr)")
    for index in 0..<5 {
      let ppm = [UInt8](
        try Data(contentsOf: URL(fileURLWithPath: folder.file("p-\(index + 1).ppm"))))
      let (width, height, start) = try #require(ppmHeader(ppm))
      try #require(width == 256 && height == 128, "\(width) x \(height)")
      var theirs: [UInt32] = []
      for pixel in stride(from: start, to: ppm.count, by: 3) {
        theirs.append(
          UInt32(ppm[pixel]) << 16 | UInt32(ppm[pixel + 1]) << 8 | UInt32(ppm[pixel + 2]))
      }
      let same = theirs == drawn[index]
      #expect(same, "page \(index + 1) differs from pdftoppm's")
      // Something was drawn: not a blank page.
      #expect(drawn[index].contains { $0 != 0xFF_FFFF }, "page \(index + 1) is blank")
    }
  }
}
