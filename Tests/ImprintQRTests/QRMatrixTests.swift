// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: QR matrices from libqrencode (the one module that imports it).

import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintQR

@Suite("QR matrices from libqrencode", .liveHandlesChecked)
struct QRMatrixTests {
  @Test("an EIP-55 address at level M is a version-3 symbol of 29 modules")
  func addressVersion() throws {
    let matrix = try QRMatrix.encode(
      Array("0x52908400098527886E0F7030069857D2E4169EE7".utf8), level: .medium)
    #expect(matrix.version == 3)
    #expect(matrix.size == 29)
    #expect(matrix.modules.count == 29 * 29)
    // Finder patterns: the top-left 7 × 7 square's corners are dark, its ring inside light.
    #expect(matrix.isDark(x: 0, y: 0) && matrix.isDark(x: 6, y: 6) && !matrix.isDark(x: 1, y: 1))
  }

  @Test("keeps the smaller of 8-bit and mixed segmentation")
  func smallerSegmentation() throws {
    // Upper-case Bech32 fits alphanumeric mode: mixed mode wins.
    let upper = try QRMatrix.encode(
      Array("BITCOIN:BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4".utf8), level: .high)
    #expect(upper.segmentation == .mixed)
    // Mixed case hex: 8-bit is never larger, and wins ties.
    let mixed = try QRMatrix.encode(
      Array("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".utf8), level: .medium)
    #expect(mixed.segmentation == .byte)
    #expect(mixed.version == 3)
  }

  @Test(
    "a payload over capacity names its size and the level's maximum",
    arguments: [(QRErrorCorrection.low, 2953), (.medium, 2331), (.quartile, 1663), (.high, 1273)])
  func tooLarge(level: QRErrorCorrection, maximum: Int) {
    let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: maximum + 1)
    #expect(
      throws: QRError.payloadTooLarge(
        bytes: maximum + 1, level: level.rawValue, maximum: maximum)
    ) {
      _ = try QRMatrix.encode(bytes, level: level)
    }
  }

  @Test("exactly the maximum still fits, in version 40")
  func maximumFits() throws {
    let matrix = try QRMatrix.encode([UInt8](repeating: 0xC3, count: 1273), level: .high)
    #expect(matrix.version == 40)
  }
}
