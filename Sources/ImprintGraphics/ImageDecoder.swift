// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: photos and images from bytes: JPEG (EXIF orientation applied), PNG (alpha),
// HEIF (its transformations applied), WebP (alpha; an animation's first frame), TIFF (every
// page, its orientation applied) and GIF (the first frame).

internal import CCairo
import ImprintCore

/// Image file types recognised from their first bytes (never from the file name).
public enum ImageType: String, Sendable, Codable, CaseIterable {
  /// JPEG (`FF D8 FF`).
  case jpeg
  /// PNG (`89 50 4E 47 0D 0A 1A 0A`).
  case png
  /// HEIF: an ISO-BMFF `ftyp` box naming a HEIF brand (HEIC from phones, AVIF).
  case heif
  /// WebP (`RIFF`, a size, `WEBP`).
  case webp
  /// TIFF (`II*\0` or `MM\0*`; BigTIFF `II+\0`, `MM\0+`).
  case tiff
  /// GIF (`GIF87a` or `GIF89a`).
  case gif

  /// Sniffs the type from the content, or nil.
  public init?(sniffing bytes: [UInt8]) {
    func starts(_ prefix: String) -> Bool { bytes.starts(with: Array(prefix.utf8)) }
    if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
      self = .jpeg
    } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
      self = .png
    } else if bytes.count >= 12, starts("RIFF"), Array(bytes[8..<12]) == Array("WEBP".utf8) {
      self = .webp
    } else if [
      [0x49, 0x49, 0x2A, 0], [0x4D, 0x4D, 0, 0x2A], [0x49, 0x49, 0x2B, 0], [0x4D, 0x4D, 0, 0x2B],
    ]
    .contains(where: { bytes.starts(with: $0) }) {
      self = .tiff
    } else if starts("GIF87a") || starts("GIF89a") {
      self = .gif
    } else if HEIFDecoder.isHEIF(bytes) {
      self = .heif
    } else {
      return nil
    }
  }

  /// The name people know the format by (`JPEG`, `PNG`, `HEIF`, `WebP`, `TIFF`, `GIF`).
  public var name: String {
    switch self {
    case .webp: "WebP"
    default: rawValue.uppercased()
    }
  }

  /// "JPEG, PNG, HEIF, WebP, TIFF or GIF": the formats read, for messages.
  public static let accepted = "JPEG, PNG, HEIF, WebP, TIFF or GIF"
}

/// Errors of decoding an image file.
///
/// The one owner of the `image.*` codes: a photo (cards), an upload (documents) and a decoder
/// called directly all report an image's failure with these.
public enum ImageError: ImprintError, Equatable, Codable {
  /// The content is not an image of a type Imprint reads.
  case unsupportedType(source: String, found: String)
  /// The file is damaged or truncated (the decoding library's text in `reason`).
  case damaged(source: String, reason: String)
  /// The image is larger than allowed.
  case tooLarge(source: String, width: Int, height: Int, maximumPixels: Int)
  /// There was not memory enough to decode it (within the process's limit).
  case outOfMemory(source: String)
  /// A well-formed file of a kind its library cannot convert to pixels (a TIFF of 32-bit
  /// floating-point samples, for example).
  case unsupportedVariant(source: String, reason: String)
  /// The library that decodes this type could not be loaded (libheif, loaded when needed).
  case decoderUnavailable(source: String, library: String, reason: String)

  public var code: String {
    switch self {
    case .unsupportedType: "image.unsupportedType"
    case .damaged: "image.damaged"
    case .tooLarge: "image.tooLarge"
    case .outOfMemory: "image.outOfMemory"
    case .unsupportedVariant: "image.unsupportedVariant"
    case .decoderUnavailable: "image.decoderUnavailable"
    }
  }

  /// 422: an image understood and refused.
  public var status: Int {
    switch self {
    case .unsupportedType, .damaged, .tooLarge, .outOfMemory, .unsupportedVariant,
      .decoderUnavailable:
      422
    }
  }

