// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: Pango text layout over the private font library, one engine per task.

internal import CCairo
internal import CFontconfig
internal import CPango
import Foundation
import ImprintCore

/// Horizontal alignment of text in its box.
public enum TextAlignment: String, Sendable, Codable {
  /// Left edge.
  case left
  /// Centred.
  case center
  /// Right edge.
  case right
  /// Left for left-to-right text, right for right-to-left text (Arabic, Hebrew).
  case natural
}

/// How a run of text is set.
public struct TextStyle: Sendable, Hashable {
  /// The font family, as named in the bundled fonts (for example "DejaVu Sans").
  public var family: String
  /// The weight, 100 (thin) to 900 (black); 400 regular, 700 bold.
  public var weight: Int
  /// The font size in points: within `sizes` to be drawn (a canvas refuses another size with
  /// `GraphicsError.textSize`; a `TextMeasurer` measures it at the nearest size within).
  public var size: Double
  /// The text colour.
  public var color: Color
  /// The alignment inside the box.
  public var alignment: TextAlignment

  /// Creates a style.
  public init(
    family: String, weight: Int = 400, size: Double, color: Color = .black,
    alignment: TextAlignment = .left
  ) {
    self.family = family
    self.weight = weight
    self.size = size
    self.color = color
    self.alignment = alignment
  }

  /// The sizes text is set at, in points.
  ///
  /// FreeType sets no glyph larger than 65,535 pixels, and a font asked for a larger one stays
  /// broken for the whole process (cairo keeps the error on the font face, which every later
  /// size of that font shares). A size beyond these, or one that is not a number, would reach it.
  public static let sizes: ClosedRange<Double> = 0.01...4096

  /// Whether `size` is within `sizes`.
  public var hasUsableSize: Bool { Self.sizes.contains(size) }

  /// `size` within `sizes`: the nearest size within, the smallest for one that is not a number.
  var usableSize: Double {
    size.isNaN
      ? Self.sizes.lowerBound : min(max(size, Self.sizes.lowerBound), Self.sizes.upperBound)
  }
}

/// Where text that does not fit its lines is cut with an ellipsis.
public enum TextEllipsis: String, Sendable, Codable {
  /// Never cut (the text may be taller than asked).
  case none
  /// Cut at the end: "Alexandra Konstantinopou…".
  case end
  /// Cut in the middle (for handles): "@alexandra…poulos".
  case middle
}

/// Where wrapping may break a line.
public enum TextWrap: String, Sendable, Codable {
  /// Between words (Unicode line breaking: spaces, after hyphens, between CJK characters), and
  /// inside a word only when the word alone is wider than the line.
  case wordOrCharacter
  /// Between words only: a word wider than the line overflows it, which a fitter detects from
  /// the measured width.
  case word
}

/// How a paragraph's direction is chosen.
public enum TextDirection: String, Sendable, Codable {
  /// Left-to-right for `left`, `right` and `center`; from the text for `natural`.
  case byAlignment
  /// From the text's first strong character (Arabic, Hebrew and other right-to-left scripts
  /// right-to-left, the rest left-to-right) whatever the alignment, which stays on the side it
  /// names: for cards laid out right-to-left, whose labels and Latin handles share a side.
  case fromText
}

/// A paragraph to lay out: text, style and the box rules.
public struct TextBlock: Sendable, Hashable {
  /// The text (UTF-8, any script).
  public var text: String
  /// Font, size, colour and alignment.
  public var style: TextStyle
  /// The wrapping width in points; nil lays out one unbounded line per paragraph.
  public var width: Double?
  /// At most this many lines, cutting with `ellipsis` (needs `width`).
  public var maxLines: Int?
  /// Where to cut when `maxLines` is exceeded.
  public var ellipsis: TextEllipsis
  /// Where lines may break (needs `width`).
  public var wrap: TextWrap
  /// How the paragraph's direction is chosen.
  public var direction: TextDirection
  /// The block shaped where it was laid out (`TextMeasurer.prepareDrawing`), for the drawing
  /// to take without looking it up; not part of the block's identity (`==` and the hash leave
  /// it out).
  var prepared: PreparedText?

  /// Creates a block.
  public init(
    _ text: String, style: TextStyle, width: Double? = nil, maxLines: Int? = nil,
    ellipsis: TextEllipsis = .none, wrap: TextWrap = .wordOrCharacter,
    direction: TextDirection = .byAlignment
  ) {
    self.text = text
    self.style = style
    self.width = width
    self.maxLines = maxLines
    self.ellipsis = ellipsis
    self.wrap = wrap
    self.direction = direction
    prepared = nil
  }

