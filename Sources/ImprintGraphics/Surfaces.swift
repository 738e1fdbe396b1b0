// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: cairo surfaces: vector documents (PDF, EPS) and raster images.

internal import CCairo
internal import CImprintShims
import Foundation
import ImprintCore
import ImprintPDF

/// The fixed creation date written into every PDF, so that output bytes do not depend on the clock.
public let fixedPDFDate = "2000-01-01T00:00:00Z"

/// Collects the bytes a cairo stream surface writes: in memory, or written to a file through
/// `FileIO` a block at a time.
///
/// cairo is never given a path itself: its own file stream (stdio) loses a write error met at
/// the final flush (cairo 1.16 reports success with the file cut short when the disk fills as
/// the document closes), so every byte goes through here and the first failed write is kept.
private final class ByteSink {
  /// The bytes in memory, or those not yet written to `descriptor`.
  var bytes: [UInt8] = []
  /// The file written as the document grows, when there is one.
  var path: String?
  var descriptor: Int32 = -1
  /// The first write that failed; every later write fails at once.
  var failure: FileError?
  /// Whether `finish()` removes repeated dictionary keys (see `PDFDuplicateKeys`).
  var repairKeys = true

  /// The most bytes held before they are written to the file.
  static let block = 1 << 16

  /// Writes the held bytes to the file (nothing in memory mode).
  func flush() {
    guard descriptor >= 0, failure == nil, !bytes.isEmpty, let path else { return }
    do {
      try FileIO.writeAll(bytes, to: descriptor, path: path)
      bytes.removeAll(keepingCapacity: true)
    } catch {
      failure = error
    }
  }

  /// Closes the file, reporting what `close` reports; idempotent.
  func close() throws(FileError) {
    guard descriptor >= 0, let path else { return }
    let descriptor = self.descriptor
    self.descriptor = -1
    try FileIO.close(descriptor, path: path)
  }

  deinit {
    if descriptor >= 0 { Foundation.close(descriptor) }
  }
}

private let writeToSink: cairo_write_func_t = { closure, data, length in
  guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
  let sink = Unmanaged<ByteSink>.fromOpaque(closure).takeUnretainedValue()
  guard sink.failure == nil else { return CAIRO_STATUS_WRITE_ERROR }
  sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
  if sink.descriptor >= 0 && sink.bytes.count >= ByteSink.block { sink.flush() }
  return sink.failure == nil ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR
}

private func statusText(_ status: cairo_status_t) -> String {
  String(cString: cairo_status_to_string(status))
}

/// Vector output formats.
public enum VectorFormat: Sendable {
  /// PDF 1.5 with embedded fonts.
  case pdf
  /// Encapsulated PostScript (one page).
  case eps
}

/// Who writes a PDF's bytes.
public enum PDFProducer: Sendable {
  /// cairo's PDF surface (every canvas call, poppler drawing onto the page included).
  case cairo
  /// Imprint's own writer (`DirectPDF`): what cards draw (fills, paths, clips, images, text,
  /// forms), written directly, fonts subset by HarfBuzz. Not for pages that lend their cairo
  /// context (`Canvas.withUnsafeCairoContext`).
  case imprint
}

/// Document metadata written into PDF output.
public struct DocumentMetadata: Sendable {
  /// The title (for example the card's @handle).
  public var title: String?
  /// The creating program.
  public var creator: String

  /// Creates metadata.
  public init(title: String? = nil, creator: String = "Imprint") {
    self.title = title
    self.creator = creator
  }
}

/// A vector document (PDF or EPS) built page by page, in memory or straight into a file.
///
/// Owns one `cairo_surface_t`; destroyed with the document. Dates are fixed (`fixedPDFDate`), so the
/// same drawing gives the same bytes.
public struct VectorDocument: ~Copyable {
  /// cairo's surface; nil when Imprint writes the PDF itself (`direct`).
  private let surface: OpaquePointer?
  private let direct: DirectPDF?
  private let handleScope: LiveHandles.Scope?
  private let sink: ByteSink
  private let format: VectorFormat
  private let engine: ThreadEngine
  private let forms = TextForms()

