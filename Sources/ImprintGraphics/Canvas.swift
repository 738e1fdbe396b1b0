// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: a drawing context over a cairo surface, in points with y growing downwards.

internal import CCairo
internal import CPango
import Foundation
import ImprintCore

/// How an image fills its box.
public enum ImageFit: String, Sendable, Codable {
  /// Fill the box, cropping what overflows (centred).
  case cover
  /// Fit the whole image inside the box, centred.
  case contain
}

/// A drawing context (one `cairo_t`) over a page or an image.
///
/// Coordinates are in points, origin at the top left. Owns one `cairo_t`; destroyed with the
/// canvas. Never shared across tasks.
public struct Canvas: ~Copyable {
  /// The cairo context; nil on a page Imprint writes itself (`direct`).
  let cr: OpaquePointer?
  /// The content stream of a page of a PDF Imprint writes itself (`VectorDocument`'s
  /// `producer: .imprint`), which every drawing call goes to instead of cairo.
  let direct: DirectContent?
  private let engine: () throws(GraphicsError) -> TextEngine
  private let forms: TextForms?
  private let handleScope: LiveHandles.Scope?
  /// On a recording (a label's or layer's form), the largest text drawn on it, in its units.
  private let recorded: RecordedText?

  init(
    surface: OpaquePointer, forms: TextForms? = nil, recorded: RecordedText? = nil,
    engine: @escaping () throws(GraphicsError) -> TextEngine
  ) {
    guard let cr = cairo_create(surface) else { preconditionFailure("cairo_create returned NULL") }
    self.cr = cr
    self.direct = nil
    self.engine = engine
    self.forms = forms
    self.recorded = recorded
    self.handleScope = LiveHandles.opened("cairo_t")
  }

  /// A canvas drawing into `content`, a page or form of a PDF Imprint writes itself.
  init(direct content: DirectContent, engine: @escaping () throws(GraphicsError) -> TextEngine) {
    cr = nil
    direct = content
    self.engine = engine
    forms = nil
    handleScope = nil
    recorded = nil
  }

  deinit {
    if let cr {
      cairo_destroy(cr)
      LiveHandles.closed("cairo_t", in: handleScope)
    }
  }

  /// Lends the `cairo_t` to another module of this package for the duration of `body`.
  ///
  /// Poppler in ImprintDocuments draws a page with it; it never outlives the call. Not
  /// available on a page Imprint writes itself (`VectorDocument`'s `producer: .imprint`).
  package func withUnsafeCairoContext<Result>(_ body: (OpaquePointer) -> Result) -> Result {
    guard let cr else { preconditionFailure("a page Imprint writes itself has no cairo context") }
    return body(cr)
  }

  /// Checks cairo's sticky error status.
  ///
  /// - Throws: `GraphicsError.cairo` naming `operation`.
  public func check(_ operation: String) throws(GraphicsError) {
    guard direct == nil else { return }
    let status = cairo_status(cr)
    guard status == CAIRO_STATUS_SUCCESS else {
      throw .cairo(operation: operation, status: String(cString: cairo_status_to_string(status)))
    }
  }

