// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: decoded images as Sendable pixel buffers (and their JPEG encoding).

internal import CImprintShims
import ImprintCore

/// A decoded image: 8-bit premultiplied BGRA rows (cairo's `ARGB32` layout on little-endian),
/// 4 bytes a pixel, no padding.
public struct Bitmap: Sendable, Equatable {
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// `width × height × 4` bytes, top row first: B, G, R, A, premultiplied.
  public let pixels: [UInt8]
  /// Whether any pixel is not fully opaque.
  public let hasAlpha: Bool
  /// The same image as a JPEG file, when one is at hand: PDF output then embeds these bytes as
  /// they are (DCTDecode) instead of compressing the pixels again.
  public var jpeg: [UInt8]?

  /// Creates a bitmap from premultiplied BGRA pixels.
  public init(width: Int, height: Int, pixels: [UInt8], hasAlpha: Bool, jpeg: [UInt8]? = nil) {
    precondition(pixels.count == width * height * 4, "a bitmap has width × height × 4 bytes")
    self.width = width
    self.height = height
    self.pixels = pixels
    self.hasAlpha = hasAlpha
    self.jpeg = jpeg
  }

  /// The bitmap with `jpeg` set: an opaque image encoded at `quality` (1-100); images with
  /// transparency are returned unchanged (JPEG has no alpha).
  ///
  /// - Throws: `GraphicsError.jpegEncode` when libjpeg fails.
  public func withJPEG(quality: Int = 92) throws(GraphicsError) -> Bitmap {
    guard jpeg == nil, !hasAlpha else { return self }
    var output: UnsafeMutablePointer<UInt8>?
    var length = 0
    var message = [CChar](repeating: 0, count: 256)
    let status = pixels.withUnsafeBufferPointer {
      CImprintShims_jpeg_encode(
        $0.baseAddress, UInt32(width), UInt32(height), width * 4, Int32(quality), &output, &length,
        &message, message.count)
    }
    guard status == 0, let output else {
      throw .jpegEncode(reason: JPEGDecoder.text(message))
    }
    defer { CImprintShims_free(output) }
    var copy = self
    copy.jpeg = Array(UnsafeBufferPointer(start: output, count: length))
    return copy
  }
}

extension Bitmap {
  /// A bitmap from rows of 8-bit R, G, B, A pixels (`stride` bytes a row, at least `width` × 4),
  /// as libheif and libtiff give them; `premultiplied` tells whether the colour is already
  /// multiplied by alpha (libtiff's is, libheif's is not).
  static func fromRGBA(
    width: Int, height: Int, rows: UnsafePointer<UInt8>, stride: Int, premultiplied: Bool
  ) -> Bitmap {
    var hasAlpha = false
    let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
      guard let out = buffer.baseAddress else { return }
      for y in 0..<height {
        let row = rows + y * stride
        let target = out + y * width * 4
        for x in 0..<width {
          let r = row[x * 4]
          let g = row[x * 4 + 1]
          let b = row[x * 4 + 2]
          let a = row[x * 4 + 3]
          if a != 255 { hasAlpha = true }
          target[x * 4] = premultiplied || a == 255 ? b : multiply(b, a)
          target[x * 4 + 1] = premultiplied || a == 255 ? g : multiply(g, a)
          target[x * 4 + 2] = premultiplied || a == 255 ? r : multiply(r, a)
          target[x * 4 + 3] = a
        }
      }
      count = width * height * 4
    }
    return Bitmap(width: width, height: height, pixels: pixels, hasAlpha: hasAlpha)
  }

  /// `value` × `alpha` / 255, rounded (cairo's premultiplication).
  static func multiply(_ value: UInt8, _ alpha: UInt8) -> UInt8 {
    let product = Int(value) * Int(alpha) + 128
    return UInt8((product + (product >> 8)) >> 8)
  }
}
