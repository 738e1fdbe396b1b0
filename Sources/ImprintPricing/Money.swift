// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: exact amounts: integer minor units, exact fractions in between, one rounding.

import ImprintCore

/// An exact fraction of minor currency units.
///
/// For the steps between the price list and the rounded total (percentages, tiers, tax).
/// Never floating point.
public struct Fraction: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The numerator.
  public let numerator: Int128
  /// The denominator, always positive.
  public let denominator: Int128

  /// Creates `numerator / denominator`, reduced.
  public init(_ numerator: Int128, _ denominator: Int128 = 1) {
    precondition(denominator != 0, "a fraction's denominator is never zero")
    var n = numerator
    var d = denominator
    if d < 0 {
      n = -n
      d = -d
    }
    let divisor = Fraction.gcd(n.magnitude, d.magnitude)
    self.numerator = n / Int128(divisor)
    self.denominator = d / Int128(divisor)
  }

  /// A whole number of minor units.
  public init(minor: Int) { self.init(Int128(minor)) }

  private static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
    var (a, b) = (a, b)
    while b != 0 { (a, b) = (b, a % b) }
    return max(a, 1)
  }

  public static func + (a: Fraction, b: Fraction) -> Fraction {
    Fraction(
      a.numerator * b.denominator + b.numerator * a.denominator, a.denominator * b.denominator)
  }
  public static func - (a: Fraction, b: Fraction) -> Fraction {
    Fraction(
      a.numerator * b.denominator - b.numerator * a.denominator, a.denominator * b.denominator)
  }
  public static func * (a: Fraction, b: Fraction) -> Fraction {
    Fraction(a.numerator * b.numerator, a.denominator * b.denominator)
  }
  public static func * (a: Fraction, b: Int) -> Fraction { a * Fraction(Int128(b)) }
  public static func < (a: Fraction, b: Fraction) -> Bool {
    a.numerator * b.denominator < b.numerator * a.denominator
  }

  /// A share given in parts per million of the amount (8.875 % is 88 750) as a fraction.
  public static func ppm(_ partsPerMillion: Int) -> Fraction {
    Fraction(Int128(partsPerMillion), 1_000_000)
  }

  public var description: String {
    denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
  }

  /// Rounds to a multiple of `unit` minor units by `rule`.
  public func rounded(_ rule: RoundingRule, unit: Int = 1) -> Int {
    let scaled = Fraction(numerator, denominator * Int128(unit))
    let quotient = scaled.numerator / scaled.denominator  // truncates toward zero
    let remainder = scaled.numerator - quotient * scaled.denominator
    var result = quotient
    if remainder != 0 {
      let twice = 2 * remainder.magnitude
      let positive = scaled.numerator > 0
      switch rule {
      case .down: result = positive ? quotient : quotient - 1
      case .up: result = positive ? quotient + 1 : quotient
      case .halfUp:
        if twice >= scaled.denominator.magnitude { result += positive ? 1 : -1 }
      case .halfEven:
        if twice > scaled.denominator.magnitude
          || (twice == scaled.denominator.magnitude && quotient % 2 != 0)
        {
          result += positive ? 1 : -1
        }
      }
    }
    return Int(result) * unit
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

/// ISO 4217 currencies Imprint prices in, with their minor-unit digits.
public enum Currency {
  /// Minor-unit digits by code.
  public static let minorDigits: [String: Int] = [
    "KRW": 0, "JPY": 0, "VND": 0, "CLP": 0, "ISK": 0, "UGX": 0, "XAF": 0, "XOF": 0,
    "USD": 2, "EUR": 2, "GBP": 2, "CNY": 2, "CAD": 2, "AUD": 2, "NZD": 2, "CHF": 2, "SEK": 2,
    "NOK": 2, "DKK": 2, "PLN": 2, "CZK": 2, "HUF": 2, "INR": 2, "SGD": 2, "HKD": 2, "TWD": 2,
    "MXN": 2, "BRL": 2, "ZAR": 2, "THB": 2, "MYR": 2, "PHP": 2, "IDR": 2, "TRY": 2, "ILS": 2,
    "AED": 2, "SAR": 2, "RUB": 2, "UAH": 2,
    "KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3, "TND": 3,
  ]

  /// Formats `minor` units of `code`: `KRW 12,340`, `USD 12.34`, `USD -0.05`.
  public static func format(_ minor: Int, code: String) -> String {
    let digits = minorDigits[code] ?? 2
    let sign = minor < 0 ? "-" : ""
    var magnitude = String(minor.magnitude)
    if digits > 0 {
      while magnitude.count <= digits { magnitude = "0" + magnitude }
      let whole = String(magnitude.dropLast(digits))
      return "\(code) \(sign)\(Formatting.thousands(whole)).\(magnitude.suffix(digits))"
    }
    return "\(code) \(sign)\(Formatting.thousands(magnitude))"
  }
}
