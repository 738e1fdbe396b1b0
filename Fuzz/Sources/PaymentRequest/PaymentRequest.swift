// SPDX-License-Identifier: Apache-2.0
// Fuzz target: QR payloads with payment requests (EIP-681, BIP-21), as typed into a form. The
// input is newline-separated: kind (`e`thereum, `b`itcoin, else text; a second character asks
// for a request), payload, amount, token, decimals, chain id, gas limit, gas price, label,
// message; an empty field is absent.

import FuzzSupport
import ImprintQR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let field = fields(bytes(data, size), count: 10)
  let kind: QRPayloadKind =
    switch field[0].first {
    case "e": .ethereum
    case "b": .bitcoin
    default: .text
    }
  func optional(_ index: Int) -> String? { field[index].isEmpty ? nil : field[index] }
  var payment = PaymentOptions()
  payment.request = field[0].count > 1
  payment.amount = optional(2)
  payment.token = optional(3)
  payment.decimals = optional(4).flatMap { Int($0) }
  payment.chainID = optional(5)
  payment.gasLimit = optional(6)
  payment.gasPrice = optional(7)
  payment.label = optional(8)
  payment.message = optional(9)
  _ = try? QRPayload.validate(payment, kind: kind)
  _ = try? QRPayload.build(field[1], kind: kind, payment: payment)
  return 0
}

@_cdecl("PaymentRequest_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
