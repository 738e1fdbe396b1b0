// SPDX-License-Identifier: Apache-2.0
// ImprintCards: a template side resolved for one profile: fitted text, photo, QR matrix, shapes.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR

/// A card side.
public enum CardFace: String, Sendable, Codable, CaseIterable {
  /// The front (photo, name).
  case front
  /// The back (reputation, followers, QR).
  case back
}

/// One element of a side after layout; boxes are in millimetres from the trim's top-left corner.
public enum LaidOutItem: Sendable {
  /// A filled rectangle behind everything, to the bleed edge.
  case background(Color, Box)
  /// A picture covering the whole bleed box.
  case backgroundImage(Bitmap, Box)
  /// Fitted text: the block (size, width, lines, ellipsis) and where its top-left goes;
  /// `repeated` when every card of the design shows it (a label with no field, or only the
  /// platform), so that a PDF can set it once for all of them.
  case text(TextBlock, box: Box, top: Double, metrics: TextMetrics, repeated: Bool)
  /// The photo.
  case photo(Bitmap, PhotoElement)
  /// A QR code: the symbol and the element's box.
  case qr(QRMatrix, QRElement)
  /// A rectangle (bleed applied).
  case rect(RectElement)
  /// A line.
  case line(LineElement)
  /// An image file.
  case image(Bitmap, ImageElement)
}

/// The result of laying out a side.
public struct CardLayout: Sendable {
  /// Which side.
  public var face: CardFace
  /// The items, bottom first.
  public var items: [LaidOutItem]

  /// A structural summary for golden tests: kinds, boxes (0.01 mm), texts and font sizes.
  public var summary: [[String: String]] {
    func box(_ b: Box) -> String {
      [b.x, b.y, b.width, b.height].map { String(format: "%.2f", $0) }.joined(separator: " ")
    }
    return items.map { item in
      switch item {
      case .background(let color, let b): ["kind": "background", "color": color.hex, "box": box(b)]
      case .backgroundImage(_, let b): ["kind": "backgroundImage", "box": box(b)]
      case .text(let block, let b, _, let metrics, _):
        [
          "kind": "text", "box": box(b), "text": block.text,
          "size": String(format: "%.2f", block.style.size), "lines": "\(metrics.lineCount)",
          "ellipsized": "\(metrics.isEllipsized)",
        ]
      case .photo(let bitmap, let element):
        ["kind": "photo", "box": box(element.box), "pixels": "\(bitmap.width)x\(bitmap.height)"]
      case .qr(let matrix, let element):
        [
          "kind": "qr",
          "box": box(Box(x: element.x, y: element.y, width: element.size, height: element.size)),
          "version": "\(matrix.version)", "level": matrix.level.rawValue,
        ]
      case .rect(let rect): ["kind": "rect", "box": box(rect.box)]
      case .line(let line):
        [
          "kind": "line",
          "box": box(
            Box(x: line.x1, y: line.y1, width: line.x2 - line.x1, height: line.y2 - line.y1)),
        ]
      case .image(_, let element): ["kind": "image", "box": box(element.box)]
      }
    }
  }
}

/// Lays out template sides for profiles; holds one text measurer, so create one per task.
public final class CardLayoutEngine {
  private let measurer: TextMeasurer
  /// Allow characters no font covers (reported as warnings instead of errors).
  public var allowMissingGlyphs = false
  /// Warnings of the last layouts (missing glyphs when allowed, ellipsized text).
  public private(set) var warnings: [String] = []

  /// Creates an engine over the bundled fonts.
  ///
  /// - Throws: `GraphicsError.fontsUnavailable`.
  public init(fonts: FontLibrary? = nil) throws(GraphicsError) {
    measurer = try TextMeasurer(fonts: fonts)
    self.fonts = fonts
  }

  private let fonts: FontLibrary?
  /// The paragraph direction of the side being laid out (`fromText` on right-to-left cards).
  private var direction = TextDirection.byAlignment
  /// Whether fitted texts are shaped for a PDF drawn on another thread (`jpeg` layouts).
  private var shapesForDrawing = false