  /// Starts a document whose first page is `size`.
  ///
  /// - Parameters:
  ///   - format: PDF or EPS.
  ///   - size: the first page's size in points.
  ///   - metadata: title and creator (PDF only).
  ///   - fonts: the font library text is set from; the bundled one when nil and text is drawn.
  ///   - path: write straight to this file as pages are finished (for long documents, whose
  ///     bytes are then not kept in memory); in memory when nil. Every write is checked: a full
  ///     disk fails the page or `finish()` that meets it.
  ///   - labelForms: whether `Canvas.drawRepeated` records each label once as a form (PDF
  ///     only); off for a document that shows each label once, where a form is only cost.
  ///   - layerForms: whether `Canvas.drawLayer` records each layer once as a form (PDF only):
  ///     for pages that each show the same layer at the same scale, unclipped. Off, a layer
  ///     is drawn in place: on sheets, where each card is clipped to its cell, an edge of a
  ///     layer's form on the cell's edge is antialiased differently from the same edge in place.
  ///   - producer: who writes a PDF (EPS is always cairo's).
  /// - Throws: `FileError.unwritable` when `path` cannot be created; `GraphicsError.cairo` when
  ///   cairo cannot create the surface.
  public init(
    format: VectorFormat, size: Size, metadata: DocumentMetadata = DocumentMetadata(),
    fonts: FontLibrary? = nil, path: String? = nil, labelForms: Bool = true,
    layerForms: Bool = false, producer: PDFProducer = .cairo
  ) throws {
    let sink = ByteSink()
    if let path, format == .pdf {
      let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
      guard descriptor >= 0 else {
        throw FileError.unwritable(path: path, reason: .system(errno))
      }
      sink.descriptor = descriptor
    }
    var surface: OpaquePointer?
    var direct: DirectPDF?
    if format == .pdf, producer == .imprint {
      direct = DirectPDF(metadata: metadata, recordsLabels: labelForms, recordsLayers: layerForms)
    } else {
      surface = try Self.cairoSurface(format: format, size: size, metadata: metadata, sink: sink)
    }
    self.surface = surface
    self.direct = direct
    // The path is kept in the sink (a class): a String? stored in this noncopyable struct was
    // released twice when `finish()` consumed it (Swift 6.3.1: a crash in the deinit
    // `finish()` runs).
    sink.path = path
    self.sink = sink
    self.format = format
    self.engine = ThreadEngine(fonts: fonts)
    handleScope = surface == nil ? nil : LiveHandles.opened("cairo_surface_t")
    forms.recordsLabels = labelForms
    forms.recordsLayers = layerForms && format == .pdf
  }

