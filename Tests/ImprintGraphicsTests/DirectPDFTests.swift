// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: the PDFs Imprint writes itself (`PDFProducer.imprint`) against cairo's
// of the same drawing, read back with poppler (pdftoppm, pdftotext, pdffonts, pdfimages) and
// checked with qpdf.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintGraphics

/// A page drawn by every canvas call a card makes: fills, a rounded rectangle filled and
/// stroked, a photo in a circle, an image with transparency, a JPEG, a black-and-white code
/// drawn a pixel a module, texts in Latin, Arabic, Devanagari, Chinese, Korean and a symbol,
/// a label drawn as a form on both pages, a layer, lines, and a rotated text.
private func drawScene(_ producer: PDFProducer, path: String) throws {
  let size = Size(width: 320, height: 220)
  let document = try VectorDocument(
    format: .pdf, size: size, metadata: DocumentMetadata(title: "Scène ★\u{0}\u{7} test"),
    path: path,
    layerForms: true, producer: producer)
  let photo = gradient(width: 60, height: 80, alpha: false)
  let logo = gradient(width: 40, height: 40, alpha: true)
  let jpeg = try gradient(width: 32, height: 24, alpha: false).withJPEG(quality: 90)
  let code = checkerboard(modules: 21)
  for page in 0..<2 {
    try document.page(size: size) { canvas in
      try canvas.drawLayer(
        key: "layer", bounds: Rect(x: -1, y: -1, width: 322, height: 60), x: 0, y: 0
      ) { layer in
        layer.fill(
          Rect(x: 0, y: 0, width: 320, height: 40), color: Color(red: 30, green: 80, blue: 160))
        layer.line(
          from: (10, 50), to: (310, 50), width: 0.75, color: Color(red: 200, green: 200, blue: 200))
      }
      try canvas.drawRepeated(
        TextBlock(
          "Steem MEMBER",
          style: TextStyle(family: "DejaVu Sans", weight: 700, size: 9, color: .white)),
        x: 12, y: 14)
      canvas.save()
      canvas.addEllipse(in: Rect(x: 12, y: 60, width: 60, height: 60))
      canvas.clip()
      try canvas.draw(photo, in: Rect(x: 12, y: 60, width: 60, height: 60), fit: .cover)
      canvas.restore()
      canvas.addRoundedRect(Rect(x: 80, y: 60, width: 50, height: 30), radius: 6)
      canvas.setColor(Color(red: 240, green: 200, blue: 40))
      canvas.fill()
      canvas.addRoundedRect(Rect(x: 80, y: 60, width: 50, height: 30), radius: 6)
      canvas.stroke(width: 1.5, color: Color(red: 20, green: 20, blue: 20))
      try canvas.draw(logo, in: Rect(x: 140, y: 60, width: 40, height: 40), fit: .contain)
      try canvas.draw(jpeg, in: Rect(x: 190, y: 60, width: 48, height: 36), fit: .contain)
      try canvas.draw(
        code, in: Rect(x: 250, y: 60, width: 60, height: 60), fit: .contain, smooth: false)
      let texts: [(String, Int, Double)] = [
        (page == 0 ? "Nora Scott" : "Amélie Poulain", 700, 15),
        ("محمد بن عبد الله", 700, 12),
        ("अमित शर्मा", 400, 12),
        ("王小明 김민준", 400, 11),
        ("ff fi Ωμέγα ★", 400, 10),
      ]
      for (index, (text, weight, size)) in texts.enumerated() {
        try canvas.draw(
          TextBlock(
            text, style: TextStyle(family: "DejaVu Sans", weight: weight, size: size, color: .black)
          ),
          x: 12 + Double(index % 2) * 150, y: 130 + Double(index / 2) * 26)
      }
      canvas.save()
      canvas.translate(300, 210)
      canvas.rotate(-Double.pi / 2)
      try canvas.drawText("rotated", style: TextStyle(family: "DejaVu Sans", size: 8), x: 0, y: 0)
      canvas.restore()
    }
  }
  _ = try document.finish()
}