  public var message: String {
    switch self {
    case .unsupportedType(let source, let found):
      "image '\(source)' is not a \(ImageType.accepted) image: it looks like \(found)"
    case .damaged(let source, let reason): "image '\(source)' is damaged or truncated (\(reason))"
    case .tooLarge(let source, let width, let height, let maximum)
    where width.multipliedReportingOverflow(by: height).partialValue <= maximum:
      "image '\(source)' is \(width) x \(height) pixels; at most \(ImageDecoder.maximumSide) "
        + "pixels a side are allowed"
    case .tooLarge(let source, let width, let height, let maximum):
      "image '\(source)' is \(width) x \(height) pixels; at most \(maximum) pixels are allowed"
    case .outOfMemory(let source): "image '\(source)' needs more memory to decode than is available"
    case .unsupportedVariant(let source, let reason):
      "image '\(source)' is of a kind that cannot be decoded (\(reason))"
    case .decoderUnavailable(let source, let library, let reason):
      "image '\(source)' cannot be decoded: \(library) could not be loaded (\(reason))"
    }
  }

  public var hint: String? {
    switch self {
    case .unsupportedType: "convert the image to one of those formats"
    case .damaged: "export the image again"
    case .tooLarge, .outOfMemory: "scale the image down"
    case .unsupportedVariant: "export the image again as 8-bit JPEG, PNG or TIFF"
    case .decoderUnavailable(_, let library, _):
      "install \(library) (Debian: \(library == "libheif" ? "libheif1" : library))"
    }
  }
}

/// What an image file's header says (see `ImageDecoder.header`).
public struct ImageHeader: Sendable, Equatable {
  /// Width in pixels, as displayed (EXIF orientation applied).
  public let width: Int
  /// Height in pixels, as displayed.
  public let height: Int
  /// Resolution in dots per inch from PNG pHYs, a JPEG's JFIF density or EXIF resolution
  /// (`ImageDecoder.jpegDPI`) or TIFF's resolution tags, nil when the file gives none.
  public let dpi: Double?
}

/// Decodes JPEG, PNG, HEIF, WebP, TIFF and GIF images into bitmaps.
public enum ImageDecoder {
  /// The most pixels a photo may have (about 50 megapixels).
  public static let maximumPixels = 50_000_000

  /// Decodes `bytes`, sniffing the type, upright: JPEGs by their EXIF orientation, TIFFs by
  /// their Orientation tag, HEIF by its own transformations (never by EXIF too); a multi-page
  /// TIFF's first page, an animation's first frame.
  ///
  /// - Parameters:
  ///   - bytes: the file's content.
  ///   - source: the file name, for errors.
  /// - Returns: the upright bitmap.
  /// - Throws: `ImageError` naming `source`.
  public static func decode(_ bytes: [UInt8], source: String) throws(ImageError) -> Bitmap {
    try decode(bytes, source: source, maximumPixels: maximumPixels)
  }

  /// Decodes `bytes` as `decode(_:source:)` does, refusing images above `maximumPixels`.
  ///
  /// - Throws: `ImageError` naming `source`.
  public static func decode(
    _ bytes: [UInt8], source: String, maximumPixels: Int
  ) throws(ImageError) -> Bitmap {
    if ImageType(sniffing: bytes) == .tiff {
      // Every directory read and checked first, as `pages` does: a file cut short after its
      // first page is damaged, not a photo.
      _ = try pages(bytes, source: source, maximumPixels: maximumPixels)
    }
    return try decode(bytes, source: source, page: 1, maximumPixels: maximumPixels)
  }

  /// Decodes page `page` (1-based) of `bytes`: only TIFFs have pages past the first; the
  /// page's size is checked against `maximumPixels` before anything is allocated.
  ///
  /// Read `pages(_:source:maximumPixels:)` first, as `inspect` and `thumb` do: it checks every
  /// page of a TIFF (this reads the directories up to `page` only, so that the pages of a long
  /// file are not each walked past all the others).
  ///
  /// - Throws: `ImageError` naming `source` (`.damaged` for a page past the end).
  public static func decode(
    _ bytes: [UInt8], source: String, page: Int, maximumPixels: Int
  ) throws(ImageError) -> Bitmap {
    guard let type = ImageType(sniffing: bytes) else { throw unsupported(bytes, source: source) }
    if type != .tiff && page != 1 {
      throw .damaged(source: source, reason: "a \(type.name) image has one page, not \(page)")
    }
    switch type {
    case .jpeg:
      _ = try header(bytes, source: source, maximumPixels: maximumPixels)
      let bitmap = try JPEGDecoder.decode(bytes, source: source, maximumPixels: maximumPixels)
      return bitmap.oriented(exifOrientation(bytes))
    case .png:
      _ = try header(bytes, source: source, maximumPixels: maximumPixels)
      return try decodePNG(bytes, source: source)
    case .heif: return try HEIFDecoder.decode(bytes, source: source, maximumPixels: maximumPixels)
    case .webp: return try WebPDecoder.decode(bytes, source: source, maximumPixels: maximumPixels)
    case .tiff:
      return try TIFFDecoder.decode(
        bytes, source: source, page: page, maximumPixels: maximumPixels)
    case .gif: return try GIFDecoder.decode(bytes, source: source, maximumPixels: maximumPixels)
    }
  }