  /// Sets the colour for the following fills and strokes.
  public func setColor(_ color: Color) {
    if let direct { return direct.setColor(color) }
    cairo_set_source_rgb(
      cr, Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
  }

  /// Turns antialiasing off (for pure-black module edges on raster output) or back on.
  public func setAntialias(_ enabled: Bool) {
    // A PDF reader antialiases as it likes: nothing to write.
    guard direct == nil else { return }
    cairo_set_antialias(cr, enabled ? CAIRO_ANTIALIAS_DEFAULT : CAIRO_ANTIALIAS_NONE)
  }

  /// Scales the following coordinates (for example points to device pixels).
  public func scale(_ sx: Double, _ sy: Double) {
    if let direct { return direct.transform(sx, 0, 0, sy, 0, 0) }
    cairo_scale(cr, sx, sy)
  }

  /// Rotates the following coordinates by `radians` (clockwise on the page, y growing down).
  public func rotate(_ radians: Double) {
    if let direct {
      return direct.transform(cos(radians), sin(radians), -sin(radians), cos(radians), 0, 0)
    }
    cairo_rotate(cr, radians)
  }

  /// Moves the origin.
  public func translate(_ dx: Double, _ dy: Double) {
    if let direct { return direct.transform(1, 0, 0, 1, dx, dy) }
    cairo_translate(cr, dx, dy)
  }

  /// Saves the graphics state; balance with `restore()`.
  public func save() {
    if let direct { return direct.save() }
    cairo_save(cr)
  }

  /// Restores the state saved last.
  public func restore() {
    if let direct { return direct.restore() }
    cairo_restore(cr)
  }

  /// Adds a rectangle to the current path.
  public func addRect(_ rect: Rect) {
    if let direct { return direct.addRect(rect) }
    cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height)
  }

  /// Fills the current path with the current colour and clears it.
  public func fill() {
    if let direct { return direct.fill() }
    cairo_fill(cr)
  }

  /// Fills `rect` with `color`.
  public func fill(_ rect: Rect, color: Color) {
    setColor(color)
    addRect(rect)
    fill()
  }

  /// Strokes a straight line `width` points wide.
  public func line(from: (Double, Double), to: (Double, Double), width: Double, color: Color) {
    setColor(color)
    if let direct { return direct.line(from: from, to: to, width: width) }
    cairo_set_line_width(cr, width)
    cairo_move_to(cr, from.0, from.1)
    cairo_line_to(cr, to.0, to.1)
    cairo_stroke(cr)
  }

  /// Adds a rectangle with rounded corners (`radius` points) to the current path.
  public func addRoundedRect(_ rect: Rect, radius: Double) {
    let r = min(radius, rect.width / 2, rect.height / 2)
    guard r > 0 else {
      addRect(rect)
      return
    }
    if let direct { return direct.addRoundedRect(rect, radius: r) }
    cairo_new_sub_path(cr)
    cairo_arc(cr, rect.maxX - r, rect.y + r, r, -Double.pi / 2, 0)
    cairo_arc(cr, rect.maxX - r, rect.maxY - r, r, 0, Double.pi / 2)
    cairo_arc(cr, rect.x + r, rect.maxY - r, r, Double.pi / 2, Double.pi)
    cairo_arc(cr, rect.x + r, rect.y + r, r, Double.pi, 3 * Double.pi / 2)
    cairo_close_path(cr)
  }

  /// Adds the ellipse inscribed in `rect` (a circle when it is square) to the current path.
  public func addEllipse(in rect: Rect) {
    if let direct { return direct.addEllipse(in: rect) }
    cairo_save(cr)
    cairo_translate(cr, rect.x + rect.width / 2, rect.y + rect.height / 2)
    cairo_scale(cr, rect.width / 2, rect.height / 2)
    cairo_new_sub_path(cr)
    cairo_arc(cr, 0, 0, 1, 0, 2 * Double.pi)
    cairo_restore(cr)
  }

  /// Restricts drawing to the current path (intersected with any earlier clip) and clears it.
  public func clip() {
    if let direct { return direct.clip() }
    cairo_clip(cr)
  }

  /// Strokes the current path `width` points wide and clears it.
  public func stroke(width: Double, color: Color) {
    setColor(color)
    if let direct { return direct.stroke(width: width) }
    cairo_set_line_width(cr, width)
    cairo_stroke(cr)
  }

