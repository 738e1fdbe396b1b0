// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: PNG files: rows filtered and framed by CImprintShims' png.c, deflated by
// ImprintPDF's zlib, libdeflate or our own deflater for flat drawings (runs_deflate.c).

internal import CImprintShims
import Foundation
import ImprintCore
import ImprintPDF

/// The pixel layout of rows handed to `PNGEncoder`.
public enum PNGPixelFormat: Sendable, Equatable {
  /// 1 bit per pixel, 0 black, 1 white, rows padded to whole bytes (most significant bit first).
  case gray1
  /// 8 bits per pixel, grey.
  case gray8
  /// 3 bytes per pixel, R G B.
  case rgb8
  /// 4 bytes per pixel, R G B A (straight alpha).
  case rgba8
  /// 1 bit per pixel indexing a two-colour palette (bit 0 = first colour).
  case palette1(Color, Color)

  var colorType: Int32 {
    switch self {
    case .gray1, .gray8: 0
    case .rgb8: 2
    case .palette1: 3
    case .rgba8: 6
    }
  }

  var bitDepth: Int32 {
    switch self {
    case .gray1, .palette1: 1
    default: 8
    }
  }

  /// The bytes of one pixel, 1 for formats of less than a byte (PNG's filters' unit).
  var bytesPerPixel: Int {
    switch self {
    case .gray1, .palette1, .gray8: 1
    case .rgb8: 3
    case .rgba8: 4
    }
  }

  /// The bytes one row of `width` pixels takes.
  public func rowBytes(width: Int) -> Int {
    switch self {
    case .gray1, .palette1: (width + 7) / 8
    case .gray8: width
    case .rgb8: width * 3
    case .rgba8: width * 4
    }
  }
}

/// The filter put before every row of a PNG (PNG's filter types), one for the whole image.
///
/// A fixed filter, never libpng's adaptive choice per row, which cost a third of a 300-dpi
/// card's time for about 5 % in size.
public enum PNGRowFilter: Int32, Sendable {
  /// The rows as they are (filter type None, 0): the smallest files for 1-bit codes, and for
  /// flat drawings such as cards, whose runs of equal pixels deflate as long matches. (Not
  /// named `none`, which an optional filter would read as nil.)
  case unfiltered = 0
  /// Each byte less the one above it (filter type 2): better for photographic 8-bit images.
  case up = 2

  /// The filter for `format` when the caller names none: unfiltered for 1-bit images, up for
  /// 8-bit ones.
  static func standard(for format: PNGPixelFormat) -> PNGRowFilter {
    format.bitDepth < 8 ? .unfiltered : .up
  }
}

/// Which library deflates a PNG's filtered rows.
public enum PNGDeflater: Sendable, Equatable {
  /// zlib (ImprintPDF's `Deflate`): the default, and the cheaper for cards and other flat
  /// drawings, whose long runs of equal pixels its fast levels skip (the figures above).
  case zlib
  /// libdeflate: the cheaper for anti-aliased pages such as thumbnails. 120 page thumbnails of
  /// gnuplot.pdf at 256 px (filtered rows, CPU of the deflate alone): zlib 3 2 194 118 bytes in
  /// 111 ms, libdeflate 5 2 223 891 bytes in 72 ms, 6 2 218 608 bytes in 78 ms.
  case libdeflate
  /// Our own (`CImprintShims/runs_deflate.c`): matches at the pixel before and the row above
  /// only, the cheapest by far for cards and other flat drawings, and about as small. The front
  /// of `sora-park` (classic, 300 dpi, 1086 × 713 RGB, unfiltered; the deflate alone, best of 9,
  /// 2026-12-06): zlib 3 47 536 bytes in 3.0 ms, runs 48 182 bytes in 0.65 ms; `harbor-lamp`
  /// with its photo: zlib 3 76 649 bytes in 3.6 ms, runs 80 897 bytes in 1.1 ms. Noise (every
  /// byte random) is stored, 0.03 % larger than the rows, in 5.7 ns a byte. From cairo's pixels,
  /// unfiltered, it makes the rows a window at a time as it deflates them: the same bytes, and
  /// (rows made, deflated and their Adler-32, mean of 200, 2026-12-07) 1.33 ms for that front
  /// where making all the rows first took 1.56 ms, 1.48 ms for harbor-lamp's against 1.75 ms.
  case runs
}

