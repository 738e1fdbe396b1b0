// SPDX-License-Identifier: Apache-2.0
// Fuzz target: ImprintCore's strict JSON reader, which every JSON input goes through (profiles,
// templates, price lists, orders, manifest lines). Besides not trapping, it checks one property
// against Foundation: a document the validator accepts, JSONSerialization reads too (otherwise a
// user would get the vague "a value it refused" error instead of a line and column).

import Foundation
import FuzzSupport
import ImprintCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  guard let start = try? StrictJSON.validate(input, source: "fuzz.json") else { return 0 }
  do {
    _ = try JSONSerialization.jsonObject(
      with: Data(input[start...]), options: [.fragmentsAllowed])
  } catch {
    fatalError("StrictJSON accepted a document JSONSerialization refuses: \(error)")
  }
  return 0
}

@_cdecl("StrictJSON_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