  /// Draws `bitmap` into `rect`: `cover` fills the box and crops the overflow (centred), `contain`
  /// fits it whole, centred.
  ///
  /// With `smooth` false, pixels are scaled as sharp squares (PDF `/Interpolate false`), for
  /// codes drawn one pixel per module.
  /// - Throws: `GraphicsError.cairo` when cairo cannot wrap the pixels.
  public func draw(_ bitmap: Bitmap, in rect: Rect, fit: ImageFit, smooth: Bool = true)
    throws(GraphicsError)
  {
    if let direct {
      let sx = rect.width / Double(bitmap.width)
      let sy = rect.height / Double(bitmap.height)
      let scale = fit == .cover ? max(sx, sy) : min(sx, sy)
      let width = Double(bitmap.width) * scale
      let height = Double(bitmap.height) * scale
      direct.save()
      direct.addRect(rect)
      direct.clip()
      direct.draw(
        bitmap, x: rect.x + (rect.width - width) / 2, y: rect.y + (rect.height - height) / 2,
        width: width, height: height, smooth: smooth)
      direct.restore()
      return
    }
    if let cr, cairo_surface_get_type(cairo_get_target(cr)) == CAIRO_SURFACE_TYPE_IMAGE {
      // A raster target composites the pixels now and keeps nothing of them: cairo reads them
      // where the bitmap holds them (a card's 400 × 400 photo was copied, into memory zeroed
      // first, for every card PNG). The surface is finished before the pixels go.
      let drawn = bitmap.pixels.withUnsafeBytes { raw -> Bool in
        guard let base = raw.baseAddress,
          let image = cairo_image_surface_create_for_data(
            UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)),
            bitmap.cairoFormat, Int32(bitmap.width),
            Int32(bitmap.height), Int32(bitmap.width * 4))
        else { return false }
        defer {
          cairo_surface_finish(image)
          cairo_surface_destroy(image)
        }
        guard cairo_surface_status(image) == CAIRO_STATUS_SUCCESS else { return false }
        paint(image, of: bitmap, in: rect, fit: fit, smooth: smooth)
        return true
      }
      guard drawn else {
        throw .cairo(
          operation: "wrapping a \(bitmap.width) x \(bitmap.height) image", status: "no memory")
      }
      return
    }
    // Names a JPEG by its content, so that a PDF holds each distinct photo once however many
    // cards show it (cairo keys its image objects on this identity).
    let identity = bitmap.jpeg.map { jpeg in
      forms?.jpegs.identity(of: jpeg) ?? JPEGNames.identify(jpeg)
    }
    let image: OpaquePointer
    if let identity, let known = forms?.images[identity] {
      // The document's surface for this photo: no copy of the pixels, and cairo reuses the
      // snapshot it took of it.
      image = cairo_surface_reference(known)
    } else {
      // The pixels are copied into a cairo-owned surface: a PDF surface keeps a reference to
      // its sources until the page is written, which must not point into Swift memory.
      guard let made = bitmap.makeSurface() else {
        throw .cairo(
          operation: "creating a \(bitmap.width) x \(bitmap.height) image", status: "no memory")
      }
      image = made
      if let jpeg = bitmap.jpeg, let identity {
        // PDF output embeds the JPEG file as it is (DCTDecode): no second compression.
        setMimeData(image, "image/jpeg", jpeg)
        setMimeData(image, "application/x-cairo.uuid", Array(identity.utf8))
        forms?.remember(image, as: identity)
      }
    }
    defer { cairo_surface_destroy(image) }
    paint(image, of: bitmap, in: rect, fit: fit, smooth: smooth)
  }

  /// Paints `image`, the pixels of `bitmap`, scaled to fit `rect` as `fit` says and clipped to
  /// it.
  private func paint(
    _ image: OpaquePointer, of bitmap: Bitmap, in rect: Rect, fit: ImageFit, smooth: Bool
  ) {
    let sx = rect.width / Double(bitmap.width)
    let sy = rect.height / Double(bitmap.height)
    let scale = fit == .cover ? max(sx, sy) : min(sx, sy)
    let width = Double(bitmap.width) * scale
    let height = Double(bitmap.height) * scale
    cairo_save(cr)
    addRect(rect)
    clip()
    cairo_translate(cr, rect.x + (rect.width - width) / 2, rect.y + (rect.height - height) / 2)
    cairo_scale(cr, scale, scale)
    cairo_set_source_surface(cr, image, 0, 0)
    cairo_pattern_set_filter(
      cairo_get_source(cr), smooth ? CAIRO_FILTER_GOOD : CAIRO_FILTER_NEAREST)
    cairo_paint(cr)
    cairo_restore(cr)
  }

  /// Draws `block` with its top-left corner at (`x`, `y`).
  ///
  /// - Returns: the metrics of the text as drawn.
  /// - Throws: `GraphicsError.fontsUnavailable`; `GraphicsError.textSize` for a size outside
  ///   `TextStyle.sizes`; `GraphicsError.textTooLarge` when the canvas's scale makes it larger
  ///   than a glyph can be.
  @discardableResult
  public func draw(_ block: TextBlock, x: Double, y: Double) throws(GraphicsError) -> TextMetrics {
    try Self.checkSize(block.style)
    let engine = try engine()
    if let direct {
      let shaped: ShapedText
      if let prepared = block.shaped(from: engine.library) {
        shaped = prepared
      } else {
        shaped = try directText(block, engine: engine)
      }
      direct.setColor(block.style.color)
      direct.draw(shaped, x: x, y: y)
      return shaped.metrics
    }
    try checkScale(block.style.size)
    // A document's page (PDF) draws text shaped where it was laid out, when it was.
    if forms != nil, let cr, cairo_surface_has_show_text_glyphs(cairo_get_target(cr)) != 0,
      let shaped = block.shaped(from: engine.library)
        ?? ShapedTextCache.shared.text(block, library: engine.library)
    {
      setColor(block.style.color)
      cairo_move_to(cr, x, y)
      shaped.draw(on: cr)
      return shaped.metrics
    }
    let layout = engine.makeLayout(block)
    defer { layout.release() }
    setColor(block.style.color)
    show(layout, x: x, y: y)
    return engine.metrics(of: layout)
  }

  /// Draws `block`, which the document draws many times (a template's fixed label), with its
  /// top-left corner at (`x`, `y`).
  ///
  /// In a PDF the text is set once, as a form that every later use refers to: the label is
  /// shaped, and its glyphs written, once per document instead of once per card. Elsewhere, and
  /// in a document made with `labelForms` off, it is the same as `draw(_:x:y:)`.
  /// - Throws: as `draw(_:x:y:)`; `GraphicsError.cairo` when cairo cannot record.
  public func drawRepeated(_ block: TextBlock, x: Double, y: Double) throws(GraphicsError) {
    try Self.checkSize(block.style)
    if let direct {
      let document = direct.document
      guard document.recordsLabels else {
        try draw(block, x: x, y: y)
        return
      }
      let form: Int
      if let found = document.labels[block] {
        form = found
      } else {
        let shaped = try directText(block, engine: try engine())
        let content = DirectContent(document: document, height: nil)
        content.setColor(block.style.color)
        content.draw(shaped, x: 0, y: 0)
        let margin = block.style.size
        let metrics = shaped.metrics
        let bounds = Rect(
          x: -margin, y: -margin,
          width: max(block.width ?? metrics.width, metrics.width) + 2 * margin,
          height: metrics.height + 2 * margin)
        form = document.writeForm(content, bounds: bounds)
        document.labels[block] = form
      }
      direct.drawForm(form, x: x, y: y)
      return
    }
    guard let forms, forms.recordsLabels else {
      try draw(block, x: x, y: y)
      return
    }
    try checkScale(block.style.size)
    let form: OpaquePointer
    if let found = forms.surfaces[block] {
      form = found
    } else {
      // Bounded by the block's box with a margin of one em on each side, for overhanging ink.
      let metrics = try measure(block)
      let margin = block.style.size
      var extents = cairo_rectangle_t(
        x: -margin, y: -margin,
        width: max(block.width ?? metrics.width, metrics.width) + 2 * margin,
        height: metrics.height + 2 * margin)
      guard let recording = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &extents)
      else { preconditionFailure("cairo returned a NULL surface") }
      LiveHandles.opened("cairo_surface_t", in: forms.handleScope)
      let inner = Canvas(surface: recording, engine: engine)
      try inner.draw(block, x: 0, y: 0)
      try inner.check("recording a label")
      forms.surfaces[block] = recording
      form = recording
    }
    cairo_save(cr)
    cairo_set_source_surface(cr, form, x, y)
    cairo_paint(cr)
    cairo_restore(cr)
  }

  /// Whether `drawLayer` records layers as forms here: a PDF page of a document made with
  /// `layerForms` on.
  public var recordsLayers: Bool {
    direct?.document.recordsLayers ?? (forms?.recordsLayers == true)
  }

  /// Draws a layer that many pages of the document show unchanged (a card design's background,
  /// bands and fixed labels), its origin at (`x`, `y`).
  ///
  /// When `recordsLayers`, the layer is drawn once per document into a recording surface,
  /// which the PDF writes once as a form that every page refers to; the next call with an equal
  /// `key` only refers to it. Elsewhere `body` draws in place, the origin moved.
  ///
  /// - Parameters:
  ///   - key: what the layer shows: equal keys must draw the same. Looked up for every page:
  ///     a struct of its own, not a bare array or dictionary, which `AnyHashable` compares
  ///     element by element through a box for each.
  ///   - keeping: values `key` depends on staying alive while the layer is kept (the bitmaps
  ///     a key names by their storage).
  ///   - bounds: what the layer may cover, from its origin; drawing outside is cut.
  ///   - x: where the layer's origin goes.
  ///   - y: where the layer's origin goes.
  ///   - body: draws the layer from its origin.
  /// - Throws: what `body` throws; `GraphicsError.cairo` when cairo cannot record.
  public func drawLayer(
    key: AnyHashable, keeping: [any Sendable] = [], bounds: Rect, x: Double, y: Double,
    _ body: (borrowing Canvas) throws -> Void
  ) throws {
    if let direct {
      let document = direct.document
      guard document.recordsLayers else {
        direct.save()
        direct.transform(1, 0, 0, 1, x, y)
        try body(self)
        direct.restore()
        return
      }
      let form: Int
      if let found = document.layers[key] {
        form = found.object
      } else {
        let content = DirectContent(document: document, height: nil)
        let inner = Canvas(direct: content, engine: engine)
        try body(inner)
        form = document.writeForm(content, bounds: bounds)
        document.layers[key] = (form, keeping)
      }
      direct.drawForm(form, x: x, y: y)
      return
    }
    guard let forms, forms.recordsLayers else {
      cairo_save(cr)
      cairo_translate(cr, x, y)
      try body(self)
      cairo_restore(cr)
      return
    }
    let layer: OpaquePointer
    if let found = forms.layers[key] {
      try checkScale(found.largestText)
      layer = found.surface
    } else {
      var extents = cairo_rectangle_t(
        x: bounds.x, y: bounds.y, width: bounds.width, height: bounds.height)
      guard let recording = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &extents)
      else { preconditionFailure("cairo returned a NULL surface") }
      LiveHandles.opened("cairo_surface_t", in: forms.handleScope)
      let text = RecordedText()
      do {
        let inner = Canvas(surface: recording, recorded: text, engine: engine)
        try body(inner)
        try inner.check("recording a layer")
        try checkScale(text.largest)
      } catch {
        cairo_surface_destroy(recording)
        LiveHandles.closed("cairo_surface_t", in: forms.handleScope)
        throw error
      }
      forms.layers[key] = (recording, keeping, text.largest)
      layer = recording
    }
    cairo_save(cr)
    cairo_set_source_surface(cr, layer, x, y)
    cairo_paint(cr)
    cairo_restore(cr)
  }

  /// Measures `block`.
  ///
  /// - Throws: `GraphicsError.fontsUnavailable`; `GraphicsError.textSize` for a size outside
  ///   `TextStyle.sizes`.
  public func measure(_ block: TextBlock) throws(GraphicsError) -> TextMetrics {
    try Self.checkSize(block.style)
    return try engine().measure(block)
  }

  /// Measures `text` in `style`, wrapped at `width` points when given.
  ///
  /// - Throws: as `measure(_:)`.
  public func measure(_ text: String, style: TextStyle, width: Double? = nil) throws(GraphicsError)
    -> TextMetrics
  {
    try Self.checkSize(style)
    return try engine().measure(text, style: style, width: width)
  }

  /// Draws `text` in `style` with its top-left corner at (`x`, `y`), wrapped and aligned inside
  /// `width` points when given.
  ///
  /// - Returns: the metrics of the text as drawn.
  /// - Throws: as `draw(_:x:y:)`.
  @discardableResult
  public func drawText(
    _ text: String, style: TextStyle, x: Double, y: Double, width: Double? = nil
  ) throws(GraphicsError) -> TextMetrics {
    try Self.checkSize(style)
    let engine = try engine()
    if let direct {
      let shaped = try directText(TextBlock(text, style: style, width: width), engine: engine)
      direct.setColor(style.color)
      direct.draw(shaped, x: x, y: y)
      return shaped.metrics
    }
    try checkScale(style.size)
    let layout = engine.makeLayout(text, style: style, width: width)
    defer { layout.release() }
    setColor(style.color)
    show(layout, x: x, y: y)
    return engine.metrics(of: layout)
  }

  /// Refuses a style whose size is not within `TextStyle.sizes`.
  private static func checkSize(_ style: TextStyle) throws(GraphicsError) {
    guard style.hasUsableSize else { throw .textSize(size: "\(style.size)") }
  }

  /// The most pixels a glyph may have: FreeType's limit.
  ///
  /// A size in 26.6 fixed point is rounded to whole pixels within 16 bits. A font asked for
  /// more fails for the whole process (cairo keeps the error on the font face, which the
  /// font's later sizes share).
  static let largestGlyph = 65_535

  /// Refuses text of `points`, in this canvas's units, that cairo would ask FreeType for at
  /// more than `largestGlyph` pixels; notes it on a recording, whose units are scaled again
  /// where it is painted.
  ///
  /// The bound is the current matrix's largest singular value, which no axis cairo scales a
  /// font by exceeds, times the surface's device scale and, on a PDF, PostScript or SVG
  /// surface, its fallback resolution (where cairo draws what the format cannot hold as an
  /// image).
  private func checkScale(_ points: Double) throws(GraphicsError) {
    guard let cr, points > 0 else { return }
    var m = cairo_matrix_t()
    cairo_get_matrix(cr, &m)
    // The largest singular value of [xx xy; yx yy], in a form without cancellation.
    let scale =
      (((m.xx + m.yy) * (m.xx + m.yy) + (m.yx - m.xy) * (m.yx - m.xy)).squareRoot()
        + ((m.xx - m.yy) * (m.xx - m.yy) + (m.yx + m.xy) * (m.yx + m.xy)).squareRoot()) / 2
    var pixels = points * scale * Self.deviceFactor(of: cairo_get_target(cr))
    if pixels.isNaN { pixels = .infinity }
    guard pixels <= Double(Self.largestGlyph) else {
      throw .textTooLarge(
        pixels: Int(min(pixels, 1e15).rounded(.up)), maximumPixels: Self.largestGlyph)
    }
    if let recorded { recorded.largest = max(recorded.largest, pixels) }
  }

  /// How many device pixels a unit of `surface` can become: its device scale, times its
  /// fallback resolution over 72 on a surface that draws fallbacks as images.
  private static func deviceFactor(of surface: OpaquePointer?) -> Double {
    guard let surface else { return 1 }
    var x = 1.0
    var y = 1.0
    cairo_surface_get_device_scale(surface, &x, &y)
    var factor = max(abs(x), abs(y))
    switch cairo_surface_get_type(surface) {
    case CAIRO_SURFACE_TYPE_PDF, CAIRO_SURFACE_TYPE_PS, CAIRO_SURFACE_TYPE_SVG:
      cairo_surface_get_fallback_resolution(surface, &x, &y)
      factor *= max(1, max(x, y) / 72)
    default: break
    }
    return factor
  }

  /// Draws `layout` with its top-left corner at (`x`, `y`), scaled from the size it is set at
  /// to its block's.
  private func show(_ layout: TextLayout, x: Double, y: Double) {
    cairo_save(cr)
    cairo_translate(cr, x, y)
    if layout.factor != 1 { cairo_scale(cr, layout.factor, layout.factor) }
    cairo_move_to(cr, 0, 0)
    pango_cairo_show_layout(cr, layout.pango)
    cairo_restore(cr)
  }
}

