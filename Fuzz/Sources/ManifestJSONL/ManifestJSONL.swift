// SPDX-License-Identifier: Apache-2.0
// Fuzz target: batch manifests in JSON Lines. `ManifestReader` opens only a path, so the input is
// written to a scratch file first; every line is read to the end.

import FuzzSupport
import ImprintBatch

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let path = scratchFile("manifest.jsonl", bytes(data, size))
  guard var reader = try? ManifestReader(path: path) else { return 0 }
  while let line = reader.next() {
    if case .success(let job) = line { _ = job.source.count }
  }
  return 0
}

@_cdecl("ManifestJSONL_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
