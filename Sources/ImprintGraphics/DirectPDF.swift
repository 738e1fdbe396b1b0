// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: PDF pages written by Imprint itself (cards), without cairo's PDF surface:
// content streams, forms, images and fonts subset by HarfBuzz.
//
// Why: cairo 1.16 records each page, replays it into PDF operators (every number through
// printf), deflates with zlib and leaves repeated keys that need a second pass over the file: a
// third of a card's CPU (docs/benchmarks.md). A card page is a few fills, paths, clips, images
// and glyph runs, which this writes directly.

internal import CPango
import Foundation
import ImprintCore
import ImprintPDF

extension [UInt8] {
  @inline(__always) mutating func put(_ text: StaticString) {
    text.withUTF8Buffer { append(contentsOf: $0) }
  }

  @inline(__always) mutating func put(_ value: Double) { PDFSyntax.append(value, to: &self) }

  @inline(__always) mutating func put(_ value: Int) { PDFSyntax.append(value, to: &self) }

  /// `n 0 R`.
  mutating func reference(_ object: Int) {
    put(object)
    put(" 0 R")
  }

  /// Numbers separated by spaces, followed by a space.
  mutating func numbers(_ values: Double...) {
    for value in values {
      put(value)
      append(UInt8(ascii: " "))
    }
  }
}

/// A PDF document that Imprint writes itself, page by page (`VectorDocument` with
/// `producer: .imprint`).
///
/// Pages are written as they are finished; fonts (subset to the glyphs used) at the end. Each
/// distinct image, label and layer is written once and referred to by every page that shows
/// it. The same drawing gives the same bytes. Not Sendable: one document, one thread at a time.
final class DirectPDF {
  let file = PDFFileWriter()
  private let pagesObject: Int
  private var pageObjects: [Int] = []
  private let metadata: DocumentMetadata
  /// Whether `drawRepeated` writes labels as forms, and `drawLayer` layers.
  let recordsLabels: Bool
  let recordsLayers: Bool

  /// Fonts by HarfBuzz face, in the order first used.
  private var fontsByFace: [UInt: DirectFont] = [:]
  private var fonts: [DirectFont] = []
  /// A reference to each face `fontsByFace` names.
  private var faces: [OpaquePointer?] = []
  /// Images written, by what they show (`ImageKey`), with the bitmaps whose storage a key names.
  private var images: [ImageKey: (object: Int, keeping: Bitmap?)] = [:]
  /// Labels and layers written as forms.
  var labels: [TextBlock: Int] = [:]
  var layers: [AnyHashable: (object: Int, keeping: [any Sendable])] = [:]
  private let jpegs = JPEGNames()

  init(metadata: DocumentMetadata, recordsLabels: Bool, recordsLayers: Bool) {
    self.metadata = metadata
    self.recordsLabels = recordsLabels
    self.recordsLayers = recordsLayers
    pagesObject = file.reserve()
  }

  deinit {
    for face in faces { hb_face_destroy(face) }
  }

  /// The deflate level of each page's content: libdeflate's fastest.
  ///
  /// A page's content is
  /// what a card has of its own (its texts, its photo's frame), written once a card; the 1000
  /// peer cards' pages take 15 ms at level 1 against 29 ms at the file's level 6 (alone, one
  /// thread), 4 % more bytes (580 KB against 556 KB). Fonts, images and forms, written once a
  /// file, keep level 6.
  static let pageLevel = 1

  /// Writes a page of `size` from `content`.
  func addPage(size: Size, content: DirectContent) {
    let stream = file.reserve()
    let page = file.reserve()
    file.stream(stream, data: content.finished(), level: Self.pageLevel)
    file.object(page) { out in
      out.put("<</Type /Page /Parent ")
      out.reference(pagesObject)
      out.put("/MediaBox[0 0 ")
      out.numbers(size.width)
      out.put(size.height)
      out.put("]/Contents ")
      out.reference(stream)
      out.put("/Resources")
      content.appendResources(to: &out)
      out.put(">>")
    }
    pageObjects.append(page)
  }

