// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Bitcoin addresses (Base58Check and Bech32/Bech32m), and the two codecs on their
// own: whatever decodes must encode back to the same text (lowercased for Bech32).

import FuzzSupport
import ImprintQR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let text = String(decoding: bytes(data, size), as: UTF8.self)
  if let address = try? BitcoinAddress(text) {
    _ = address.scriptPubKeyHex
    precondition((try? BitcoinAddress(address.text)) == address, "'\(text)' does not re-parse")
  }
  if case .success(let decoded) = Bech32.decode(text) {
    let encoded = Bech32.encode(hrp: decoded.hrp, data: decoded.data, variant: decoded.variant)
    precondition(encoded == text.lowercased(), "Bech32 '\(text)' re-encodes as '\(encoded)'")
    _ = Bech32.convertBits(decoded.data, from: 5, to: 8, pad: false)
  }
  // Base58 is quadratic by nature; addresses are at most 35 characters, and longer text is
  // refused by BitcoinAddress before it is decoded.
  if text.utf8.count <= 128, case .success(let decoded) = Base58.decode(text) {
    let encoded = Base58.encode(decoded)
    precondition(encoded == text, "Base58 '\(text)' re-encodes as '\(encoded)'")
  }
  return 0
}

@_cdecl("BitcoinAddress_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
