// SPDX-License-Identifier: Apache-2.0
// ImprintService: a route's named options, from a JSON object body or from query parameters,
// read with one set of typed getters; unknown names refused.

import Foundation
import ImprintCore
import ImprintHTTP

/// Named options of one request: the members of a JSON object, or the query parameters.
struct RequestOptions {
  private enum Source {
    case json(JSONObjectReader<ServiceError>)
    case query([String: String], used: Set<String>)
  }

  private var source: Source
  /// The names the route asked for, given or not: its parameters, for the hint of one it does
  /// not know.
  private var asked: Set<String> = []

  /// The query parameters of `request`.
  ///
  /// - Throws: `ServiceError.invalidParameter` for a parameter given twice.
  init(query request: HTTPRequest) throws(ServiceError) {
    if let name = request.repeatedParameters.first {
      throw .invalidParameter(name: name, problem: "is given more than once")
    }
    source = .query(request.query, used: [])
  }

  /// The members of the JSON object in `request`'s body (read by `StrictJSON`).
  ///
  /// - Throws: `JSONError` for a body that is not JSON; `ServiceError.invalidParameter` when it
  ///   is not an object.
  init(jsonBody request: HTTPRequest) throws {
    let value = try StrictJSON.parse(request.body, source: "the request body")
    source = .json(
      try JSONObjectReader(value, source: "the request body", path: "") { problem in
        switch problem.kind {
        case .unknownKey: .invalidParameter(name: problem.field, problem: "is not known")
        case .wrongType(let expected):
          problem.field.isEmpty
            ? .invalidParameter(name: "(body)", problem: "is not a JSON object")
            : .invalidParameter(
              name: problem.field,
              problem: "is \(JSONFieldProblem.describe(problem.value)); expected \(expected.phrase)"
            )
        }
      })
  }

  /// The text of option `name`, if given.
  mutating func string(_ name: String) throws(ServiceError) -> String? {
    asked.insert(name)
    switch source {
    case .json(var reader):
      defer { source = .json(reader) }
      return try reader.string(name)
    case .query(let values, var used):
      used.insert(name)
      source = .query(values, used: used)
      return values[name]
    }
  }

  /// Option `name` as the text of a whole number, if given: a string, or (in a JSON body) a
  /// JSON number as its exact digits, for the library to check as it checks the string.
  ///
  /// An integer past 64 bits keeps its digits (`StrictJSON` reads it as a decimal), so the
  /// library refuses it by its range, as the same string; a number with a fraction or an
  /// exponent is given as a fraction (`21000.5`, `21000.0`), which no whole-number check takes.
  /// Nothing is rounded through a `Double` on the way.
  ///
  /// - Throws: `ServiceError.invalidParameter` for any other JSON type.
  mutating func integerText(_ name: String) throws(ServiceError) -> String? {
    asked.insert(name)
    guard case .json(var reader) = source else { return try string(name) }
    defer { source = .json(reader) }
    guard let value = reader.value(name) else { return nil }
    if let text = value as? String { return text }
    guard let number = try reader.number(name, expected: .described("a string or an integer"))
    else { return nil }
    let type = String(cString: number.objCType)
    if number is NSDecimalNumber || (type != "d" && type != "f") {
      return number.stringValue
    }
    // A binary floating-point value: its description always has a point or an exponent.
    return "\(number.doubleValue)"
  }

  /// Option `name` as the text of a decimal amount (`"0.000000000000000001"`), if given.
  ///
  /// - Throws: `ServiceError.invalidParameter` for a JSON number: a double holds 15 to 17
  ///   significant digits, so a number would lose those of an amount with 18 decimals (or
  ///   change it) before anything could check it; the amount is sent as a string.
  mutating func decimalText(_ name: String) throws(ServiceError) -> String? {
    asked.insert(name)
    guard case .json(let reader) = source, let value = reader.object[name] as? NSNumber,
      !Formatting.isJSONBool(value)
    else { return try string(name) }
    throw .invalidParameter(
      name: name,
      problem: "is a JSON number; expected a string of decimal digits like \"1.5\" (a JSON number "
        + "may lose digits of an amount with 18 decimals)")
  }

