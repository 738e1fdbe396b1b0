// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: errors raised at the C boundary.

import ImprintCore

/// A failure reported by one of the C libraries, converted at the boundary.
public enum GraphicsError: ImprintError, Equatable {
  /// cairo reported a sticky error status.
  case cairo(operation: String, status: String)
  /// libpng failed to encode an image.
  case pngEncode(reason: String)
  /// libjpeg could not decode an image.
  case jpegDecode(source: String, reason: String)
  /// The bundled fonts could not be found or loaded.
  case fontsUnavailable(reason: String)
  /// An image is larger than Imprint allows in memory.
  case imageTooLarge(width: Int, height: Int, maximumPixels: Int)

  public var code: String {
    switch self {
    case .cairo: "graphics.cairo"
    case .pngEncode: "graphics.pngEncode"
    case .jpegDecode: "image.jpegDecode"
    case .fontsUnavailable: "graphics.fontsUnavailable"
    case .imageTooLarge: "image.tooLarge"
    }
  }

  public var message: String {
    switch self {
    case .cairo(let operation, let status): "\(operation) failed (cairo: \(status))"
    case .pngEncode(let reason): "cannot encode PNG (libpng: \(reason))"
    case .jpegDecode(let source, let reason): "cannot decode JPEG '\(source)' (libjpeg: \(reason))"
    case .fontsUnavailable(let reason): "the bundled fonts are unavailable (\(reason))"
    case .imageTooLarge(let width, let height, let maximum):
      "image of \(width) x \(height) pixels exceeds the limit of \(maximum) pixels"
    }
  }

  public var hint: String? {
    switch self {
    case .fontsUnavailable:
      "deploy Imprint_ImprintGraphics.resources beside the executable (SwiftPM builds it there) "
        + "or name a font folder (imprint: IMPRINT_ASSETS); scripts/bootstrap installs the "
        + "system fonts the bundle lists"
    default: nil
    }
  }
}