  /// The shaped text prepared for this block from `library`, if any: none once any field of
  /// the block changed after it was prepared (its fields are public and mutable).
  func shaped(from library: FontLibrary) -> ShapedText? {
    guard let prepared, prepared.library === library, prepared.block == self else { return nil }
    return prepared.shaped
  }

  /// Equal when the texts are the same bytes, all else equal.
  ///
  /// Not merely canonically equivalent, as Swift's `==` on strings has it: Pango shapes the
  /// bytes it is given (a decomposed "é" is another cluster, and says so in a PDF's text), so
  /// a block measured or shaped once stands for the same bytes only.
  public static func == (a: TextBlock, b: TextBlock) -> Bool {
    a.style == b.style && a.width == b.width && a.maxLines == b.maxLines
      && a.ellipsis == b.ellipsis && a.wrap == b.wrap && a.direction == b.direction
      && sameBytes(a.text, b.text)
  }

  /// Hashes the text's and the family's bytes and the numbers.
  ///
  /// The enumerations are left to `==`: hashing one hashes its raw string, which made five
  /// strings to hash a block.
  public func hash(into hasher: inout Hasher) {
    Self.combineBytes(of: text, into: &hasher)
    Self.combineBytes(of: style.family, into: &hasher)
    hasher.combine(style.weight)
    hasher.combine(style.size)
    hasher.combine(style.color)
    hasher.combine(width)
    hasher.combine(maxLines)
  }

  /// Combines the UTF-8 bytes of `text` and their count into `hasher`.
  private static func combineBytes(of text: String, into hasher: inout Hasher) {
    let hashed: Void? = text.utf8.withContiguousStorageIfAvailable {
      hasher.combine(bytes: UnsafeRawBufferPointer($0))
    }
    if hashed == nil {
      for byte in text.utf8 { hasher.combine(byte) }
    }
    hasher.combine(text.utf8.count)
  }
}

/// A block's shaped text, the library its fonts are from (kept alive with it, so that its
/// identity is never another library's) and the block as it was shaped.
final class PreparedText: Sendable {
  let library: FontLibrary
  let shaped: ShapedText
  let block: TextBlock

  init(library: FontLibrary, shaped: ShapedText, block: TextBlock) {
    self.library = library
    self.shaped = shaped
    var block = block
    block.prepared = nil
    self.block = block
  }
}

/// Whether `a` and `b` hold the same UTF-8 bytes.
private func sameBytes(_ a: String, _ b: String) -> Bool {
  guard a.utf8.count == b.utf8.count else { return false }
  var a = a
  var b = b
  return a.withUTF8 { first in
    b.withUTF8 { second in
      guard let x = first.baseAddress, let y = second.baseAddress else { return true }
      return memcmp(x, y, first.count) == 0
    }
  }
}

/// The measured extent of laid-out text.
public struct TextMetrics: Sendable, Equatable {
  /// The logical width of the widest line, in points.
  public var width: Double
  /// The logical height of all lines, in points.
  public var height: Double
  /// The number of lines after wrapping.
  public var lineCount: Int
  /// Characters no loaded font covers (each would render as an empty box).
  public var unknownGlyphs: Int
  /// Whether an ellipsis replaced part of the text.
  public var isEllipsized: Bool = false
}

/// One run of glyphs as Pango shaped it: one font, one direction, one language.
package struct ShapedRun: Sendable, Equatable {
  /// The font file the glyphs are from.
  package var fontFile: String
  /// The face in `fontFile` (a collection such as Noto Sans CJK holds several).
  package var faceIndex: Int
  /// The characters of the run.
  package var text: String
  /// The text before and after the run in its paragraph, which HarfBuzz sees as context.
  package var before: String
  /// See `before`.
  package var after: String
  /// The language Pango gave HarfBuzz (BCP 47, lowercase).
  package var language: String
  /// Whether the run is set right to left.
  package var isRightToLeft: Bool
  /// The glyph ids, in visual order; `PANGO_GLYPH_UNKNOWN_FLAG` marks a missing character and
  /// `0x0FFFFFFF` (`PANGO_GLYPH_EMPTY`) an invisible one (a joiner).
  package var glyphs: [UInt32]
}

/// One Pango font map and context over the shared `FontLibrary`.
///
/// Not Sendable: create one inside each task (Pango font maps are not promised thread-safe).
/// Owns one reference to each; released when destroyed.
final class TextEngine {
  private let fontMap: UnsafeMutablePointer<PangoFontMap>
  private let context: OpaquePointer
  private let fallback: String
  /// The fonts this engine sets text with.
  let library: FontLibrary

