// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: TIFF images through libtiff, every page (directory) of a multi-page file.

internal import CTIFF
import Glibc
import ImprintCore

/// TIFF decoding with libtiff, from memory, with error and warning handlers of this handle's own
/// (libtiff's default ones print to standard error) and a cap on libtiff's own allocations.
///
/// libtiff is loaded with `dlopen` the first time a TIFF image is read. Why not linked: it brings
/// four libraries nothing else of `imprint` needs (zstd, xz, LERC with its C++ runtime, JBIG-KIT),
/// which the dynamic loader mapped and relocated at every exec, whatever the command. An empty C
/// program linked with imprint's libraries took 1.5 to 2 ms more CPU with libtiff than without
/// (`perf stat -r 300`, three alternating runs), a tenth of `imprint --version` and about 1 % of
/// a 200-card batch; cards and QR codes never read a TIFF.
///
/// Each directory is a page. Pages are decoded by `TIFFReadRGBAImageOriented` (any photometric,
/// compression and bit depth libtiff converts to 8-bit RGBA; alpha premultiplied) into a raster
/// allocated after its size was checked, asking for the file's own orientation so that libtiff
/// flips nothing, then turned upright by the Orientation tag as a JPEG is by its EXIF one
/// (libtiff alone would flip but never rotate the transposed orientations 5 to 8).
enum TIFFDecoder {
  /// The most bytes libtiff may allocate at once for its own buffers (strips, tiles): a
  /// 50-megapixel page of 16-bit RGBA in one strip fits.
  static let maximumAllocation = ImageDecoder.maximumPixels * 8

  /// What one directory says: size as displayed, resolution and orientation.
  struct Page {
    /// Width in pixels, as displayed (orientation applied).
    var width: Int
    /// Height in pixels, as displayed.
    var height: Int
    /// Horizontal resolution in dots per inch, when the file gives one.
    var dpi: Double?
  }

  /// Every page's size and resolution, each checked against `maximumPixels` and `maximumSide`.
  ///
  /// - Throws: `ImageError` naming `source`: `.damaged` (libtiff's text), `.tooLarge`.
  static func pages(
    _ bytes: [UInt8], source: String, maximumPixels: Int
  ) throws(ImageError) -> [Page] {
    let library = try TIFFLibrary.loaded(source: source)
    return try withTIFF(bytes, source: source, library) {
      tiff, messages throws(ImageError) -> [Page] in
      var pages: [Page] = []
      repeat {
        let (width, height, orientation) = try dimensions(tiff, source: source, library)
        let swapped = (5...8).contains(orientation)
        try check(width, height, maximumPixels: maximumPixels, source: source)
        var resolution: Float = 0
        var unit: UInt16 = 0
        var dpi: Double?
        if field(tiff, TIFFTAG_XRESOLUTION, &resolution, library), resolution.isFinite,
          resolution > 0
        {
          _ = field(tiff, TIFFTAG_RESOLUTIONUNIT, &unit, library, defaulted: true)
          dpi =
            unit == RESUNIT_INCH
            ? Double(resolution)
            : unit == RESUNIT_CENTIMETER ? Double(resolution) * 2.54 : nil
        }
        pages.append(
          Page(
            width: swapped ? height : width, height: swapped ? width : height, dpi: dpi))
      } while library.readDirectory(tiff) == 1
      // TIFFReadDirectory returns 0 both at the end and on a damaged directory.
      if let error = messages.first {
        throw .damaged(source: source, reason: "libtiff: " + error)
      }
      return pages
    }
  }

  /// Decodes page `page` (1-based) to an upright bitmap, refusing more than `maximumPixels`
  /// before allocating it.
  ///
  /// - Throws: `ImageError` naming `source`: `.damaged` (libtiff's text, a page past the end
  ///   included), `.tooLarge`, `.unsupportedVariant` (a kind of TIFF libtiff cannot convert,
  ///   such as 32-bit floating-point samples), `.outOfMemory`.
  static func decode(
    _ bytes: [UInt8], source: String, page: Int, maximumPixels: Int
  ) throws(ImageError) -> Bitmap {
    let library = try TIFFLibrary.loaded(source: source)
    return try withTIFF(bytes, source: source, library) {
      tiff, messages throws(ImageError) -> Bitmap in
      guard page >= 1, page <= Int(UInt32.max),
        library.setDirectory(tiff, tdir_t(page - 1)) == 1
      else {
        throw .damaged(
          source: source,
          reason: "page \(page) cannot be read" + (messages.first.map { " (libtiff: \($0))" } ?? "")
        )
      }
      let (width, height, orientation) = try dimensions(tiff, source: source, library)
      try check(width, height, maximumPixels: maximumPixels, source: source)
      var reason = [CChar](repeating: 0, count: 1024)
      guard library.rgbaImageOK(tiff, &reason) == 1 else {
        throw .unsupportedVariant(source: source, reason: "libtiff: " + JPEGDecoder.text(reason))
      }
      var raster = [UInt32](repeating: 0, count: width * height)
      // Asking for the file's own orientation: libtiff then copies rows as stored.
      let read = library.readRGBAImageOriented(
        tiff, UInt32(width), UInt32(height), &raster, Int32(orientation), 1)
      guard read == 1 else {
        throw .damaged(source: source, reason: "libtiff: " + (messages.first ?? "read failed"))
      }
      // Each pixel is R, G, B, A in memory (libtiff packs A << 24 | B << 16 | G << 8 | R).
      let bitmap = raster.withUnsafeBytes { bytes in
        bytes.baseAddress.map {
          Bitmap.fromRGBA(
            width: width, height: height, rows: $0.assumingMemoryBound(to: UInt8.self),
            stride: width * 4, premultiplied: true)
        }
      }
      guard let bitmap else { preconditionFailure("a raster of at least one pixel has memory") }
      return bitmap.oriented(orientation)
    }
  }

