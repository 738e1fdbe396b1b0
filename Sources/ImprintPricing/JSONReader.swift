// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: strict reading of JSON objects: unknown keys and wrong types are errors.

import Foundation
import ImprintCore

/// Reads one JSON object for pricing, remembering which keys were read.
struct JSONReader {
  let source: String
  let path: String
  let object: [String: Any]
  private var used: Set<String> = []

  init(_ value: Any?, source: String, path: String) throws(PricingError) {
    guard let object = value as? [String: Any] else {
      throw .invalidField(
        source: source, field: path.isEmpty ? "(top level)" : path, value: describe(value),
        expected: "an object")
    }
    self.source = source
    self.path = path
    self.object = object
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

  func key(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

  mutating func has(_ name: String) -> Bool {
    used.insert(name)
    return object[name] != nil && !(object[name] is NSNull)
  }

  mutating func string(_ name: String) throws(PricingError) -> String? {
    guard has(name) else { return nil }
    guard let text = object[name] as? String else {
      throw .invalidField(
        source: source, field: key(name), value: describe(object[name]), expected: "a string")
    }
    return text
  }

  /// A whole number, any size that fits an `Int` (for `schemaVersion`, compared at once).
  mutating func integer(_ name: String) throws(PricingError) -> Int? {
    guard has(name) else { return nil }
    guard let number = object[name] as? NSNumber, !Formatting.isJSONBool(number),
      let value = Int(exactly: number.doubleValue)
    else {
      throw .invalidField(
        source: source, field: key(name), value: describe(object[name]), expected: "a whole number")
    }
    return value
  }

  /// The JSON number at `name` (not a boolean), or nil when absent.
  private mutating func number(_ name: String, expected: String) throws(PricingError) -> NSNumber? {
    guard has(name) else { return nil }
    guard let number = object[name] as? NSNumber, !Formatting.isJSONBool(number) else {
      throw .invalidField(
        source: source, field: key(name), value: describe(object[name]), expected: expected)
    }
    return number
  }

  /// A whole number within `range`; outside it, `PricingError.outOfRange` stating the range.
  ///
  /// The range is checked on the JSON number before it becomes an `Int`, so `1e308` is out of
  /// range rather than a trap, and every accepted value is exact (ranges stay below 2^53).
  mutating func integer(_ name: String, in range: ClosedRange<Int>, unit: String = "")
    throws(PricingError) -> Int?
  {
    guard let number = try number(name, expected: "a whole number") else { return nil }
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
    guard let number = try number(name, expected: "a percentage") else { return nil }
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

  mutating func bool(_ name: String) throws(PricingError) -> Bool? {
    guard has(name) else { return nil }
    guard let value = object[name], Formatting.isJSONBool(value), let flag = value as? Bool else {
      throw .invalidField(
        source: source, field: key(name), value: describe(object[name]), expected: "true or false")
    }
    return flag
  }

  mutating func choice<T: RawRepresentable>(_ name: String, _ type: T.Type, expected: String)
    throws(PricingError) -> T? where T.RawValue == String
  {
    guard let text = try string(name) else { return nil }
    guard let value = T(rawValue: text) else {
      throw .invalidField(source: source, field: key(name), value: quoted(text), expected: expected)
    }
    return value
  }

  mutating func child(_ name: String) throws(PricingError) -> JSONReader? {
    guard has(name) else { return nil }
    return try JSONReader(object[name], source: source, path: key(name))
  }

  mutating func array(_ name: String) throws(PricingError) -> [Any]? {
    guard has(name) else { return nil }
    guard let list = object[name] as? [Any] else {
      throw .invalidField(
        source: source, field: key(name), value: describe(object[name]), expected: "an array")
    }
    return list
  }

  /// Errors on the first key that was never read.
  func finish() throws(PricingError) {
    if let unknown = object.keys.sorted().first(where: { !used.contains($0) }) {
      throw .unknownKey(source: source, field: key(unknown))
    }
  }
}

/// A percent limit as text: `-100`, `1000`.
private func limitText(_ value: Double) -> String {
  value == value.rounded() ? String(Int(value)) : String(value)
}

/// A string from input for a message: quoted, escaped, and cut to 100 characters.
func quoted(_ text: String) -> String { "'\(SafeText.excerpt(text, limit: 100))'" }

func describe(_ value: Any?) -> String {
  switch value {
  case nil, is NSNull: "missing"
  case let text as String: quoted(text)
  case let number as NSNumber: Formatting.isJSONBool(number) ? "\(number.boolValue)" : "\(number)"
  case is [Any]: "an array"
  case is [String: Any]: "an object"
  default: "a value of another type"
  }
}
