// SPDX-License-Identifier: Apache-2.0
// ImprintQR: the errors of payloads, addresses, QR encoding (libqrencode) and rendering.

import ImprintCore

/// An invalid payload, address, amount or rendering option.
public enum QRError: ImprintError, Equatable {
  /// The payload is empty.
  case emptyPayload(source: String)
  /// An Ethereum address is malformed (`reason` says how).
  case invalidEthereumAddress(address: String, reason: String)
  /// A mixed-case Ethereum address whose letter case does not match its EIP-55 checksum.
  case ethereumChecksumMismatch(address: String, positions: [Int])
  /// A Bitcoin address is malformed or its checksum fails (`reason` says which; `cause` is the
  /// Base58 or Bech32 decoder's error, when that is what failed).
  case invalidBitcoinAddress(address: String, reason: String, cause: ErrorCause? = nil)
  /// An amount, gas value or chain id is not acceptable.
  case invalidAmount(field: QROption, value: String, expected: String)
  /// A rendering option is out of range (named as the surface that reports it names it).
  case invalidOption(option: QROption, value: String, expected: String)
  /// Foreground lighter than background: most scanners cannot read inverted codes.
  case invertedColors(foreground: Color, background: Color)
  /// Foreground and background too alike to scan reliably.
  case lowContrast(foreground: Color, background: Color, ratio: Double, minimum: Double)
  /// The output format is not one Imprint writes.
  case unknownFormat(String)
  /// The payload holds bytes that are not UTF-8 text.
  case payloadNotUTF8(source: String)
  /// An amount that does not fit the field it is encoded in (EIP-681's uint256, after scaling
  /// to atomic units), or a chain id past 64 bits.
  case amountOutOfRange(field: QROption, value: String, maximum: String)
  /// A raster image larger than `QRStyle.maximumPixels` (`width` × `height` pixels).
  case imageTooLarge(width: Int, height: Int, limit: Int)
  /// The payload does not fit in a QR symbol at this error-correction level.
  case payloadTooLarge(bytes: Int, level: String, maximum: Int)
  /// libqrencode rejected the input (`errno`: what it set, when it failed that way).
  case encode(reason: String, errno: Int32? = nil)

  public var code: String {
    switch self {
    case .emptyPayload: "qr.emptyPayload"
    case .invalidEthereumAddress: "eth.invalidAddress"
    case .ethereumChecksumMismatch: "eth.badChecksum"
    case .invalidBitcoinAddress: "btc.invalidAddress"
    case .invalidAmount: "qr.invalidAmount"
    case .invalidOption: "qr.invalidOption"
    case .invertedColors: "qr.invertedColors"
    case .lowContrast: "qr.lowContrast"
    case .unknownFormat: "qr.unknownFormat"
    case .payloadNotUTF8: "qr.payloadNotUTF8"
    case .amountOutOfRange: "eth.amountOutOfRange"
    case .imageTooLarge: "qr.imageTooLarge"
    case .payloadTooLarge: "qr.payloadTooLarge"
    case .encode: "qr.encode"
    }
  }

  /// 422: a payload or option understood and refused.
  public var status: Int {
    switch self {
    case .emptyPayload, .invalidEthereumAddress, .ethereumChecksumMismatch, .invalidBitcoinAddress,
      .invalidAmount, .invalidOption, .invertedColors, .lowContrast, .unknownFormat,
      .payloadNotUTF8, .amountOutOfRange, .imageTooLarge, .payloadTooLarge, .encode:
      422
    }
  }

  public var message: String {
    switch self {
    case .emptyPayload(let source): "\(source) is empty; a QR code needs at least one character"
    case .invalidEthereumAddress(let address, let reason):
      "ethereum address '\(SafeText.excerpt(address, limit: 128))' \(reason)"
    case .ethereumChecksumMismatch(let address, let positions):
      "ethereum address '\(SafeText.excerpt(address, limit: 128))' fails its EIP-55 checksum: "
        + "the case of the "
        + (positions.count == 1 ? "letter" : "letters") + " at position"
        + (positions.count == 1 ? " " : "s ") + positions.map(String.init).joined(separator: ", ")
        + " does not match"
    case .invalidBitcoinAddress(let address, let reason, _):
      "bitcoin address '\(SafeText.excerpt(address, limit: 128))' \(reason)"
    case .invalidAmount(let field, let value, let expected):
      "\(field.name) '\(SafeText.excerpt(value, limit: 100))' is not valid; expected \(expected)"
    case .invalidOption(let option, let value, let expected):
      "\(option.name) '\(SafeText.excerpt(value, limit: 100))' is not valid; expected \(expected)"
    case .amountOutOfRange(let field, let value, let maximum):
      "\(field.name) '\(SafeText.excerpt(value, limit: 100))' is too large; the most it can be is "
        + maximum
    case .imageTooLarge(let width, let height, let limit):
      "a \(width) × \(height)-pixel image is larger than \(limit / 1_000_000) megapixels, the "
        + "limit for a raster QR code"
    case .invertedColors(let foreground, let background):
      "foreground \(foreground) is lighter than background \(background); inverted QR codes "
        + "fail on many scanners"
    case .lowContrast(let foreground, let background, let ratio, let minimum):
      "foreground \(foreground) on background \(background) has a contrast ratio of "
        + "\(Double(Int(ratio * 100)) / 100):1; at least \(minimum):1 is needed to scan reliably"
    case .unknownFormat(let name):
      "unknown output format '\(name)'; expected png, svg, pdf, eps or text"
    case .payloadNotUTF8(let source): "\(source) is not valid UTF-8 text"
    case .payloadTooLarge(let bytes, let level, let maximum):
      "qr payload is \(bytes) bytes; the maximum at error-correction level \(level) is \(maximum)"
    case .encode(let reason, _): "cannot encode the QR symbol (libqrencode: \(reason))"
    }
  }

  /// Whether the error is about an option's value (the CLI reports it as a usage error).
  public var isMalformedOption: Bool {
    switch self {
    case .invalidAmount, .invalidOption, .amountOutOfRange: true
    default: false
    }
  }

  public var hint: String? {
    switch self {
    case .ethereumChecksumMismatch:
      "check the address for a typo; an all-lowercase address skips the checksum"
    case .invalidEthereumAddress: "an address is 0x followed by 40 hex digits"
    case .invertedColors, .lowContrast:
      ErrorSurface.hint(
        "pass --allow-low-contrast to render it anyway",
        http: "send allowLowContrast=true to render it anyway")
    case .unknownFormat:
      ErrorSurface.hint(
        "pass --format or give -o a .png, .svg, .pdf, .eps or .txt name",
        http: "send format png, svg, pdf or eps")
    case .imageTooLarge:
      ErrorSurface.hint(
        "lower --size, --dpi or --module, or use --format svg or pdf, which print at any size",
        http: "lower size, dpi or module, or send format svg or pdf, which print at any size")
    case .amountOutOfRange:
      ErrorSurface.hint(
        "check the amount and --decimals for a typo", http: "check amount and decimals for a typo")
    case .payloadTooLarge(_, let level, _) where level != "L":
      ErrorSurface.hint(
        "use a lower error-correction level (--level L) or shorten the payload",
        http: "use a lower error-correction level (level=L) or shorten the payload")
    case .payloadTooLarge: "shorten the payload"
    default: nil
    }
  }

  /// The decoder's error behind an invalid Bitcoin address; the errno libqrencode set.
  public var underlying: (any Error)? {
    switch self {
    case .invalidBitcoinAddress(_, _, let cause?): cause.error
    case .encode(_, let errno?): SystemError(errno)
    default: nil
    }
  }
}