  /// The current directory's stored width, height and orientation (1 when absent).
  private static func dimensions(
    _ tiff: OpaquePointer, source: String, _ library: TIFFLibrary
  ) throws(ImageError) -> (Int, Int, Int) {
    var width: UInt32 = 0
    var height: UInt32 = 0
    var orientation: UInt16 = 1
    guard field(tiff, TIFFTAG_IMAGEWIDTH, &width, library),
      field(tiff, TIFFTAG_IMAGELENGTH, &height, library), width > 0, height > 0
    else {
      throw .damaged(
        source: source, reason: "the TIFF header gives invalid dimensions \(width) x \(height)")
    }
    _ = field(tiff, TIFFTAG_ORIENTATION, &orientation, library, defaulted: true)
    return (Int(width), Int(height), (1...8).contains(orientation) ? Int(orientation) : 1)
  }

  private static func check(
    _ width: Int, _ height: Int, maximumPixels: Int, source: String
  ) throws(ImageError) {
    guard width <= ImageDecoder.maximumSide, height <= ImageDecoder.maximumSide,
      width * height <= maximumPixels
    else {
      throw .tooLarge(source: source, width: width, height: height, maximumPixels: maximumPixels)
    }
  }

  /// Reads one tag into `value` (TIFFGetField is variadic, which Swift cannot call).
  private static func field<T>(
    _ tiff: OpaquePointer, _ tag: Int32, _ value: inout T, _ library: TIFFLibrary,
    defaulted: Bool = false
  ) -> Bool {
    withUnsafeMutablePointer(to: &value) { pointer in
      withVaList([pointer]) { list in
        defaulted
          ? library.vGetFieldDefaulted(tiff, UInt32(tag), list) == 1
          : library.vGetField(tiff, UInt32(tag), list) == 1
      }
    }
  }

  /// Opens `bytes` as a TIFF (client procedures over memory, no mapping) and calls `body` with
  /// the handle and the errors libtiff reported so far.
  private static func withTIFF<T>(
    _ bytes: [UInt8], source: String, _ library: TIFFLibrary,
    _ body: (OpaquePointer, TIFFMessages) throws(ImageError) -> T
  ) throws(ImageError) -> T {
    let reader = MemoryReader(bytes)
    let messages = TIFFMessages()
    guard let options = library.optionsAlloc() else { throw .outOfMemory(source: source) }
    defer { library.optionsFree(options) }
    library.optionsSetMaxSingleMemAlloc(options, tmsize_t(maximumAllocation))
    let user = Unmanaged.passUnretained(messages).toOpaque()
    library.optionsSetErrorHandlerExtR(options, tiffError, user)
    library.optionsSetWarningHandlerExtR(options, tiffWarning, user)
    return try withExtendedLifetime((reader, messages)) { () throws(ImageError) -> T in
      guard
        let tiff = library.clientOpenExt(
          "image", "rm", Unmanaged.passUnretained(reader).toOpaque(), tiffRead, tiffWrite,
          tiffSeek, tiffClose, tiffSize, tiffMap, tiffUnmap, options)
      else {
        throw .damaged(source: source, reason: "libtiff: " + (messages.first ?? "cannot open"))
      }
      let scope = LiveHandles.opened("TIFF")
      defer {
        library.close(tiff)
        LiveHandles.closed("TIFF", in: scope)
      }
      return try body(tiff, messages)
    }
  }
}