  /// A cairo surface writing `format` into `sink`, its metadata set.
  private static func cairoSurface(
    format: VectorFormat, size: Size, metadata: DocumentMetadata, sink: ByteSink
  ) throws -> OpaquePointer {
    let closure = Unmanaged.passUnretained(sink).toOpaque()
    let surface: OpaquePointer?
    switch format {
    case .pdf:
      surface = cairo_pdf_surface_create_for_stream(
        writeToSink, closure, size.width, size.height)
    case .eps:
      surface = cairo_ps_surface_create_for_stream(writeToSink, closure, size.width, size.height)
    }
    guard let surface else { preconditionFailure("cairo returned a NULL surface") }
    let status = cairo_surface_status(surface)
    guard status == CAIRO_STATUS_SUCCESS else {
      cairo_surface_destroy(surface)
      throw GraphicsError.cairo(
        operation: "creating a \(format) surface", status: statusText(status))
    }
    switch format {
    case .pdf:
      cairo_pdf_surface_restrict_to_version(surface, CAIRO_PDF_VERSION_1_5)
      cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATE_DATE, fixedPDFDate)
      cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_MOD_DATE, fixedPDFDate)
      cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, metadata.creator)
      if let title = metadata.title {
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title)
      }
    case .eps:
      cairo_ps_surface_set_eps(surface, 1)
    }
    return surface
  }

  deinit {
    if let surface {
      cairo_surface_destroy(surface)
      LiveHandles.closed("cairo_surface_t", in: handleScope)
    }
  }

  /// False keeps cairo's output as it is (for tests of `PDFDuplicateKeys`).
  var repairKeys: Bool {
    get { sink.repairKeys }
    nonmutating set { sink.repairKeys = newValue }
  }

  /// Draws one page of `size` (PDF pages may differ in size; EPS has one page).
  ///
  /// - Throws: what `body` throws, `FileError.unwritable` when writing the file failed, or
  ///   `GraphicsError.cairo` when drawing failed.
  public func page(
    size: Size, _ body: (borrowing Canvas) throws -> Void
  ) throws {
    let engine = self.engine
    if let direct {
      let content = DirectContent(document: direct, height: size.height)
      try body(Canvas(direct: content) { () throws(GraphicsError) in try engine.get() })
      direct.addPage(size: size, content: content)
      take(direct)
      if let failure = sink.failure { throw failure }
      return
    }
    guard let surface else { preconditionFailure("a cairo document without its surface") }
    switch format {
    case .pdf: cairo_pdf_surface_set_size(surface, size.width, size.height)
    case .eps: cairo_ps_surface_set_size(surface, size.width, size.height)
    }
    let canvas = Canvas(surface: surface, forms: format == .pdf ? forms : nil) {
      () throws(GraphicsError) in try engine.get()
    }
    try body(canvas)
    cairo_show_page(canvas.cr)
    if let failure = sink.failure { throw failure }
    try canvas.check("drawing a page")
  }

  /// Finishes the document and returns its bytes (empty when it was written to a file).
  ///
  /// With a path, the file is complete and closed (every write and the close checked) when this
  /// returns; the caller's `AtomicFile.commit` then syncs it.
  ///
  /// - Throws: `FileError.unwritable` when writing the file failed (a full disk), or
  ///   `GraphicsError.cairo` when cairo reports an error.
  public consuming func finish() throws -> [UInt8] {
    if let direct {
      direct.finish()
      take(direct)
      sink.flush()
      if let failure = sink.failure { throw failure }
      try sink.close()
      return sink.bytes
    }
    guard let surface else { preconditionFailure("a cairo document without its surface") }
    cairo_surface_finish(surface)
    let status = cairo_surface_status(surface)
    sink.flush()
    if let failure = sink.failure { throw failure }
    try sink.close()
    guard status == CAIRO_STATUS_SUCCESS else {
      throw GraphicsError.cairo(operation: "finishing the document", status: statusText(status))
    }
    var bytes = sink.bytes
    if format == .eps {
      bytes = fixPostScriptDate(bytes)
    } else if sink.repairKeys, let target = sink.path {
      // Its reads and writes are checked (FileError), and it replaces the file atomically.
      try PDFDuplicateKeys.repair(path: target)
    } else if sink.repairKeys {
      bytes = PDFDuplicateKeys.repaired(bytes) ?? bytes
    }
    return bytes
  }
}

extension VectorDocument {
  /// Moves what Imprint's own writer has written into the sink (and to the file, a block at a
  /// time).
  private func take(_ direct: DirectPDF) {
    guard direct.file.pending > 0, sink.failure == nil else { return }
    sink.bytes.append(contentsOf: direct.file.drain())
    if sink.descriptor >= 0 && sink.bytes.count >= ByteSink.block { sink.flush() }
  }
}

/// cairo's PostScript surface writes the current time as `%%CreationDate`; replace it with the
/// fixed date so EPS output is deterministic too.
private func fixPostScriptDate(_ bytes: [UInt8]) -> [UInt8] {
  let marker = Array("%%CreationDate: ".utf8)
  guard let start = bytes.firstRange(of: marker)?.upperBound,
    let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
  else { return bytes }
  var result = Array(bytes[..<start])
  result += Array("(D:20000101000000)".utf8)
  result += bytes[end...]
  return result
}

