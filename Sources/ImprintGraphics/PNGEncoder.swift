// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: PNG files written with libpng (through CImprintShims' setjmp error handling).

internal import CImprintShims
import Foundation
import ImprintCore

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

/// Encodes pixel rows as PNG with libpng.
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
  ///   - compressionLevel: zlib level 0-9.
  ///   - filter: the row filter; nil for `PNGRowFilter.standard(for: format)`.
  /// - Returns: the PNG file's bytes.
  /// - Throws: `GraphicsError.pngEncode` with libpng's message.
  public static func encode(
    width: Int, height: Int, format: PNGPixelFormat, pixels: [UInt8], dpi: Double? = nil,
    text: [(key: String, value: String)] = [], compressionLevel: Int = 6,
    filter: PNGRowFilter? = nil
  ) throws(GraphicsError) -> [UInt8] {
    guard width > 0, height > 0 else { throw .pngEncode(reason: "image has no pixels") }
    // PNG's limit (2^31 - 1 a side); checked before the sizes become UInt32s and products.
    guard width <= Int(Int32.max), height <= Int(Int32.max) else {
      throw .pngEncode(reason: "\(width) × \(height) pixels exceeds PNG's 2147483647 a side")
    }
    let stride = format.rowBytes(width: width)
    precondition(pixels.count >= stride * height, "PNG rows are shorter than width × height")
    var palette: [UInt8] = []
    if case .palette1(let zero, let one) = format {
      palette = [zero.red, zero.green, zero.blue, one.red, one.green, one.blue]
    }
    // A resolution that does not fit pHYs (or is not a number) is left out rather than trapped.
    let pixelsPerMetre = dpi.flatMap { UInt32(exactly: ($0 / 0.0254).rounded()) } ?? 0
    var errorText = [CChar](repeating: 0, count: 256)
    var output: UnsafeMutablePointer<UInt8>?
    var length = 0
    let keys = text.map { strdupOrAbort($0.key) }
    let values = text.map { strdupOrAbort($0.value) }
    defer { for pointer in keys + values { free(pointer) } }
    let chunks = zip(keys, values).map { CImprintShims_PNGText(key: $0, text: $1) }
    let status = pixels.withUnsafeBufferPointer { rows in
      palette.withUnsafeBufferPointer { palette in
        chunks.withUnsafeBufferPointer { chunks in
          CImprintShims_png_encode(
            UInt32(width), UInt32(height), format.colorType, format.bitDepth, rows.baseAddress,
            stride, palette.baseAddress, Int32(palette.count / 3), pixelsPerMetre,
            chunks.baseAddress, Int32(chunks.count), Int32(compressionLevel),
            (filter ?? .standard(for: format)).rawValue, &output, &length, &errorText,
            errorText.count)
        }
      }
    }
    guard status == 0, let output else {
      throw .pngEncode(
        reason: String(
          decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
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
