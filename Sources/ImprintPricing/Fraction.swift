// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: exact fractions of minor units between whole amounts, and the one rounding.

/// An exact fraction of minor currency units.
///
/// For the single steps between whole amounts (a percentage of an amount, a tier's change, the
/// tax): never floating point, and never a trap. Every operation reduces by the greatest common
/// divisor first (cross-cancelling before it multiplies) and reports an overflow of its 128-bit
/// parts as `nil` instead of trapping; `Pricing` turns that `nil` into `PricingError.overflow`.
/// Comparison multiplies at full width (256 bits), so it is exact for every value.
public struct Fraction: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The numerator.
  public let numerator: Int128
  /// The denominator, always positive.
  public let denominator: Int128

  /// Creates `numerator / denominator`, reduced.
  ///
  /// A denominator of `Int128.min` (whose negation does not exist) is a programmer error, like
  /// a zero one.
  public init(_ numerator: Int128, _ denominator: Int128 = 1) {
    precondition(denominator != 0, "a fraction's denominator is never zero")
    let divisor = Fraction.gcd(numerator.magnitude, denominator.magnitude)
    var n = numerator / Int128(divisor)
    var d = denominator / Int128(divisor)
    if d < 0 {
      precondition(d != .min && n != .min, "a fraction's parts stay within Int128")
      n = -n
      d = -d
    }
    self.numerator = n
    self.denominator = d
  }

  /// A whole number of minor units.
  public init(minor: Int) { self.init(Int128(minor)) }

  private static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
    var (a, b) = (a, b)
    while b != 0 { (a, b) = (b, a % b) }
    // gcd(0, 0) is taken as 1; a magnitude of 2^127 (Int128.min) stays representable.
    return a == 0 || a > UInt128(Int128.max) ? 1 : a
  }

  /// `self + other`, or nil when a part would leave Int128.
  public func adding(_ other: Fraction) -> Fraction? {
    // a/b + c/d = (a·(d/g) + c·(b/g)) / (b/g·d) with g = gcd(b, d): the smallest parts.
    let g = Int128(Fraction.gcd(denominator.magnitude, other.denominator.magnitude))
    let left = numerator.multipliedReportingOverflow(by: other.denominator / g)
    let right = other.numerator.multipliedReportingOverflow(by: denominator / g)
    let sum = left.partialValue.addingReportingOverflow(right.partialValue)
    let bottom = (denominator / g).multipliedReportingOverflow(by: other.denominator)
    guard !left.overflow, !right.overflow, !sum.overflow, !bottom.overflow else { return nil }
    return Fraction(sum.partialValue, bottom.partialValue)
  }

  /// `self − other`, or nil when a part would leave Int128.
  public func subtracting(_ other: Fraction) -> Fraction? {
    guard other.numerator != .min else { return nil }
    return adding(Fraction(-other.numerator, other.denominator))
  }

  /// `self × other`, or nil when a part would leave Int128.
  public func multiplied(by other: Fraction) -> Fraction? {
    // Cross-cancel first: (a/g1)·(c/g2) / ((b/g2)·(d/g1)) with g1 = gcd(a, d), g2 = gcd(c, b).
    let g1 = Int128(Fraction.gcd(numerator.magnitude, other.denominator.magnitude))
    let g2 = Int128(Fraction.gcd(other.numerator.magnitude, denominator.magnitude))
    let top = (numerator / g1).multipliedReportingOverflow(by: other.numerator / g2)
    let bottom = (denominator / g2).multipliedReportingOverflow(by: other.denominator / g1)
    guard !top.overflow, !bottom.overflow else { return nil }
    return Fraction(top.partialValue, bottom.partialValue)
  }

  public static func < (a: Fraction, b: Fraction) -> Bool {
    // Denominators are positive, so a < b ⇔ a.n·b.d < b.n·a.d, compared at full width.
    let left = a.numerator.multipliedFullWidth(by: b.denominator)
    let right = b.numerator.multipliedFullWidth(by: a.denominator)
    return (left.high, left.low) < (right.high, right.low)
  }

  /// A share given in parts per million of the amount (8.875 % is 88 750) as a fraction.
  public static func ppm(_ partsPerMillion: Int) -> Fraction {
    Fraction(Int128(partsPerMillion), 1_000_000)
  }

  public var description: String {
    denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
  }

  /// Rounds to a multiple of `unit` minor units by `rule`.
  ///
  /// - Returns: the rounded amount, or nil when it does not fit an `Int` (or `unit` < 1).
  public func rounded(_ rule: RoundingRule, unit: Int = 1) -> Int? {
    guard unit >= 1 else { return nil }
    let scaledDenominator = denominator.multipliedReportingOverflow(by: Int128(unit))
    guard !scaledDenominator.overflow else { return nil }
    let scaled = Fraction(numerator, scaledDenominator.partialValue)
    let quotient = scaled.numerator / scaled.denominator  // truncates toward zero
    let remainder = scaled.numerator % scaled.denominator  // never overflows: |r| < denominator
    var result = quotient
    if remainder != 0 {
      let positive = scaled.numerator > 0
      // 2·|r| compared with the denominator without doubling: |r| ≥ d − |r|.
      let rest = scaled.denominator.magnitude - remainder.magnitude
      switch rule {
      case .down: result = positive ? quotient : quotient - 1
      case .up: result = positive ? quotient + 1 : quotient
      case .halfUp:
        if remainder.magnitude >= rest { result += positive ? 1 : -1 }
      case .halfEven:
        if remainder.magnitude > rest || (remainder.magnitude == rest && quotient % 2 != 0) {
          result += positive ? 1 : -1
        }
      }
    }
    guard let whole = Int(exactly: result) else { return nil }
    let product = whole.multipliedReportingOverflow(by: unit)
    return product.overflow ? nil : product.partialValue
  }
}

/// How the total is rounded, once, at the end.
public enum RoundingRule: String, Sendable, Codable, CaseIterable {
  /// Half away from zero (commercial rounding).
  case halfUp = "half-up"
  /// Half to even (banker's rounding).
  case halfEven = "half-even"
  /// Toward negative infinity (the customer's favour).
  case down
  /// Toward positive infinity.
  case up
}