extension Canvas {
  /// `block` shaped for a page Imprint writes itself: as it was where it was laid out when it
  /// was (`ShapedTextCache`), else shaped here, characters no font has kept as boxes.
  ///
  /// - Throws: `GraphicsError.cairo` for a layout that holds what only Pango draws (vertical
  ///   text), which no card or code label sets.
  fileprivate func directText(_ block: TextBlock, engine: TextEngine) throws(GraphicsError)
    -> ShapedText
  {
    // A text in the cache was shaped without missing characters (else it is not kept).
    if let shaped = ShapedTextCache.shared.text(block, library: engine.library) {
      return shaped
    }
    let layout = engine.makeLayout(block)
    defer { layout.release() }
    guard
      let shaped = ShapedText.make(from: layout, metrics: engine.metrics(of: layout), missing: true)
    else {
      throw .cairo(operation: "setting text in a PDF", status: "vertical text is not supported")
    }
    return shaped
  }
}

extension Bitmap {
  /// The cairo format of these pixels: premultiplied ARGB32 with transparency, else RGB24 (the
  /// same 32-bit words, the alpha byte unread).
  var cairoFormat: cairo_format_t { hasAlpha ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24 }

  /// Crops and rescales with cairo (bilinear filtering over pixman).
  func resampled(
    cropX: Double, cropY: Double, cropWidth: Double, cropHeight: Double, width: Int, height: Int
  ) -> Bitmap {
    let format = cairoFormat
    guard let source = makeSurface(),
      let target = cairo_image_surface_create(format, Int32(width), Int32(height))
    else { return self }
    defer {
      cairo_surface_destroy(source)
      cairo_surface_destroy(target)
    }
    guard let cr = cairo_create(target) else { return self }
    cairo_scale(cr, Double(width) / cropWidth, Double(height) / cropHeight)
    cairo_translate(cr, -cropX, -cropY)
    cairo_set_source_surface(cr, source, 0, 0)
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
    cairo_paint(cr)
    cairo_destroy(cr)
    cairo_surface_flush(target)
    guard let data = cairo_image_surface_get_data(target) else { return self }
    let stride = Int(cairo_image_surface_get_stride(target))
    var pixels = [UInt8](repeating: 0, count: width * height * 4)
    pixels.withUnsafeMutableBufferPointer { out in
      guard let base = out.baseAddress else { return }
      for y in 0..<height {
        (base + y * width * 4).update(from: data + y * stride, count: width * 4)
      }
    }
    if !hasAlpha {
      for index in Swift.stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
    }
    return Bitmap(width: width, height: height, pixels: pixels, hasAlpha: hasAlpha)
  }

