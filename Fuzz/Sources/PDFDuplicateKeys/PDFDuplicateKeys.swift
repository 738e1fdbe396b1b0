// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the repair of PDFs whose dictionaries repeat a key (`PDFDuplicateKeys.repaired`).
// A repaired file must need no further repair.

import FuzzSupport
import ImprintPDF

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let repaired = PDFDuplicateKeys.repaired(bytes(data, size)) else { return 0 }
  _ = PDFDuplicateKeys.repaired(repaired)
  return 0
}

@_cdecl("PDFDuplicateKeys_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
