// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the card options that apply to some formats only, one rule for every surface
// (`imprint card`'s flags, `imprint serve`'s query parameters): given with a format that does not
// use them, they are refused rather than ignored.

import ImprintCore

/// A card option that some formats do not use.
public enum CardFormatOption: String, Sendable, CaseIterable {
  case side, dpi, bleed, cropMarks

  /// The option as `imprint card` spells it: `--crop-marks`.
  public var flag: String { self == .cropMarks ? "--crop-marks" : "--" + rawValue }

  /// The option as a request to `imprint serve` names it (a query parameter): `cropMarks`.
  public var key: String { rawValue }

  /// What the option applies to, and why not to the other formats, for a message after its
  /// name.
  public var appliesTo: String {
    switch self {
    case .side: "applies to PDF and PNG output; a share image shows both sides"
    case .dpi: "applies to PDF and PNG output; a share image is 1200 × 630 pixels"
    case .bleed: "applies to PDF and PNG output; a share image shows the cards trimmed"
    case .cropMarks: "applies to PDF output"
    }
  }
}

extension CardRun.Format {
  /// The first option given that this format does not use (it would change nothing), or nil.
  ///
  /// A share image shows both sides, trimmed, at 1200 × 630 pixels: a side alone, a resolution,
  /// a bleed or crop marks are refused with it; a PNG has no crop marks. Both sides asked for
  /// (`both`) is what a share image shows, so it passes.
  ///
  /// - Parameters:
  ///   - options: the card's options as given.
  ///   - dpiGiven: whether a resolution was given (`CardOptions.dpi` always holds one).
  /// - Returns: the option to refuse, or nil.
  public func unusedOption(_ options: CardOptions, dpiGiven: Bool) -> CardFormatOption? {
    switch self {
    case .pdf: return nil
    case .png: return options.cropMarks ? .cropMarks : nil
    case .share:
      if options.faces != [.front, .back] { return .side }
      if dpiGiven { return .dpi }
      if options.bleed != nil { return .bleed }
      return options.cropMarks ? .cropMarks : nil
    }
  }
}
