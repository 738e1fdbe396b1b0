// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the options of reading a document declared once, and read once from any
// surface (`imprint inspect`'s arguments, `POST /v1/inspect`'s query; the name and password
// every document route takes): the same names, ranges and help everywhere.

import ImprintCore

/// An option of reading a document (`imprint inspect`; the name and password of every document
/// route), as every surface reads it (`InspectRequest.read`).
public enum InspectOption: String, Sendable, CaseIterable {
  case name, password, colors, colorTolerance, colorMinArea

  /// The option's names: `--color-tolerance` on the command line, `colorTolerance` in a
  /// request.
  public var names: OptionName { OptionName(key: rawValue) }

  /// The option as the table declares it: its names, what it holds, the command line's
  /// placeholder and help.
  public var entry: OptionEntry {
    let defaults = ColorRule()
    return switch self {
    case .name:
      OptionEntry(
        names, .text, placeholder: "<name>",
        help: "The document's name in the report and messages (default: the part's file name, "
          + "else upload).")
    case .password:
      OptionEntry(
        names, .text, placeholder: "<text>",
        help: "Password of encrypted PDFs.")
    case .colors:
      OptionEntry(
        names, .flag, help: "Analyse each page's colour.")
    case .colorTolerance:
      OptionEntry(
        names, .integer(Self.colorToleranceRange),
        placeholder: "<0-255>",
        help: "Chroma above which a pixel is coloured (default \(defaults.chromaTolerance)).")
    case .colorMinArea:
      OptionEntry(
        names, .number(Self.colorMinAreaRange),
        placeholder: "<percent>",
        help: "Coloured area that makes a page colour (default "
          + "\(Formatting.number(defaults.minimumAreaPercent))).")
    }
  }

  /// `colorTolerance`: the chroma, 0 to 255.
  public static let colorToleranceRange = 0...255
  /// `colorMinArea`: per cent of the page.
  public static let colorMinAreaRange: ClosedRange<Double> = 0...100

  /// What a document route reads (`POST /v1/inspect`, `/v1/thumbnail`, `/v1/convert`): the
  /// upload's name and password.
  public static let request: [InspectOption] = [.name, .password]
  /// What `imprint inspect` reads: a file's name is its path.
  public static let commandLine: [InspectOption] = [
    .password, .colors, .colorTolerance, .colorMinArea,
  ]
}

/// The options of reading a document as they are given: what `imprint inspect` and the
/// document routes read.
public struct InspectRequest: Sendable, Equatable {
  /// The document's name in reports and messages (nil: the surface's own).
  public var name: String?
  /// The password of an encrypted PDF.
  public var password: String?
  /// How colour pages are told, when they are analysed (nil: not analysed).
  public var colors: ColorRule?

  /// Nothing given.
  public init() {}

  /// The options of reading a document read from `source`, each by its `InspectOption` name,
  /// kind and range.
  ///
  /// Those of `offered` alone are read (what the surface takes); the colour rule's tolerance
  /// and area only when colours are asked for.
  ///
  /// - Throws: `source`'s error for an option it refuses.
  public static func read(from source: inout some OptionSource, offering offered: [InspectOption])
    throws -> InspectRequest
  {
    var request = InspectRequest()
    if offered.contains(.name) { request.name = try source.text(InspectOption.name.names) }
    if offered.contains(.password) {
      request.password = try source.text(InspectOption.password.names)
    }
    if offered.contains(.colors), try source.flag(InspectOption.colors.names) {
      var rule = ColorRule()
      if offered.contains(.colorTolerance) {
        rule.chromaTolerance =
          try source.integer(
            InspectOption.colorTolerance.names, in: InspectOption.colorToleranceRange)
          ?? rule.chromaTolerance
      }
      if offered.contains(.colorMinArea) {
        rule.minimumAreaPercent =
          try source.number(InspectOption.colorMinArea.names, in: InspectOption.colorMinAreaRange)
          ?? rule.minimumAreaPercent
      }
      request.colors = rule
    }
    return request
  }
}