  /// Writes `content` as a form XObject bounded by `bounds`; returns its object.
  func writeForm(_ content: DirectContent, bounds: Rect) -> Int {
    let object = file.reserve()
    file.stream(object, data: content.finished()) { out in
      out.put("/Type /XObject /Subtype /Form /BBox[")
      out.numbers(bounds.x, bounds.y, bounds.maxX)
      out.put(bounds.maxY)
      out.put("]/Resources")
      content.appendResources(to: &out)
    }
    return object
  }

  /// The font of `face` (an `hb_face_t`), its resource name's number.
  ///
  /// Each thread's text engine opens the fonts itself: faces of one file are one font here.
  func font(_ face: OpaquePointer) -> DirectFont {
    let key = UInt(bitPattern: face)
    if let known = fontsByFace[key] { return known }
    let file = DirectFont.FileKey(face)
    let font: DirectFont
    if let same = fonts.first(where: { $0.file == file }) {
      font = same
    } else {
      font = DirectFont(
        face: face, file: file, number: fonts.count + 1, object: self.file.reserve())
      fonts.append(font)
    }
    // Kept while the document is: a face's address is not reused while it is alive.
    fontsByFace[key] = font
    faces.append(hb_face_reference(face))
    return font
  }

  /// The image object for `bitmap` drawn smoothly or not: written at its first use, then
  /// referred to.
  func image(_ bitmap: Bitmap, smooth: Bool) -> Int {
    let key = ImageKey(bitmap, jpeg: bitmap.jpeg.map { jpegs.identity(of: $0) }, smooth: smooth)
    if let known = images[key] { return known.object }
    let object = DirectImage.write(bitmap, smooth: smooth, to: file)
    if images.count >= 64 { images = [:] }
    images[key] = (object, key.jpeg == nil ? bitmap : nil)
    return object
  }

  /// Writes the fonts, the page tree, the catalogue and the document information, then the
  /// cross-reference table.
  func finish() {
    for font in fonts { font.write(to: file) }
    file.object(pagesObject) { out in
      out.put("<</Type /Pages /Kids [")
      for (index, page) in pageObjects.enumerated() {
        if index > 0 { out.put(" ") }
        out.reference(page)
      }
      out.put("]/Count ")
      out.put(pageObjects.count)
      out.put(">>")
    }
    let catalog = file.reserve()
    file.object(catalog) { out in
      out.put("<</Type /Catalog /Pages ")
      out.reference(pagesObject)
      out.put(">>")
    }
    let info = file.reserve()
    file.object(info) { out in
      out.put("<<")
      // Control characters (a NUL in an account name) are no part of a title a reader shows.
      func shown(_ text: String) -> String {
        String(
          String.UnicodeScalarView(
            text.unicodeScalars.filter { $0.properties.generalCategory != .control }))
      }
      if let title = metadata.title {
        out.put("/Title")
        PDFSyntax.appendText(shown(title), to: &out)
      }
      out.put("/Creator")
      PDFSyntax.appendText(shown(metadata.creator), to: &out)
      out.put("/Producer")
      PDFSyntax.appendText("Imprint", to: &out)
      // fixedPDFDate as a PDF date: output never depends on the clock.
      out.put("/CreationDate(D:20000101000000Z)/ModDate(D:20000101000000Z)>>")
    }
    let complete = file.finish(root: catalog, info: info)
    precondition(complete, "a PDF object was reserved and never written")
  }
}

/// What an image object shows: a JPEG file by its content, other pixels by their storage (kept
/// alive by the document while the key is), and whether it is smoothed when scaled.
struct ImageKey: Hashable {
  let jpeg: String?
  let storage: UInt
  let width: Int
  let height: Int
  let smooth: Bool

