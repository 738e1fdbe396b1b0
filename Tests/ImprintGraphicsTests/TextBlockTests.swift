// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: text blocks are equal, and look each other up in caches, by their
// bytes: canonically equivalent texts Pango shapes from different bytes stay apart.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintGraphics

@Suite("text blocks compared by their bytes")
struct TextBlockTests {
  static let style = TextStyle(family: "DejaVu Sans", size: 12)

  @Test("a composed and a decomposed é: equal as Swift strings, different blocks")
  func canonicalEquivalents() {
    let composed = "Andr\u{E9} Ng\u{1EC5}u"
    let decomposed = "Andre\u{301} Nge\u{302}\u{303}u"
    #expect(composed == decomposed)
    let a = TextBlock(composed, style: Self.style)
    let b = TextBlock(decomposed, style: Self.style)
    #expect(a != b)
    #expect(Set([a, b]).count == 2)
    // The same bytes (another string value, built anew) are the same block, with one hash.
    let copy = TextBlock(String(decoding: Array(composed.utf8), as: UTF8.self), style: Self.style)
    #expect(copy == a)
    #expect(copy.hashValue == a.hashValue)
    #expect(Set([a, copy]).count == 1)
    // Every other field still counts.
    var wider = a
    wider.width = 100
    #expect(wider != a)
    var bold = a
    bold.style.weight = 700
    #expect(bold != a)
  }

  @Test("each form shaped for drawing keeps its own bytes as its text")
  func shapedApart() throws {
    let library = try FontLibrary.bundled()
    let measurer = try TextMeasurer(fonts: library)
    for text in ["Andr\u{E9}", "Andre\u{301}", "Ng\u{1EC5}u", "Nge\u{302}\u{303}u"] {
      let block = TextBlock(text, style: Self.style)
      _ = measurer.measure(block)
      measurer.prepareDrawing(block)
      let shaped = try #require(ShapedTextCache.shared.text(block, library: library), "\(text)")
      let bytes = shaped.runs.flatMap { $0.text.map { UInt8(bitPattern: $0) } }
      #expect(bytes == Array(text.utf8), "\(text)")
    }
  }

  @Test("a block prepared for drawing is drawn with its shaped text by its own library only")
  func preparedHandOff() throws {
    let bundled = try FontLibrary.bundled()
    let folder = TemporaryFolder()
    try FileManager.default.copyItem(
      atPath: repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/dejavu/DejaVuSansMono.ttf",
      toPath: folder.file("DejaVuSansMono.ttf"))
    let mono = try FontLibrary(directories: [folder.path])
    let block = TextBlock("Prepared 123", style: Self.style)
    let prepared = try TextMeasurer(fonts: bundled).prepareDrawing(block)
    #expect(prepared == block)
    #expect(prepared.shaped(from: bundled) != nil)
    #expect(prepared.shaped(from: mono) == nil)
    // Changed after it was prepared (its fields are public): its shaped text is not used.
    var changed = prepared
    changed.text = "Changed 456"
    #expect(changed.shaped(from: bundled) == nil)
    var larger = prepared
    larger.style.size = 20
    #expect(larger.shaped(from: bundled) == nil)
    var recoloured = prepared
    recoloured.style.color = Color(red: 200, green: 0, blue: 0)
    #expect(recoloured.shaped(from: bundled) == nil)
    /// `block` drawn on a page of a PDF of `library`'s: the fonts pdffonts lists, the text.
    func drawn(_ block: TextBlock, by library: FontLibrary, name: String) throws -> (
      fonts: [String], text: String
    ) {
      let path = folder.file(name + ".pdf")
      let size = Size(width: 200, height: 40)
      let document = try VectorDocument(
        format: .pdf, size: size, fonts: library, path: path, producer: .imprint)
      try document.page(size: size) { canvas in try canvas.draw(block, x: 4, y: 4) }
      _ = try document.finish()
      let listing = try runTool("pdffonts", [path]).stdout.split(separator: "\n").dropFirst(2)
      return (
        listing.compactMap { $0.split(separator: " ").first.map(String.init) },
        try runTool("pdftotext", [path, "-"]).stdout
      )
    }
    let changedText = try drawn(changed, by: bundled, name: "changed").text
    #expect(changedText.contains("Changed 456") && !changedText.contains("Prepared"))
    // Drawn by each library: the bundled one uses the shaped text (DejaVu Sans); the other
    // shapes it with its own fonts (its only font, DejaVu Sans Mono), never the bundled ones.
    for (library, font) in [(bundled, "DejaVuSans"), (mono, "DejaVuSansMono")] {
      let (fonts, text) = try drawn(prepared, by: library, name: font)
      #expect(fonts.count == 1 && fonts[0].hasSuffix("+" + font), "\(fonts)")
      #expect(text.contains("Prepared 123"), "\(text)")
    }
  }
}