  private static func unsupported(_ bytes: [UInt8], source: String) -> ImageError {
    return .unsupportedType(source: source, found: ContentKind.describe(bytes))
  }

  /// The longest side of a PNG (cairo decodes it), a HEIF, WebP, TIFF or GIF image (each
  /// becomes a cairo surface), in pixels.
  public static let maximumSide = 32_767

  /// Reads what an image's header says (a TIFF's first page), without decoding it.
  ///
  /// The one reader of image sizes, so that what is measured is what is decoded, against the
  /// same limit.
  ///
  /// - Parameters:
  ///   - bytes: the file's content.
  ///   - source: the file name, for errors.
  ///   - maximumPixels: the most pixels allowed.
  /// - Returns: the size as displayed (orientation applied) and the resolution, if given.
  /// - Throws: `ImageError.damaged` for a header without a valid size (0 x 0 included),
  ///   `.tooLarge` for more than `maximumPixels` or a side above `maximumSide` (PNG).
  public static func header(
    _ bytes: [UInt8], source: String, maximumPixels: Int = ImageDecoder.maximumPixels
  ) throws(ImageError) -> ImageHeader {
    guard let first = try pages(bytes, source: source, maximumPixels: maximumPixels).first else {
      throw .damaged(source: source, reason: "it holds no image")
    }
    return first
  }

  /// Every page's header: one for every type but TIFF, one a directory for a TIFF, each
  /// checked as `header` checks it (a page too large refuses the file).
  ///
  /// - Throws: `ImageError` naming `source`.
  public static func pages(
    _ bytes: [UInt8], source: String, maximumPixels: Int = ImageDecoder.maximumPixels
  ) throws(ImageError) -> [ImageHeader] {
    var width = 0
    var height = 0
    var dpi: Double?
    var side = maximumSide
    switch ImageType(sniffing: bytes) {
    case .png?:
      // Signature, then the IHDR chunk: length 13, type, width, height (PNG: 1 to 2^31 - 1).
      guard bytes.count >= 33, Array(bytes[12..<16]) == Array("IHDR".utf8) else {
        throw .damaged(source: source, reason: "no PNG header")
      }
      func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
      width = be32(16)
      height = be32(20)
      guard (1...Int(Int32.max)).contains(width), (1...Int(Int32.max)).contains(height) else {
        throw .damaged(
          source: source, reason: "the PNG header gives invalid dimensions \(width) x \(height)")
      }
      // pHYs (pixels per metre, unit 1) before the first IDAT.
      var offset = 8
      while offset + 12 <= bytes.count {
        let length = be32(offset)
        let type = Array(bytes[(offset + 4)..<(offset + 8)])
        if type == Array("IDAT".utf8) { break }
        if type == Array("pHYs".utf8), offset + 17 <= bytes.count, bytes[offset + 16] == 1 {
          dpi = Double(be32(offset + 8)) * 0.0254
        }
        offset += 12 + length
      }
    case .jpeg?:
      let info = try JPEGDecoder.info(bytes, source: source)
      width = info.width
      height = info.height
      guard width > 0, height > 0 else {
        throw .damaged(
          source: source, reason: "the JPEG header gives invalid dimensions \(width) x \(height)")
      }
      // The JFIF density, else the EXIF resolution (`jpegDPI`).
      dpi = jpegDPI(bytes)
      if exifOrientation(bytes) >= 5 { swap(&width, &height) }
      // libjpeg's sides (at most 65 535).
      side = 65_535
    case .heif?: (width, height) = try HEIFDecoder.size(bytes, source: source)
    case .webp?: (width, height, _) = try WebPDecoder.features(bytes, source: source)
    case .gif?: (width, height) = try GIFDecoder.size(bytes, source: source)
    case .tiff?:
      return try TIFFDecoder.pages(bytes, source: source, maximumPixels: maximumPixels).map {
        ImageHeader(width: $0.width, height: $0.height, dpi: $0.dpi)
      }
    case nil:
      throw unsupported(bytes, source: source)
    }
    // Both sides are below 2^31: the product cannot overflow.
    guard width <= side, height <= side, width * height <= maximumPixels else {
      throw .tooLarge(source: source, width: width, height: height, maximumPixels: maximumPixels)
    }
    return [ImageHeader(width: width, height: height, dpi: dpi)]
  }

