// SPDX-License-Identifier: Apache-2.0
// Imprint: physical lengths, stored in PostScript points.

/// A physical length, stored in PostScript points (1/72 inch).
public struct Length: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The length in points.
  public var points: Double

  /// Creates a length from points.
  public init(points: Double) { self.points = points }

  /// Creates a length from millimetres.
  public static func mm(_ value: Double) -> Length { Length(points: value / 25.4 * 72) }
  /// Creates a length from inches.
  public static func inches(_ value: Double) -> Length { Length(points: value * 72) }
  /// Creates a length from points.
  public static func pt(_ value: Double) -> Length { Length(points: value) }

  /// The length in millimetres.
  public var millimetres: Double { points / 72 * 25.4 }
  /// The length in inches.
  public var inches: Double { points / 72 }

  /// The number of device pixels this length covers at `dpi`, rounded to the nearest pixel.
  public func pixels(atDPI dpi: Double) -> Int { Int((inches * dpi).rounded()) }

  public static func < (a: Length, b: Length) -> Bool { a.points < b.points }
  public static func + (a: Length, b: Length) -> Length { Length(points: a.points + b.points) }
  public static func - (a: Length, b: Length) -> Length { Length(points: a.points - b.points) }
  public static func * (a: Length, b: Double) -> Length { Length(points: a.points * b) }
  public static func / (a: Length, b: Double) -> Length { Length(points: a.points / b) }

  public var description: String { "\(millimetres) mm" }
}
