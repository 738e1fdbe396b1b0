// SPDX-License-Identifier: Apache-2.0
// Fuzz target: card templates (`CardTemplate.parse`), whose assets resolve against the shipped
// templates folder so that real asset names get past the existence checks.

import FuzzSupport
import ImprintCards

let templates = repositoryRoot + "/templates"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  _ = try? CardTemplate.parse(bytes(data, size), name: "fuzz.json", folder: templates)
  return 0
}

@_cdecl("TemplateJSON_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
