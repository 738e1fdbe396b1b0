// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: QRSettings.conflict, the one rule `imprint qr` and `imprint serve` apply to
// options that do not apply to the payload kind or exclude each other.

import ImprintQR
import ImprintTestSupport
import Testing

@Suite("QR settings that conflict", .liveHandlesChecked)
struct QRConflictTests {
  func settings(
    _ kind: QRPayloadKind, caption: String? = nil, captionAddress: Bool = false,
    _ change: (inout PaymentOptions) -> Void = { _ in }
  ) -> QRSettings {
    var payment = PaymentOptions()
    change(&payment)
    var style = QRStyle()
    style.caption = caption
    return QRSettings(kind: kind, payment: payment, style: style, captionAddress: captionAddress)
  }

  @Test("each option on a kind it does not apply to, and each excluding pair, is named")
  func conflicts() {
    let cases: [(QRSettings, QRConflict)] = [
      (settings(.text) { $0.token = "0x1" }, .ethereumOnly(.token)),
      (settings(.bitcoin) { $0.decimals = 6 }, .ethereumOnly(.decimals)),
      (settings(.text) { $0.chainID = "1" }, .ethereumOnly(.chainID)),
      (settings(.bitcoin) { $0.gasLimit = "21000" }, .ethereumOnly(.gasLimit)),
      (settings(.text) { $0.gasPrice = "1" }, .ethereumOnly(.gasPrice)),
      (settings(.ethereum) { $0.label = "shop" }, .bitcoinOnly(.label)),
      (settings(.text) { $0.message = "hi" }, .bitcoinOnly(.message)),
      (settings(.text) { $0.request = true }, .needsPayment(.request)),
      (settings(.text) { $0.amount = "1" }, .needsPayment(.amount)),
      (settings(.ethereum) { $0.decimals = 6 }, .decimalsWithoutToken),
      (settings(.text, captionAddress: true), .needsPayment(.captionAddress)),
      (settings(.bitcoin, caption: "x", captionAddress: true), .captionAndCaptionAddress),
      // The first conflict wins, in the order imprint qr has always reported them.
      (
        settings(.text) {
          $0.token = "0x1"
          $0.label = "a"
        }, .ethereumOnly(.token)
      ),
    ]
    for (value, expected) in cases {
      #expect(value.conflict(moduleGiven: false) == expected, "\(expected)")
    }
  }

  @Test("a module size beside a printed size is refused; either alone is not")
  func moduleAndSize() {
    var sized = settings(.text)
    sized.style.sizeMillimetres = 20
    #expect(sized.conflict(moduleGiven: true) == .moduleAndSize)
    #expect(sized.conflict(moduleGiven: false) == nil)
    #expect(settings(.text).conflict(moduleGiven: true) == nil)
  }

  @Test("combinations that make a code have no conflict")
  func none() {
    let valid = [
      settings(.text),
      settings(.text, caption: "Scan me"),
      settings(.ethereum) {
        $0.request = true
        $0.amount = "1.5"
        $0.token = "0x1"
        $0.decimals = 6
        $0.chainID = "1"
        $0.gasLimit = "21000"
        $0.gasPrice = "2"
      },
      settings(.bitcoin, captionAddress: true) {
        $0.amount = "0.1"
        $0.label = "shop"
        $0.message = "order 7"
      },
    ]
    for value in valid {
      #expect(value.conflict(moduleGiven: true) == nil, "\(String(describing: value.kind))")
    }
  }
}
