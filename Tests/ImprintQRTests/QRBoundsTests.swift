// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: bounds under hostile input: raster pixels, payload length, uint256 amounts,
// and address decoders that report odd input instead of trapping.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR
import ImprintTestSupport
import Testing

@Suite("QR bounds", .liveHandlesChecked)
struct QRBoundsTests {
  @Test(
    "rasters past 100 megapixels are qr.imageTooLarge with their size; vectors are not bounded",
    arguments: [(1000.0, 4800.0), (1000.0, 300.0), (500.0, 600.0)])
  func pixels(size: Double, dpi: Double) throws {
    var style = QRStyle()
    style.sizeMillimetres = size
    style.dpi = dpi
    #expect(throws: QRError.self) { try QRRenderer.checkRasterSize(style: style) }
    do {
      _ = try QRRenderer.render(payload: "https://example.org", style: style, format: .png)
      Issue.record("a \(size) mm code at \(dpi) dpi must be refused")
    } catch let error as QRError {
      #expect(error.code == "qr.imageTooLarge")
      #expect(error.message.contains(" × ") && error.message.contains("100 megapixels"))
    }
    let pdf = try QRRenderer.render(payload: "https://example.org", style: style, format: .pdf)
    #expect(pdf.bytes.starts(with: Array("%PDF".utf8)))
  }