  init(_ bitmap: Bitmap, jpeg: String?, smooth: Bool) {
    if let jpeg {
      self.jpeg = jpeg
      storage = 0
    } else {
      self.jpeg = nil
      storage = bitmap.pixels.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
    width = bitmap.width
    height = bitmap.height
    self.smooth = smooth
  }
}

/// A content stream being drawn (a page's or a form's) with the resources it uses, in the
/// canvas's coordinates: points, origin at the top left, y growing downwards.
///
/// Mirrors cairo's model for `Canvas`: a path is built, then filled, stroked or clipped with the
/// colour set last (a PDF path may not hold colour operators, so the path waits in `path`);
/// `save` and `restore` keep the colour as cairo's state does, and never touch the path.
final class DirectContent {
  unowned let document: DirectPDF
  private let ops = PDFBuffer(capacity: 4096)
  private let path = PDFBuffer()
  private var color = Color.black
  private var saved: [Color] = []
  /// Resources used, in first-use order: fonts by number, XObjects (images, forms) by object.
  private var fonts: [DirectFont] = []
  private var fontNumbers: Set<Int> = []
  /// XObjects (images and forms) used, each named `/X<its object number>`.
  private var xobjects: [Int] = []
  private var xobjectSet: Set<Int> = []

  /// Starts a content stream; `height` flips it (a page's: y grows downwards from its top),
  /// nil for a form drawn into flipped space already.
  init(document: DirectPDF, height: Double?) {
    self.document = document
    if let height {
      ops.put("1 0 0 -1 0 ")
      ops.put(height)
      ops.put(" cm\n")
    }
  }

  /// The stream's bytes.
  func finished() -> [UInt8] { ops.bytes }

  /// Appends ` << /Font << ... >> /XObject << ... >> >>`.
  func appendResources(to out: inout [UInt8]) {
    out.put("<<")
    if !fonts.isEmpty {
      out.put("/Font<<")
      for font in fonts {
        out.put("/F")
        out.put(font.number)
        out.put(" ")
        out.reference(font.object)
      }
      out.put(">>")
    }
    if !xobjects.isEmpty {
      out.put("/XObject<<")
      for object in xobjects {
        out.put("/X")
        out.put(object)
        out.put(" ")
        out.reference(object)
      }
      out.put(">>")
    }
    out.put(">>")
  }

  private func use(_ font: DirectFont) {
    if fontNumbers.insert(font.number).inserted { fonts.append(font) }
  }

  /// Paints the XObject `object` under the matrix `a b c d e f`.
  private func paint(_ object: Int, _ matrix: Double...) {
    if xobjectSet.insert(object).inserted { xobjects.append(object) }
    ops.put("q ")
    for value in matrix {
      ops.put(value)
      ops.append(UInt8(ascii: " "))
    }
    ops.put("cm /X")
    ops.put(object)
    ops.put(" Do Q\n")
  }

  // MARK: state

  func setColor(_ color: Color) { self.color = color }

  func save() {
    saved.append(color)
    ops.put("q\n")
  }

  func restore() {
    guard let last = saved.popLast() else { return }
    color = last
    ops.put("Q\n")
  }

  /// Appends `a b c d e f cm`, for what is drawn next.
  ///
  /// Unlike cairo, which fixes a path's points as they are added, a path still being built
  /// would follow the new matrix: callers (cards) transform only between paths.
  func transform(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double) {
    ops.numbers(a, b, c, d, e, f)
    ops.put("cm\n")
  }

