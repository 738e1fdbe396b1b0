// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: the one strict JSON object reader: typed fields, paths, unknown keys, and
// problems handed to the module that words them.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

/// A module's error as a test sees it: the problem's kind, field and what was found.
private struct Refused: Error, Equatable {
  var kind: JSONFieldProblem.Kind
  var source: String
  var field: String
  var found: String

  init(_ problem: JSONFieldProblem) {
    kind = problem.kind
    source = problem.source
    field = problem.field
    found =
      switch problem.value {
      case nil: "nothing"
      case is NSNull: "null"
      case let text as String: "'\(text)'"
      case let number as NSNumber:
        Formatting.isJSONBool(number) ? "\(number.boolValue)" : "number \(number.doubleValue)"
      case is [Any]: "an array"
      case is [String: Any]: "an object"
      default: "another value"
      }
  }

  init(_ kind: JSONFieldProblem.Kind, _ field: String, _ found: String) {
    self.kind = kind
    self.source = "t.json"
    self.field = field
    self.found = found
  }
}

private func reader(_ text: String) throws(Refused) -> JSONObjectReader<Refused> {
  let value: Any
  do {
    value = try StrictJSON.parse(Array(text.utf8), source: "t.json")
  } catch {
    preconditionFailure("test JSON is valid: \(error.message)")
  }
  return try JSONObjectReader(value, source: "t.json", path: "", makeError: Refused.init)
}

@Suite("JSONObjectReader", .liveHandlesChecked)
struct JSONObjectReaderTests {
  @Test("reads each type; null and absent are both nil, and both count as read")
  func reads() throws {
    var top = try reader(
      #"{"s": "x", "n": 2.5, "i": 7, "b": false, "a": [1], "o": {"k": "v"}, "z": null}"#)
    #expect(try top.string("s") == "x")
    #expect(try top.number("n")?.doubleValue == 2.5)
    #expect(try top.integer("i") == 7)
    #expect(try top.bool("b") == false)
    #expect(try top.array("a")?.count == 1)
    var child = try #require(try top.child("o"))
    #expect(child.path == "o" && child.key("k") == "o.k")
    #expect(try child.string("k") == "v")
    try child.finish()
    #expect(try top.string("z") == nil)
    #expect(try top.string("absent") == nil)
    try top.finish()
  }

  @Test(
    "a wrong type names the field's path, what was expected and what was found",
    arguments: [
      (#"{"f": 1}"#, "string", JSONExpected.string, "number 1.0"),
      (#"{"f": true}"#, "number", .number, "true"),
      (#"{"f": "1"}"#, "number", .number, "'1'"),
      (#"{"f": 1.5}"#, "integer", .wholeNumber, "number 1.5"),
      (#"{"f": 1e300}"#, "integer", .wholeNumber, "number 1e+300"),
      (#"{"f": false}"#, "integer", .wholeNumber, "false"),
      (#"{"f": 0}"#, "bool", .bool, "number 0.0"),
      (#"{"f": "true"}"#, "bool", .bool, "'true'"),
      (#"{"f": {}}"#, "array", .array, "an object"),
      (#"{"f": []}"#, "child", .object, "an array"),
    ])
  func wrongTypes(json: String, getter: String, expected: JSONExpected, found: String) throws {
    var top = try reader(json)
    #expect(throws: Refused(.wrongType(expected: expected), "f", found)) {
      switch getter {
      case "string": _ = try top.string("f")
      case "number": _ = try top.number("f")
      case "integer": _ = try top.integer("f")
      case "bool": _ = try top.bool("f")
      case "array": _ = try top.array("f")
      default: _ = try top.child("f")
      }
    }
  }

  @Test("a number read in a module's own words keeps them")
  func described() throws {
    var top = try reader(#"{"p": "5%"}"#)
    #expect(throws: Refused(.wrongType(expected: .described("a percentage")), "p", "'5%'")) {
      _ = try top.number("p", expected: .described("a percentage"))
    }
  }

  @Test("a top level that is not an object is refused with an empty field")
  func topLevel() {
    #expect(throws: Refused(.wrongType(expected: .object), "", "an array")) {
      _ = try JSONObjectReader([Any](), source: "t.json", path: "", makeError: Refused.init)
    }
  }

  @Test("finish refuses the first unread key in sorted order, with its path")
  func unknownKeys() throws {
    var top = try reader(#"{"b": 1, "inner": {"zeta": 1, "alpha": 2, "keep": 3}, "a": 2}"#)
    var inner = try #require(try top.child("inner"))
    _ = try inner.integer("keep")
    #expect(throws: Refused(.unknownKey, "inner.alpha", "nothing")) { try inner.finish() }
    _ = try top.integer("a")
    #expect(throws: Refused(.unknownKey, "b", "nothing")) { try top.finish() }
    // `has` and `value` count as reading.
    let present = top.has("b")
    #expect(present)
    try top.finish()
  }
}
