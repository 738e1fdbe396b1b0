// SPDX-License-Identifier: Apache-2.0
// Fuzz target: ImprintCore's strict JSON reader, which every JSON input goes through (profiles,
// templates, price lists, orders, manifest lines). Besides not trapping, it checks one property
// against Foundation: a document the validator accepts, JSONSerialization reads too (otherwise a
// user would get the vague "a value it refused" error instead of a line and column). And the
// values `StrictJSON.tree` builds in its own pass (profiles) are the ones JSONSerialization
// builds, refused exactly when the validator refuses, with the same error.

import Foundation
import FuzzSupport
import ImprintCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  let start: Int
  do {
    start = try StrictJSON.validate(input, source: "fuzz.json")
  } catch {
    do {
      _ = try StrictJSON.tree(input, source: "fuzz.json")
      fatalError("tree accepted a document validate refuses: \(error)")
    } catch let treeError {
      guard treeError == error else {
        fatalError("tree and validate disagree: \(treeError) against \(error)")
      }
    }
    return 0
  }
  let foundation: Any
  do {
    foundation = try JSONSerialization.jsonObject(
      with: Data(input[start...]), options: [.fragmentsAllowed])
  } catch {
    fatalError("StrictJSON accepted a document JSONSerialization refuses: \(error)")
  }
  do {
    let tree = try StrictJSON.tree(input, source: "fuzz.json")
    guard same(tree, foundation) else { fatalError("tree and JSONSerialization differ") }
  } catch {
    fatalError("tree refused a document validate accepts: \(error)")
  }
  return 0
}

/// Whether a built value is the one Foundation built: the same strings, numbers (as doubles;
/// Foundation's booleans are numbers too), nulls and shapes.
private func same(_ value: JSONValue, _ foundation: Any) -> Bool {
  switch value {
  case .null: return foundation is NSNull
  case .bool(let flag): return (foundation as? NSNumber)?.boolValue == flag
  case .number(let number):
    // Foundation reads a long number through Decimal, whose conversion to a double may round
    // the last bit otherwise than the tree's correctly rounded one.
    guard let other = (foundation as? NSNumber)?.doubleValue else { return false }
    return other == number.double
      || abs(other - number.double) <= 1e-15 * max(abs(other), abs(number.double))
  case .string(let text):
    // Foundation drops a U+FEFF that starts a run of a string between escapes (`"\n\u{FEFF}"`
    // reads as "\n"); the tree keeps every character the document has.
    return (foundation as? String).map(withoutBOM) == withoutBOM(text)
  case .array(let elements):
    guard let other = foundation as? [Any], other.count == elements.count else { return false }
    return zip(elements, other).allSatisfy { same($0, $1) }
  case .object(let members):
    guard let other = foundation as? [String: Any], other.count == members.count else {
      return false
    }
    // Keys compared without U+FEFF too (see strings).
    var byKey: [String: Any] = [:]
    for (key, value) in other { byKey[String(String.UnicodeScalarView(withoutBOM(key)))] = value }
    return members.allSatisfy { key, member in
      byKey[String(String.UnicodeScalarView(withoutBOM(key)))].map { same(member, $0) } ?? false
    }
  }
}

@_cdecl("StrictJSON_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}

private func withoutBOM(_ text: String) -> [Unicode.Scalar] {
  text.unicodeScalars.filter { $0 != "\u{FEFF}" }
}
