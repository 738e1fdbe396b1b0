// SPDX-License-Identifier: Apache-2.0
// ImprintCore: a JSON document as typed values, built by StrictJSON's own pass over the bytes.

/// One JSON value, as `StrictJSON.tree` builds it.
///
/// Readers that walk a document themselves (profiles, read for every card of a batch) take this
/// instead of `StrictJSON.parse`'s Foundation values: one pass over the bytes builds it, with no
/// second parse by `JSONSerialization` and no bridging or dynamic casts to read it back.
public enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(JSONNumber)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// The object's members, or nil for another value.
  public var object: [String: JSONValue]? {
    if case .object(let members) = self { members } else { nil }
  }

  /// The array's elements, or nil for another value.
  public var array: [JSONValue]? {
    if case .array(let elements) = self { elements } else { nil }
  }

  /// The string, or nil for another value.
  public var string: String? {
    if case .string(let text) = self { text } else { nil }
  }

  /// The number, or nil for another value (`true` and `false` are not numbers).
  public var number: JSONNumber? {
    if case .number(let number) = self { number } else { nil }
  }

  /// Whether the value is `null`.
  public var isNull: Bool {
    if case .null = self { true } else { false }
  }

  /// The member `key` of an object; nil for a missing key or a value that is not an object.
  public subscript(key: String) -> JSONValue? {
    object?[key]
  }

  /// "a string", "an object", ...: what the value is, for messages that never quote it.
  public var kindDescription: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// A JSON number: the text as written (grammar-checked, finite) and its value as a double.
public struct JSONNumber: Sendable, Equatable {
  /// The number as the document wrote it (`-17`, `2.5e3`).
  public let text: String
  /// Its value as a double (rounded for more than 17 significant digits).
  public let double: Double

  /// The value as an `Int` when the double is whole and fits (`2.0` and `2e3` included), as
  /// `JSONSerialization`'s `NSNumber` answered `Int(exactly: doubleValue)`.
  public var integer: Int? { Int(exactly: double) }

  /// Whether the text is an integer literal (`-12`, no point and no exponent).
  public var isIntegerLiteral: Bool {
    !text.utf8.contains {
      $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
    }
  }

  /// The number written back as text: an integer literal as written, whatever its size (`NSNumber`
  /// would have rounded one above 2^63 to a double); a whole value that fits an `Int` as its
  /// digits (`2e3` → `2000`); anything else as the double's description.
  public var canonicalText: String {
    if isIntegerLiteral { return text }
    if let whole = integer { return String(whole) }
    return "\(double)"
  }
}
