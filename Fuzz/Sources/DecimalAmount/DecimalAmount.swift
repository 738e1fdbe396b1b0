// SPDX-License-Identifier: Apache-2.0
// Fuzz target: exact decimal amounts. The first byte picks the decimals (0-39), the rest is the
// text; a parsed amount must parse again from its `decimalString` to the same atomic units.

import FuzzSupport
import ImprintQR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  guard let first = input.first else { return 0 }
  let decimals = Int(first % 40)
  let text = String(decoding: input.dropFirst(), as: UTF8.self)
  guard let amount = try? DecimalAmount(text, decimals: decimals, field: .amount) else {
    return 0
  }
  let again = try? DecimalAmount(amount.decimalString, decimals: decimals, field: .amount)
  precondition(
    again?.atomicUnits == amount.atomicUnits,
    "'\(text)' (\(decimals) decimals) is \(amount.atomicUnits) units, but its decimal string "
      + "'\(amount.decimalString)' is \(again?.atomicUnits ?? "invalid")")
  precondition(!amount.exceeds(amount), "an amount exceeds itself")
  return 0
}

@_cdecl("DecimalAmount_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
