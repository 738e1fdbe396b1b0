// SPDX-License-Identifier: Apache-2.0
// ImprintService: a route's named options, from a JSON object body or from query parameters,
// read with one set of typed getters; unknown names refused.

import Foundation
import ImprintCore

/// Named options of one request: the members of a JSON object, or the query parameters.
struct RequestOptions {
  private enum Source {
    case json(JSONObjectReader<ServiceError>)
    case query([String: String], used: Set<String>)
  }

  private var source: Source

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

  /// Option `name` as a whole number in `range`, if given.
  mutating func integer(_ name: String, in range: ClosedRange<Int>) throws(ServiceError) -> Int? {
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

  /// Refuses the first option (in sorted order) nothing read.
  ///
  /// - Throws: `ServiceError.invalidParameter`.
  func finish() throws(ServiceError) {
    switch source {
    case .json(let reader): try reader.finish()
    case .query(let values, let used):
      if let unknown = values.keys.sorted().first(where: { !used.contains($0) }) {
        throw .invalidParameter(name: unknown, problem: "is not known")
      }
    }
  }
}