/// Encodes pixel rows as PNG: the rows filtered (`CImprintShims/png.c`), deflated by zlib
/// (ImprintPDF's `Deflate`) and framed in PNG's chunks by `png.c`, which says why not libpng.
///
/// zlib at the levels libpng was given before (6 here, 3 for `RasterImage.png`): the same
/// deflate data, so the same sizes. Measured on the front of `sora-park` (classic, 300 dpi,
/// 1086 × 713 RGB, unfiltered; CPU time of the deflate and its checksum, best of 18 on the
/// loaded 2-core machine): zlib 1 50 037 bytes in 5.1 ms, 2: 49 010 bytes 4.9 ms, 3: 47 542
/// bytes 4.8 ms, and level 3 with zlib's own Adler-32, as libpng ran it, 5.7 ms. libdeflate 1.14
/// (Debian 12's), tried in zlib's place: level 1 40 897 bytes in 6.5 ms, 2: 39 857 bytes in
/// 5.0 ms, and in the server no cheaper a card than zlib through libpng (63 % of its CPU against
/// 59 %, card PNG CPU a request unchanged in paired runs): its match finders hash every position
/// of a card's long runs of equal pixels, which zlib's fast levels skip.
public enum PNGEncoder {
  /// Encodes an image.
  ///
  /// - Parameters:
  ///   - width: pixels per row.
  ///   - height: rows.
  ///   - format: the layout of `pixels`.
  ///   - pixels: `height` rows of `format.rowBytes(width:)` bytes each, top row first.
  ///   - dpi: stored in the pHYs chunk (as pixels per metre) when given.
  ///   - text: tEXt chunks (key, value), for example freedesktop `Thumb::URI`.
  ///   - compressionLevel: the deflater's level 0-9 (0 stores the rows uncompressed).
  ///   - filter: the row filter; nil for `PNGRowFilter.standard(for: format)`.
  ///   - deflater: the library that deflates the rows.
  /// - Returns: the PNG file's bytes.
  /// - Throws: `GraphicsError.pngEncode` with the reason.
  public static func encode(
    width: Int, height: Int, format: PNGPixelFormat, pixels: [UInt8], dpi: Double? = nil,
    text: [(key: String, value: String)] = [], compressionLevel: Int = 6,
    filter: PNGRowFilter? = nil, deflater: PNGDeflater = .zlib
  ) throws(GraphicsError) -> [UInt8] {
    try checkSize(width: width, height: height)
    let stride = format.rowBytes(width: width)
    precondition(pixels.count >= stride * height, "PNG rows are shorter than width × height")
    let result = pixels.withUnsafeBytes { rows in
      Result { () throws(GraphicsError) in
        try encode(
          width: width, height: height, format: format,
          source: Source(rows: rows.baseAddress, stride: stride, kind: CImprintShims_PNG_ROWS),
          dpi: dpi, text: text, compressionLevel: compressionLevel, filter: filter,
          deflater: deflater)
      }
    }
    return try result.get()
  }

  /// Where the rows come from: PNG's own layout, or 32-bit xRGB words (cairo's RGB24) that the
  /// encoder converts as it filters them, with no copy in between.
  struct Source {
    /// The first row; nil only for an empty buffer, which `checkSize` has refused.
    var rows: UnsafeRawPointer?
    /// Bytes from one row to the next.
    var stride: Int
    /// `CImprintShims_PNG_ROWS`, `CImprintShims_PNG_XRGB_TO_RGB` or `..._XRGB_TO_GRAY`.
    var kind: Int
  }

  static func checkSize(width: Int, height: Int) throws(GraphicsError) {
    guard width > 0, height > 0 else { throw .pngEncode(reason: "image has no pixels") }
    // PNG's limit (2^31 - 1 a side); checked before the sizes become UInt32s and products.
    guard width <= Int(Int32.max), height <= Int(Int32.max) else {
      throw .pngEncode(reason: "\(width) × \(height) pixels exceeds PNG's 2147483647 a side")
    }
  }