  private static func decodePNG(_ bytes: [UInt8], source: String) throws(ImageError) -> Bitmap {
    // The header's claimed size was checked (`header`) before cairo allocates anything.
    let reader = MemoryReader(bytes)
    let surface = withExtendedLifetime(reader) {
      cairo_image_surface_create_from_png_stream(
        { closure, data, length in
          guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
          let reader = Unmanaged<MemoryReader>.fromOpaque(closure).takeUnretainedValue()
          return reader.read(into: data, count: Int(length)) == Int(length)
            ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_READ_ERROR
        }, Unmanaged.passUnretained(reader).toOpaque())
    }
    guard let surface else { preconditionFailure("cairo returned a NULL surface") }
    defer { cairo_surface_destroy(surface) }
    let status = cairo_surface_status(surface)
    if status == CAIRO_STATUS_NO_MEMORY { throw .outOfMemory(source: source) }
    guard status == CAIRO_STATUS_SUCCESS else {
      throw .damaged(
        source: source, reason: "cairo: " + String(cString: cairo_status_to_string(status)))
    }
    let w = Int(cairo_image_surface_get_width(surface))
    let h = Int(cairo_image_surface_get_height(surface))
    let stride = Int(cairo_image_surface_get_stride(surface))
    let format = cairo_image_surface_get_format(surface)
    guard let data = cairo_image_surface_get_data(surface) else {
      throw .damaged(source: source, reason: "no pixel data")
    }
    // cairo's ARGB32/RGB24 memory on little-endian is B, G, R, A (premultiplied): the Bitmap
    // layout, so rows are copied as they are; RGB24's unused byte becomes an opaque alpha.
    let opaqueSource = format != CAIRO_FORMAT_ARGB32
    var hasAlpha = false
    let pixels = [UInt8](unsafeUninitializedCapacity: w * h * 4) { buffer, count in
      guard let base = buffer.baseAddress else { return }
      for y in 0..<h { (base + y * w * 4).update(from: data + y * stride, count: w * 4) }
      var index = 3
      while index < w * h * 4 {
        if opaqueSource {
          base[index] = 255
        } else if base[index] != 255 {
          hasAlpha = true
        }
        index += 4
      }
      count = w * h * 4
    }
    return Bitmap(width: w, height: h, pixels: pixels, hasAlpha: hasAlpha)
  }

  /// The EXIF orientation (1-8) of a JPEG, 1 when absent or unreadable.
  public static func exifOrientation(_ bytes: [UInt8]) -> Int {
    var orientation = 1
    forEachSegment(bytes) { marker, start, end in
      guard marker == 0xE1, EXIFDirectory.isEXIF(bytes, segment: start..<end) else { return true }
      orientation = EXIFDirectory(bytes, segment: start..<end)?.orientation ?? 1
      return false
    }
    return orientation
  }
}

/// Bytes a C decoder reads through callbacks (cairo's PNG reader, giflib, libtiff), with the
/// position it has reached.
final class MemoryReader {
  private let bytes: [UInt8]
  private var offset = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// The number of bytes.
  var count: Int { bytes.count }

  /// Copies up to `count` bytes from the position on and moves past them; returns how many
  /// were copied (fewer at the end).
  func read(into target: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
    let available = max(0, min(count, bytes.count - offset))
    bytes.withUnsafeBufferPointer { source in
      guard let base = source.baseAddress else { return }
      target.update(from: base + offset, count: available)
    }
    offset += available
    return available
  }