  /// `U+0E01 (Thai)` for each character of `text` no loaded font covers (for the error only).
  private func uncovered(_ text: String) -> [String] {
    guard let library = fonts ?? (try? FontLibrary.bundled()) else { return [] }
    return library.uncoveredCharacters(in: text).prefix(8).map { scalar in
      let code = String(format: "U+%04X", scalar.value)
      return UnicodeBlocks.name(of: scalar).map { "\(code) (\($0))" } ?? code
    }
  }

  /// Lays out one side of `template` for `profile`.
  ///
  /// - Parameters:
  ///   - face: the side.
  ///   - template: the design.
  ///   - profile: the account.
  ///   - photo: the account's photo (or the placeholder).
  ///   - photoID: names `photo` in `ImageCache.shared`, whose prepared versions are then reused.
  ///   - images: decoded template images by absolute path (background and image elements).
  ///   - dpi: the resolution photos are prepared for (cropped and scaled down to their box).
  ///   - jpeg: give photos JPEG data, so that PDF output embeds them without recompressing.
  ///   - locale: the card's language (the template's own when nil): labels translated, dates
  ///     and numbers formatted, and right-to-left languages laid out mirrored.
  /// - Returns: the side's items, bottom first.
  /// - Throws: `CardError.missingGlyphs` (unless allowed), `QRError.payloadTooLarge` for a QR
  ///   payload that does not fit; `CardError.unknownLocale` or `.untranslatedLocale` when the
  ///   template's own locale cannot be resolved.
  public func layout(
    _ face: CardFace, of template: CardTemplate, profile: Profile, photo: Bitmap,
    photoID: UInt64? = nil, images: [String: Bitmap], dpi: Double = 300, jpeg: Bool = false,
    locale: CardLocale? = nil
  ) throws -> CardLayout {
    let locale = try locale ?? CardLocale.resolve(nil, template: template)
    return try layout(
      face, of: template, fields: profile.fields(in: locale), photo: photo, photoID: photoID,
      images: images, dpi: dpi, jpeg: jpeg, locale: locale)
  }

  /// Lays out one side from the profile's `fields` in `locale` (`Profile.fields(in:)`, written
  /// once for both sides of a card).
  func layout(
    _ face: CardFace, of template: CardTemplate, fields: [String: String], photo: Bitmap,
    photoID: UInt64?, images: [String: Bitmap], dpi: Double, jpeg: Bool, locale: CardLocale
  ) throws -> CardLayout {
    let side = face == .front ? template.front : template.back
    direction = locale.isRightToLeft ? .fromText : .byAlignment
    shapesForDrawing = jpeg
    let elements =
      locale.isRightToLeft
      ? side.elements.map { $0.mirrored(width: template.width) } : side.elements
    let bleedBox = Box(
      x: -template.bleed, y: -template.bleed, width: template.width + 2 * template.bleed,
      height: template.height + 2 * template.bleed)
    var items: [LaidOutItem] = [.background(side.background, bleedBox)]
    if let path = side.backgroundImage, let bitmap = images[path] {
      items.append(.backgroundImage(bitmap, bleedBox))
    }
    for element in elements {
      switch element {
      case .text(let text):
        if let when = text.when, (fields[when] ?? "").isEmpty { continue }
        guard let filled = fill(locale.translate(text.text), with: fields) else { continue }
        let repeated = placeholders(text.text).allSatisfy { $0 == "platform" }
        items.append(try fit(filled, text, repeated: repeated))
      case .photo(let element):
        let prepared = try ImageCache.shared.prepared(
          photo, id: photoID, width: Int((element.box.width / 25.4 * dpi).rounded(.up)),
          height: Int((element.box.height / 25.4 * dpi).rounded(.up)), fit: element.fit,
          jpeg: jpeg)
        items.append(.photo(prepared, element))
      case .qr(let element):
        guard let data = fill(element.data, with: fields) else { continue }
        items.append(.qr(try QRMatrix.encode(Array(data.utf8), level: element.level), element))
      case .rect(var rect):
        if rect.bleed { rect.box = extendToBleed(rect.box, template) }
        items.append(.rect(rect))
      case .line(let line):
        items.append(.line(line))
      case .image(let element):
        if let bitmap = images[element.path] { items.append(.image(bitmap, element)) }
      }
    }
    return CardLayout(face: face, items: items)
  }