  /// Encodes `height` rows read from `source`, which holds them until this returns.
  static func encode(
    width: Int, height: Int, format: PNGPixelFormat, source: Source, dpi: Double?,
    text: [(key: String, value: String)], compressionLevel: Int, filter: PNGRowFilter?,
    deflater: PNGDeflater = .zlib
  ) throws(GraphicsError) -> [UInt8] {
    try checkSize(width: width, height: height)
    guard (0...9).contains(compressionLevel) else {
      throw .pngEncode(reason: "compression level \(compressionLevel) is not 0-9")
    }
    var errorText = [CChar](repeating: 0, count: 256)
    func reason() -> String {
      String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    let filter = filter ?? .standard(for: format)
    let filteredLength = (format.rowBytes(width: width) + 1) * height
    let deflated: [UInt8]
    let adler: UInt32
    if deflater == .runs, filter == .unfiltered, source.kind != CImprintShims_PNG_ROWS {
      // 1-2. Cairo's pixels converted and deflated a window of rows at a time, never all
      // filtered first (`CImprintShims_runs_deflate_xrgb`: the same bytes).
      var checksum: UInt32 = 1
      guard
        let bytes = Self.taken({ output, length in
          CImprintShims_runs_deflate_xrgb(
            source.rows?.assumingMemoryBound(to: UInt8.self), source.stride, UInt32(width),
            UInt32(height), Int32(source.kind), &output, &length, &checksum)
        })
      else {
        throw .pngEncode(
          reason: "\(deflater) could not deflate \(filteredLength) bytes (out of memory)")
      }
      (deflated, adler) = (bytes, checksum)
    } else {
      // 1. The filtered rows.
      var filtered: UnsafeMutablePointer<UInt8>?
      var length = 0
      guard
        CImprintShims_png_filter(
          UInt32(width), UInt32(height), format.colorType, format.bitDepth,
          source.rows?.assumingMemoryBound(to: UInt8.self), source.stride, Int32(source.kind),
          filter.rawValue, &filtered, &length, &errorText, errorText.count) == 0,
        let filtered
      else { throw .pngEncode(reason: reason()) }
      defer { CImprintShims_free(filtered) }
      let rows = UnsafeRawBufferPointer(start: filtered, count: length)
      // 2. Deflated by zlib (ImprintPDF's), libdeflate or our own.
      guard
        let bytes = Self.deflate(
          rows, level: compressionLevel, by: deflater,
          rows: (length: format.rowBytes(width: width) + 1, bytesPerPixel: format.bytesPerPixel))
      else {
        throw .pngEncode(
          reason: "\(deflater) could not deflate \(length) bytes (out of memory)")
      }
      (deflated, adler) = (bytes, CImprintShims_adler32(1, filtered, length))
    }
    // 3. Framed.
    var palette: [UInt8] = []
    if case .palette1(let zero, let one) = format {
      palette = [zero.red, zero.green, zero.blue, one.red, one.green, one.blue]
    }
    // A resolution that does not fit pHYs (or is not a number) is left out rather than trapped.
    let pixelsPerMetre = dpi.flatMap { UInt32(exactly: ($0 / 0.0254).rounded()) } ?? 0
    var output: UnsafeMutablePointer<UInt8>?
    var length = 0
    let keys = text.map { strdupOrAbort($0.key) }
    let values = text.map { strdupOrAbort($0.value) }
    defer { for pointer in keys + values { free(pointer) } }
    let chunks = zip(keys, values).map { CImprintShims_PNGText(key: $0, text: $1) }
    let status = palette.withUnsafeBufferPointer { palette in
      chunks.withUnsafeBufferPointer { chunks in
        deflated.withUnsafeBufferPointer { deflated in
          CImprintShims_png_frame(
            UInt32(width), UInt32(height), format.colorType, format.bitDepth,
            palette.baseAddress, Int32(palette.count / 3), pixelsPerMetre, chunks.baseAddress,
            Int32(chunks.count), filteredLength, adler, deflated.baseAddress, deflated.count,
            Int32(compressionLevel), &output, &length, &errorText, errorText.count)
        }
      }
    }
    guard status == 0, let output else { throw .pngEncode(reason: reason()) }
    defer { CImprintShims_free(output) }
    return Array(UnsafeBufferPointer(start: output, count: length))
  }
}

extension PNGEncoder {
  /// `rows` as raw deflate data by `deflater` at `level` (`.runs` has none), `layout` the rows'
  /// bytes with their filter byte and the bytes of a pixel (1 below a byte); nil when memory ran
  /// out.
  static func deflate(
    _ rows: UnsafeRawBufferPointer, level: Int, by deflater: PNGDeflater,
    rows layout: (length: Int, bytesPerPixel: Int)
  ) -> [UInt8]? {
    switch deflater {
    case .zlib: return Deflate.raw(rows, level: level)
    case .runs:
      return taken { output, length in
        CImprintShims_runs_deflate(
          rows.baseAddress?.assumingMemoryBound(to: UInt8.self), rows.count, layout.length,
          layout.bytesPerPixel, &output, &length)
      }
    case .libdeflate:
      return taken { output, length in
        CImprintShims_libdeflate_raw(
          rows.baseAddress?.assumingMemoryBound(to: UInt8.self), rows.count, Int32(level),
          &output, &length)
      }
    }
  }

  /// The bytes a CImprintShims call wrote into a buffer of its own (`make` returns 0 when it
  /// did), copied and the buffer freed; nil when it failed.
  static func taken(
    _ make: (inout UnsafeMutablePointer<UInt8>?, inout Int) -> Int32
  ) -> [UInt8]? {
    var output: UnsafeMutablePointer<UInt8>?
    var length = 0
    guard make(&output, &length) == 0, let output else { return nil }
    defer { CImprintShims_free(output) }
    return Array(UnsafeBufferPointer(start: output, count: length))
  }
}

private func strdupOrAbort(_ text: String) -> UnsafePointer<CChar> {
  guard let copy = strdup(text) else {
    preconditionFailure("out of memory copying a PNG text chunk")
  }
  return UnsafePointer(copy)
}

private func free(_ pointer: UnsafePointer<CChar>) {
  CImprintShims_free(UnsafeMutableRawPointer(mutating: pointer))
}
