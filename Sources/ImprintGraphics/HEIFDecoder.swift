// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: HEIF images (HEIC from phones, AVIF) through libheif, loaded when first needed.

internal import CHeif
import Glibc
import ImprintCore

/// HEIF decoding with libheif, which this module loads with `dlopen` the first time a HEIF image
/// is read.
///
/// Why not linked: libheif depends on x265, aom, dav1d and libde265, which the dynamic loader
/// maps and relocates at every exec of a program linked with it. Measured on the release build
/// (`imprint --version`, CPU per run, median of 5 × 100 runs, 2 cores): 15.5 ms without, 17.8 to
/// 18.8 ms with libheif loaded at start-up (+2.4 to 3.3 ms, about a fifth), against +0.4 to
/// 0.6 ms for libwebp, libtiff and giflib together, which are linked. Cards, QR codes and
/// documents that hold no HEIF image never pay for it; a process (or document worker) that reads
/// one pays once.
///
/// libheif applies the image's transformations (`irot` rotation, `imir` mirror, `clap` crop) as
/// it decodes, so the bitmap is upright as the file means it. The EXIF Orientation that phones
/// also write into HEIF files describes the same turn and is never applied on top (it would turn
/// the photo twice; libheif issue 680).
enum HEIFDecoder {
  /// ftyp brands of HEIF files libheif decodes: HEVC (HEIC) and AV1 (AVIF) images and sequences,
  /// and the generic image brands.
  static let brands: Set<String> = [
    "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1", "avif", "avis",
  ]

  /// Whether `bytes` start with an ISO-BMFF `ftyp` box naming a HEIF brand (major or compatible).
  static func isHEIF(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 16, Array(bytes[4..<8]) == Array("ftyp".utf8) else { return false }
    let size = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
    // The major brand, then the compatible brands after the minor version.
    let offsets = [8] + Array(Swift.stride(from: 16, to: min(size, bytes.count, 256) - 3, by: 4))
    return offsets.contains {
      brands.contains(String(decoding: bytes[$0..<($0 + 4)], as: UTF8.self))
    }
  }

  /// The primary image's size as displayed (transformations applied).
  ///
  /// - Throws: `ImageError` naming `source`.
  static func size(_ bytes: [UInt8], source: String) throws(ImageError) -> (Int, Int) {
    let library = try HEIFLibrary.loaded(source: source)
    return try library.withPrimaryImage(bytes, source: source) { _, width, height in
      (width, height)
    }
  }

  /// Decodes the primary image to a bitmap, refusing more than `maximumPixels` before decoding.
  ///
  /// - Throws: `ImageError` naming `source`: `.tooLarge`, `.damaged` (libheif's text),
  ///   `.outOfMemory`, `.decoderUnavailable`.
  static func decode(
    _ bytes: [UInt8], source: String, maximumPixels: Int
  ) throws(ImageError) -> Bitmap {
    let library = try HEIFLibrary.loaded(source: source)
    return try library.withPrimaryImage(bytes, source: source) {
      handle, width, height throws(ImageError) in
      guard width * height <= maximumPixels else {
        throw .tooLarge(
          source: source, width: width, height: height, maximumPixels: maximumPixels)
      }
      return try library.decode(handle, width: width, height: height, source: source)
    }
  }
}

/// libheif's functions, looked up once in the library `dlopen` loaded (never unloaded).
private struct HEIFLibrary: @unchecked Sendable {
  // @unchecked: C function pointers into a library that stays loaded; libheif's functions are
  // safe to call from many threads on distinct contexts.
  typealias Handle = OpaquePointer