/// An opaque or half-transparent colour gradient.
private func gradient(width: Int, height: Int, alpha: Bool) -> Bitmap {
  var pixels: [UInt8] = []
  for y in 0..<height {
    for x in 0..<width {
      let a = alpha ? UInt8(255 * (x + 1) / width) : 255
      func channel(_ value: Int) -> UInt8 { UInt8(value * Int(a) / 255) }
      pixels += [channel(255 * y / height), channel(120), channel(255 * x / width), a]
    }
  }
  return Bitmap(width: width, height: height, pixels: pixels, hasAlpha: alpha)
}

/// A black-and-white checkerboard a pixel a module, like a QR code's bitmap.
private func checkerboard(modules: Int) -> Bitmap {
  var pixels: [UInt8] = []
  for y in 0..<modules {
    for x in 0..<modules {
      let value: UInt8 = (x + y) % 2 == 0 || x == 0 ? 0 : 255
      pixels += [value, value, value, 255]
    }
  }
  return Bitmap(width: modules, height: modules, pixels: pixels, hasAlpha: false)
}

/// A binary PGM's width and pixels (Ghostscript's comment line after the magic number
/// skipped); it has PPM's header otherwise.
private func greyImage(_ pgm: [UInt8]) throws -> (width: Int, pixels: [UInt8]) {
  var bytes = pgm
  if bytes.count > 3, bytes[3] == UInt8(ascii: "#"),
    let end = bytes[3...].firstIndex(of: UInt8(ascii: "\n"))
  {
    bytes.removeSubrange(3...end)
  }
  var header = bytes
  if header.count > 1 { header[1] = UInt8(ascii: "6") }
  let (width, height, offset) = try #require(ppmHeader(header))
  try #require(bytes.count >= offset + width * height)
  return (width, Array(bytes[offset..<(offset + width * height)]))
}

/// Every page of a two-page PDF as grey pixels at `dpi` (pdftoppm), with each page's width.
private func greyPages(_ pdf: String, dpi: Int) throws -> [(width: Int, pixels: [UInt8])] {
  try (1...2).map { page in
    let result = try runTool(
      "pdftoppm", ["-r", "\(dpi)", "-gray", "-f", "\(page)", "-l", "\(page)", "-singlefile", pdf])
    #expect(result.status == 0, "\(result.stderr)")
    return try greyImage(result.stdoutBytes)
  }
}

/// Every page of a two-page PDF as grey pixels at `dpi` drawn by Ghostscript, a second reader
/// (its own TrueType rasteriser).
private func ghostscriptPages(_ pdf: String, dpi: Int) throws -> [(width: Int, pixels: [UInt8])] {
  let folder = TemporaryFolder()
  let result = try runTool(
    "gs",
    [
      "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pgmraw", "-dTextAlphaBits=4",
      "-dGraphicsAlphaBits=4", "-r\(dpi)", "-o", folder.file("page-%d.pgm"), pdf,
    ])
  #expect(result.status == 0, "\(result.stderr)")
  return try (1...2).map { page in
    try greyImage([UInt8](Data(contentsOf: URL(fileURLWithPath: folder.file("page-\(page).pgm")))))
  }
}

/// Each pixel averaged with its eight neighbours: an edge moved by a fraction of a pixel (a
/// glyph placed a few thousandths of a point elsewhere) changes little, a missing or moved
/// shape a lot.
private func blurred(_ pixels: [UInt8], width: Int) -> [Int] {
  guard width > 0 else { return [] }
  let height = pixels.count / width
  var out = [Int](repeating: 0, count: pixels.count)
  for y in 0..<height {
    for x in 0..<width {
      var sum = 0
      for dy in -1...1 {
        for dx in -1...1 {
          let yy = min(max(y + dy, 0), height - 1)
          let xx = min(max(x + dx, 0), width - 1)
          sum += Int(pixels[yy * width + xx])
        }
      }
      out[y * width + x] = sum / 9
    }
  }
  return out
}