/// Finds the text engine of the calling thread on each use.
///
/// Never cached across calls: a document built by an async task may be drawn on different
/// threads in turn, and a thread's engine must only ever be used by that thread.
private final class ThreadEngine: Sendable {
  private let fonts: FontLibrary?

  init(fonts: FontLibrary?) { self.fonts = fonts }

  func get() throws(GraphicsError) -> TextEngine {
    let library: FontLibrary
    if let fonts { library = fonts } else { library = try FontLibrary.bundled() }
    return TextEngine.forCurrentThread(library)
  }
}

/// The key under which a `RasterImage`'s surface holds its pixel buffer (its address is all
/// cairo uses; never written, so shared unguarded).
nonisolated(unsafe) private let imageBufferKey = UnsafeMutablePointer<cairo_user_data_key_t>
  .allocate(capacity: 1)

/// A raster image in memory (cairo image surface), drawn on with a `Canvas` in device pixels.
///
/// Owns one `cairo_surface_t`; destroyed with the image.
public struct RasterImage: ~Copyable {
  private let surface: OpaquePointer
  private let handleScope: LiveHandles.Scope?
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  private let engine: ThreadEngine

  /// The most pixels Imprint allocates for one image (about 1 GB at 4 bytes a pixel is refused).
  public static let maximumPixels = 200_000_000

  /// Creates a white, opaque image.
  ///
  /// - Throws: `GraphicsError.rasterTooLarge` or `GraphicsError.cairo`.
  public init(width: Int, height: Int, fonts: FontLibrary? = nil) throws(GraphicsError) {
    try self.init(width: width, height: height, fonts: fonts, unset: nil)
  }

