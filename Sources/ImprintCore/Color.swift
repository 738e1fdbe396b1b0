// SPDX-License-Identifier: Apache-2.0
// Imprint: an sRGB colour with 8-bit channels, parsed from #RRGGBB.

import Foundation

/// An opaque sRGB colour with 8-bit channels.
public struct Color: Sendable, Hashable, CustomStringConvertible {
  /// Red, 0-255.
  public var red: UInt8
  /// Green, 0-255.
  public var green: UInt8
  /// Blue, 0-255.
  public var blue: UInt8

  /// Creates a colour from its channels.
  public init(red: UInt8, green: UInt8, blue: UInt8) {
    self.red = red
    self.green = green
    self.blue = blue
  }

  /// Pure black, #000000: what card printers put on the sharp K panel.
  public static let black = Color(red: 0, green: 0, blue: 0)
  /// Pure white, #FFFFFF.
  public static let white = Color(red: 255, green: 255, blue: 255)

  /// Parses `#RRGGBB`, `RRGGBB` or `#RGB` (case-insensitive), or the names `black` and `white`.
  ///
  /// - Returns: nil when the text is not such a colour.
  public init?(parsing text: String) {
    let lower = text.lowercased()
    if lower == "black" {
      self = .black
      return
    }
    if lower == "white" {
      self = .white
      return
    }
    var hex = Substring(lower)
    if hex.hasPrefix("#") { hex = hex.dropFirst() }
    guard hex.allSatisfy(\.isHexDigit) else { return nil }
    if hex.count == 3 {
      hex = Substring(hex.map { "\($0)\($0)" }.joined())
    }
    guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
    self.init(
      red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
  }

  /// The colour as `#RRGGBB` in upper case.
  public var hex: String {
    let digits = Array("0123456789ABCDEF")
    var text = "#"
    for channel in [red, green, blue] {
      text.append(digits[Int(channel >> 4)])
      text.append(digits[Int(channel & 0xF)])
    }
    return text
  }

  public var description: String { hex }

  /// Whether the three channels are equal (the colour is a grey, black or white).
  public var isGray: Bool { red == green && green == blue }

  /// WCAG 2 relative luminance, 0 (black) to 1 (white).
  public var relativeLuminance: Double {
    func linear(_ channel: UInt8) -> Double {
      let c = Double(channel) / 255
      return c <= 0.039_28 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
  }

  /// WCAG 2 contrast ratio between two colours, 1 (none) to 21 (black on white).
  public func contrastRatio(with other: Color) -> Double {
    let (a, b) = (relativeLuminance, other.relativeLuminance)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)
  }
}
