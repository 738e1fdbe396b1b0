// SPDX-License-Identifier: Apache-2.0
// Fuzz target: profile JSON (`Profile.parse`), as uploaded or fetched from a Steem/Hive node,
// and the fields a card shows (reputation, join date, website).

import FuzzSupport
import ImprintCards

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let profile = try? Profile.parse(bytes(data, size), source: "fuzz.json") else { return 0 }
  _ = profile.fields
  _ = profile.joined
  _ = profile.reputation
  _ = profile.profileURL
  return 0
}

@_cdecl("ProfileJSON_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
