// SPDX-License-Identifier: Apache-2.0
// ImprintQR: a code's options read once, from any surface (`imprint qr`'s arguments,
// `POST /v1/qr`'s query or JSON body): the same names, kinds and ranges everywhere, each
// surface refusing a bad value in its own words.

import ImprintCore

extension QROption {
  /// The option's names: `flag` without its dashes, and `key`.
  public var names: OptionName { OptionName(flag: String(flag.dropFirst(2)), key: key) }

  /// The levels of error correction, by their letters.
  public static let levels = QRErrorCorrection.allCases.map(\.rawValue)
  /// `decimals`: a token's decimals.
  public static let decimalsRange = 0...36
  /// `module`: pixels per module.
  public static let moduleRange = 1...64
  /// `size`: the symbol's printed width, in millimetres.
  public static let sizeRange: ClosedRange<Double> = 5...1000
  /// `dpi`: the resolution of a PNG and of `size`.
  public static let dpiRange: ClosedRange<Double> = 72...4800
  /// `quietZone`: light modules around the symbol.
  public static let quietZoneRange = 0...16
  /// `caption`: the most characters (Unicode scalars) a caption has.
  ///
  /// It is shrunk to fit the symbol's width in at most two lines, so a longer one could not be
  /// read (nor set: a few thousand characters need a size below any a font is set at).
  public static let captionLimit = 256
}

extension QRSettings {
  /// The options of a code of `kind` read from `source`: the payment options, the style and the
  /// address caption, each by its `QROption` name, kind and range.
  ///
  /// The fonts are the caller's; nothing is checked but each value's own kind and range
  /// (`validate(moduleGiven:refusing:)` checks the rest).
  ///
  /// - Returns: the settings, and whether a module size was given (`QRStyle.modulePixels`
  ///   always holds one).
  /// - Throws: `source`'s error for an option it refuses.
  public static func read(kind: QRPayloadKind, from source: inout some OptionSource) throws
    -> (settings: QRSettings, moduleGiven: Bool)
  {
    var payment = PaymentOptions()
    payment.request = try source.flag(QROption.request.names)
    // Amounts are decimal text (a JSON number may lose digits of an 18-decimal amount); a chain
    // id and gas limit may be JSON integers too, read as their exact digits.
    payment.amount = try source.decimalText(QROption.amount.names)
    payment.token = try source.text(QROption.token.names)
    payment.decimals = try source.integer(QROption.decimals.names, in: QROption.decimalsRange)
    payment.chainID = try source.integerText(QROption.chainID.names)
    payment.gasLimit = try source.integerText(QROption.gasLimit.names)
    payment.gasPrice = try source.decimalText(QROption.gasPrice.names)
    payment.label = try source.text(QROption.label.names)
    payment.message = try source.text(QROption.message.names)
    var style = QRStyle()
    if let level = try source.choice(QROption.level.names, QROption.levels) {
      style.level = QRErrorCorrection(rawValue: level) ?? style.level
    }
    let module = try source.integer(QROption.module.names, in: QROption.moduleRange)
    style.modulePixels = module ?? style.modulePixels
    style.sizeMillimetres = try source.number(QROption.size.names, in: QROption.sizeRange)
    style.dpi = try source.number(QROption.dpi.names, in: QROption.dpiRange) ?? style.dpi
    style.quietZone =
      try source.integer(QROption.quietZone.names, in: QROption.quietZoneRange) ?? style.quietZone
    style.foreground = try source.color(QROption.foreground.names) ?? style.foreground
    style.background = try source.color(QROption.background.names) ?? style.background
    style.allowLowContrast = try source.flag(QROption.allowLowContrast.names)
    style.caption = try source.text(QROption.caption.names)
    let captionAddress = try source.flag(QROption.captionAddress.names)
    return (
      QRSettings(kind: kind, payment: payment, style: style, captionAddress: captionAddress),
      module != nil
    )
  }

  /// Checks the settings as every surface checks them: the options that do not apply to the
  /// payload or exclude each other (`conflict(moduleGiven:)`, worded by `refusing`), then the
  /// payment options against the kind and the style's ranges and contrast.
  ///
  /// - Throws: `refusing`'s error for a conflict; `QRError` for the rest.
  public func validate(moduleGiven: Bool, refusing: (QRConflict) -> any Error) throws {
    if let conflict = conflict(moduleGiven: moduleGiven) { throw refusing(conflict) }
    try QRPayload.validate(payment, kind: kind)
    try style.validate()
  }
}
