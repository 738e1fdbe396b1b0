// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: EIP-681 and BIP-21 URIs, exact decimal amounts, payload building.

import ImprintCore
import ImprintQR
import ImprintTestSupport
import Testing

@Suite("Payment requests", .liveHandlesChecked)
struct PaymentRequestTests {
  @Test("EIP-681 ether request: integer wei, gas, chain id only when asked")
  func ether() throws {
    var payment = PaymentOptions()
    payment.amount = "2.014"
    let plain = try QRPayload.build(
      "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359", kind: .ethereum, payment: payment)
    // The ERC-681 example's value=2.014e18, written as an integer.
    #expect(
      plain.text == "ethereum:0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359?value=2014000000000000000")
    payment.chainID = "1"
    payment.gasLimit = "21000"
    payment.gasPrice = "20.5"
    let full = try QRPayload.build(
      "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359", kind: .ethereum, payment: payment)
    #expect(
      full.text
        == "ethereum:0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359@1?value=2014000000000000000"
        + "&gas=21000&gasPrice=20500000000")
  }

  @Test("ERC-20 transfer request names the token, the recipient and atomic units, with a warning")
  func token() throws {
    var payment = PaymentOptions()
    payment.token = "0x89205a3a3b2a69de6dbf7f01ed13b2108b2c43e7"
    payment.amount = "0.000001"
    payment.decimals = 6
    let payload = try QRPayload.build(
      "0x8e23ee67d1332ad560396262c48ffbb01f93d052", kind: .ethereum, payment: payment)
    let token = try EthereumAddress("0x89205a3a3b2a69de6dbf7f01ed13b2108b2c43e7").checksummed
    let to = try EthereumAddress("0x8e23ee67d1332ad560396262c48ffbb01f93d052").checksummed
    #expect(payload.text == "ethereum:\(token)/transfer?address=\(to)&uint256=1")
    #expect(payload.warnings.count == 1)
  }

  @Test(
    "gas price must be 1-100 gwei and gas limit 21000-30000000",
    arguments: [
      ("gasPrice", "0.5"), ("gasPrice", "100.000000001"), ("gasLimit", "20999"),
      ("gasLimit", "30000001"), ("chainID", "0"), ("chainID", "0xa"), ("amount", "1e18"),
      ("amount", "-1"), ("amount", "1.0000000000000000001"), ("amount", "1,5"), ("amount", "."),
    ])
  func ranges(field: String, value: String) {
    var payment = PaymentOptions()
    switch field {
    case "gasPrice": payment.gasPrice = value
    case "gasLimit": payment.gasLimit = value
    case "chainID": payment.chainID = value
    default: payment.amount = value
    }
    do {
      _ = try QRPayload.build(
        "0x52908400098527886E0F7030069857D2E4169EE7", kind: .ethereum, payment: payment)
      Issue.record("\(field)=\(value) must be refused")
    } catch {
      #expect(error.code == "qr.invalidAmount")
      #expect(error.message.contains("'\(value)'"))
    }
  }

  @Test(
    "a refused payment value is named by its flag on the command line, its key over HTTP",
    arguments: [
      (QROption.gasPrice, "0.5", "--gas-price", "gasPrice"),
      (.gasLimit, "20999", "--gas-limit", "gasLimit"), (.chainID, "0", "--chain-id", "chainId"),
      (.chainID, "99999999999999999999", "--chain-id", "chainId"),
      (.amount, "1.0000000000000000001", "--amount", "amount"),
    ])
  func surfaceNames(option: QROption, value: String, flag: String, key: String) throws {
    var payment = PaymentOptions()
    switch option {
    case .gasPrice: payment.gasPrice = value
    case .gasLimit: payment.gasLimit = value
    case .chainID: payment.chainID = value
    default: payment.amount = value
    }
    let error = try #require(throws: QRError.self) {
      try QRPayload.validate(payment, kind: .ethereum)
    }
    #expect(error.message.hasPrefix("\(flag) '\(value)' "), "\(error.message)")
    let http = ErrorSurface.$current.withValue(.http) { error.message }
    #expect(http.hasPrefix("\(key) '\(value)' "), "\(http)")
    #expect(!http.contains("--"), "\(http)")
  }

  @Test("gas price bounds are inclusive")
  func gasBounds() throws {
    for price in ["1", "100", "100.000000000"] {
      var payment = PaymentOptions()
      payment.gasPrice = price
      _ = try QRPayload.build(
        "0x52908400098527886E0F7030069857D2E4169EE7", kind: .ethereum, payment: payment)
    }
  }

  @Test("BIP-21: amount in BTC, label and message percent-encoded, lowercase scheme")
  func bip21() throws {
    var payment = PaymentOptions()
    payment.amount = "50"
    payment.label = "Luke-Jr"
    payment.message = "Donation for project xyz"
    let payload = try QRPayload.build(
      "1FsSia9rv4NeEwvJ2GvXrX7LyxYspbN2mo", kind: .bitcoin, payment: payment)
    #expect(
      payload.text
        == "bitcoin:1FsSia9rv4NeEwvJ2GvXrX7LyxYspbN2mo?amount=50&label=Luke-Jr"
        + "&message=Donation%20for%20project%20xyz")
    payment = PaymentOptions()
    payment.amount = "20.30"
    payment.label = "Café & co"
    let accented = try QRPayload.build(
      "bc1qvyq0cc6rahyvsazfdje0twl7ez82ndmuac2lhv", kind: .bitcoin, payment: payment)
    #expect(
      accented.text
        == "bitcoin:bc1qvyq0cc6rahyvsazfdje0twl7ez82ndmuac2lhv?amount=20.3&label=Caf%C3%A9%20%26%20co"
    )
  }

  @Test("BIP-21 amounts above 21 million BTC or with 9 decimals are refused")
  func bip21Amounts() {
    for amount in ["21000000.00000001", "0", "0.000000001"] {
      var payment = PaymentOptions()
      payment.amount = amount
      #expect(throws: QRError.self) {
        _ = try QRPayload.build(
          "1FsSia9rv4NeEwvJ2GvXrX7LyxYspbN2mo", kind: .bitcoin, payment: payment)
      }
    }
  }

  @Test("bare addresses are the default; text passes through unchanged")
  func defaults() throws {
    #expect(
      try QRPayload.build("0x52908400098527886e0f7030069857d2e4169ee7", kind: .ethereum).text
        == "0x52908400098527886E0F7030069857D2E4169EE7")
    #expect(
      try QRPayload.build("https://steemit.com/@a?b=c d", kind: .text).text
        == "https://steemit.com/@a?b=c d")
    #expect(throws: QRError.emptyPayload(source: "the payload")) {
      _ = try QRPayload.build("", kind: .text)
    }
  }

  @Test("exact decimal amounts")
  func decimals() throws {
    #expect(
      try DecimalAmount("1.5", decimals: 18, field: .amount).atomicUnits == "1500000000000000000")
    #expect(
      try DecimalAmount("0.000000000000000001", decimals: 18, field: .amount).atomicUnits == "1")
    #expect(try DecimalAmount("007.10", decimals: 8, field: .amount).decimalString == "7.1")
    #expect(try DecimalAmount(".5", decimals: 8, field: .amount).decimalString == "0.5")
    #expect(
      try DecimalAmount("12345678901234567890123456789", decimals: 0, field: .amount).atomicUnits
        == "12345678901234567890123456789")
  }

  @Test("addresses are grouped in fours for reading aloud")
  func grouping() {
    #expect(
      groupedForReading("0x52908400098527886E0F7030069857D2E4169EE7")
        == "0x 5290 8400 0985 2788 6E0F 7030 0698 57D2 E416 9EE7")
    #expect(groupedForReading("bc1qvyq0cc") == "bc1q vyq0 cc")
  }
}
