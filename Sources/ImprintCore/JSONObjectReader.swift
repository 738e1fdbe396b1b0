// SPDX-License-Identifier: Apache-2.0
// ImprintCore: the one strict reader of JSON objects: typed fields, unknown keys refused.

import Foundation

/// What a `JSONObjectReader` found wrong with one field; the module that reads the object turns
/// it into its own error (its code, its wording).
public struct JSONFieldProblem {
  /// What was wrong.
  public enum Kind: Sendable, Equatable {
    /// The value is not of the type asked for (or, at the top level, not an object).
    case wrongType(expected: JSONExpected)
    /// A key that nothing read: the schema does not know it.
    case unknownKey
  }

  /// What was wrong.
  public let kind: Kind
  /// The input's name, as given to the reader.
  public let source: String
  /// The field's path (`card.width`, `tiers[0].price`); empty for the top level.
  public let field: String
  /// The value found: nil when absent (or for an unknown key), otherwise as `StrictJSON`
  /// returned it (`NSNull`, `NSNumber`, `String`, `[Any]`, `[String: Any]`).
  public let value: Any?
}

/// The type a field was expected to have.
public enum JSONExpected: Sendable, Equatable {
  /// A JSON object.
  case object
  /// A JSON array.
  case array
  /// A JSON string.
  case string
  /// A JSON number (never `true` or `false`).
  case number
  /// A whole JSON number that fits an `Int`.
  case wholeNumber
  /// `true` or `false`.
  case bool
  /// A module's own wording of a number it reads itself (`a percentage`).
  case described(String)
}

/// Reads one JSON object strictly, remembering which keys were read, so that `finish()` can
/// refuse the first key nothing asked for.
///
/// The one reader behind templates, price lists and orders. It is generic over the error it
/// throws: each module passes `makeError`, which words a `JSONFieldProblem` as that module's own
/// error (`template.invalid`, `pricing.invalidField`, ...), so codes and messages stay the
/// module's, and its functions keep their typed `throws` without mapping at every call.
/// A module adds its own getters (amounts, colours, defaults) in an extension.
public struct JSONObjectReader<Failure: Error> {
  /// The input's name, for errors.
  public let source: String
  /// This object's path (`card`, `tiers[0]`); empty for the top level.
  public let path: String
  /// The object's members.
  public let object: [String: Any]
  /// Words a problem as the module's error.
  public let makeError: (JSONFieldProblem) -> Failure
  private var used: Set<String> = []

  /// Reads `value` as an object at `path` of `source`.
  ///
  /// - Throws: `makeError(.wrongType(expected: .object))` when `value` is not an object.
  public init(
    _ value: Any?, source: String, path: String,
    makeError: @escaping (JSONFieldProblem) -> Failure
  ) throws(Failure) {
    guard let object = value as? [String: Any] else {
      throw makeError(
        JSONFieldProblem(
          kind: .wrongType(expected: .object), source: source, field: path, value: value))
    }
    self.source = source
    self.path = path
    self.object = object
    self.makeError = makeError
  }

  /// The path of member `name`: `name` at the top level, `path.name` below it.
  public func key(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

  /// The error for member `name` holding the wrong type.
  public func wrongType(_ name: String, expected: JSONExpected) -> Failure {
    makeError(
      JSONFieldProblem(
        kind: .wrongType(expected: expected), source: source, field: key(name),
        value: object[name]))
  }

  /// Marks `name` read; whether it is present and not `null`.
  public mutating func has(_ name: String) -> Bool {
    used.insert(name)
    // By the boxed type's identity: `is NSNull` asks each other type whether it bridges to
    // NSNull, a search of every conformance the program has the first time a type is met.
    guard let value = object[name] else { return false }
    return ObjectIdentifier(type(of: value)) != ObjectIdentifier(NSNull.self)
  }

  /// Marks `name` read; its value, or nil when absent or `null`.
  public mutating func value(_ name: String) -> Any? {
    has(name) ? object[name] : nil
  }

  /// The string at `name`, or nil when absent or `null`.
  ///
  /// - Throws: the module's error for `.wrongType(expected: .string)`.
  public mutating func string(_ name: String) throws(Failure) -> String? {
    guard let value = value(name) else { return nil }
    guard let text = value as? String else { throw wrongType(name, expected: .string) }
    return text
  }

  /// The number at `name` (never a boolean), or nil when absent or `null`.
  ///
  /// - Parameters:
  ///   - name: the member.
  ///   - expected: how the error states what was expected (default: a number).
  /// - Returns: the number as `StrictJSON` read it, or nil.
  /// - Throws: the module's error for `.wrongType(expected:)`.
  public mutating func number(_ name: String, expected: JSONExpected = .number)
    throws(Failure) -> NSNumber?
  {
    guard let value = value(name) else { return nil }
    guard let number = value as? NSNumber, !Formatting.isJSONBool(number) else {
      throw wrongType(name, expected: expected)
    }
    return number
  }

  /// The whole number at `name` that fits an `Int`, or nil when absent or `null`.
  ///
  /// - Throws: the module's error for `.wrongType(expected: .wholeNumber)`.
  public mutating func integer(_ name: String) throws(Failure) -> Int? {
    guard let number = try number(name, expected: .wholeNumber) else { return nil }
    guard let value = Int(exactly: number.doubleValue) else {
      throw wrongType(name, expected: .wholeNumber)
    }
    return value
  }

  /// `true` or `false` at `name`, or nil when absent or `null`.
  ///
  /// - Throws: the module's error for `.wrongType(expected: .bool)`.
  public mutating func bool(_ name: String) throws(Failure) -> Bool? {
    guard let value = value(name) else { return nil }
    guard Formatting.isJSONBool(value), let flag = value as? Bool else {
      throw wrongType(name, expected: .bool)
    }
    return flag
  }

  /// The array at `name`, or nil when absent or `null`.
  ///
  /// - Throws: the module's error for `.wrongType(expected: .array)`.
  public mutating func array(_ name: String) throws(Failure) -> [Any]? {
    guard let value = value(name) else { return nil }
    guard let list = value as? [Any] else { throw wrongType(name, expected: .array) }
    return list
  }

  /// A reader of the object at `name` (its path `key(name)`), or nil when absent or `null`.
  ///
  /// - Throws: the module's error for `.wrongType(expected: .object)`.
  public mutating func child(_ name: String) throws(Failure) -> JSONObjectReader? {
    guard let value = value(name) else { return nil }
    return try JSONObjectReader(value, source: source, path: key(name), makeError: makeError)
  }

  /// Refuses the first key (in sorted order) that was never read.
  ///
  /// - Throws: the module's error for `.unknownKey`.
  public func finish() throws(Failure) {
    if let unknown = object.keys.sorted().first(where: { !used.contains($0) }) {
      throw makeError(
        JSONFieldProblem(kind: .unknownKey, source: source, field: key(unknown), value: nil))
    }
  }
}
