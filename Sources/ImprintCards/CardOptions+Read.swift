// SPDX-License-Identifier: Apache-2.0
// ImprintCards: a card's options read once, from any surface (`imprint card`'s arguments,
// `POST /v1/card`'s query): the same names, kinds and ranges everywhere, each surface refusing a
// bad value in its own words.

import ImprintCore

/// An option of a card (`CardOptions`, and the platform), as every surface reads it
/// (`CardOptions.read`).
public enum CardOption: String, Sendable, CaseIterable {
  case side, locale, dpi, bleed, cropMarks, allowMissingGlyphs, platform

  /// The option's names: `--crop-marks` on the command line, `cropMarks` in a request.
  public var names: OptionName {
    switch self {
    case .cropMarks: OptionName(flag: "crop-marks", key: rawValue)
    case .allowMissingGlyphs: OptionName(flag: "allow-missing-glyphs", key: rawValue)
    default: OptionName(flag: rawValue, key: rawValue)
    }
  }

  /// The sides one may ask for.
  public static let sides = ["front", "back", "both"]
  /// `dpi`: a PNG's resolution.
  public static let dpiRange: ClosedRange<Double> = 72...1200
  /// `bleed`: millimetres per side.
  public static let bleedRange: ClosedRange<Double> = 0...10
}

extension CardOptions {
  /// A card's options read from `source`, each by its `CardOption` name, kind and range: the
  /// side (`defaultFaces` when not given), locale, resolution, bleed, crop marks, missing
  /// glyphs allowed, and the platform.
  ///
  /// The fonts are the caller's; whether the format uses each option is
  /// `CardRun.Format.unusedOption`'s to say.
  ///
  /// - Returns: the options, whether a resolution was given (`dpi` always holds one), and the
  ///   platform if given.
  /// - Throws: `source`'s error for an option it refuses.
  public static func read(from source: inout some OptionSource, defaultFaces: [CardFace])
    throws -> (options: CardOptions, dpiGiven: Bool, platform: Platform?)
  {
    var options = CardOptions()
    switch try source.choice(CardOption.side.names, CardOption.sides) {
    case "front": options.faces = [.front]
    case "back": options.faces = [.back]
    case "both": options.faces = [.front, .back]
    default: options.faces = defaultFaces
    }
    options.locale = try source.text(CardOption.locale.names)
    let dpi = try source.number(CardOption.dpi.names, in: CardOption.dpiRange)
    options.dpi = dpi ?? options.dpi
    options.bleed = try source.number(CardOption.bleed.names, in: CardOption.bleedRange)
    options.cropMarks = try source.flag(CardOption.cropMarks.names)
    options.allowMissingGlyphs = try source.flag(CardOption.allowMissingGlyphs.names)
    let platform = try source.choice(
      CardOption.platform.names, Platform.allCases.map(\.rawValue)
    ).flatMap(Platform.init(rawValue:))
    return (options, dpi != nil, platform)
  }
}