  /// The engine of the calling thread for `library`, created on first use and kept.
  ///
  /// Creating a font map opens and parses every font again, which costs more than laying out a
  /// whole card; a thread's engine is never used by two threads, since layout and drawing are
  /// synchronous (no suspension point between getting the engine and finishing with it).
  static func forCurrentThread(_ library: FontLibrary) -> TextEngine {
    let engines: ThreadEngines
    if let raw = pthread_getspecific(threadEnginesKey) {
      engines = Unmanaged<ThreadEngines>.fromOpaque(raw).takeUnretainedValue()
    } else {
      engines = ThreadEngines()
      pthread_setspecific(threadEnginesKey, Unmanaged.passRetained(engines).toOpaque())
    }
    if let (_, engine) = engines.byLibrary[ObjectIdentifier(library)] { return engine }
    let engine = TextEngine(library: library, counted: false)
    engines.byLibrary[ObjectIdentifier(library)] = (library, engine)
    return engine
  }

  private let counted: Bool
  private var handleScope: LiveHandles.Scope?

  init(library: FontLibrary, counted: Bool = true) {
    self.counted = counted
    self.library = library
    fontMap = library.makeFontMap()
    fallback = library.fallbackFamilies.map { ", " + $0 }.joined()
    guard let context = pango_font_map_create_context(fontMap) else {
      preconditionFailure("pango_font_map_create_context returned NULL")
    }
    self.context = context
    pango_cairo_context_set_resolution(context, 72)
    // Fixed, not the process's locale: Latin text is English to Pango whatever $LANG says.
    pango_context_set_language(context, pango_language_from_string("en"))
    pango_context_set_round_glyph_positions(context, 0)
    let options = cairo_font_options_create()
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
    cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
    pango_cairo_context_set_font_options(context, options)
    cairo_font_options_destroy(options)
    // Per-thread engines live as long as their thread, by design; only others are counted.
    if counted { handleScope = LiveHandles.opened("PangoFontMap") }
  }

  deinit {
    if let (_, layout) = lastLayout { layout.release() }
    g_object_unref(UnsafeMutableRawPointer(context))
    g_object_unref(UnsafeMutableRawPointer(fontMap))
    if counted { LiveHandles.closed("PangoFontMap", in: handleScope) }
  }

  /// The size Pango sets every text at; a text of another size is scaled from it.
  ///
  /// Pango matches fonts (fontconfig sorts the whole library, on two threads it starts) and
  /// makes fonts and their metrics for every new size, weight and language it meets: a card
  /// batch's names shrunk in quarter points met dozens of sizes a run, each costing more than a
  /// card. Hinting is off and glyph positions are not rounded, so a layout scales exactly but
  /// for Pango's units (a 1024th of a point at this size).
  static let layoutSize = 64.0

  /// Creates a layout of `block`; the caller owns it (`TextLayout.release`).
  ///
  /// The style's family is followed by the library's fallback families (CJK, emoji), so that
  /// every script finds a font when one is loaded. The layout is set at `layoutSize`, its
  /// wrapping width scaled with it, for the style's `usableSize`.
  func makeLayout(_ block: TextBlock) -> TextLayout {
    guard let layout = pango_layout_new(context) else {
      preconditionFailure("pango_layout_new returned NULL")
    }
    let style = block.style
    let factor = style.usableSize / Self.layoutSize
    let description = pango_font_description_new()
    pango_font_description_set_family(description, style.family + fallback)
    pango_font_description_set_weight(description, PangoWeight(rawValue: UInt32(style.weight)))
    pango_font_description_set_absolute_size(description, Self.layoutSize * Double(PANGO_SCALE))
    pango_layout_set_font_description(layout, description)
    pango_font_description_free(description)
    pango_layout_set_text(layout, block.text, -1)
    ScriptLanguages.apply(to: layout, text: block.text)
    if let width = block.width {
      pango_layout_set_width(layout, Self.pangoUnits(width / factor))
      pango_layout_set_wrap(
        layout, block.wrap == .word ? PANGO_WRAP_WORD : PANGO_WRAP_WORD_CHAR)
      if let maxLines = block.maxLines, block.ellipsis != .none {
        pango_layout_set_height(layout, -Int32(clamping: max(1, maxLines)))
        pango_layout_set_ellipsize(
          layout, block.ellipsis == .end ? PANGO_ELLIPSIZE_END : PANGO_ELLIPSIZE_MIDDLE)
      }
    }
    align(layout, block)
    return TextLayout(pango: layout, factor: factor)
  }