  /// A cairo image surface holding a copy of the pixels (caller destroys it).
  func makeSurface() -> OpaquePointer? {
    guard let image = cairo_image_surface_create(cairoFormat, Int32(width), Int32(height)),
      cairo_surface_status(image) == CAIRO_STATUS_SUCCESS,
      let data = cairo_image_surface_get_data(image)
    else { return nil }
    let stride = Int(cairo_image_surface_get_stride(image))
    let rowBytes = width * 4
    pixels.withUnsafeBytes { source in
      guard let base = source.baseAddress else { return }
      for y in 0..<height {
        (data + y * stride).update(
          from: base.advanced(by: y * rowBytes).assumingMemoryBound(to: UInt8.self), count: rowBytes
        )
      }
    }
    cairo_surface_mark_dirty(image)
    return image
  }
}

/// The recorded labels of one vector document (see `Canvas.drawRepeated`), each a cairo
/// recording surface that the PDF surface writes once and refers to by its form name.
///
/// Owned by one document and used only by the thread drawing it.
final class TextForms {
  var surfaces: [TextBlock: OpaquePointer] = [:]
  /// The recorded layers (`Canvas.drawLayer`), with the values their keys depend on and their
  /// largest text in their units.
  var layers:
    [AnyHashable: (surface: OpaquePointer, keeping: [any Sendable], largestText: Double)] = [:]
  /// Whether labels are recorded as forms; false: drawn in place (`VectorDocument`'s
  /// `labelForms`).
  var recordsLabels = true
  /// Whether `Canvas.drawLayer` records layers as forms (`VectorDocument`'s `layerForms`).
  var recordsLayers = false
  /// The scope its recorded surfaces are counted in: the one bound when it was made.
  let handleScope = LiveHandles.scope
  /// The image surfaces of the last few JPEG photos drawn, by content identity.
  private(set) var images: [String: OpaquePointer] = [:]