  private func extendToBleed(_ box: Box, _ template: CardTemplate) -> Box {
    let epsilon = 0.01
    var left = box.x
    var top = box.y
    var right = box.x + box.width
    var bottom = box.y + box.height
    if left <= epsilon { left = -template.bleed }
    if top <= epsilon { top = -template.bleed }
    if right >= template.width - epsilon { right = template.width + template.bleed }
    if bottom >= template.height - epsilon { bottom = template.height + template.bleed }
    return Box(x: left, y: top, width: right - left, height: bottom - top)
  }

  /// A layout with more lines is chosen over one with fewer only when it sets the text at least
  /// this much larger: a line break costs some reading, so a name that shrinks a little stays on
  /// one line, and one that would shrink a lot is set larger on two.
  static let wrapGain = 1.1

  /// Fits text into its element's box.
  ///
  /// The policy (templates/README.md, "Text fitting"): (1) the largest size from `size` down to
  /// `minSize` at which the text fits on one line; (2) the largest size at which it fits in at
  /// most 2, 3, … `maxLines` lines breaking only between words, taken when it is at least
  /// `wrapGain` times the size with fewer lines; (3) when no size fits so, the largest size at
  /// which it fits in `maxLines` lines breaking inside words too; (4) else `minSize`, as many
  /// lines as fit (at most `maxLines`), cut with an ellipsis. The box width is kept throughout,
  /// so alignment survives shrinking; text never overflows.
  func fit(_ text: String, _ element: TextElement, repeated: Bool = false) throws(CardError)
    -> LaidOutItem
  {
    let pt = 72 / 25.4
    let width = element.box.width * pt
    let height = element.box.height * pt
    func style(_ size: Double) -> TextStyle {
      TextStyle(
        family: element.font, weight: element.weight, size: size, color: element.color,
        alignment: element.align)
    }
    func candidate(_ size: Double, lines: Int) -> (TextBlock, TextMetrics) {
      let block = TextBlock(
        text, style: style(size), width: width, maxLines: lines, ellipsis: element.ellipsis,
        direction: direction)
      return (block, measurer.measure(block))
    }
    var chosen: (TextBlock, TextMetrics)?
    // Fits as it is at its size on one line (the common case): the box width only sets the
    // alignment. Measured as it is drawn, so that its layout is the one drawn (`shaped`); the
    // same answer as the natural width's test below, which decides when this one does not.
    let boxed = TextBlock(
      text, style: style(element.size), width: width, maxLines: 1, ellipsis: element.ellipsis,
      direction: direction)
    let asDrawn = measurer.measure(boxed)
    if asDrawn.lineCount == 1 && !asDrawn.isEllipsized && asDrawn.width <= width
      && asDrawn.height <= height + 0.01
    {
      return try placed(boxed, asDrawn, text, element, repeated: repeated)
    }
    // (1) One line, shrinking. A first guess from the natural width saves most iterations.
    let natural = measurer.measure(
      TextBlock(text, style: style(element.size), direction: direction))
    if natural.lineCount == 1 && natural.width <= width && natural.height <= height + 0.01 {
      chosen = (boxed, natural)
    }
    if chosen == nil && natural.lineCount == 1 {
      var size = min(element.size, element.size * width / max(natural.width, 0.001))
      size = (size * 4).rounded(.down) / 4
      while size >= element.minSize {
        let (block, metrics) = candidate(size, lines: 1)
        if metrics.lineCount == 1 && !metrics.isEllipsized && metrics.width <= width + 0.01
          && metrics.height <= height + 0.01
        {
          chosen = (block, metrics)
          break
        }
        size -= 0.25
      }
    }
    // (2) More lines, breaking between words, when they set the text enough larger.
    if element.maxLines > 1 && chosen?.0.style.size != element.size {
      for lines in 2...element.maxLines {
        let needed = chosen.map { $0.0.style.size * Self.wrapGain } ?? element.minSize
        if let wrapped = largestFit(
          text, element, lines: lines, wrap: .word, atLeast: needed, natural: natural)
        {
          chosen = wrapped
        }
      }
    }
    // (3) Breaking inside words (a single word wider than the box), at the largest size.
    if chosen == nil && element.maxLines > 1 {
      chosen = largestFit(
        text, element, lines: element.maxLines, wrap: .wordOrCharacter, atLeast: element.minSize,
        natural: natural)
    }
    // (4) The smallest size, cut with an ellipsis to the most lines whose height fits (measured
    // on the text itself: its fonts may be taller than the template's).
    if chosen == nil {
      var lines = element.maxLines
      var cut = candidate(element.minSize, lines: lines)
      while lines > 1 && cut.1.height > height + 0.01 {
        lines -= 1
        cut = candidate(element.minSize, lines: lines)
      }
      chosen = cut
      warnings.append("'\(text)' does not fit its box and is cut with an ellipsis")
    }
    guard let (block, metrics) = chosen else { preconditionFailure("a candidate was chosen") }
    return try placed(block, metrics, text, element, repeated: repeated)
  }