@Suite("The PDF writer of Imprint's own (cards)", .liveHandlesChecked)
struct DirectPDFTests {
  @Test("draws what cairo draws: the same pixels within an edge's antialiasing, the same text")
  func sameAsCairo() throws {
    let folder = TemporaryFolder()
    let cairo = folder.file("cairo.pdf")
    let own = folder.file("own.pdf")
    try drawScene(.cairo, path: cairo)
    try drawScene(.imprint, path: own)

    let check = try runTool("qpdf", ["--check", own])
    #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
    #expect(try pdfInfo(own)["Pages"] == "2")
    #expect(try pdfInfo(own)["Title"] == "Scène ★ test")
    #expect(try pdfInfo(own)["CreationDate"] == (try pdfInfo(cairo)["CreationDate"]))

    // Text as a reader extracts it, right-to-left and reordered scripts included.
    let text = try runTool("pdftotext", [own, "-"]).stdout
    #expect(text == (try runTool("pdftotext", [cairo, "-"]).stdout))
    for word in ["Nora", "Amélie", "محمد", "عبد", "अमित", "शर्मा", "王小明", "김민준", "Ωμέγα", "rotated"] {
      #expect(text.contains(word), "\(word) not in \(text)")
    }

    // Where each word starts: within a tenth of a point of cairo's (cairo rounds its glyph
    // positions; these are Pango's own). cairo places each Arabic glyph on its own, which
    // pdftotext then takes for a word of a letter: only words both have are compared.
    func words(_ pdf: String) throws -> [(text: String, x: Double, y: Double)] {
      try runTool("pdftotext", ["-bbox", pdf, "-"]).stdout.split(separator: "\n")
        .filter { $0.contains("<word ") }
        .compactMap { line in
          let parts = line.split(separator: "\"")
          guard parts.count >= 8, let x = Double(parts[1]), let y = Double(parts[3]),
            let close = parts[8].firstIndex(of: "<")
          else { return nil }
          return (String(parts[8].dropFirst().prefix(upTo: close)), x, y)
        }
    }
    let ownWords = try words(own)
    var next = 0
    var compared = 0
    for word in try words(cairo) {
      guard let found = ownWords[next...].firstIndex(where: { $0.text == word.text }) else {
        continue
      }
      let mine = ownWords[found]
      #expect(abs(mine.x - word.x) < 0.1 && abs(mine.y - word.y) < 0.1, "\(mine) against \(word)")
      next = found + 1
      compared += 1
    }
    #expect(compared >= 24, "\(compared) words compared")

    // The same pixels at 100 dpi, but for edges a fraction of a pixel apart, as poppler and as
    // Ghostscript draw them (each reads the embedded subset fonts with its own code).
    let popplerPairs = zip(try greyPages(own, dpi: 100), try greyPages(cairo, dpi: 100))
    let ghostscriptPairs = zip(
      try ghostscriptPages(own, dpi: 100), try ghostscriptPages(cairo, dpi: 100))
    // Ghostscript sets each glyph on the pixel grid: a glyph a few hundredths of a point away
    // (cairo's rounded positions) can move by a pixel, so it is allowed more edges.
    let pairs =
      popplerPairs.map { ($0.0, $0.1, 1000) } + ghostscriptPairs.map { ($0.0, $0.1, 200) }
    #expect(pairs.count == 4)
    for (mine, theirs, share) in pairs {
      #expect(mine.width == theirs.width && mine.pixels.count == theirs.pixels.count)
      guard mine.pixels.count == theirs.pixels.count else { continue }
      let a = blurred(mine.pixels, width: mine.width)
      let b = blurred(theirs.pixels, width: theirs.width)
      let far = zip(a, b).filter { abs($0 - $1) > 40 }.count
      let inkA = a.reduce(0) { $0 + 255 - $1 }
      let inkB = b.reduce(0) { $0 + 255 - $1 }
      #expect(far < a.count / share, "\(far) of \(a.count) pixels differ")
      #expect(abs(inkA - inkB) < inkB / 200, "ink \(inkA) against \(inkB)")
    }
  }

