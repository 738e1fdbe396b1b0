// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the quick PDF page-tree reader (`QuickPageTree`, reached through the public
// `PageTreeWalk.quickWalk`): xref tables and streams, object streams, inherited boxes, images.

import FuzzSupport
import ImprintCore
import ImprintPDF

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let document = DocumentBytes(copying: bytes(data, size))
  _ = PageTreeWalk.quickWalk(document, imagePages: [1, 2, 3])
  return 0
}

@_cdecl("QuickPageTree_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