  /// The fitted `block` placed in its element's box; missing glyphs checked.
  private func placed(
    _ block: TextBlock, _ metrics: TextMetrics, _ text: String, _ element: TextElement,
    repeated: Bool
  ) throws(CardError) -> LaidOutItem {
    let pt = 72 / 25.4
    if metrics.unknownGlyphs > 0 {
      if allowMissingGlyphs {
        warnings.append(
          "'\(text)' has \(metrics.unknownGlyphs) character(s) no bundled font can draw")
      } else {
        throw .missingGlyphs(
          field: element.text, text: text, count: metrics.unknownGlyphs,
          characters: uncovered(text))
      }
    }
    let textHeight = metrics.height / pt
    let top: Double =
      switch element.valign {
      case .top: element.box.y
      case .middle: element.box.y + (element.box.height - textHeight) / 2
      case .bottom: element.box.y + element.box.height - textHeight
      }
    let drawn = shapesForDrawing ? measurer.prepareDrawing(block) : block
    return .text(drawn, box: element.box, top: top, metrics: metrics, repeated: repeated)
  }

  /// The largest size on the quarter-point grid from `element.size` down to `atLeast` (and
  /// `element.minSize` itself) at which `text` fits the box in at most `lines` lines with no
  /// ellipsis, breaking lines as `wrap` allows; nil when none does.
  ///
  /// Whether a size fits is monotone in the size (every advance and the line height scale with
  /// it, and a greedy wrap never needs more lines at a smaller size), so the grid is searched
  /// from an estimate: the size at which the text's one-line width (`natural`, measured at
  /// `element.size`) fills `lines` lines, and its line height fills the box. Steps double away
  /// from the estimate until the answer is bracketed, then bisection: two to four measurements
  /// for a long name where bisection over the whole grid took six or seven. The estimate only
  /// picks where to start; the answer is the one bisection over the whole grid gives.
  private func largestFit(
    _ text: String, _ element: TextElement, lines: Int, wrap: TextWrap, atLeast low: Double,
    natural: TextMetrics
  ) -> (TextBlock, TextMetrics)? {
    let pt = 72 / 25.4
    let width = element.box.width * pt
    let height = element.box.height * pt
    var sizes: [Double] = []
    var size = element.size
    while size > element.minSize + 0.001 && size >= low - 0.001 {
      sizes.append(size)
      size -= 0.25
    }
    if element.minSize >= low - 0.001 { sizes.append(element.minSize) }
    guard let last = sizes.indices.last else { return nil }
    // The text engine keeps its measurements, so asking for an index twice measures once.
    func attempt(_ index: Int) -> (TextBlock, TextMetrics)? {
      let block = TextBlock(
        text,
        style: TextStyle(
          family: element.font, weight: element.weight, size: sizes[index], color: element.color,
          alignment: element.align),
        width: width, maxLines: lines, ellipsis: element.ellipsis, wrap: wrap,
        direction: direction)
      let metrics = measurer.measure(block)
      let fits =
        metrics.lineCount <= lines && !metrics.isEllipsized && metrics.width <= width + 0.01
        && metrics.height <= height + 0.01
      return fits ? (block, metrics) : nil
    }
    // Where to start: a line break wastes some of each line (0.9), and the lines' height must
    // fit the box.
    let estimate = min(
      element.size,
      element.size * Double(lines) * width * 0.9 / max(natural.width, 0.001),
      element.size * height / (Double(lines) * max(natural.height, 0.001)))
    let start = sizes.firstIndex { $0 <= estimate + 0.001 } ?? last
    // Bracket the first fitting index (sizes decrease, fitting is monotone): `upper` fits,
    // every index below `lower` does not.
    var lower = 0
    var upper: Int
    if attempt(start) != nil {
      upper = start
      var step = 1
      while upper > 0 {
        let probe = max(0, upper - step)
        if attempt(probe) != nil {
          upper = probe
          step *= 2
        } else {
          lower = probe + 1
          break
        }
      }
    } else {
      lower = start + 1
      var found: Int?
      var step = 1
      while lower <= last {
        let probe = min(last, lower - 1 + step)
        if attempt(probe) != nil {
          found = probe
          break
        }
        lower = probe + 1
        step *= 2
      }
      guard let found else { return nil }
      upper = found
    }
    while lower < upper {
      let middle = (lower + upper) / 2
      if attempt(middle) != nil { upper = middle } else { lower = middle + 1 }
    }
    return attempt(upper)
  }
}

