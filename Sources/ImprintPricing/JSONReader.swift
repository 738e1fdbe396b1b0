// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: price lists and orders read with Core's strict `JSONObjectReader`, their
// problems worded as `PricingError`s; the getters only pricing needs (ranges, amounts, shares).

import Foundation
import ImprintCore

/// Core's strict object reader, throwing `PricingError`.
typealias JSONReader = JSONObjectReader<PricingError>

extension JSONObjectReader where Failure == PricingError {
  /// Reads `value` as an object at `path` of `source`.
  init(_ value: Any?, source: String, path: String) throws(PricingError) {
    try self.init(value, source: source, path: path, makeError: PricingError.init(field:))
  }

  /// Parses `bytes` as strict JSON (`StrictJSON`: duplicate keys, depth, numbers out of range,
  /// invalid UTF-8, each with its line and column) holding one object.
  static func parse(_ bytes: [UInt8], source: String) throws(PricingError) -> JSONReader {
    let value: Any
    do throws(JSONError) {
      value = try StrictJSON.parse(bytes, source: source)
    } catch {
      throw .invalidJSON(error)
    }
    return try JSONReader(value, source: source, path: "")
  }

  /// A whole number within `range`; outside it, `PricingError.outOfRange` stating the range.
  ///
  /// The range is checked on the JSON number before it becomes an `Int`, so `1e308` is out of
  /// range rather than a trap, and every accepted value is exact (ranges stay below 2^53).
  mutating func integer(_ name: String, in range: ClosedRange<Int>, unit: String = "")
    throws(PricingError) -> Int?
  {
    guard let number = try number(name, expected: .wholeNumber) else { return nil }
    let double = number.doubleValue
    let expected = "a whole number\(unit) from \(range.lowerBound) to \(range.upperBound)"
    guard double >= Double(range.lowerBound), double <= Double(range.upperBound) else {
      throw .outOfRange(
        source: source, field: key(name), value: describe(number), expected: expected)
    }
    guard let value = Int(exactly: double), range.contains(value) else {
      throw .invalidField(
        source: source, field: key(name), value: describe(number), expected: expected)
    }
    return value
  }

  /// An amount in minor units: a whole number from 0 to `PriceList.maximumAmount`.
  mutating func amount(_ name: String) throws(PricingError) -> Int? {
    guard has(name) else { return nil }
    if let number = object[name] as? NSNumber, !Formatting.isJSONBool(number),
      number.doubleValue < 0
    {
      guard let value = Int(exactly: number.doubleValue), value >= -PriceList.maximumAmount else {
        throw .outOfRange(
          source: source, field: key(name), value: describe(number),
          expected: "a price from 0 to \(PriceList.maximumAmount) minor units")
      }
      throw .negativePrice(source: source, field: key(name), value: value)
    }
    return try integer(name, in: 0...PriceList.maximumAmount, unit: " of minor units")
  }

  /// A percentage with at most four decimals within `range` (in percent), as parts per million
  /// (`8.875` → `88750`).
  mutating func partsPerMillion(_ name: String, in range: ClosedRange<Double>)
    throws(PricingError) -> Int?
  {
    guard let number = try number(name, expected: .described("a percentage")) else { return nil }
    let percent = number.doubleValue
    guard range.contains(percent) else {
      throw .outOfRange(
        source: source, field: key(name), value: describe(number),
        expected: "a percentage from \(limitText(range.lowerBound)) to "
          + "\(limitText(range.upperBound))")
    }
    // Within ±1000 % a part per million is ~10^7, where a Double's error is below 10^-8: a
    // distance over 10^-6 from a whole part is a fifth decimal, not a rounding error.
    let scaled = percent * 10_000
    guard abs(scaled - scaled.rounded()) < 1e-6, let value = Int(exactly: scaled.rounded()) else {
      throw .invalidField(
        source: source, field: key(name), value: describe(number),
        expected: "a percentage with at most four decimals")
    }
    return value
  }

  /// One of `T`'s raw values; `expected` lists them for the error.
  mutating func choice<T: RawRepresentable>(_ name: String, _ type: T.Type, expected: String)
    throws(PricingError) -> T? where T.RawValue == String
  {
    guard let text = try string(name) else { return nil }
    guard let value = T(rawValue: text) else {
      throw .invalidField(source: source, field: key(name), value: quoted(text), expected: expected)
    }
    return value
  }
}

extension PricingError {
  /// A problem `JSONObjectReader` found, in pricing's words: `pricing.invalidField` naming the
  /// field (`(top level)` for the file itself), what it is and what was expected, or
  /// `pricing.unknownKey`.
  init(field problem: JSONFieldProblem) {
    switch problem.kind {
    case .unknownKey:
      self = .unknownKey(source: problem.source, field: problem.field)
    case .wrongType(let expected):
      self = .invalidField(
        source: problem.source, field: problem.field.isEmpty ? "(top level)" : problem.field,
        value: describe(problem.value), expected: expected.phrase)
    }
  }
}

/// A percent limit as text: `-100`, `1000`.
private func limitText(_ value: Double) -> String {
  value == value.rounded() ? String(Int(value)) : String(value)
}

/// A string from input for a message: quoted, escaped, and cut to 100 characters.
func quoted(_ text: String) -> String { "'\(SafeText.excerpt(text, limit: 100))'" }

/// A value for a message (`JSONFieldProblem.describe`: quoted strings, numbers, `an array`...).
func describe(_ value: Any?) -> String { JSONFieldProblem.describe(value) }