  private func putColor(stroke: Bool) {
    ops.numbers(Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
    ops.put(stroke ? "RG\n" : "rg\n")
  }

  // MARK: paths

  func addRect(_ rect: Rect) {
    path.numbers(rect.x, rect.y, rect.width, rect.height)
    path.put("re\n")
  }

  private func move(_ x: Double, _ y: Double) {
    path.numbers(x, y)
    path.put("m\n")
  }

  private func line(_ x: Double, _ y: Double) {
    path.numbers(x, y)
    path.put("l\n")
  }

  private func curve(_ points: Double...) {
    for point in points {
      path.put(point)
      path.append(UInt8(ascii: " "))
    }
    path.put("c\n")
  }

  /// The control points' distance for a quarter circle of radius 1 (4/3 · tan(π/8)).
  private static let kappa = 0.552_284_749_830_793_4

  /// How far, in points, a glyph may stand from Pango's place for it before a TJ number moves
  /// it there.
  ///
  /// A hundredth of a point, a sixth of a pixel at 1200 dpi. `/W` holds each width
  /// rounded to a thousandth of the font size (readers such as MuPDF take no fractions there),
  /// so without it nearly every glyph took a number (a few thousandths of a point each, a
  /// fifth of a card's content stream); a kerning pair still takes one, and the error never
  /// grows along a line, since each glyph's place is reckoned from where the reader's pen is.
  static let penTolerance = 0.01

  /// A rectangle with rounded corners, as cairo's four arcs draw it (clockwise from the top
  /// edge's right end).
  func addRoundedRect(_ rect: Rect, radius: Double) {
    let r = min(radius, rect.width / 2, rect.height / 2)
    guard r > 0 else {
      addRect(rect)
      return
    }
    let k = Self.kappa * r
    move(rect.maxX - r, rect.y)
    curve(rect.maxX - r + k, rect.y, rect.maxX, rect.y + r - k, rect.maxX, rect.y + r)
    line(rect.maxX, rect.maxY - r)
    curve(rect.maxX, rect.maxY - r + k, rect.maxX - r + k, rect.maxY, rect.maxX - r, rect.maxY)
    line(rect.x + r, rect.maxY)
    curve(rect.x + r - k, rect.maxY, rect.x, rect.maxY - r + k, rect.x, rect.maxY - r)
    line(rect.x, rect.y + r)
    curve(rect.x, rect.y + r - k, rect.x + r - k, rect.y, rect.x + r, rect.y)
    path.put("h\n")
  }

  /// The ellipse inscribed in `rect`, from its right end, clockwise on the page.
  func addEllipse(in rect: Rect) {
    let cx = rect.x + rect.width / 2
    let cy = rect.y + rect.height / 2
    let rx = rect.width / 2
    let ry = rect.height / 2
    let kx = Self.kappa * rx
    let ky = Self.kappa * ry
    move(cx + rx, cy)
    curve(cx + rx, cy + ky, cx + kx, cy + ry, cx, cy + ry)
    curve(cx - kx, cy + ry, cx - rx, cy + ky, cx - rx, cy)
    curve(cx - rx, cy - ky, cx - kx, cy - ry, cx, cy - ry)
    curve(cx + kx, cy - ry, cx + rx, cy - ky, cx + rx, cy)
    path.put("h\n")
  }

  func fill() {
    guard !path.isEmpty else { return }
    putColor(stroke: false)
    ops.append(contentsOf: path)
    ops.put("f\n")
    path.removeAll()
  }

  func clip() {
    // An empty path clips everything away, as in cairo.
    if path.isEmpty { path.put("0 0 0 0 re\n") }
    ops.append(contentsOf: path)
    ops.put("W n\n")
    path.removeAll()
  }

  func stroke(width: Double) {
    guard !path.isEmpty else { return }
    putColor(stroke: true)
    ops.put(width)
    ops.put(" w\n")
    ops.append(contentsOf: path)
    ops.put("S\n")
    path.removeAll()
  }

  func line(from: (Double, Double), to: (Double, Double), width: Double) {
    path.removeAll()
    move(from.0, from.1)
    line(to.0, to.1)
    stroke(width: width)
  }

  // MARK: images and forms

  /// Draws `bitmap` with its top-left corner at (`x`, `y`), `width` × `height` points.
  func draw(_ bitmap: Bitmap, x: Double, y: Double, width: Double, height: Double, smooth: Bool) {
    // The image's unit square, its first row at the top.
    paint(document.image(bitmap, smooth: smooth), width, 0, 0, -height, x, y + height)
  }

  /// Draws the form `object` with its origin at (`x`, `y`).
  func drawForm(_ object: Int, x: Double, y: Double) {
    paint(object, 1, 0, 0, 1, x, y)
  }

  // MARK: text

  /// Draws `text` with its layout's top-left corner at (`x`, `y`), in the current colour:
  /// each run's glyphs at the positions Pango gave them, with their text for extraction.
  func draw(_ text: ShapedText, x: Double, y: Double) {
    // Written into the stream held for the whole text: one exclusive access to it, not one
    // for every operator and glyph.
    let (began, emboldened) = writeGlyphs(text, x: x, y: y)
    // The rendering mode outlives the text object: back to fill alone for what follows.
    if emboldened { ops.put("0 Tr\n") }
    if began { ops.put("ET\n") }
    drawMissing(text, x: x, y: y)
  }

  /// Writes the glyph runs of `text` into `ops` (`draw`); whether a text object began, and
  /// whether its last run was emboldened.
  private func writeGlyphs(_ text: ShapedText, x: Double, y: Double)
    -> (began: Bool, emboldened: Bool)
  {
    let unit = text.unit
    var began = false
    var emboldened = false
    for run in text.runs {
      guard let face = run.face, !run.glyphs.isEmpty else { continue }
      if !began {
        putColor(stroke: false)
        ops.put("BT\n")
        began = true
      }
      let font = document.font(face)
      use(font)
      ops.put("/F")
      ops.put(font.number)
      ops.put(" ")
      ops.put(run.size)
      ops.put(" Tf\n")
      if run.emboldened || emboldened {
        // Synthetic bold as cairo's FreeType glyphs have it: outlines a 24th of the size
        // thicker, here stroked as well as filled.
        putColor(stroke: true)
        ops.put(run.emboldened ? 2 : 0)
        ops.put(" Tr ")
        ops.put(run.size / 24)
        ops.put(" w\n")
        emboldened = run.emboldened
      }
      let baseX = x + Double(run.x) * unit
      let baseY = y + Double(run.y) * unit
      let size = run.size
      // Where a reader's pen is after the last glyph shown (its place plus its `/W` width);
      // nil before the first, after a move or a span.
      var pen: Double?
      var lineY = Double.nan
      var open = false
      func show(_ index: Int) {
        let glyph = run.glyphs[index]
        let gx = baseX + Double(glyph.dx) * unit
        let gy = baseY + Double(glyph.dy) * unit
        // Where the reader places this glyph: at Pango's place, or where the pen is when that
        // is within `penTolerance` of it.
        var placed = gx
        if gy != lineY || pen == nil {
          if open { ops.put("]TJ\n") }
          ops.put("1 0 0 -1 ")
          ops.numbers(gx, gy)
          ops.put("Tm[")
          open = true
          lineY = gy
        } else if let pen {
          if abs(pen - gx) > Self.penTolerance {
            // TJ's numbers move left in thousandths of the font size.
            ops.put((pen - gx) * 1000 / size)
          } else {
            placed = pen
          }
        }
        let code = font.use(UInt32(truncatingIfNeeded: glyph.index))
        ops.put("<")
        ops.putHex(code)
        ops.put(">")
        pen = placed + font.width(code) * size / 1000
      }
      func close() {
        if open { ops.put("]TJ\n") }
        open = false
        pen = nil
      }
      var next = 0
      for span in run.spans where !span.glyphs.isEmpty && span.glyphs.upperBound > next {
        while next < span.glyphs.lowerBound {
          show(next)
          next += 1
        }
        let bytes = run.text[span.text.clamped(to: run.text.indices)]
        let first = UInt32(truncatingIfNeeded: run.glyphs[next].index)
        if span.glyphs.count == 1, !bytes.isEmpty, font.claim(first, text: bytes) {
          show(next)
        } else {
          // A cluster of several glyphs (a reordered matra), or a glyph whose text is another
          // elsewhere: its text said once for all of its glyphs.
          close()
          ops.put("/Span<</ActualText")
          var actual: [UInt8] = []
          PDFSyntax.appendText(
            String(decoding: bytes.map { UInt8(bitPattern: $0) }, as: UTF8.self), to: &actual)
          ops.append(contentsOf: actual)
          ops.put(">>BDC\n")
          for index in next..<span.glyphs.upperBound { show(index) }
          close()
          ops.put("EMC\n")
        }
        next = span.glyphs.upperBound
      }
      while next < run.glyphs.count {
        show(next)
        next += 1
      }
      if open { ops.put("]TJ\n") }
    }
    return (began, emboldened)
  }

  /// Characters no font has: an empty box each, where Pango draws its hex digits.
  private func drawMissing(_ text: ShapedText, x: Double, y: Double) {
    let unit = text.unit
    for box in text.missing {
      let left = x + Double(box.x) * unit
      let baseline = y + Double(box.y) * unit
      let width = Double(box.width) * unit
      addRect(
        Rect(
          x: left + width * 0.1, y: baseline - box.size * 0.75, width: width * 0.8,
          height: box.size * 0.75))
      stroke(width: max(0.3, box.size / 20))
    }
  }
}