extension Element {
  /// The element as a right-to-left card places it: its box mirrored about the card's vertical
  /// centre line, and text aligned to the other side (`natural` to the right).
  func mirrored(width: Double) -> Element {
    func flip(_ box: Box) -> Box {
      Box(x: width - box.x - box.width, y: box.y, width: box.width, height: box.height)
    }
    switch self {
    case .text(var text):
      text.box = flip(text.box)
      text.align =
        switch text.align {
        case .left, .natural: .right
        case .right: .left
        case .center: .center
        }
      return .text(text)
    case .photo(var photo):
      photo.box = flip(photo.box)
      return .photo(photo)
    case .qr(var qr):
      qr.x = width - qr.x - qr.size
      return .qr(qr)
    case .rect(var rect):
      rect.box = flip(rect.box)
      return .rect(rect)
    case .line(var line):
      (line.x1, line.x2) = (width - line.x1, width - line.x2)
      return .line(line)
    case .image(var image):
      image.box = flip(image.box)
      return .image(image)
    }
  }
}

/// The names of the Unicode blocks a card's text most often meets without a font, for messages.
enum UnicodeBlocks {
  private static let blocks: [(ClosedRange<UInt32>, String)] = [
    (0x0530...0x058F, "Armenian"), (0x0700...0x074F, "Syriac"), (0x0780...0x07BF, "Thaana"),
    (0x07C0...0x07FF, "NKo"), (0x0900...0x097F, "Devanagari"), (0x0980...0x09FF, "Bengali"),
    (0x0A00...0x0A7F, "Gurmukhi"), (0x0A80...0x0AFF, "Gujarati"), (0x0B00...0x0B7F, "Oriya"),
    (0x0B80...0x0BFF, "Tamil"), (0x0C00...0x0C7F, "Telugu"), (0x0C80...0x0CFF, "Kannada"),
    (0x0D00...0x0D7F, "Malayalam"), (0x0D80...0x0DFF, "Sinhala"), (0x0E00...0x0E7F, "Thai"),
    (0x0E80...0x0EFF, "Lao"), (0x0F00...0x0FFF, "Tibetan"), (0x1000...0x109F, "Myanmar"),
    (0x10A0...0x10FF, "Georgian"), (0x1100...0x11FF, "Hangul Jamo"), (0x1200...0x139F, "Ethiopic"),
    (0x13A0...0x13FF, "Cherokee"), (0x1400...0x167F, "Canadian Syllabics"),
    (0x1780...0x17FF, "Khmer"), (0x1800...0x18AF, "Mongolian"), (0x1E00...0x1EFF, "Latin"),
    (0x2000...0x2BFF, "symbols"), (0x2E80...0x9FFF, "CJK"), (0xA000...0xA4CF, "Yi"),
    (0xAC00...0xD7AF, "Hangul"), (0xE000...0xF8FF, "private use"), (0x1F000...0x1FAFF, "emoji"),
    (0x20000...0x3FFFF, "CJK"),
  ]

  static func name(of scalar: Unicode.Scalar) -> String? {
    blocks.first { $0.0.contains(scalar.value) }?.1
  }
}
