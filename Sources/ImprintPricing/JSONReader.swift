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

  static func parse(_ bytes: [UInt8], source: String) throws(PricingError) -> JSONReader {
    do {
      return try JSONReader(
        try JSONSerialization.jsonObject(with: Data(bytes)), source: source, path: "")
    } catch let error as PricingError {
      throw error
    } catch {
      throw .invalidJSON(source: source, detail: (error as NSError).localizedDescription)
    }
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

  /// An amount in minor units: a whole number, never negative.
  mutating func amount(_ name: String) throws(PricingError) -> Int? {
    guard let value = try integer(name) else { return nil }
    guard value >= 0 else { throw .negativePrice(source: source, field: key(name), value: value) }
    return value
  }

  /// A percentage with at most four decimals, as parts per million (`8.875` → `88750`).
  mutating func partsPerMillion(_ name: String) throws(PricingError) -> Int? {
    guard has(name) else { return nil }
    guard let number = object[name] as? NSNumber, !Formatting.isJSONBool(number) else {
      throw .invalidField(
        source: source, field: key(name), value: describe(object[name]), expected: "a percentage")
    }
    let scaled = number.doubleValue * 10_000
    guard abs(scaled - scaled.rounded()) < 1e-4, abs(scaled) < 1e12 else {
      throw .invalidField(
        source: source, field: key(name), value: "\(number)",
        expected: "a percentage with at most four decimals")
    }
    return Int(scaled.rounded())
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
      throw .invalidField(source: source, field: key(name), value: "'\(text)'", expected: expected)
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

func describe(_ value: Any?) -> String {
  switch value {
  case nil, is NSNull: "missing"
  case let text as String: "'\(text)'"
  case let number as NSNumber: Formatting.isJSONBool(number) ? "\(number.boolValue)" : "\(number)"
  case is [Any]: "an array"
  case is [String: Any]: "an object"
  default: "a value of another type"
  }
}
