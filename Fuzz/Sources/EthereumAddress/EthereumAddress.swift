// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Ethereum addresses (EIP-55 checksums, EIP-1191 detection). A parsed address must
// parse again from its checksummed form, to the same address.

import FuzzSupport
import ImprintQR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let text = String(decoding: bytes(data, size), as: UTF8.self)
  guard let address = try? EthereumAddress(text) else { return 0 }
  let again = try? EthereumAddress(address.checksummed)
  precondition(
    again?.lowercaseHex == address.lowercaseHex,
    "'\(text)' parsed, but its checksummed form '\(address.checksummed)' did not parse back")
  _ = groupedForReading(address.checksummed)
  return 0
}

@_cdecl("EthereumAddress_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