  /// Moves to `offset` from the start (`SEEK_SET`), the position (`SEEK_CUR`) or the end
  /// (`SEEK_END`), the offset read as two's complement; returns the new position, or nil for
  /// one before the start or past `Int.max`.
  func seek(_ offset: UInt64, whence: Int32) -> Int? {
    let base: Int =
      switch whence {
      case 1: self.offset
      case 2: bytes.count
      default: 0
      }
    let (target, overflow) = base.addingReportingOverflow(Int(truncatingIfNeeded: offset))
    guard !overflow, target >= 0 else { return nil }
    self.offset = target
    return target
  }
}

extension Bitmap {
  /// The part of the bitmap a box of `width` × `height` device pixels shows.
  ///
  /// At no more than that many pixels: `cover` crops to the box's aspect (centred); both scale
  /// down, never up.
  /// A photo from a phone (4000 × 3000) thus costs what the card needs, not what the camera made.
  public func prepared(forWidth width: Int, height: Int, fit: ImageFit) -> Bitmap {
    guard width > 0, height > 0 else { return self }
    var cropX = 0.0
    var cropY = 0.0
    var cropWidth = Double(self.width)
    var cropHeight = Double(self.height)
    let boxAspect = Double(width) / Double(height)
    if fit == .cover {
      if cropWidth / cropHeight > boxAspect {
        cropWidth = cropHeight * boxAspect
        cropX = (Double(self.width) - cropWidth) / 2
      } else {
        cropHeight = cropWidth / boxAspect
        cropY = (Double(self.height) - cropHeight) / 2
      }
    }
    let scale = min(
      1,
      fit == .cover
        ? Double(width) / cropWidth : min(Double(width) / cropWidth, Double(height) / cropHeight))
    let outWidth = max(1, Int((cropWidth * scale).rounded()))
    let outHeight = max(1, Int((cropHeight * scale).rounded()))
    if outWidth == self.width && outHeight == self.height { return self }
    if scale == 1 {
      // A pure crop: copy the rows that show.
      let x0 = Int(cropX.rounded())
      let y0 = Int(cropY.rounded())
      let w = min(outWidth, self.width - x0)
      let h = min(outHeight, self.height - y0)
      let cropped = [UInt8](unsafeUninitializedCapacity: w * h * 4) { buffer, count in
        pixels.withUnsafeBufferPointer { source in
          guard let from = source.baseAddress, let to = buffer.baseAddress else { return }
          for y in 0..<h {
            (to + y * w * 4).update(from: from + ((y0 + y) * self.width + x0) * 4, count: w * 4)
          }
        }
        count = w * h * 4
      }
      return Bitmap(width: w, height: h, pixels: cropped, hasAlpha: hasAlpha)
    }
    return resampled(
      cropX: cropX, cropY: cropY, cropWidth: cropWidth, cropHeight: cropHeight, width: outWidth,
      height: outHeight)
  }

  /// The bitmap turned upright for an EXIF orientation (1 = as stored; 2-8 mirror and rotate).
  public func oriented(_ orientation: Int) -> Bitmap {
    guard (2...8).contains(orientation) else { return self }
    let swaps = orientation >= 5
    let outWidth = swaps ? height : width
    let outHeight = swaps ? width : height
    var out = [UInt8](repeating: 0, count: pixels.count)
    for y in 0..<outHeight {
      for x in 0..<outWidth {
        // Where the upright pixel (x, y) is stored in the source.
        let (sx, sy): (Int, Int) =
          switch orientation {
          case 2: (width - 1 - x, y)
          case 3: (width - 1 - x, height - 1 - y)
          case 4: (x, height - 1 - y)
          case 5: (y, x)
          case 6: (y, height - 1 - x)
          case 7: (width - 1 - y, height - 1 - x)
          default: (width - 1 - y, x)
          }
        let from = (sy * width + sx) * 4
        let to = (y * outWidth + x) * 4
        out[to] = pixels[from]
        out[to + 1] = pixels[from + 1]
        out[to + 2] = pixels[from + 2]
        out[to + 3] = pixels[from + 3]
      }
    }
    return Bitmap(width: outWidth, height: outHeight, pixels: out, hasAlpha: hasAlpha)
  }
}