  /// Creates an opaque image, white but for the pixels the caller paints first.
  ///
  /// `package`, not public: pixels left unset hold whatever the heap held (another request's
  /// image), so only Imprint's own callers, whose tests check that they paint them, use it.
  ///
  /// - Parameters:
  ///   - width: pixels per row.
  ///   - height: rows.
  ///   - fonts: the fonts text is drawn with; nil for the bundled ones.
  ///   - unset: the top-left `width` × `height` pixels (clamped to the image) are left as
  ///     memory gives them, not made white: the caller's first drawing paints every one of them
  ///     opaquely (a card's background), and writing them twice cost a tenth of a card PNG. In
  ///     debug builds they are a loud magenta instead, which tests would see.
  /// - Throws: `GraphicsError.rasterTooLarge` or `GraphicsError.cairo`.
  package init(
    width: Int, height: Int, fonts: FontLibrary?, unset: (width: Int, height: Int)?
  ) throws(GraphicsError) {
    guard width > 0, height > 0, width <= 32_767, height <= 32_767,
      width * height <= RasterImage.maximumPixels
    else {
      throw .rasterTooLarge(width: width, height: height, maximumPixels: RasterImage.maximumPixels)
    }
    // The pixels in a buffer of our own, left as malloc gives it: cairo's own is zeroed (a
    // memset of the whole image, a sixteenth of a served card PNG), and the white fill below
    // writes every pixel anyway.
    let stride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, Int32(width)))
    guard stride > 0, let pixels = malloc(stride * height) else {
      throw .cairo(
        operation: "creating a \(width) x \(height) image", status: "out of memory")
    }
    guard
      let surface = cairo_image_surface_create_for_data(
        pixels.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, Int32(width),
        Int32(height), Int32(stride))
    else { preconditionFailure("cairo returned a NULL surface") }
    var status = cairo_surface_status(surface)
    if status == CAIRO_STATUS_SUCCESS {
      // The buffer is freed with the surface.
      status = cairo_surface_set_user_data(surface, imageBufferKey, pixels) { free($0) }
    }
    guard status == CAIRO_STATUS_SUCCESS else {
      cairo_surface_destroy(surface)
      free(pixels)
      throw .cairo(operation: "creating a \(width) x \(height) image", status: statusText(status))
    }
    self.surface = surface
    self.width = width
    self.height = height
    self.engine = ThreadEngine(fonts: fonts)
    handleScope = LiveHandles.opened("cairo_surface_t")
    let canvas = Canvas(surface: surface) { () throws(GraphicsError) in
      preconditionFailure("no text while clearing")
    }
    let unsetWidth = min(width, max(0, unset?.width ?? 0))
    let unsetHeight = min(height, max(0, unset?.height ?? 0))
    let white = [
      Rect(x: Double(unsetWidth), y: 0, width: Double(width - unsetWidth), height: Double(height)),
      Rect(
        x: 0, y: Double(unsetHeight), width: Double(unsetWidth),
        height: Double(height - unsetHeight)),
    ]
    for rect in white where rect.width > 0 && rect.height > 0 { canvas.fill(rect, color: .white) }
    #if DEBUG
      if unsetWidth > 0, unsetHeight > 0 {
        canvas.fill(
          Rect(x: 0, y: 0, width: Double(unsetWidth), height: Double(unsetHeight)),
          color: Color(red: 255, green: 0, blue: 255))
      }
    #endif
  }

  deinit {
    cairo_surface_destroy(surface)
    LiveHandles.closed("cairo_surface_t", in: handleScope)
  }

  /// Draws on the image; coordinates are device pixels unless `body` scales the canvas.
  ///
  /// - Throws: what `body` throws, or `GraphicsError.cairo`.
  public func draw(_ body: (borrowing Canvas) throws -> Void) throws {
    let engine = self.engine
    let canvas = Canvas(surface: surface) { () throws(GraphicsError) in try engine.get() }
    try body(canvas)
    try canvas.check("drawing an image")
    cairo_surface_flush(surface)
  }

  /// The pixels as 8-bit RGB rows (3 bytes a pixel, no padding).
  public func rgbPixels() -> [UInt8] {
    var rows = 0
    return [UInt8](unsafeUninitializedCapacity: width * height * 3) { out, initialized in
      forEachRow { pixels in
        // CAIRO_FORMAT_RGB24: a 32-bit xRGB word a pixel. Written through the buffer, not an
        // array: the bounds checks and the zero-fill of the array were a tenth of a card PNG.
        var at = rows * width * 3
        for pixel in pixels {
          out[at] = UInt8(truncatingIfNeeded: pixel >> 16)
          out[at + 1] = UInt8(truncatingIfNeeded: pixel >> 8)
          out[at + 2] = UInt8(truncatingIfNeeded: pixel)
          at += 3
        }
        rows += 1
      }
      initialized = rows * width * 3
    }
  }

  /// The pixels as 8-bit grey rows (1 byte a pixel) when every pixel is grey; nil otherwise.
  func grayPixels() -> [UInt8]? {
    guard isGray() else { return nil }
    var rows = 0
    return [UInt8](unsafeUninitializedCapacity: width * height) { out, initialized in
      forEachRow { pixels in
        var at = rows * width
        for pixel in pixels {
          out[at] = UInt8(truncatingIfNeeded: pixel)
          at += 1
        }
        rows += 1
      }
      initialized = rows * width
    }
  }

  /// Whether every pixel is grey (red, green and blue equal).
  func isGray() -> Bool {
    var isGray = true
    forEachRow { pixels in
      guard isGray else { return }
      for pixel in pixels {
        let (red, green, blue) = (pixel >> 16 & 0xFF, pixel >> 8 & 0xFF, pixel & 0xFF)
        if red != green || green != blue {
          isGray = false
          return
        }
      }
    }
    return isGray
  }

  /// Encodes the image as a baseline JPEG at `quality` (1-100).
  ///
  /// - Throws: `GraphicsError.jpegEncode` when libjpeg fails.
  public func jpeg(quality: Int = 85) throws(GraphicsError) -> [UInt8] {
    cairo_surface_flush(surface)
    guard let data = cairo_image_surface_get_data(surface) else { return [] }
    var output: UnsafeMutablePointer<UInt8>?
    var length = 0
    var message = [CChar](repeating: 0, count: 256)
    let status = CImprintShims_jpeg_encode(
      data, UInt32(width), UInt32(height), Int(cairo_image_surface_get_stride(surface)),
      Int32(quality), &output, &length, &message, message.count)
    guard status == 0, let output else {
      throw .jpegEncode(reason: JPEGDecoder.text(message))
    }
    defer { CImprintShims_free(output) }
    return Array(UnsafeBufferPointer(start: output, count: length))
  }

  /// Lends the pixels for writing: `body` gets the top row's first pixel and the stride in
  /// bytes, and writes opaque 32-bit `0xFFRRGGBB` words (a renderer other than cairo drawing
  /// into the image); cairo is told afterwards that they changed.
  package func withMutablePixels<Result>(
    _ body: (UnsafeMutablePointer<UInt32>, Int) throws -> Result
  ) rethrows -> Result {
    cairo_surface_flush(surface)
    let stride = Int(cairo_image_surface_get_stride(surface))
    // A surface this type made is never in error, so it always has data.
    guard let data = cairo_image_surface_get_data(surface) else {
      preconditionFailure("cairo image surface without data")
    }
    defer { cairo_surface_mark_dirty(surface) }
    return try body(UnsafeMutableRawPointer(data).assumingMemoryBound(to: UInt32.self), stride)
  }

  /// Visits the rows, top first, each as one 32-bit word a pixel: `0xAARRGGBB`, premultiplied
  /// (cairo's `ARGB32`; opaque pages have alpha 255).
  ///
  /// A row at a time, so that the caller's loop over the pixels is compiled in its own module.
  public func forEachRow(_ body: (UnsafeBufferPointer<UInt32>) -> Void) {
    cairo_surface_flush(surface)
    let stride = Int(cairo_image_surface_get_stride(surface))
    guard let data = cairo_image_surface_get_data(surface) else { return }
    for y in 0..<height {
      // cairo's strides are multiples of 4 and its data is aligned for 32-bit pixels.
      let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
      body(UnsafeBufferPointer(start: row, count: width))
    }
  }

  /// Encodes the image as PNG: 8-bit grey when every pixel is grey, else 8-bit RGB.
  ///
  /// The encoder reads cairo's pixels as they are, converting each row as it filters it (no
  /// copy of the image in between).
  ///
  /// - Parameters:
  ///   - dpi: stored in the file when given.
  ///   - text: tEXt chunks (key, value).
  ///   - compressionLevel: the deflater's level 0-9.
  ///   - filter: the row filter; nil for up (`PNGRowFilter.standard`).
  ///   - deflater: the library that deflates the rows (`PNGDeflater` says which suits what).
  /// - Returns: the PNG file's bytes.
  /// - Throws: `GraphicsError.pngEncode`.
  public func png(
    dpi: Double? = nil, text: [(key: String, value: String)] = [],
    compressionLevel: Int = 3, filter: PNGRowFilter? = nil, deflater: PNGDeflater = .zlib
  ) throws(GraphicsError) -> [UInt8] {
    let gray = isGray()
    cairo_surface_flush(surface)
    guard let data = cairo_image_surface_get_data(surface) else {
      preconditionFailure("a valid cairo image surface has data")
    }
    // cairo's strides are multiples of 4 and its data is aligned for 32-bit pixels; the
    // surface outlives the call.
    let source = PNGEncoder.Source(
      rows: UnsafeRawPointer(data), stride: Int(cairo_image_surface_get_stride(surface)),
      kind: gray ? CImprintShims_PNG_XRGB_TO_GRAY : CImprintShims_PNG_XRGB_TO_RGB)
    return try PNGEncoder.encode(
      width: width, height: height, format: gray ? .gray8 : .rgb8, source: source, dpi: dpi,
      text: text, compressionLevel: compressionLevel, filter: filter, deflater: deflater)
  }
}