  /// Option `name` as a whole number in `range`, if given.
  mutating func integer(_ name: String, in range: ClosedRange<Int>) throws(ServiceError) -> Int? {
    asked.insert(name)
    let value: Int?
    switch source {
    case .json(var reader):
      defer { source = .json(reader) }
      value = try reader.integer(name)
    case .query:
      value = try string(name).map { (text) throws(ServiceError) -> Int in
        guard let number = Int(text) else {
          throw .invalidParameter(name: name, problem: "must be a whole number; got '\(text)'")
        }
        return number
      }
    }
    if let value, !range.contains(value) {
      throw .invalidParameter(
        name: name, problem: "must be \(range.lowerBound) to \(range.upperBound); got \(value)")
    }
    return value
  }

  /// Option `name` as a number in `range`, if given.
  mutating func number(_ name: String, in range: ClosedRange<Double>) throws(ServiceError)
    -> Double?
  {
    asked.insert(name)
    let value: Double?
    switch source {
    case .json(var reader):
      defer { source = .json(reader) }
      value = try reader.number(name)?.doubleValue
    case .query:
      value = try string(name).map { (text) throws(ServiceError) -> Double in
        guard let number = Double(text), number.isFinite else {
          throw .invalidParameter(name: name, problem: "must be a number; got '\(text)'")
        }
        return number
      }
    }
    if let value, !range.contains(value) {
      throw .invalidParameter(
        name: name,
        problem: "must be \(Formatting.number(range.lowerBound)) to "
          + "\(Formatting.number(range.upperBound)); got \(Formatting.number(value))")
    }
    return value
  }

  /// Option `name` as `true` or `false` (false when absent).
  mutating func flag(_ name: String) throws(ServiceError) -> Bool {
    asked.insert(name)
    switch source {
    case .json(var reader):
      defer { source = .json(reader) }
      return try reader.bool(name) ?? false
    case .query:
      switch try string(name) {
      case nil, "false": return false
      case "true", "": return true
      case let text?:
        throw .invalidParameter(name: name, problem: "must be true or false; got '\(text)'")
      }
    }
  }

  /// Option `name` as one of `choices`, if given.
  mutating func choice(_ name: String, _ choices: [String]) throws(ServiceError) -> String? {
    guard let text = try string(name) else { return nil }
    guard choices.contains(text) else {
      throw .invalidParameter(
        name: name,
        problem: "must be " + choices.joined(separator: ", ") + "; got '\(text)'")
    }
    return text
  }

  /// Option `name` as a colour (`#RRGGBB`), if given.
  mutating func color(_ name: String) throws(ServiceError) -> Color? {
    guard let text = try string(name) else { return nil }
    guard let color = Color(parsing: text) else {
      throw .invalidParameter(name: name, problem: "must be a colour like #1A2B3C; got '\(text)'")
    }
    return color
  }

  /// Refuses the first option (in sorted order) nothing read, naming those the route reads.
  ///
  /// - Throws: `ServiceError.unknownParameter`.
  func finish() throws(ServiceError) {
    let given =
      switch source {
      case .json(let reader): Array(reader.object.keys)
      case .query(let values, _): Array(values.keys)
      }
    if let unknown = given.sorted().first(where: { !asked.contains($0) }) {
      throw .unknownParameter(name: unknown, known: asked.sorted())
    }
  }
}

/// A request's options as a capability's (`OptionSource`): each read by its `key`, refused
/// with `ServiceError.invalidParameter` as the route's own are.
extension RequestOptions: OptionSource {
  mutating func text(_ name: OptionName) throws(ServiceError) -> String? {
    try string(name.key)
  }

  mutating func decimalText(_ name: OptionName) throws(ServiceError) -> String? {
    try decimalText(name.key)
  }

  mutating func integerText(_ name: OptionName) throws(ServiceError) -> String? {
    try integerText(name.key)
  }

  mutating func flag(_ name: OptionName) throws(ServiceError) -> Bool { try flag(name.key) }

  mutating func integer(_ name: OptionName, in range: ClosedRange<Int>) throws(ServiceError)
    -> Int?
  {
    try integer(name.key, in: range)
  }

  mutating func number(_ name: OptionName, in range: ClosedRange<Double>) throws(ServiceError)
    -> Double?
  {
    try number(name.key, in: range)
  }

  mutating func choice(_ name: OptionName, _ choices: [String]) throws(ServiceError) -> String? {
    try choice(name.key, choices)
  }

  mutating func color(_ name: OptionName) throws(ServiceError) -> Color? { try color(name.key) }
}
