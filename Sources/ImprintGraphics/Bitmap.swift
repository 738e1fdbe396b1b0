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
