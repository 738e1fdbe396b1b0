// SPDX-License-Identifier: Apache-2.0
// ImprintCore: how a locale writes whole numbers and tenths, learned once from Foundation's own
// formatting and checked against it, so that each card's counts cost no call into ICU.

import Foundation

/// How a locale writes whole numbers (grouped or not) and numbers of tenths: its ten digits,
/// its minus sign, its group separator and sizes, its decimal separator.
///
/// Not a hand-kept table: every part is read off Foundation's `FormatStyle` output for the
/// locale (`-7`, `1234567890`, `1000`, `1.5`), and the shape is used only after it wrote a set
/// of probe numbers exactly as Foundation writes them; a locale whose numbers it cannot copy
/// (a minus sign that moves, groups that vary) keeps Foundation for every number. Foundation's
/// formatting cost a card more than laying out its name.
public struct NumberShape: Sendable {
  let digits: [String]
  let minusBefore: String
  let minusAfter: String
  let separator: String
  /// The size of the group nearest the units (3), and of the groups above it (3; 2 in Hindi);
  /// 0 for a locale that does not group.
  let primary: Int
  let secondary: Int
  /// The fewest digits above the first group for grouping to apply (2 in Spanish: `1234`,
  /// `12.345`).
  let minimumGrouping: Int
  let decimal: String

  /// The shape of `locale`'s numbers, or nil when Foundation's cannot be copied exactly.
  public static func of(_ locale: Locale) -> NumberShape? {
    shapes.valueComputedOnce(locale.identifier) { _ in learn(locale) }
  }

  private static let shapes = Memo<String, NumberShape?>(limit: 256)

  /// `value` grouped as Foundation's `IntegerFormatStyle` groups it by default.
  public static func foundationCount(_ value: Int, locale: Locale) -> String {
    value.formatted(IntegerFormatStyle<Int>(locale: locale))
  }

  /// `value` without grouping, as Foundation writes it.
  public static func foundationInteger(_ value: Int, locale: Locale) -> String {
    value.formatted(IntegerFormatStyle<Int>(locale: locale).grouping(.never))
  }

  /// `tenths / 10` with one decimal and no grouping, as Foundation writes it.
  public static func foundationTenths(_ tenths: Int, locale: Locale) -> String {
    Decimal(sign: tenths < 0 ? .minus : .plus, exponent: -1, significand: Decimal(tenths.magnitude))
      .formatted(
        Decimal.FormatStyle(locale: locale).precision(.fractionLength(1)).grouping(.never))
  }

  /// `value` grouped (`2,381`; `12,34,567` in Hindi).
  public func count(_ value: Int) -> String { written(value, grouped: true) }

  /// `value` without grouping (`-17`).
  public func integer(_ value: Int) -> String { written(value, grouped: false) }

  /// `tenths / 10` with one decimal (`69.8`, `-16.2`, `0.0`).
  public func tenths(_ tenths: Int) -> String {
    let magnitude = tenths.magnitude
    let body = digitString(magnitude / 10) + decimal + digits[Int(magnitude % 10)]
    return tenths < 0 ? minusBefore + body + minusAfter : body
  }

  private func written(_ value: Int, grouped: Bool) -> String {
    let body =
      grouped ? groupedDigits(value.magnitude) : digitString(value.magnitude)
    return value < 0 ? minusBefore + body + minusAfter : body
  }

  private func decimalDigits(_ magnitude: UInt) -> [Int] {
    var magnitude = magnitude
    var out: [Int] = []
    repeat {
      out.append(Int(magnitude % 10))
      magnitude /= 10
    } while magnitude > 0
    return out.reversed()
  }

  private func digitString(_ magnitude: UInt) -> String {
    decimalDigits(magnitude).map { digits[$0] }.joined()
  }

  private func groupedDigits(_ magnitude: UInt) -> String {
    let places = decimalDigits(magnitude)
    let count = places.count
    guard primary > 0, count >= primary + minimumGrouping else {
      return places.map { digits[$0] }.joined()
    }
    var text = ""
    for (index, digit) in places.enumerated() {
      let below = count - index  // this digit's place, 1 for the units
      if index > 0 && below >= primary && (below - primary) % secondary == 0 {
        text += separator
      }
      text += digits[digit]
    }
    return text
  }

  /// Reads the shape off Foundation's output and keeps it only if it writes the probes
  /// exactly as Foundation does.
  private static func learn(_ locale: Locale) -> NumberShape? {
    let digits = (0...9).map { foundationInteger($0, locale: locale) }
    guard Set(digits).count == 10, digits.allSatisfy({ $0.unicodeScalars.count == 1 }) else {
      return nil
    }
    let minus = foundationInteger(-7, locale: locale)
    guard let seven = minus.range(of: digits[7]) else { return nil }
    let one = foundationTenths(15, locale: locale)
    guard one.hasPrefix(digits[1]), one.hasSuffix(digits[5]), one.count > 2 else { return nil }
    let decimal = String(one.dropFirst(digits[1].count).dropLast(digits[5].count))
    // Groups of 1234567890 from the left: [1, 3, 3, 3] or, in Hindi, [1, 2, 2, 2, 3].
    var groups: [Int] = []
    var separators = Set<String>()
    var run = 0
    var pending = ""
    for character in foundationCount(1_234_567_890, locale: locale) {
      if digits.contains(String(character)) {
        if !pending.isEmpty {
          separators.insert(pending)
          groups.append(run)
          run = 0
          pending = ""
        }
        run += 1
      } else {
        pending.append(character)
      }
    }
    guard pending.isEmpty, separators.count <= 1 else { return nil }
    groups.append(run)
    let primary = groups.count > 1 ? groups[groups.count - 1] : 0
    let secondary = groups.count > 2 ? groups[groups.count - 2] : primary
    let thousand = foundationCount(1000, locale: locale)
    let shape = NumberShape(
      digits: digits, minusBefore: String(minus[..<seven.lowerBound]),
      minusAfter: String(minus[seven.upperBound...]), separator: separators.first ?? "",
      primary: primary, secondary: max(1, secondary),
      minimumGrouping: thousand.count > 4 ? 1 : 2, decimal: decimal)
    return shape.matchesFoundation(locale) ? shape : nil
  }

  /// Whether the shape writes every probe as Foundation does.
  func matchesFoundation(_ locale: Locale) -> Bool {
    // The places where a shape could go wrong: signs, each grouping boundary, the extremes
    // (NumberShapeTests compares hundreds of values in every locale).
    let wholes = [0, -5, 999, 1000, 1234, 12_345, 123_456, 1_234_567, -12_345_678, Int.min]
    let tenths = [0, -3, 15, -162, 12_345]
    return wholes.allSatisfy {
      count($0) == Self.foundationCount($0, locale: locale)
        && integer($0) == Self.foundationInteger($0, locale: locale)
    } && tenths.allSatisfy { self.tenths($0) == Self.foundationTenths($0, locale: locale) }
  }
}