  /// The names of the JPEG files drawn.
  let jpegs = JPEGNames()

  /// Keeps a reference to `image` for the next draw of the same photo; at most 16 are kept.
  func remember(_ image: OpaquePointer, as identity: String) {
    if images.count >= 16 { forgetImages() }
    images[identity] = cairo_surface_reference(image)
  }

  private func forgetImages() {
    for image in images.values { cairo_surface_destroy(image) }
    images = [:]
  }

  deinit {
    for surface in surfaces.values + layers.values.map(\.surface) {
      cairo_surface_destroy(surface)
      LiveHandles.closed("cairo_surface_t", in: handleScope)
    }
    forgetImages()
  }
}

/// Names JPEG files by their content.
///
/// Each array of bytes is hashed once however many cards show it (the photo cache hands every
/// card of a photo the same array). One document's, used by the thread drawing it.
final class JPEGNames {
  /// The identities of the last few JPEG files named, by the address of their bytes (kept
  /// alive here, so that an address names the same bytes while it is a key).
  private var identities: [UInt: (identity: String, jpeg: [UInt8])] = [:]

  /// Names a JPEG file by its content.
  static func identify(_ jpeg: [UInt8]) -> String {
    var hasher = Hasher()
    jpeg.withUnsafeBytes { hasher.combine(bytes: $0) }
    return "jpeg-\(jpeg.count)-\(hasher.finalize())"
  }

  /// `identify(jpeg)`, remembered for its array.
  func identity(of jpeg: [UInt8]) -> String {
    let address = jpeg.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    if let known = identities[address] { return known.identity }
    let identity = Self.identify(jpeg)
    if identities.count >= 16 { identities = [:] }
    identities[address] = (identity, jpeg)
    return identity
  }
}

/// Attaches a copy of `bytes` to `surface` as cairo MIME data of `type`.
private func setMimeData(_ surface: OpaquePointer, _ type: String, _ bytes: [UInt8]) {
  guard let copy = malloc(max(1, bytes.count)) else { return }
  bytes.withUnsafeBytes {
    if let base = $0.baseAddress { copy.copyMemory(from: base, byteCount: $0.count) }
  }
  cairo_surface_set_mime_data(
    surface, type, copy.assumingMemoryBound(to: UInt8.self), UInt(bytes.count), { free($0) }, copy)
}

/// The largest text drawn on a recording, in its units (see `Canvas.checkScale`).
final class RecordedText {
  var largest = 0.0
}
