// SPDX-License-Identifier: Apache-2.0
// Fuzz target: follow-count JSON (`Profile.parseFollowCounts`), then a profile that carries it.

import FuzzSupport
import ImprintCards

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let counts = try? Profile.parseFollowCounts(bytes(data, size), source: "fuzz.follow.json")
  else { return 0 }
  let profile = try? Profile.parse(
    Array(#"{"name":"fuzz"}"#.utf8), source: "p.json", follow: counts)
  _ = profile?.fields
  return 0
}

@_cdecl("FollowCountJSON_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
