// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: errors raised at the C boundary.

import ImprintCore

/// A failure reported by one of the C libraries, converted at the boundary.
///
/// An image that cannot be decoded or is too large to decode is an `ImageError`, never one of
/// these: `image.*` codes belong to `ImageError` alone.
public enum GraphicsError: ImprintError, Equatable, Codable {
  /// cairo reported a sticky error status.
  case cairo(operation: String, status: String)
  /// An image could not be encoded as PNG (bad dimensions, text keys, or memory).
  case pngEncode(reason: String)
  /// libjpeg failed to encode an image.
  case jpegEncode(reason: String)
  /// The bundled fonts could not be found or loaded.
  case fontsUnavailable(reason: String)
  /// An image to draw on (a card's PNG, a thumbnail) is larger than Imprint allocates.
  case rasterTooLarge(width: Int, height: Int, maximumPixels: Int)
  /// A text's size is not within `TextStyle.sizes` (as written, so that one that is not a
  /// number still encodes).
  case textSize(size: String)
  /// A text would be drawn larger than FreeType sets a glyph, scaled by the canvas.
  case textTooLarge(pixels: Int, maximumPixels: Int)

  public var code: String {
    switch self {
    case .cairo: "graphics.cairo"
    case .pngEncode: "graphics.pngEncode"
    case .jpegEncode: "graphics.jpegEncode"
    case .fontsUnavailable: "graphics.fontsUnavailable"
    case .rasterTooLarge: "graphics.rasterTooLarge"
    case .textSize: "graphics.textSize"
    case .textTooLarge: "graphics.textTooLarge"
    }
  }

  /// 422, as the service has always answered them.
  public var status: Int {
    switch self {
    case .cairo, .pngEncode, .jpegEncode, .fontsUnavailable, .rasterTooLarge, .textSize,
      .textTooLarge:
      422
    }
  }

  public var message: String {
    switch self {
    case .cairo(let operation, let status): "\(operation) failed (cairo: \(status))"
    case .pngEncode(let reason): "cannot encode PNG (\(reason))"
    case .jpegEncode(let reason): "cannot encode JPEG (libjpeg: \(reason))"
    case .fontsUnavailable(let reason): "the bundled fonts are unavailable (\(reason))"
    case .rasterTooLarge(let width, let height, let maximum):
      "image of \(width) x \(height) pixels exceeds the limit of \(maximum) pixels"
    case .textSize(let size):
      "text size \(size) pt is not one text can be set at (expected \(TextStyle.sizes.lowerBound) "
        + "to \(Int(TextStyle.sizes.upperBound)) points)"
    case .textTooLarge(let pixels, let maximum):
      "text drawn \(pixels) pixels high exceeds the \(maximum) pixels a glyph can have "
        + "(its size times the canvas's scale)"
    }
  }

  public var hint: String? {
    switch self {
    case .fontsUnavailable:
      "deploy Imprint_ImprintGraphics.resources beside the executable (SwiftPM builds it there) "
        + "or name a font folder (imprint: IMPRINT_ASSETS); scripts/bootstrap installs the "
        + "system fonts the bundle lists"
    case .textTooLarge: "draw the text smaller, or at a lower resolution"
    default: nil
    }
  }
}
