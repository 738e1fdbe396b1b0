// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: a drawing context over a cairo surface, in points with y growing downwards.

internal import CCairo
internal import CPango
import ImprintCore

/// A drawing context (one `cairo_t`) over a page or an image.
///
/// Coordinates are in points, origin at the top left. Owns one `cairo_t`; destroyed with the
/// canvas. Never shared across tasks.
public struct Canvas: ~Copyable {
  let cr: OpaquePointer
  private let engine: () throws(GraphicsError) -> TextEngine

  init(surface: OpaquePointer, engine: @escaping () throws(GraphicsError) -> TextEngine) {
    guard let cr = cairo_create(surface) else { preconditionFailure("cairo_create returned NULL") }
    self.cr = cr
    self.engine = engine
    LiveHandles.opened("cairo_t")
  }

  deinit {
    cairo_destroy(cr)
    LiveHandles.closed("cairo_t")
  }

  /// Checks cairo's sticky error status.
  ///
  /// - Throws: `GraphicsError.cairo` naming `operation`.
  public func check(_ operation: String) throws(GraphicsError) {
    let status = cairo_status(cr)
    guard status == CAIRO_STATUS_SUCCESS else {
      throw .cairo(operation: operation, status: String(cString: cairo_status_to_string(status)))
    }
  }

  /// Sets the colour for the following fills and strokes.
  public func setColor(_ color: Color) {
    cairo_set_source_rgb(
      cr, Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
  }

  /// Turns antialiasing off (for pure-black module edges on raster output) or back on.
  public func setAntialias(_ enabled: Bool) {
    cairo_set_antialias(cr, enabled ? CAIRO_ANTIALIAS_DEFAULT : CAIRO_ANTIALIAS_NONE)
  }

  /// Scales the following coordinates (for example points to device pixels).
  public func scale(_ sx: Double, _ sy: Double) { cairo_scale(cr, sx, sy) }

  /// Moves the origin.
  public func translate(_ dx: Double, _ dy: Double) { cairo_translate(cr, dx, dy) }

  /// Saves the graphics state; balance with `restore()`.
  public func save() { cairo_save(cr) }

  /// Restores the state saved last.
  public func restore() { cairo_restore(cr) }

  /// Adds a rectangle to the current path.
  public func addRect(_ rect: Rect) { cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height) }

  /// Fills the current path with the current colour and clears it.
  public func fill() { cairo_fill(cr) }

  /// Fills `rect` with `color`.
  public func fill(_ rect: Rect, color: Color) {
    setColor(color)
    addRect(rect)
    fill()
  }

  /// Strokes a straight line `width` points wide.
  public func line(from: (Double, Double), to: (Double, Double), width: Double, color: Color) {
    setColor(color)
    cairo_set_line_width(cr, width)
    cairo_move_to(cr, from.0, from.1)
    cairo_line_to(cr, to.0, to.1)
    cairo_stroke(cr)
  }

  /// Measures `text` in `style`, wrapped at `width` points when given.
  ///
  /// - Throws: `GraphicsError.fontsUnavailable`.
  public func measure(_ text: String, style: TextStyle, width: Double? = nil) throws(GraphicsError)
    -> TextMetrics
  {
    try engine().measure(text, style: style, width: width)
  }

  /// Draws `text` in `style` with its top-left corner at (`x`, `y`), wrapped and aligned inside
  /// `width` points when given.
  ///
  /// - Returns: the metrics of the text as drawn.
  /// - Throws: `GraphicsError.fontsUnavailable`.
  @discardableResult
  public func drawText(
    _ text: String, style: TextStyle, x: Double, y: Double, width: Double? = nil
  ) throws(GraphicsError) -> TextMetrics {
    let engine = try engine()
    let layout = engine.makeLayout(text, style: style, width: width)
    defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
    setColor(style.color)
    cairo_move_to(cr, x, y)
    pango_cairo_show_layout(cr, layout)
    return engine.metrics(of: layout)
  }
}
