// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: WebP images through libwebp (alpha kept; an animation's first frame).

internal import CWebP
import ImprintCore

/// WebP decoding with libwebp: still images straight into a bitmap allocated after the size was
/// checked, animations through libwebpdemux's `WebPAnimDecoder` (its first frame, composited on
/// a transparent canvas as a browser shows it before it plays).
enum WebPDecoder {
  /// The canvas size and whether the file is an animation.
  ///
  /// - Throws: `ImageError.damaged` naming `source` when libwebp cannot read the header.
  static func features(
    _ bytes: [UInt8], source: String
  ) throws(ImageError) -> (width: Int, height: Int, animated: Bool) {
    var features = WebPBitstreamFeatures()
    let status = bytes.withUnsafeBufferPointer {
      WebPGetFeatures($0.baseAddress, $0.count, &features)
    }
    guard status == VP8_STATUS_OK else { throw failure(status, source: source) }
    guard features.width > 0, features.height > 0 else {
      throw .damaged(
        source: source,
        reason: "the WebP header gives invalid dimensions \(features.width) x \(features.height)")
    }
    return (Int(features.width), Int(features.height), features.has_animation != 0)
  }

  /// Decodes a WebP (an animation's first frame) to a bitmap, refusing more than
  /// `maximumPixels` before anything is allocated.
  ///
  /// - Throws: `ImageError` naming `source`: `.tooLarge`, `.damaged` (libwebp's status),
  ///   `.outOfMemory`.
  static func decode(
    _ bytes: [UInt8], source: String, maximumPixels: Int
  ) throws(ImageError) -> Bitmap {
    let (width, height, animated) = try features(bytes, source: source)
    guard width * height <= maximumPixels else {
      throw .tooLarge(source: source, width: width, height: height, maximumPixels: maximumPixels)
    }
    let pixels =
      try animated
      ? firstFrame(bytes, width: width, height: height, source: source)
      : still(bytes, width: width, height: height, source: source)
    var index = 3
    var hasAlpha = false
    while index < pixels.count && !hasAlpha {
      hasAlpha = pixels[index] != 255
      index += 4
    }
    return Bitmap(width: width, height: height, pixels: pixels, hasAlpha: hasAlpha)
  }

  /// A still image decoded as premultiplied BGRA into memory of our own.
  private static func still(
    _ bytes: [UInt8], width: Int, height: Int, source: String
  ) throws(ImageError) -> [UInt8] {
    var config = WebPDecoderConfig()
    guard WebPInitDecoderConfig(&config) != 0 else {
      preconditionFailure("libwebp's decoder ABI does not match its header")
    }
    var pixels = [UInt8](repeating: 0, count: width * height * 4)
    let status = bytes.withUnsafeBufferPointer { input in
      pixels.withUnsafeMutableBufferPointer { output in
        config.output.colorspace = MODE_bgrA
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = output.baseAddress
        config.output.u.RGBA.stride = Int32(width * 4)
        config.output.u.RGBA.size = output.count
        defer { WebPFreeDecBuffer(&config.output) }
        return WebPDecode(input.baseAddress, input.count, &config)
      }
    }
    guard status == VP8_STATUS_OK else { throw failure(status, source: source) }
    return pixels
  }

  /// An animation's first frame, composited on its canvas, as premultiplied BGRA.
  private static func firstFrame(
    _ bytes: [UInt8], width: Int, height: Int, source: String
  ) throws(ImageError) -> [UInt8] {
    var options = WebPAnimDecoderOptions()
    guard WebPAnimDecoderOptionsInit(&options) != 0 else {
      preconditionFailure("libwebp's demux ABI does not match its header")
    }
    options.color_mode = MODE_bgrA
    options.use_threads = 0
    return try bytes.withUnsafeBufferPointer { input throws(ImageError) -> [UInt8] in
      var data = WebPData(bytes: input.baseAddress, size: input.count)
      guard let decoder = WebPAnimDecoderNew(&data, &options) else {
        throw .damaged(source: source, reason: "libwebp cannot read the animation")
      }
      let scope = LiveHandles.opened("WebPAnimDecoder")
      defer {
        WebPAnimDecoderDelete(decoder)
        LiveHandles.closed("WebPAnimDecoder", in: scope)
      }
      var info = WebPAnimInfo()
      guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
        Int(info.canvas_width) == width, Int(info.canvas_height) == height
      else {
        throw .damaged(source: source, reason: "the animation's canvas is not the header's size")
      }
      var frame: UnsafeMutablePointer<UInt8>?
      var timestamp: Int32 = 0
      guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
        throw .damaged(source: source, reason: "libwebp cannot decode the first frame")
      }
      return Array(UnsafeBufferPointer(start: frame, count: width * height * 4))
    }
  }

  private static func failure(_ status: VP8StatusCode, source: String) -> ImageError {
    if status == VP8_STATUS_OUT_OF_MEMORY { return .outOfMemory(source: source) }
    let name =
      switch status {
      case VP8_STATUS_NOT_ENOUGH_DATA: "the data ends early"
      case VP8_STATUS_BITSTREAM_ERROR: "bitstream error"
      case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported feature"
      case VP8_STATUS_INVALID_PARAM: "invalid parameter"
      default: "status \(status.rawValue)"
      }
    return .damaged(source: source, reason: "libwebp: " + name)
  }
}
