// SPDX-License-Identifier: Apache-2.0
// Imprint: rectangles and sizes in points.

/// A size in points.
public struct Size: Sendable, Hashable, Codable {
  /// Width in points.
  public var width: Double
  /// Height in points.
  public var height: Double

  /// Creates a size in points.
  public init(width: Double, height: Double) {
    self.width = width
    self.height = height
  }

  /// Creates a size from lengths.
  public init(width: Length, height: Length) {
    self.init(width: width.points, height: height.points)
  }
}

/// An axis-aligned rectangle in points, origin at the top left, y growing downwards.
public struct Rect: Sendable, Hashable, Codable {
  /// Left edge in points.
  public var x: Double
  /// Top edge in points.
  public var y: Double
  /// Width in points.
  public var width: Double
  /// Height in points.
  public var height: Double

  /// Creates a rectangle in points.
  public init(x: Double, y: Double, width: Double, height: Double) {
    self.x = x
    self.y = y
    self.width = width
    self.height = height
  }

  /// The right edge in points.
  public var maxX: Double { x + width }
  /// The bottom edge in points.
  public var maxY: Double { y + height }

  /// The rectangle grown by `amount` points on every side (shrunk when negative).
  public func insetBy(_ amount: Double) -> Rect {
    Rect(x: x + amount, y: y + amount, width: width - 2 * amount, height: height - 2 * amount)
  }

  /// Whether `other` lies entirely inside this rectangle, with `tolerance` points of slack.
  public func contains(_ other: Rect, tolerance: Double = 1e-6) -> Bool {
    other.x >= x - tolerance && other.y >= y - tolerance && other.maxX <= maxX + tolerance
      && other.maxY <= maxY + tolerance
  }
}
