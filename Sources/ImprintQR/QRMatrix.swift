// SPDX-License-Identifier: Apache-2.0
// ImprintQR: QR symbols encoded with libqrencode, copied out as Sendable values.

internal import CQRencode
import Foundation
import ImprintCore
import ImprintGraphics

/// A QR error-correction level: the share of the symbol that can be damaged and still read.
public enum QRErrorCorrection: String, Sendable, CaseIterable, Codable {
  /// About 7 % recoverable.
  case low = "L"
  /// About 15 % recoverable (the default).
  case medium = "M"
  /// About 25 % recoverable.
  case quartile = "Q"
  /// About 30 % recoverable (cards and anything that gets scratched).
  case high = "H"

  /// The most bytes a version-40 symbol holds at this level in 8-bit mode.
  public var maximumBytes: Int {
    switch self {
    case .low: 2953
    case .medium: 2331
    case .quartile: 1663
    case .high: 1273
    }
  }

  fileprivate var raw: QRecLevel {
    switch self {
    case .low: QR_ECLEVEL_L
    case .medium: QR_ECLEVEL_M
    case .quartile: QR_ECLEVEL_Q
    case .high: QR_ECLEVEL_H
    }
  }
}

/// How the payload's bytes were segmented into QR modes.
public enum QRSegmentation: String, Sendable, Codable {
  /// Every byte in 8-bit mode.
  case byte = "8bit"
  /// libqrencode's split into numeric, alphanumeric and 8-bit segments.
  case mixed
}

/// A QR symbol: a square of dark and light modules, without the quiet zone.
public struct QRMatrix: Sendable, Equatable {
  /// Modules per side (17 + 4 × version).
  public let size: Int
  /// The symbol version, 1-40.
  public let version: Int
  /// The error-correction level.
  public let level: QRErrorCorrection
  /// How the payload was segmented.
  public let segmentation: QRSegmentation
  /// Row-major modules, `size × size`; 1 is dark, 0 light.
  public let modules: [UInt8]

  /// Creates a matrix from its modules (row-major, 1 = dark).
  public init(
    size: Int, version: Int, level: QRErrorCorrection, segmentation: QRSegmentation,
    modules: [UInt8]
  ) {
    precondition(modules.count == size * size, "a QR matrix has size × size modules")
    self.size = size
    self.version = version
    self.level = level
    self.segmentation = segmentation
    self.modules = modules
  }

  /// The symbol as a bitmap of one pixel a module, pure black on white, with `quietZone` light
  /// modules around it: drawn unsmoothed, it is a sharp code at any size in one small image.
  public func bitmap(quietZone: Int) -> Bitmap {
    let side = size + 2 * quietZone
    var pixels = [UInt8](repeating: 255, count: side * side * 4)
    for y in 0..<size {
      for x in 0..<size where modules[y * size + x] != 0 {
        let index = ((y + quietZone) * side + x + quietZone) * 4
        pixels[index] = 0
        pixels[index + 1] = 0
        pixels[index + 2] = 0
      }
    }
    return Bitmap(width: side, height: side, pixels: pixels, hasAlpha: false)
  }

  /// The most characters any QR symbol holds (version 40 at level L, numeric mode).
  public static let maximumCharacters = 7089

  /// Whether the module at column `x`, row `y` is dark.
  public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] != 0 }

  /// Encodes `bytes` both in 8-bit mode and in libqrencode's mixed mode and keeps the smaller
  /// symbol (8-bit on a tie: every scanner handles it).
  ///
  /// libqrencode is called with the smallest version that fits (version 0) and never raises the
  /// error-correction level. The C buffer is copied and freed at once.
  /// - Throws: `QRError.payloadTooLarge` when neither encoding fits a version-40 symbol,
  ///   `QRError.encode` for other libqrencode failures.
  public static func encode(_ bytes: [UInt8], level: QRErrorCorrection) throws(QRError)
    -> QRMatrix
  {
    guard !bytes.isEmpty else { throw .encode(reason: "empty payload") }
    // No symbol holds more than 7089 characters (version 40-L, all digits): a longer payload
    // (a 1 MiB line of a bulk file) is refused without asking libqrencode, whose length is an
    // Int32.
    guard bytes.count <= QRMatrix.maximumCharacters else {
      throw .payloadTooLarge(bytes: bytes.count, level: level.rawValue, maximum: level.maximumBytes)
    }
    let byteMode = encodeOnce(bytes, level: level, segmentation: .byte)
    // Mixed mode needs a NUL-terminated string: payloads holding NUL stay in 8-bit mode. It can
    // only be smaller when a run of numeric/alphanumeric characters is long enough to repay a
    // mode switch (a lowercase URL has none), so other payloads skip the second encoding.
    let mixed =
      bytes.contains(0) || longestAlphanumericRun(bytes) < 6
      ? nil : encodeOnce(bytes, level: level, segmentation: .mixed)
    switch (byteMode, mixed) {
    case (.success(let a), .success(let b)): return b.size < a.size ? b : a
    case (.success(let a), _): return a
    case (_, .success(let b)?): return b
    case (.failure(let error), _): throw error
    }
  }

  /// The longest run of characters from QR's alphanumeric set (`0-9 A-Z space $ % * + - . / :`).
  static func longestAlphanumericRun(_ bytes: [UInt8]) -> Int {
    var longest = 0
    var current = 0
    for byte in bytes {
      let alphanumeric =
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
        || [0x20, 0x24, 0x25, 0x2A, 0x2B, 0x2D, 0x2E, 0x2F, 0x3A].contains(byte)
      current = alphanumeric ? current + 1 : 0
      longest = max(longest, current)
    }
    return longest
  }

  private static func encodeOnce(
    _ bytes: [UInt8], level: QRErrorCorrection, segmentation: QRSegmentation
  ) -> Result<QRMatrix, QRError> {
    errno = 0
    let code: UnsafeMutablePointer<QRcode>? =
      switch segmentation {
      case .byte:
        bytes.withUnsafeBufferPointer {
          QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, level.raw)
        }
      case .mixed:
        (bytes + [0]).withUnsafeBufferPointer {
          $0.withMemoryRebound(to: CChar.self) {
            QRcode_encodeString($0.baseAddress, 0, level.raw, QR_MODE_8, 1)
          }
        }
      }
    guard let code else {
      let error = errno
      if error == ERANGE {
        return .failure(
          .payloadTooLarge(bytes: bytes.count, level: level.rawValue, maximum: level.maximumBytes))
      }
      return .failure(.encode(reason: String(cString: strerror(error)), errno: error))
    }
    defer { QRcode_free(code) }
    let size = Int(code.pointee.width)
    let modules = [UInt8](unsafeUninitializedCapacity: size * size) { buffer, count in
      for i in 0..<(size * size) { buffer[i] = code.pointee.data[i] & 1 }
      count = size * size
    }
    return .success(
      QRMatrix(
        size: size, version: Int(code.pointee.version), level: level, segmentation: segmentation,
        modules: modules))
  }
}