  /// `points` in Pango units, within what a layout's width holds (a width that is not a
  /// number wraps nothing, as no width).
  private static func pangoUnits(_ points: Double) -> Int32 {
    let units = (points * Double(PANGO_SCALE)).rounded()
    guard units.isFinite else { return units > 0 ? Int32.max : -1 }
    return units >= Double(Int32.max) ? Int32.max : Int32(max(units, -1))
  }

  /// Sets the direction and alignment of `layout` for `block`.
  private func align(_ layout: OpaquePointer, _ block: TextBlock) {
    let style = block.style
    if block.direction == .fromText {
      // Auto-dir takes the direction from the first strong character and swaps left and right
      // for right-to-left paragraphs; swapping them back keeps the side the alignment names.
      pango_layout_set_auto_dir(layout, 1)
      let rightToLeft = pango_layout_get_direction(layout, 0) == PANGO_DIRECTION_RTL
      switch style.alignment {
      case .center: pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
      case .natural: pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
      case .left, .right:
        let right = (style.alignment == .right) != rightToLeft
        pango_layout_set_alignment(layout, right ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT)
      }
      return
    }
    switch style.alignment {
    case .left:
      pango_layout_set_auto_dir(layout, 0)
      pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
    case .center: pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
    case .right:
      pango_layout_set_auto_dir(layout, 0)
      pango_layout_set_alignment(layout, PANGO_ALIGN_RIGHT)
    case .natural:
      // Pango flips left to right for right-to-left paragraphs when auto-dir is on.
      pango_layout_set_auto_dir(layout, 1)
      pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
    }
  }

  /// Creates a layout of `text` in `style`, wrapped at `width` points when given.
  ///
  /// The caller owns the returned layout (`TextLayout.release`).
  func makeLayout(_ text: String, style: TextStyle, width: Double?) -> TextLayout {
    makeLayout(TextBlock(text, style: style, width: width))
  }

  /// Measures a layout in points of its block's size.
  func metrics(of layout: TextLayout) -> TextMetrics {
    var logical = PangoRectangle()
    pango_layout_get_extents(layout.pango, nil, &logical)
    return TextMetrics(
      width: Double(logical.width) * layout.unit, height: Double(logical.height) * layout.unit,
      lineCount: Int(pango_layout_get_line_count(layout.pango)),
      unknownGlyphs: Int(pango_layout_get_unknown_glyphs_count(layout.pango)),
      isEllipsized: pango_layout_is_ellipsized(layout.pango) != 0)
  }

  /// Measurements already made by this engine: the same block always measures the same (the
  /// fonts and context never change), and templates repeat their labels on every card.
  private var measured: [TextBlock: TextMetrics] = [:]

  /// The layout of the block measured last, kept for `prepareDrawing` (a fitted text is
  /// usually the last one measured).
  private var lastLayout: (TextBlock, TextLayout)?

  /// Measures `block`.
  func measure(_ block: TextBlock) -> TextMetrics {
    if let known = measured[block] { return known }
    let layout = makeLayout(block)
    if let (_, previous) = lastLayout { previous.release() }
    lastLayout = (block, layout)
    let result = metrics(of: layout)
    if measured.count >= 4096 { measured.removeAll(keepingCapacity: true) }
    measured[block] = result
    return result
  }

  /// Shapes `block` for drawing on another thread (`ShapedTextCache`), unless it already is.
  ///
  /// The layout of the block measured last is used when it is this one. Nil when the layout
  /// holds what only Pango draws (a character no font has, vertical text).
  func prepareDrawing(_ block: TextBlock) -> ShapedText? {
    let cache = ShapedTextCache.shared
    if let known = cache.text(block, library: library) { return known }
    var made: TextLayout?
    let layout: TextLayout
    if let (last, kept) = lastLayout, last == block {
      layout = kept
    } else {
      layout = makeLayout(block)
      made = layout
    }
    defer { made?.release() }
    guard let shaped = ShapedText.make(from: layout, metrics: metrics(of: layout)) else {
      return nil
    }
    // Kept without what an earlier preparation attached (the key would keep it alive).
    var key = block
    key.prepared = nil
    cache.keep(shaped, for: key, library: library)
    return shaped
  }

  /// Measures `text` set in `style`, wrapped at `width` points when given.
  func measure(_ text: String, style: TextStyle, width: Double?) -> TextMetrics {
    let layout = makeLayout(text, style: style, width: width)
    defer { layout.release() }
    return metrics(of: layout)
  }

