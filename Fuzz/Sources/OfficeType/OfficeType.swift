// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the Office sniffer (`OfficeSniff.sniff`): a ZIP's end records and central
// directory, the stored `mimetype` entry, a Compound File's header, DIFAT, FAT, directory and
// mini stream. Besides not trapping, it checks that the bytes as an array and as a
// `DocumentBytes` get the same verdict, and that the verdict is nil exactly when the bytes start
// with none of the signatures (a ZIP's, a Compound File's, RTF's).

import FuzzSupport
import ImprintCore
import ImprintDocuments

/// The signatures that make a file a ZIP archive, a Compound File or RTF.
let signatures: [[UInt8]] = [
  [0x50, 0x4B, 0x03, 0x04], [0x50, 0x4B, 0x05, 0x06],
  [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1], Array(#"{\rtf"#.utf8),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  let verdict = OfficeSniff.sniff(input)
  precondition(
    OfficeSniff.sniff(DocumentBytes(copying: input)) == verdict,
    "an array and a DocumentBytes of the same bytes got other verdicts")
  let signed = signatures.contains { input.starts(with: $0) }
  precondition(
    signed == (verdict != nil), "signed: \(signed), verdict: \(String(describing: verdict))")
  return 0
}

@_cdecl("OfficeType_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