  let contextAlloc: @convention(c) () -> OpaquePointer?
  let contextFree: @convention(c) (OpaquePointer?) -> Void
  let setMaximumSize: @convention(c) (OpaquePointer?, Int32) -> Void
  let setMaximumThreads: @convention(c) (OpaquePointer?, Int32) -> Void
  let readFromMemory:
    @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, OpaquePointer?) -> heif_error
  let primaryHandle:
    @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> heif_error
  let handleRelease: @convention(c) (OpaquePointer?) -> Void
  let handleWidth: @convention(c) (OpaquePointer?) -> Int32
  let handleHeight: @convention(c) (OpaquePointer?) -> Int32
  let optionsAlloc: @convention(c) () -> UnsafeMutablePointer<heif_decoding_options>?
  let optionsFree: @convention(c) (UnsafeMutablePointer<heif_decoding_options>?) -> Void
  let decodeImage:
    @convention(c) (
      OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, heif_colorspace, heif_chroma,
      UnsafeMutablePointer<heif_decoding_options>?
    ) -> heif_error
  let imageRelease: @convention(c) (OpaquePointer?) -> Void
  let imageWidth: @convention(c) (OpaquePointer?, heif_channel) -> Int32
  let imageHeight: @convention(c) (OpaquePointer?, heif_channel) -> Int32
  let planeReadonly:
    @convention(c) (OpaquePointer?, heif_channel, UnsafeMutablePointer<Int32>?) -> UnsafePointer<
      UInt8
    >?

  /// The library, or why it could not be loaded (`dlerror`'s text), loaded at first use.
  private static let shared: Result<HEIFLibrary, SharedLibrary.Failure> = load()

  static func loaded(source: String) throws(ImageError) -> HEIFLibrary {
    switch shared {
    case .success(let library): return library
    case .failure(let failure):
      throw .decoderUnavailable(source: source, library: "libheif", reason: failure.reason)
    }
  }

  private static func load() -> Result<HEIFLibrary, SharedLibrary.Failure> {
    do {
      let library = try SharedLibrary.open("libheif.so.1")
      func symbol<T>(_ name: String) throws(SharedLibrary.Failure) -> T {
        try library.function(name)
      }
      let initialise: @convention(c) (OpaquePointer?) -> heif_error = try symbol("heif_init")
      let loaded = try HEIFLibrary(
        contextAlloc: symbol("heif_context_alloc"), contextFree: symbol("heif_context_free"),
        setMaximumSize: symbol("heif_context_set_maximum_image_size_limit"),
        setMaximumThreads: symbol("heif_context_set_max_decoding_threads"),
        readFromMemory: symbol("heif_context_read_from_memory_without_copy"),
        primaryHandle: symbol("heif_context_get_primary_image_handle"),
        handleRelease: symbol("heif_image_handle_release"),
        handleWidth: symbol("heif_image_handle_get_width"),
        handleHeight: symbol("heif_image_handle_get_height"),
        optionsAlloc: symbol("heif_decoding_options_alloc"),
        optionsFree: symbol("heif_decoding_options_free"),
        decodeImage: symbol("heif_decode_image"), imageRelease: symbol("heif_image_release"),
        imageWidth: symbol("heif_image_get_width"), imageHeight: symbol("heif_image_get_height"),
        planeReadonly: symbol("heif_image_get_plane_readonly"))
      let status = initialise(nil)
      guard status.code == heif_error_Ok else {
        return .failure(SharedLibrary.Failure(reason: text(status)))
      }
      return .success(loaded)
    } catch {
      return .failure(error)
    }
  }

  /// libheif's message for `error` (always set, per heif.h).
  static func text(_ error: heif_error) -> String {
    error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
  }

  /// The error for a failed libheif call.
  static func failure(_ error: heif_error, source: String) -> ImageError {
    if error.code == heif_error_Memory_allocation_error { return .outOfMemory(source: source) }
    return .damaged(source: source, reason: "libheif: " + text(error))
  }

  /// Parses `bytes` and calls `body` with the primary image's handle and displayed size.
  ///
  /// The context reads the bytes without copying them, so it lives only inside this call.
  func withPrimaryImage<T>(
    _ bytes: [UInt8], source: String,
    _ body: (OpaquePointer, Int, Int) throws(ImageError) -> T
  ) throws(ImageError) -> T {
    guard let context = contextAlloc() else { throw .outOfMemory(source: source) }
    let scope = LiveHandles.opened("heif_context")
    defer {
      contextFree(context)
      LiveHandles.closed("heif_context", in: scope)
    }
    // libheif's own bound on a side (grids included); the pixel limit is checked by the caller.
    setMaximumSize(context, Int32(ImageDecoder.maximumSide))
    // Tiles are decoded on the calling thread: a worker's CPU limit and the caller's
    // parallelism stay the only ones.
    setMaximumThreads(context, 0)
    // The context reads the bytes in place: they stay pinned while it is used.
    let outcome = bytes.withUnsafeBytes { raw -> Result<T, ImageError> in
      Result { () throws(ImageError) -> T in
        try withContext(context, raw, source: source, body)
      }
    }
    return try outcome.get()
  }

  private func withContext<T>(
    _ context: OpaquePointer, _ raw: UnsafeRawBufferPointer, source: String,
    _ body: (OpaquePointer, Int, Int) throws(ImageError) -> T
  ) throws(ImageError) -> T {
    let read = readFromMemory(context, raw.baseAddress, raw.count, nil)
    guard read.code == heif_error_Ok else { throw Self.failure(read, source: source) }
    var handle: OpaquePointer?
    let primary = primaryHandle(context, &handle)
    guard primary.code == heif_error_Ok, let handle else {
      throw Self.failure(primary, source: source)
    }
    defer { handleRelease(handle) }
    let width = Int(handleWidth(handle))
    let height = Int(handleHeight(handle))
    guard width > 0, height > 0 else {
      throw .damaged(
        source: source, reason: "the HEIF header gives invalid dimensions \(width) x \(height)")
    }
    guard width <= ImageDecoder.maximumSide, height <= ImageDecoder.maximumSide else {
      throw .tooLarge(
        source: source, width: width, height: height, maximumPixels: ImageDecoder.maximumPixels)
    }
    return try body(handle, width, height)
  }

  /// Decodes `handle` (transformations applied) to premultiplied BGRA.
  func decode(
    _ handle: OpaquePointer, width: Int, height: Int, source: String
  ) throws(ImageError) -> Bitmap {
    guard let options = optionsAlloc() else { throw .outOfMemory(source: source) }
    defer { optionsFree(options) }
    options.pointee.ignore_transformations = 0
    options.pointee.convert_hdr_to_8bit = 1
    // A truncated or corrupt stream is an error, not a picture with grey blocks.
    options.pointee.strict_decoding = 1
    var image: OpaquePointer?
    let decoded = decodeImage(
      handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options)
    guard decoded.code == heif_error_Ok, let image else {
      throw Self.failure(decoded, source: source)
    }
    defer { imageRelease(image) }
    let outWidth = Int(imageWidth(image, heif_channel_interleaved))
    let outHeight = Int(imageHeight(image, heif_channel_interleaved))
    var stride: Int32 = 0
    guard outWidth == width, outHeight == height,
      let plane = planeReadonly(image, heif_channel_interleaved, &stride),
      Int(stride) >= width * 4
    else {
      throw .damaged(
        source: source,
        reason: "libheif decoded \(outWidth) x \(outHeight) pixels where the file gives "
          + "\(width) x \(height)")
    }
    return Bitmap.fromRGBA(
      width: width, height: height, rows: plane, stride: Int(stride), premultiplied: false)
  }
}
