// SPDX-License-Identifier: Apache-2.0
// ImprintQR: the option combinations a QR code's settings refuse, one rule for every surface
// (`imprint qr`'s flags, `imprint serve`'s JSON keys), each naming the option in its own words.

import ImprintCore

/// An option of `QRSettings`, as every surface reads it (`QRSettings.read`); some can conflict
/// with the payload kind or another option.
public enum QROption: String, Sendable, CaseIterable {
  case request, amount, token, decimals, chainID, gasLimit, gasPrice, label, message, caption,
    captionAddress, level, module, size, dpi, quietZone, foreground, background,
    allowLowContrast

  /// The option as `imprint qr` spells it: `--gas-price`.
  public var flag: String {
    switch self {
    case .chainID: "--chain-id"
    case .gasLimit: "--gas-limit"
    case .gasPrice: "--gas-price"
    case .captionAddress: "--caption-address"
    case .quietZone: "--quiet-zone"
    case .allowLowContrast: "--allow-low-contrast"
    default: "--" + rawValue
    }
  }

  /// The option as a request to `imprint serve` names it (a JSON key or query parameter):
  /// `gasPrice`.
  public var key: String { self == .chainID ? "chainId" : rawValue }

  /// The option in the terms of whoever reads the error (`ErrorSurface.current`): `flag` on the
  /// command line, `key` over HTTP.
  public var name: String { ErrorSurface.term(flag, http: key) }
}

/// A combination of settings that cannot make a code: an option that does not apply to the
/// payload kind, or two options that exclude each other.
public enum QRConflict: Sendable, Equatable {
  /// An Ethereum-only option (token, decimals, chain id, gas) on another kind.
  case ethereumOnly(QROption)
  /// A Bitcoin-only option (label, message) on another kind.
  case bitcoinOnly(QROption)
  /// A payment option (request, amount) or `captionAddress` on plain text.
  case needsPayment(QROption)
  /// `decimals` without `token`: decimals describe a token.
  case decimalsWithoutToken
  /// `caption` and `captionAddress` together: one caption.
  case captionAndCaptionAddress
  /// A module size in pixels beside a printed size: the printed size sets the module's size,
  /// so the other would be ignored.
  case moduleAndSize
}

extension QRSettings {
  /// The first combination of these settings that cannot make a code, or nil.
  ///
  /// Checked before
  /// the payment options' and style's own values (`QRPayload.validate`, `QRStyle.validate`).
  ///
  /// - Parameter moduleGiven: whether a module size was given (`QRStyle.modulePixels` always
  ///   holds one).
  /// - Returns: the conflict, or nil.
  public func conflict(moduleGiven: Bool) -> QRConflict? {
    let given: [(QROption, Bool)] = [
      (.token, payment.token != nil), (.decimals, payment.decimals != nil),
      (.chainID, payment.chainID != nil), (.gasLimit, payment.gasLimit != nil),
      (.gasPrice, payment.gasPrice != nil), (.label, payment.label != nil),
      (.message, payment.message != nil),
    ]
    for (option, isSet) in given where isSet {
      if option == .label || option == .message {
        if kind != .bitcoin { return .bitcoinOnly(option) }
      } else if kind != .ethereum {
        return .ethereumOnly(option)
      }
    }
    if kind == .text {
      if payment.request { return .needsPayment(.request) }
      if payment.amount != nil { return .needsPayment(.amount) }
    }
    if payment.decimals != nil && payment.token == nil { return .decimalsWithoutToken }
    if captionAddress && kind == .text { return .needsPayment(.captionAddress) }
    if captionAddress && style.caption != nil { return .captionAndCaptionAddress }
    if moduleGiven && style.sizeMillimetres != nil { return .moduleAndSize }
    return nil
  }
}