  @Test("embeds each font once, subset, with ToUnicode; images as a reader expects them")
  func resources() throws {
    let folder = TemporaryFolder()
    let own = folder.file("own.pdf")
    try drawScene(.imprint, path: own)
    let fonts = try runTool("pdffonts", [own]).stdout.split(separator: "\n").dropFirst(2)
    #expect(fonts.count >= 4)
    var names: Set<String> = []
    for line in fonts {
      let columns = line.split(separator: " ", omittingEmptySubsequences: true)
      #expect(line.contains("CID TrueType") && line.contains("Identity-H"), "\(line)")
      // emb, sub, uni.
      #expect(columns.suffix(5).prefix(3) == ["yes", "yes", "yes"], "\(line)")
      let name = String(columns[0])
      #expect(name.count > 7 && name.dropFirst(6).first == "+", "\(name)")
      names.insert(String(name.dropFirst(7)))
    }
    // One font a file, however many pages and forms use it.
    #expect(names.count == fonts.count, "\(fonts)")

    let images = try runTool("pdfimages", ["-list", own]).stdout.split(separator: "\n").dropFirst(2)
      .map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
    // page num type width height color comp bpc enc interp ...; each image once a page.
    let kinds = Set(images.map { [$0[2], $0[5], $0[7], $0[8], $0[9]] })
    #expect(kinds.contains(["image", "rgb", "8", "image", "yes"]))  // the photo
    #expect(kinds.contains(["smask", "gray", "8", "image", "yes"]))  // the logo's alpha
    #expect(kinds.contains(["image", "rgb", "8", "jpeg", "yes"]))  // the JPEG as it is
    #expect(kinds.contains(["image", "gray", "1", "image", "no"]))  // the code, sharp
    // Each image object is written once: the second page names the first's objects.
    let objects = images.map { $0[10] }
    #expect(objects.count == 10 && objects.prefix(5) == objects.suffix(5), "\(images)")

    // The label and the layer are forms written once for both pages.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: own))
    let text = String(decoding: bytes, as: UTF8.self)
    let forms = text.components(separatedBy: "/Subtype /Form").count - 1
    #expect(forms == 2)

    // A font's streams under 16 KB (every one here) are deflated at libdeflate's fastest level,
    // as their zlib headers say (FLEVEL 0).
    var streams = 0
    for key in ["/FontFile2 ", "/ToUnicode "] {
      for piece in text.components(separatedBy: key).dropFirst() {
        let number = try #require(piece.split(separator: " ").first.map(String.init))
        let raw = try runTool("qpdf", ["--show-object=\(number)", "--raw-stream-data", own])
          .stdoutBytes
        #expect(raw.count > 2 && raw.count < 16_384 && raw[1] >> 6 == 0, "\(key)\(number)")
        streams += 1
      }
    }
    #expect(streams == 2 * fonts.count)
  }

  @Test(
    "each glyph stands within a hundredth of a point of Pango's place, kerning kept, few TJ numbers",
    arguments: [6.5, 15, 48])
  func glyphPlaces(size: Double) throws {
    let folder = TemporaryFolder()
    let path = folder.file("places.pdf")
    let text = "AVATAR Wolf Yacht To Tea. The quick brown jumps over a lazy dog 0123456789 mmmm"
    let block = TextBlock(text, style: TextStyle(family: "DejaVu Sans", size: size, color: .black))
    let (x, y) = (10.37, 20.11)
    let page = Size(width: x + 60 * size, height: y + 3 * size)
    let document = try VectorDocument(format: .pdf, size: page, path: path, producer: .imprint)
    try document.page(size: page) { canvas in
      try canvas.draw(block, x: x, y: y)
    }
    _ = try document.finish()

    // Pango's places for the glyphs, from the same shaping the page was drawn from.
    let library = try FontLibrary.bundled()
    TextEngine(library: library).prepareDrawing(block)
    let shaped = try #require(ShapedTextCache.shared.text(block, library: library))
    // Pango's units, at the size the text was laid out at, in points of the block's size.
    let places = shaped.runs.flatMap { run in
      run.glyphs.map { x + Double(run.x + $0.dx) * shaped.unit }
    }

    // Where a reader puts each character: MuPDF's own text extraction, its origins.
    let stext = try runTool("mutool", ["draw", "-F", "stext", "-o", "-", path, "1"])
    #expect(stext.status == 0, "\(stext.stderr)")
    let origins = stext.stdout.split(separator: "\n").filter { $0.contains("<char ") }.compactMap {
      line -> Double? in
      guard let start = line.range(of: " x=\"") else { return nil }
      return Double(line[start.upperBound...].prefix { $0 != "\"" })
    }
    #expect(origins.count == text.count && places.count == text.count)
    var worst = 0.0
    for (origin, place) in zip(origins, places) { worst = max(worst, abs(origin - place)) }
    // MuPDF prints six significant digits: a ten-thousandth of a point here.
    #expect(worst <= DirectContent.penTolerance + 0.0005, "a glyph \(worst) pt from Pango's place")
    // Kerning moves glyphs by far more than the tolerance: A's advance before V, as HarfBuzz's
    // own hb-shape gives it, is shorter than its advance alone, and the page keeps it.
    func advanceOfA(before next: String) throws -> Double {
      let shaped = try runTool(
        "hb-shape",
        [
          "--font-size=1000", "--output-format=json", "--no-glyph-names",
          repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/dejavu/DejaVuSans.ttf",
          "A" + next,
        ])
      let glyphs = try JSONSerialization.jsonObject(with: Data(shaped.stdout.utf8))
      return try #require(((glyphs as? [[String: Any]])?.first?["ax"] as? NSNumber)?.doubleValue)
    }
    let kerned = try advanceOfA(before: "V")
    #expect(try advanceOfA(before: "") - kerned >= 20)
    #expect(origins.count > 2)
    if origins.count > 2 {
      let drawn = origins[1] - origins[0]
      #expect(abs(drawn - kerned * size / 1000) <= DirectContent.penTolerance + 0.002)
    }

    // The page's content is deflated at libdeflate's fastest level (its zlib header says so).
    // `qpdf --show-pages`: "page 1: 4 0 R", "  content:", "    3 0 R".
    let pages = try runTool("qpdf", ["--show-pages", path]).stdout.split(separator: "\n")
    let label = try #require(pages.firstIndex { $0.contains("content:") })
    let contents = try #require(
      pages.dropFirst(label + 1).first?.split(separator: " ").first.map(String.init))
    let raw = try runTool("qpdf", ["--show-object=\(contents)", "--raw-stream-data", path])
    #expect(raw.stdoutBytes.count > 2 && raw.stdoutBytes[1] >> 6 == 0)

