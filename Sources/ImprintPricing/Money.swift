// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: amounts in integer minor units, their currencies and their formatted text.

import Foundation
import ImprintCore

/// An amount in minor units with its formatted text.
public struct Money: Codable, Sendable, Equatable {
  /// Minor units (cents, won).
  public var minor: Int
  /// Formatted, for example `KRW 12,340` or `USD 12.34`.
  public var formatted: String
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

  /// Formats `minor` units of `code` as `locale` writes money (Foundation's currency style,
  /// exact to the minor unit): `₩6,880` in Korean, `1,32 US$` in Spanish, `₹12,34,567.89` in
  /// Hindi.
  public static func format(_ minor: Int, code: String, locale: Locale) -> String {
    let digits = minorDigits[code] ?? 2
    var value = Decimal(minor)
    for _ in 0..<digits { value /= 10 }
    return value.formatted(
      Decimal.FormatStyle.Currency(code: code, locale: locale).precision(
        .fractionLength(digits)))
  }

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
