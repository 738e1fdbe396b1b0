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
    // The hash leaves the enumerations to ==: blocks differing only there stay apart.
    var cut = a
    cut.ellipsis = .end
    var centred = a
    centred.style.alignment = .center
    var fromText = a
    fromText.direction = .fromText
    var words = a
    words.wrap = .word
    #expect(Set([a, cut, centred, fromText, words]).count == 5)
  }

  @Test("text laid out at one size and scaled measures as HarfBuzz's advances at each size")
  func scaledLayout() throws {
    let text = "AVATAR Wolf Yacht"
    let shaped = try runTool(
      "hb-shape",
      [
        "--font-size=1000", "--output-format=json", "--no-glyph-names",
        repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/dejavu/DejaVuSans.ttf", text,
      ])
    let glyphs = try #require(
      try JSONSerialization.jsonObject(with: Data(shaped.stdout.utf8)) as? [[String: Any]])
    let advances = glyphs.compactMap { ($0["ax"] as? NSNumber)?.doubleValue }.reduce(0, +)
    try #require(advances > 0)
    let measurer = try TextMeasurer()
    // Every size is laid out at 64 pt and scaled: the smallest and largest too.
    for size in [0.01, 0.3, 2.5, 7.25, 13.3, 64, 200, 1000, 4096] {
      let metrics = measurer.measure(
        TextBlock(text, style: TextStyle(family: "DejaVu Sans", size: size)))
      #expect(
        abs(metrics.width - advances * size / 1000) <= 0.002 * max(1, size / 64),
        "\(size) pt: \(metrics.width) against \(advances * size / 1000)")
      #expect(metrics.lineCount == 1)
    }
  }

  @Test("a width or size that is not a usable number measures without trapping")
  func unusableNumbers() throws {
    let measurer = try TextMeasurer()
    let text = "one two three four five six seven eight nine ten"
    let style = TextStyle(family: "DejaVu Sans", size: 12)
    // No width that wraps: one line, as with no width at all.
    let unwrapped = measurer.measure(TextBlock(text, style: style))
    for width in [Double.nan, .infinity, 1e300] {
      let metrics = measurer.measure(TextBlock(text, style: style, width: width))
      #expect(metrics.lineCount == 1 && metrics.width == unwrapped.width, "width \(width)")
    }
    // A narrow width wraps; a negative one is no width (Pango's -1).
    #expect(measurer.measure(TextBlock(text, style: style, width: 60)).lineCount > 1)
    #expect(measurer.measure(TextBlock(text, style: style, width: -5)).lineCount == 1)
    // A size outside TextStyle.sizes is measured at the nearest one within (the smallest for
    // one that is not a number): never handed to FreeType, which would break the font for
    // the whole process (every later drawing with it failing).
    let smallest = TextStyle.sizes.lowerBound
    let largest = TextStyle.sizes.upperBound
    for (size, usable) in [
      (Double.nan, smallest), (0, smallest), (-3, smallest), (1e-9, smallest),
      (.infinity, largest), (5000, largest), (1e6, largest), (-.infinity, smallest),
    ] {
      var odd = style
      odd.size = size
      #expect(!odd.hasUsableSize)
      var near = style
      near.size = usable
      let block = TextBlock(text, style: odd, width: 100, maxLines: Int.max, ellipsis: .end)
      var nearBlock = block
      nearBlock.style = near
      let metrics = measurer.measure(block)
      #expect(metrics == measurer.measure(nearBlock), "size \(size)")
      #expect(metrics.width.isFinite && metrics.height.isFinite, "size \(size)")
    }
  }

  /// Whether `body` throws a `GraphicsError` of `code`.
  private func refuses(_ code: String, _ body: () throws -> Void) -> Bool {
    do {
      try body()
      return false
    } catch let error as GraphicsError {
      return error.code == code
    } catch {
      return false
    }
  }

  @Test("a canvas refuses a size outside TextStyle.sizes with graphics.textSize, on every path")
  func refusedSizes() throws {
    let folder = TemporaryFolder()
    for size in [Double.nan, 0, -3, 1e-9, 4096.5, 5000, 1e6, .infinity, -.infinity] {
      let block = TextBlock("Wolf", style: TextStyle(family: "DejaVu Sans", size: size))
      let image = try RasterImage(width: 60, height: 20)
      #expect(refuses("graphics.textSize") { try image.draw { try $0.draw(block, x: 0, y: 0) } })
      #expect(
        refuses("graphics.textSize") {
          try image.draw { try $0.drawText("Wolf", style: block.style, x: 0, y: 0) }
        })
      #expect(refuses("graphics.textSize") { try image.draw { _ = try $0.measure(block) } })
      #expect(
        refuses("graphics.textSize") {
          try image.draw { _ = try $0.measure("Wolf", style: block.style) }
        })
      for producer in [PDFProducer.cairo, .imprint] {
        let document = try VectorDocument(
          format: .pdf, size: Size(width: 60, height: 20),
          path: folder.file("refused.pdf"), producer: producer)
        #expect(
          refuses("graphics.textSize") {
            try document.page(size: Size(width: 60, height: 20)) {
              try $0.drawRepeated(block, x: 0, y: 0)
            }
          }, "\(size) \(producer)")
      }
      // The message names the size and the sizes expected.
      let message = GraphicsError.textSize(size: "\(size)").message
      #expect(message.contains("\(size) pt") && message.contains("0.01 to 4096 points"))
    }
    // The smallest and largest sizes draw.
    for size in [TextStyle.sizes.lowerBound, TextStyle.sizes.upperBound] {
      let image = try RasterImage(width: 60, height: 20)
      try image.draw {
        try $0.draw(
          TextBlock("Wolf", style: TextStyle(family: "DejaVu Sans", size: size)), x: 0, y: 0)
      }
    }
  }

  @Test("text scaled past FreeType's largest glyph is refused, and the font still draws after")
  func refusedScales() throws {
    let folder = TemporaryFolder()
    let large = TextBlock("Wolf", style: TextStyle(family: "DejaVu Sans", size: 1000))
    // 1000 pt at a scale of 65.535 is FreeType's largest glyph, 65,535 pixels; any axis cairo
    // scales a font by past it (a uniform scale, one axis, a rotation) is refused before cairo
    // asks FreeType for it.
    let cases: [(sx: Double, sy: Double, radians: Double, refused: Bool)] = [
      (65.535, 65.535, 0, false), (65.5356, 65.5356, 0, true), (1, 70, 0, true),
      (70, 1, 0, true), (50, 50, 0.7, false), (66, 66, 0.7, true), (-66, 66, 0, true),
    ]
    for (sx, sy, radians, refused) in cases {
      let image = try RasterImage(width: 40, height: 20)
      let draw = {
        try image.draw { canvas in
          canvas.rotate(radians)
          canvas.scale(sx, sy)
          try canvas.draw(large, x: 0, y: 0)
        }
      }
      if refused {
        #expect(refuses("graphics.textTooLarge", draw), "\(sx) x \(sy), \(radians) rad")
      } else {
        #expect(throws: Never.self, "\(sx) x \(sy), \(radians) rad") { try draw() }
      }
    }
    // On a PDF page cairo may draw a region as an image at its fallback resolution (300 ppi,
    // 300/72 device pixels a point): there the same text is refused at a quarter of the scale.
    for (scale, refused) in [(15.0, false), (15.8, true)] {
      let size = Size(width: 60, height: 20)
      let document = try VectorDocument(
        format: .pdf, size: size, path: folder.file("fallback.pdf"))
      if refused {
        #expect(
          refuses("graphics.textTooLarge") {
            try document.page(size: size) { canvas in
              canvas.scale(scale, scale)
              try canvas.draw(large, x: 0, y: 0)
            }
          }, "PDF at \(scale)")
      } else {
        #expect(throws: Never.self, "PDF at \(scale)") {
          try document.page(size: size) { canvas in
            canvas.scale(scale, scale)
            try canvas.draw(large, x: 0, y: 0)
          }
        }
      }
    }
    // A label or layer recorded once is refused where it is painted scaled past the limit, and
    // a layer whose own drawing goes past it where it is recorded.
    func page(_ body: (borrowing Canvas) throws -> Void) throws {
      let document = try VectorDocument(
        format: .pdf, size: Size(width: 60, height: 20), path: folder.file("scaled.pdf"),
        layerForms: true)
      try document.page(size: Size(width: 60, height: 20)) { canvas in
        // Recorded at scale 1 first, then painted scaled.
        try canvas.drawRepeated(large, x: 0, y: 0)
        try canvas.drawLayer(
          key: "inner scale 12", bounds: Rect(x: 0, y: 0, width: 60, height: 20), x: 0, y: 0
        ) {
          inner in
          inner.scale(12, 12)
          try inner.draw(large, x: 0, y: 0)
        }
        try body(canvas)
      }
    }
    try page { _ in }
    #expect(
      refuses("graphics.textTooLarge") {
        try page { canvas in
          canvas.scale(70, 70)
          try canvas.drawRepeated(large, x: 0, y: 0)
        }
      })
    #expect(
      refuses("graphics.textTooLarge") {
        try page { canvas in
          canvas.scale(2, 2)
          try canvas.drawLayer(
            key: "inner scale 12", bounds: Rect(x: 0, y: 0, width: 60, height: 20), x: 0, y: 0
          ) { _ in }
        }
      })
    #expect(
      refuses("graphics.textTooLarge") {
        try page { canvas in
          try canvas.drawLayer(
            key: "inner scale 70", bounds: Rect(x: 0, y: 0, width: 60, height: 20), x: 0, y: 0
          ) {
            inner in
            inner.scale(70, 70)
            try inner.draw(large, x: 0, y: 0)
          }
        }
      })
    // The fonts still draw, on an image and in both PDFs: nothing asked FreeType for too much.
    let small = TextBlock("Wolf 12", style: TextStyle(family: "DejaVu Sans", size: 12))
    let image = try RasterImage(width: 60, height: 20)
    try image.draw { try $0.draw(small, x: 2, y: 2) }
    #expect(image.rgbPixels().contains { $0 < 100 })
    for producer in [PDFProducer.cairo, .imprint] {
      let path = folder.file("after.pdf")
      let document = try VectorDocument(
        format: .pdf, size: Size(width: 60, height: 20), path: path, producer: producer)
      try document.page(size: Size(width: 60, height: 20)) { try $0.draw(small, x: 2, y: 2) }
      _ = try document.finish()
      #expect(try runTool("pdftotext", [path, "-"]).stdout.contains("Wolf 12"), "\(producer)")
    }
    let message = GraphicsError.textTooLarge(pixels: 70000, maximumPixels: 65535).message
    #expect(message.contains("70000 pixels") && message.contains("65535"))
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