    // The content's TJ arrays: a number only where a glyph would otherwise stand too far away
    // (the kerning pairs and a few more), not one a glyph as the widths' rounding once asked.
    let qdf = folder.file("qdf.pdf")
    #expect(try runTool("qpdf", ["--qdf", "--object-streams=disable", path, qdf]).status == 0)
    let content = String(decoding: try Data(contentsOf: URL(fileURLWithPath: qdf)), as: UTF8.self)
    let arrays = content.split(separator: "\n").filter { $0.hasSuffix("]TJ") }
    // A number stands between a string's '>' and the next '<' (or the array's end).
    let numbers = arrays.map { line in
      line.split(separator: ">").dropFirst().filter { piece in
        Double(piece.prefix { $0 != "<" && $0 != "]" }) != nil
      }.count
    }.reduce(0, +)
    // `/W` holds whole thousandths of an em (as cairo's; MuPDF reads no fractions there), up to
    // 0.024 pt off a glyph at 48 pt: large text still takes a number every other glyph or so.
    let most = size <= 15 ? text.count / 4 : text.count * 2 / 3
    #expect(!arrays.isEmpty && numbers >= 4 && numbers <= most, "\(numbers) numbers")
  }

  @Test(
    "codes in first-use order: no CIDToGIDMap after this package's subsetter, two bytes a code after hb-subset's or none, every way drawn and extracted alike"
  )
  func codes() throws {
    let folder = TemporaryFolder()
    var pages: [DirectFont.Subsetter: [[UInt8]]] = [:]
    var texts: [DirectFont.Subsetter: String] = [:]
    for subsetter in [DirectFont.Subsetter.own, .harfBuzz, .wholeFont] {
      let path = folder.file("\(subsetter).pdf")
      try DirectFont.$subsetter.withValue(subsetter) { try drawScene(.imprint, path: path) }
      #expect(try runTool("qpdf", ["--check", path]).status == 0)
      texts[subsetter] = try runTool("pdftotext", ["-layout", path, "-"]).stdout
      let prefix = folder.file("\(subsetter)")
      #expect(try runTool("pdftoppm", ["-r", "96", "-png", path, prefix]).status == 0)
      pages[subsetter] = try ["1", "2"].map {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: prefix + "-\($0).png")))
      }

      // Each CIDFont: its /W, one run from code 0, and its map.
      let qdf = folder.file("\(subsetter)-qdf.pdf")
      #expect(try runTool("qpdf", ["--qdf", "--object-streams=disable", path, qdf]).status == 0)
      let file = String(decoding: try Data(contentsOf: URL(fileURLWithPath: qdf)), as: UTF8.self)
      let objects = file.components(separatedBy: "\nendobj")
      let cidFonts = objects.filter { $0.contains("/Subtype /CIDFontType2") }
      #expect(cidFonts.count >= 4)
      var mostCodes = 0
      for font in cidFonts {
        let widths = try #require(font.range(of: "/W [\n")).upperBound
        let run = font[widths...].prefix { $0 != "]" }
        let entries = run.split(whereSeparator: \.isWhitespace)
        #expect(entries.first == "0" && entries.dropFirst().first == "[", "\(run)")
        let codes = entries.count - 2
        mostCodes = max(mostCodes, codes)
        let map = try #require(font.range(of: "/CIDToGIDMap ")).upperBound
        let target = font[map...].prefix { $0 != "\n" }
        if subsetter == .own {
          #expect(target == "/Identity", "\(target)")
        } else {
          // A stream of two bytes a code, each code a different glyph (code 0: glyph 0).
          let number = try #require(target.split(separator: " ").first.map(String.init))
          let data = try runTool(
            "qpdf", ["--show-object=\(number)", "--filtered-stream-data", qdf]
          )
          .stdoutBytes
          #expect(data.count == 2 * codes)
          let glyphs = stride(from: 0, to: data.count - 1, by: 2).map {
            Int(data[$0]) << 8 | Int(data[$0 + 1])
          }
          #expect(glyphs.first == 0 && Set(glyphs).count == glyphs.count, "\(glyphs)")
        }
      }
      // The scene's fonts show a few dozen glyphs each; by glyph id, its Arabic, Devanagari
      // and Han codes would be in the thousands.
      #expect(mostCodes > 10 && mostCodes < 200)
      let shown = file.split(separator: "\n").filter { $0.hasSuffix("TJ") }.flatMap { line in
        line.split(separator: "<").dropFirst().compactMap {
          Int($0.prefix { $0 != ">" }, radix: 16)
        }
      }
      #expect(!shown.isEmpty && shown.allSatisfy { $0 < mostCodes }, "\(shown.max() ?? -1)")
    }
    #expect(texts[.own]?.contains("Nora Scott") == true)
    #expect(texts[.harfBuzz] == texts[.own] && texts[.wholeFont] == texts[.own])
    #expect(pages[.harfBuzz] == pages[.own] && pages[.wholeFont] == pages[.own])
  }

  @Test(
    "glyphs no cluster gave text (an ellipsis) extract alike in a process's first PDF and after")
  func unmappedGlyphs() throws {
    let folder = TemporaryFolder()
    let block = TextBlock(
      "Evangeline Alexandra Marigold Montgomery-Whitfield",
      style: TextStyle(family: "DejaVu Sans", size: 12, color: .black), width: 120, maxLines: 1,
      ellipsis: .end)
    var extracted: [String] = []
    var maps: [[UInt8]] = []
    // The first walks the font's map (nothing kept yet), the second takes what it kept.
    for round in 0..<2 {
      if round == 0 { DirectFont.characters.withLock { $0 = [:] } }
      let path = folder.file("\(round).pdf")
      let page = Size(width: 200, height: 40)
      let document = try VectorDocument(format: .pdf, size: page, path: path, producer: .imprint)
      try document.page(size: page) { canvas in try canvas.draw(block, x: 5, y: 5) }
      _ = try document.finish()
      extracted.append(try runTool("pdftotext", [path, "-"]).stdout)
      let qdf = folder.file("\(round)-qdf.pdf")
      #expect(try runTool("qpdf", ["--qdf", "--object-streams=disable", path, qdf]).status == 0)
      let file = String(decoding: try Data(contentsOf: URL(fileURLWithPath: qdf)), as: UTF8.self)
      let number = try #require(
        file.components(separatedBy: "/ToUnicode ").dropFirst().first?.split(separator: " ").first)
      maps.append(
        try runTool("qpdf", ["--show-object=\(number)", "--filtered-stream-data", qdf])
          .stdoutBytes)
    }
    // The ellipsis stands for the text it cut (its /ActualText), so a reader extracts it all;
    // its glyph, in no cluster of its own, takes U+2026 from the font's map in ToUnicode.
    #expect(extracted[0].hasPrefix("Evangeline Alexandra Marigold Montgomery-Whitfield"))
    #expect(extracted[1] == extracted[0])
    #expect(String(decoding: maps[0], as: UTF8.self).contains("><2026>"))
    #expect(maps[1] == maps[0] && !maps[0].isEmpty)
  }

  @Test("the same drawing gives the same bytes")
  func deterministic() throws {
    let folder = TemporaryFolder()
    try drawScene(.imprint, path: folder.file("a.pdf"))
    try drawScene(.imprint, path: folder.file("b.pdf"))
    let a = try Data(contentsOf: URL(fileURLWithPath: folder.file("a.pdf")))
    let b = try Data(contentsOf: URL(fileURLWithPath: folder.file("b.pdf")))
    #expect(a == b && !a.isEmpty)
  }

  @Test("a font fontconfig emboldens is stroked as well as filled, and only its own text")
  func syntheticBold() throws {
    let folder = TemporaryFolder()
    // Debian's 90-synthetic.conf rule: a bold asked of a family without one is emboldened.
    let rule = folder.file("synthetic.conf")
    try Data(
      """
      <?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>
      <match target="font"><test name="weight" compare="less_eq"><const>medium</const></test>
      <test target="pattern" name="weight" compare="more_eq"><const>bold</const></test>
      <edit name="embolden" mode="assign"><bool>true</bool></edit>
      <edit name="weight" mode="assign"><const>bold</const></edit></match></fontconfig>
      """.utf8
    ).write(to: URL(fileURLWithPath: rule))
    let fonts = try FontLibrary(
      directories: [], files: ["/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"],
      rules: [rule])
    let path = folder.file("bold.pdf")
    let size = Size(width: 120, height: 60)
    let document = try VectorDocument(
      format: .pdf, size: size, fonts: fonts, path: path, producer: .imprint)
    func text(_ weight: Int) -> TextBlock {
      TextBlock("王小明", style: TextStyle(family: "Droid Sans Fallback", weight: weight, size: 16))
    }
    // Page 1: regular below; page 2: bold above, regular below.
    try document.page(size: size) { canvas in try canvas.draw(text(400), x: 5, y: 32) }
    try document.page(size: size) { canvas in
      try canvas.draw(text(700), x: 5, y: 5)
      try canvas.draw(text(400), x: 5, y: 32)
    }
    _ = try document.finish()
    #expect(try runTool("qpdf", ["--check", path]).status == 0)
    let pages = try greyPages(path, dpi: 100)
    let width = try #require(pages.first?.width)
    let half = 30 * 100 / 72 * width
    func ink(_ pixels: ArraySlice<UInt8>) -> Int { pixels.reduce(0) { $0 + 255 - Int($1) } }
    let regularBelow = ink(pages[0].pixels[half...])
    let boldAbove = ink(pages[1].pixels[..<half])
    let afterBold = ink(pages[1].pixels[half...])
    // The emboldened text has more ink than the same text regular; the text after it does not.
    #expect(boldAbove > regularBelow + regularBelow / 10, "\(boldAbove) against \(regularBelow)")
    #expect(
      abs(afterBold - regularBelow) < regularBelow / 100, "\(afterBold) against \(regularBelow)")
  }

  @Test("a character no font has is a box, the rest of its text drawn and extracted")
  func missingCharacter() throws {
    let folder = TemporaryFolder()
    let path = folder.file("missing.pdf")
    let size = Size(width: 200, height: 60)
    let document = try VectorDocument(format: .pdf, size: size, path: path, producer: .imprint)
    // U+F3A0 is a private-use character: no bundled font has it. Page 1 without it, page 2
    // with it.
    for text in ["abcd", "ab\u{F3A0}cd"] {
      try document.page(size: size) { canvas in
        try canvas.draw(
          TextBlock(text, style: TextStyle(family: "DejaVu Sans", size: 20)), x: 10, y: 10)
      }
    }
    _ = try document.finish()
    #expect(try runTool("qpdf", ["--check", path]).status == 0)
    let text = try runTool("pdftotext", [path, "-"]).stdout
    #expect(
      text.components(separatedBy: "ab").count == 3 && text.components(separatedBy: "cd").count == 3
    )
    let pages = try greyPages(path, dpi: 72)
    let ink = pages.map { page in page.pixels.reduce(0) { $0 + 255 - Int($1) } }
    // The box's outline adds ink (a fifth of four letters' at least).
    #expect(ink.count == 2 && ink[1] > ink[0] + ink[0] / 5, "\(ink)")
  }
}