  @Test("a version-40 symbol at 64 pixels a module is refused; the size check passes up front")
  func largeModules() throws {
    var style = QRStyle()
    style.modulePixels = 64
    style.level = .low
    // Up front, a version-1 symbol at 64 pixels (29 × 64 = 1856 a side) is fine.
    try QRRenderer.checkRasterSize(style: style)
    let payload = String(repeating: "a", count: 2900)
    #expect(throws: QRError.imageTooLarge(width: 11840, height: 11840, limit: 100_000_000)) {
      _ = try QRRenderer.render(payload: payload, style: style, format: .png)
    }
  }

  @Test("payloads past 7089 bytes are refused before libqrencode; 7089 digits still encode")
  func payloadLength() throws {
    #expect(throws: QRError.payloadTooLarge(bytes: 7090, level: "L", maximum: 2953)) {
      _ = try QRMatrix.encode(Array(repeating: UInt8(ascii: "1"), count: 7090), level: .low)
    }
    #expect(throws: QRError.payloadTooLarge(bytes: 1 << 20, level: "H", maximum: 1273)) {
      _ = try QRMatrix.encode(Array(repeating: UInt8(ascii: "x"), count: 1 << 20), level: .high)
    }
    let digits = try QRMatrix.encode(Array(repeating: UInt8(ascii: "7"), count: 7089), level: .low)
    #expect(digits.version == 40)
  }

  @Test("uint256: the largest amount fits, one more atomic unit does not, at any decimals")
  func uint256() throws {
    let max = DecimalAmount.uint256Max
    #expect(try DecimalAmount(max, decimals: 0, field: .amount).fitsUInt256)
    let plusOne = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
    #expect(try !DecimalAmount(plusOne, decimals: 0, field: .amount).fitsUInt256)
    #expect(
      try !DecimalAmount(String(repeating: "9", count: 100_000), decimals: 0, field: .amount)
        .fitsUInt256)
    #expect(
      DecimalAmount.uint256Maximum(decimals: 18)
        == "115792089237316195423570985008687907853269984665640564039457.584007913129639935")
    #expect(DecimalAmount.uint256Maximum(decimals: 0) == max)
    #expect(DecimalAmount.uint256Maximum(decimals: 80).hasPrefix("0.00115792"))
    let ether = try DecimalAmount(
      DecimalAmount.uint256Maximum(decimals: 18), decimals: 18, field: .amount)
    #expect(ether.fitsUInt256 && ether.atomicUnits == max)
    #expect(throws: QRError.self) { _ = try DecimalAmount("1", decimals: -1, field: .amount) }
  }

  @Test(
    "EIP-681 requests past uint256 are eth.amountOutOfRange; the payload is never built",
    arguments: [
      ("115792089237316195423570985008687907853269984665640564039458", nil, "--amount"),
      (
        "115792089237316195423570985008687907853269984665640564039457.584007913129639936", nil,
        "--amount"
      ),
      ("1" + String(repeating: "0", count: 42), 36, "--amount"),
    ] as [(String, Int?, String)])
  func eip681(amount: String, decimals: Int?, field: String) {
    var payment = PaymentOptions()
    payment.amount = amount
    if let decimals {
      payment.decimals = decimals
      payment.token = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
    }
    let recipient = "0x52908400098527886E0F7030069857D2E4169EE7"
    do {
      _ = try QRPayload.build(recipient, kind: .ethereum, payment: payment)
      Issue.record("\(amount) must be refused")
    } catch {
      #expect(error.code == "eth.amountOutOfRange")
      #expect(error.message.hasPrefix("\(field) '") && error.message.contains("2^256 - 1"))
      #expect(error.isMalformedOption)
    }
  }

  @Test(
    "Base58 and Bech32 decoders report odd input (combining marks, long runs) without trapping",
    arguments: [
      "1\u{301}", "z\u{301}\u{302}x", "1é", "11111\u{200B}", String(repeating: "1", count: 10_000),
      String(repeating: "z", count: 3000), "bc1\u{301}", "bc1" + String(repeating: "q", count: 100),
      "3" + String(repeating: "\u{301}", count: 40),
    ])
  func oddBitcoin(text: String) {
    do {
      _ = try BitcoinAddress(text)
      Issue.record("\(text) must be refused")
    } catch {
      #expect(error.code == "btc.invalidAddress")
      #expect(error.message.count < 400)
    }
  }

  @Test("a megabyte of Base58 letters is refused by length, not decoded (decoding is quadratic)")
  func longBase58() {
    let clock = ContinuousClock()
    let start = clock.now
    #expect {
      _ = try BitcoinAddress(String(repeating: "z", count: 1_000_000))
    } throws: { error in
      (error as? QRError)?.code == "btc.invalidAddress"
        && (error as? QRError)?.message.contains("is 1000000 characters") == true
    }
    #expect(clock.now - start < .seconds(20))
  }

  @Test("a caption past the limit is refused in every format; the longest one is set and read")
  func longCaption() throws {
    var style = QRStyle()
    // Refused at once, by length in Unicode scalars (as JSON Schema's maxLength counts), without
    // its text in the message.
    for caption in [
      String(repeating: "ab ", count: 40_000), String(repeating: "é", count: 257),
      String(repeating: "e\u{301}", count: 200),
    ] {
      style.caption = caption
      for format in [QRFormat.svg, .png, .pdf, .eps] {
        #expect {
          _ = try QRRenderer.render(payload: "x", style: style, format: format)
        } throws: { error in
          let error = error as? QRError
          return error?.code == "qr.invalidOption"
            && error?.message.contains("\(caption.unicodeScalars.count) characters") == true
            && error?.message.contains("at most 256 characters") == true
            && error?.message.contains("abab") == false
        }
      }
    }
    // The longest caption, without a space to split at, on the smallest symbol: a PNG and a PDF
    // set it (the smallest size of 23 modules' width over 256 characters), the code still reads.
    let folder = TemporaryFolder()
    style.caption =
      String(repeating: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", count: 7)
      .prefix(256).description
    style.quietZone = 1
    let png = try QRRenderer.render(payload: "x", style: style, format: .png)
    try Data(png.bytes).write(to: URL(fileURLWithPath: folder.file("caption.png")))
    #expect(try zbarDecode(folder.file("caption.png")) == "x")
    let pdf = try QRRenderer.render(payload: "x", style: style, format: .pdf)
    try Data(pdf.bytes).write(to: URL(fileURLWithPath: folder.file("caption.pdf")))
    let text = try runTool("pdftotext", [folder.file("caption.pdf"), "-"]).stdout
    #expect(text.filter { !$0.isWhitespace } == style.caption)
  }

  @Test("a combining mark after a valid character is named at its own position")
  func combiningPosition() {
    // The Base58 decoder's error is kept as the cause (at byte 1, counted from 0).
    guard case .failure(let failure) = Base58.decode("1\u{301}") else {
      Issue.record("Base58 decoded a combining mark")
      return
    }
    #expect(failure.offset == 1 && failure.code == "base58.invalidCharacter")
    #expect(
      throws: QRError.invalidBitcoinAddress(
        address: "1\u{301}", reason: "has '\u{301}' at position 2, not a Base58 character",
        cause: ErrorCause(failure))
    ) {
      _ = try BitcoinAddress("1\u{301}")
    }
  }
}
