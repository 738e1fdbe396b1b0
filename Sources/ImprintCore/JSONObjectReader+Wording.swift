// SPDX-License-Identifier: Apache-2.0
// ImprintCore: a `JSONFieldProblem` in words: what was expected, and the value found, as the
// readers' messages state them (`'copies' is 'three'; expected a whole number`).

import Foundation

extension JSONExpected {
  /// The expectation in words: `an object`, `a string`, `true or false`, or a module's own.
  public var phrase: String {
    switch self {
    case .object: "an object"
    case .array: "an array"
    case .string: "a string"
    case .number: "a number"
    case .wholeNumber: "a whole number"
    case .bool: "true or false"
    case .described(let text): text
    }
  }
}

extension JSONFieldProblem {
  /// A value as a message shows it, never quoting a document whole: a string quoted, escaped
  /// and cut to 100 characters (`'three'`); a number as written (`12`, `1e+308`); `true` or
  /// `false`; `an array`; `an object`; `missing` when absent or `null`.
  ///
  /// - Parameter value: a value as `StrictJSON` returns it, or nil.
  /// - Returns: the value in words.
  public static func describe(_ value: Any?) -> String {
    switch value {
    case nil, is NSNull: "missing"
    case let text as String: "'\(SafeText.excerpt(text, limit: 100))'"
    case let number as NSNumber:
      Formatting.isJSONBool(number) ? "\(number.boolValue)" : "\(number)"
    case is [Any]: "an array"
    case is [String: Any]: "an object"
    default: "a value of another type"
    }
  }
}
