// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: Pango text layout over the private font library, one engine per task.

internal import CCairo
internal import CPango
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
  /// The font size in points.
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
}

/// One Pango font map and context over the shared `FontLibrary`.
///
/// Not Sendable: create one inside each task (Pango font maps are not promised thread-safe).
/// Owns one reference to each; released when destroyed.
final class TextEngine {
  private let fontMap: UnsafeMutablePointer<PangoFontMap>
  private let context: OpaquePointer

  init(library: FontLibrary) {
    fontMap = library.makeFontMap()
    guard let context = pango_font_map_create_context(fontMap) else {
      preconditionFailure("pango_font_map_create_context returned NULL")
    }
    self.context = context
    pango_cairo_context_set_resolution(context, 72)
    pango_context_set_round_glyph_positions(context, 0)
    let options = cairo_font_options_create()
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
    cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
    pango_cairo_context_set_font_options(context, options)
    cairo_font_options_destroy(options)
    LiveHandles.opened("PangoFontMap")
  }

  deinit {
    g_object_unref(UnsafeMutableRawPointer(context))
    g_object_unref(UnsafeMutableRawPointer(fontMap))
    LiveHandles.closed("PangoFontMap")
  }

  /// Creates a layout of `text` in `style`, wrapped at `width` points when given.
  ///
  /// The caller owns the returned layout (release with `g_object_unref`).
  func makeLayout(_ text: String, style: TextStyle, width: Double?) -> OpaquePointer {
    guard let layout = pango_layout_new(context) else {
      preconditionFailure("pango_layout_new returned NULL")
    }
    let description = pango_font_description_new()
    pango_font_description_set_family(description, style.family)
    pango_font_description_set_weight(description, PangoWeight(rawValue: UInt32(style.weight)))
    pango_font_description_set_absolute_size(description, style.size * Double(PANGO_SCALE))
    pango_layout_set_font_description(layout, description)
    pango_font_description_free(description)
    pango_layout_set_text(layout, text, -1)
    if let width {
      pango_layout_set_width(layout, Int32((width * Double(PANGO_SCALE)).rounded()))
      pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
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
      pango_layout_set_auto_dir(layout, 1)
      pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
    }
    return layout
  }

  /// Measures a layout in points.
  func metrics(of layout: OpaquePointer) -> TextMetrics {
    var ink = PangoRectangle()
    var logical = PangoRectangle()
    pango_layout_get_extents(layout, &ink, &logical)
    let scale = Double(PANGO_SCALE)
    return TextMetrics(
      width: Double(logical.width) / scale, height: Double(logical.height) / scale,
      lineCount: Int(pango_layout_get_line_count(layout)),
      unknownGlyphs: Int(pango_layout_get_unknown_glyphs_count(layout)))
  }

  /// Measures `text` set in `style`, wrapped at `width` points when given.
  func measure(_ text: String, style: TextStyle, width: Double?) -> TextMetrics {
    let layout = makeLayout(text, style: style, width: width)
    defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
    return metrics(of: layout)
  }
}
