// SPDX-License-Identifier: Apache-2.0
// Imprint: small formatting and JSON helpers shared by every module.

import Foundation

/// Number and value helpers used in messages, reports and JSON readers.
public enum Formatting {
  /// `3.0` as `3`, `2.5` as `2.5`: a number as a person writes it.
  public static func number(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
  }

  /// Decimal digits grouped in thousands: `1234567` → `1,234,567`.
  public static func thousands(_ digits: String) -> String {
    var result = ""
    for (index, character) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
      result.append(character)
    }
    return result
  }

  /// A count of things in an English message: `1 job`, `0 jobs`, `3 jobs` (CLDR's English
  /// rule: the singular for 1 alone).
  ///
  /// - Parameters:
  ///   - value: how many.
  ///   - singular: the noun for one (`job`, `request`).
  ///   - plural: the noun for any other number; `singular` + `s` when nil.
  /// - Returns: the number and the noun.
  public static func count(_ value: Int, _ singular: String, plural: String? = nil) -> String {
    "\(value) " + (value == 1 ? singular : plural ?? singular + "s")
  }

  /// Names as a message lists the accepted ones: `png, svg or pdf` (`png` alone, `""` for none).
  public static func alternatives(_ names: [String]) -> String {
    guard let last = names.last else { return "" }
    return names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " or " + last
  }

  /// Whether a value from JSONSerialization is `true` or `false`: on Linux `1 is Bool` holds
  /// too, so the boxed type is what tells a boolean from a number.
  ///
  /// Foundation boxes both booleans as the class `NSNumber(value:)` makes for a `Bool`
  /// (`__NSCFBoolean`), and every number as another. The type is compared by identity: its
  /// name (`String(describing:)`, through Swift's reflection) cost more than the rest of
  /// reading a template, and a cast (`as? Bool`) would take a number 1 for `true`.
  public static func isJSONBool(_ value: Any) -> Bool {
    ObjectIdentifier(type(of: value)) == booleanType
  }

  private static let booleanType = ObjectIdentifier(type(of: NSNumber(value: true)))
}