/// libtiff's functions, looked up once in the library `dlopen` loaded (never unloaded).
private struct TIFFLibrary: @unchecked Sendable {
  // @unchecked: C function pointers into a library that stays loaded; libtiff's functions are
  // safe to call from many threads on distinct handles.
  let clientOpenExt: ImprintTIFF_TIFFClientOpenExt
  let close: ImprintTIFF_TIFFClose
  let optionsAlloc: ImprintTIFF_TIFFOpenOptionsAlloc
  let optionsFree: ImprintTIFF_TIFFOpenOptionsFree
  let optionsSetErrorHandlerExtR: ImprintTIFF_TIFFOpenOptionsSetErrorHandlerExtR
  let optionsSetMaxSingleMemAlloc: ImprintTIFF_TIFFOpenOptionsSetMaxSingleMemAlloc
  let optionsSetWarningHandlerExtR: ImprintTIFF_TIFFOpenOptionsSetWarningHandlerExtR
  let rgbaImageOK: ImprintTIFF_TIFFRGBAImageOK
  let readDirectory: ImprintTIFF_TIFFReadDirectory
  let readRGBAImageOriented: ImprintTIFF_TIFFReadRGBAImageOriented
  let setDirectory: ImprintTIFF_TIFFSetDirectory
  let vGetField: ImprintTIFF_TIFFVGetField
  let vGetFieldDefaulted: ImprintTIFF_TIFFVGetFieldDefaulted

  /// The library, or why it could not be loaded (`dlerror`'s text), loaded at first use.
  private static let shared: Result<TIFFLibrary, SharedLibrary.Failure> = Result {
    () throws(SharedLibrary.Failure) -> TIFFLibrary in
    let library = try SharedLibrary.open("libtiff.so.6")
    return try TIFFLibrary(
      clientOpenExt: library.function("TIFFClientOpenExt"),
      close: library.function("TIFFClose"),
      optionsAlloc: library.function("TIFFOpenOptionsAlloc"),
      optionsFree: library.function("TIFFOpenOptionsFree"),
      optionsSetErrorHandlerExtR: library.function("TIFFOpenOptionsSetErrorHandlerExtR"),
      optionsSetMaxSingleMemAlloc: library.function("TIFFOpenOptionsSetMaxSingleMemAlloc"),
      optionsSetWarningHandlerExtR: library.function("TIFFOpenOptionsSetWarningHandlerExtR"),
      rgbaImageOK: library.function("TIFFRGBAImageOK"),
      readDirectory: library.function("TIFFReadDirectory"),
      readRGBAImageOriented: library.function("TIFFReadRGBAImageOriented"),
      setDirectory: library.function("TIFFSetDirectory"),
      vGetField: library.function("TIFFVGetField"),
      vGetFieldDefaulted: library.function("TIFFVGetFieldDefaulted"))
  }

  /// The functions.
  ///
  /// - Throws: `ImageError.decoderUnavailable` naming `source` when libtiff cannot be loaded.
  static func loaded(source: String) throws(ImageError) -> TIFFLibrary {
    switch shared {
    case .success(let library): return library
    case .failure(let failure):
      throw .decoderUnavailable(source: source, library: "libtiff", reason: failure.reason)
    }
  }
}

/// The errors libtiff reported on one handle (the first kept, at most 300 bytes).
private final class TIFFMessages {
  var first: String?
}

private func tiffError(
  _ tiff: OpaquePointer?, _ user: UnsafeMutableRawPointer?, _ module: UnsafePointer<CChar>?,
  _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?
) -> Int32 {
  guard let user, let format, let arguments else { return 1 }
  let messages = Unmanaged<TIFFMessages>.fromOpaque(user).takeUnretainedValue()
  if messages.first == nil {
    var buffer = [CChar](repeating: 0, count: 300)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    messages.first = JPEGDecoder.text(buffer)
  }
  return 1  // handled: libtiff's own handler (standard error) is not called
}

private func tiffWarning(
  _ tiff: OpaquePointer?, _ user: UnsafeMutableRawPointer?, _ module: UnsafePointer<CChar>?,
  _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?
) -> Int32 {
  1  // warnings (unknown tags, for example) are not failures, and never printed
}

private func reader(_ handle: thandle_t?) -> MemoryReader? {
  handle.map { Unmanaged<MemoryReader>.fromOpaque($0).takeUnretainedValue() }
}

private func tiffRead(_ handle: thandle_t?, _ target: UnsafeMutableRawPointer?, _ count: tmsize_t)
  -> tmsize_t
{
  guard let reader = reader(handle), let target, count >= 0 else { return -1 }
  return tmsize_t(
    reader.read(into: target.assumingMemoryBound(to: UInt8.self), count: Int(clamping: count)))
}

private func tiffWrite(_ handle: thandle_t?, _ source: UnsafeMutableRawPointer?, _ count: tmsize_t)
  -> tmsize_t
{
  -1
}

private func tiffSeek(_ handle: thandle_t?, _ offset: toff_t, _ whence: Int32) -> toff_t {
  guard let reader = reader(handle), let position = reader.seek(offset, whence: whence) else {
    return toff_t.max  // libtiff's -1
  }
  return toff_t(position)
}

private func tiffClose(_ handle: thandle_t?) -> Int32 { 0 }

private func tiffSize(_ handle: thandle_t?) -> toff_t {
  toff_t(reader(handle)?.count ?? 0)
}

private func tiffMap(
  _ handle: thandle_t?, _ base: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
  _ size: UnsafeMutablePointer<toff_t>?
) -> Int32 {
  0
}

private func tiffUnmap(_ handle: thandle_t?, _ base: UnsafeMutableRawPointer?, _ size: toff_t) {}