  /// The runs of glyphs Pango shapes `block` into, in visual order, each with the font file and
  /// the text HarfBuzz was given: what `Canvas.draw` draws, for tests that shape the same text
  /// with `hb-shape`.
  func shapedRuns(_ block: TextBlock) -> [ShapedRun] {
    let layout = makeLayout(block)
    defer { layout.release() }
    let text = Array(block.text.utf8)
    guard let iterator = pango_layout_get_iter(layout.pango) else { return [] }
    defer { pango_layout_iter_free(iterator) }
    var runs: [ShapedRun] = []
    repeat {
      guard let run = pango_layout_iter_get_run_readonly(iterator) else { continue }
      let item = run.pointee.item.pointee
      let start = min(max(0, Int(item.offset)), text.count)
      let end = min(text.count, start + max(0, Int(item.length)))
      var file = ""
      var index: Int32 = 0
      if let font = item.analysis.font,
        let pattern = pango_fc_font_get_pattern(imprint_pango_fc_font(font))
      {
        var path: UnsafeMutablePointer<FcChar8>?
        if FcPatternGetString(pattern, FC_FILE, 0, &path) == FcResultMatch, let path {
          file = String(cString: path)
        }
        _ = FcPatternGetInteger(pattern, FC_INDEX, 0, &index)
      }
      let glyphs = run.pointee.glyphs.pointee
      runs.append(
        ShapedRun(
          fontFile: file, faceIndex: Int(index),
          text: String(decoding: text[start..<end], as: UTF8.self),
          before: String(decoding: text[..<start], as: UTF8.self),
          after: String(decoding: text[end...], as: UTF8.self),
          language: item.analysis.language.map { String(cString: pango_language_to_string($0)) }
            ?? "",
          isRightToLeft: item.analysis.level % 2 == 1,
          glyphs: (0..<Int(glyphs.num_glyphs)).map { glyphs.glyphs[$0].glyph }))
    } while pango_layout_iter_next_run(iterator) != 0
    return runs
  }
}

/// A Pango layout of a block, set at `TextEngine.layoutSize` and standing for the block's
/// size scaled by `factor`; owned by whoever made it.
struct TextLayout {
  /// The layout.
  let pango: OpaquePointer
  /// The block's size over the size the layout is set at.
  let factor: Double

  /// Points of the block per Pango unit of the layout.
  var unit: Double { factor / Double(PANGO_SCALE) }

  /// Releases the layout.
  func release() { g_object_unref(UnsafeMutableRawPointer(pango)) }
}

/// Measures text the way a `Canvas` will draw it, without a surface (for layout).
///
/// Not Sendable: create one per task. Owns one Pango font map and context.
public final class TextMeasurer {
  private let library: FontLibrary

  /// Creates a measurer over `fonts` (the bundled library when nil).
  ///
  /// - Throws: `GraphicsError.fontsUnavailable`.
  public init(fonts: FontLibrary? = nil) throws(GraphicsError) {
    let library: FontLibrary
    if let fonts { library = fonts } else { library = try FontLibrary.bundled() }
    self.library = library
  }

  /// Measures `block` with the calling thread's engine, at the style's size within
  /// `TextStyle.sizes` (the nearest one within for a size outside, which a canvas refuses).
  public func measure(_ block: TextBlock) -> TextMetrics {
    TextEngine.forCurrentThread(library).measure(block)
  }

  /// Shapes `block` once more for a PDF that draws it on another thread (see `ShapedText`);
  /// cheap right after `measure(block)`, which keeps the layout.
  ///
  /// - Returns: the block carrying its shaped text, which a canvas of the same library then
  ///   draws without looking it up (the block unchanged when it cannot be shaped so).
  @discardableResult
  public func prepareDrawing(_ block: TextBlock) -> TextBlock {
    var prepared = block
    prepared.prepared = TextEngine.forCurrentThread(library).prepareDrawing(block).map {
      PreparedText(library: library, shaped: $0, block: block)
    }
    return prepared
  }

  /// The glyph runs `block` is drawn with (see `TextEngine.shapedRuns`).
  package func shapedRuns(_ block: TextBlock) -> [ShapedRun] {
    TextEngine.forCurrentThread(library).shapedRuns(block)
  }
}

/// One thread's text engines, by font library.
///
/// The library is kept alive, so its identifier is never another library's. Found through a
/// pthread key: a thread dictionary look-up built a string key and went through NSDictionary on
/// every call.
private final class ThreadEngines {
  var byLibrary: [ObjectIdentifier: (FontLibrary, TextEngine)] = [:]
}

/// Releases a thread's engines when it exits.
private let threadEnginesKey: pthread_key_t = {
  var key = pthread_key_t()
  pthread_key_create(&key) { raw in
    if let raw { Unmanaged<ThreadEngines>.fromOpaque(raw).release() }
  }
  return key
}()
