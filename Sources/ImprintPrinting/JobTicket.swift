// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the job ticket of a print-ready file: the IPP attributes a printer needs
// and the quote's line the file was made from.

import ImprintCore
import ImprintDocuments
import ImprintPricing

/// The IPP job attributes of one print-ready file, named as IPP names them.
public struct IPPJobAttributes: Codable, Sendable, Equatable {
  /// `copies`.
  public var copies: Int
  /// `sides`: `one-sided`, `two-sided-long-edge` or `two-sided-short-edge`.
  public var sides: String
  /// `media`: the PWG self-describing name (`iso_a4_210x297mm`).
  public var media: String
  /// `print-color-mode`: `color`, `monochrome`, or `auto` for a file with both.
  public var printColorMode: String
  /// `finishings`, as IPP keywords (`staple`, `punch`, `bind`...), `none` for none.
  public var finishings: [String]
  /// `multiple-document-handling`: each copy starts on a sheet of its own.
  public var multipleDocumentHandling = "separate-documents-collated-copies"

  enum CodingKeys: String, CodingKey {
    case copies, sides, media, finishings
    case printColorMode = "print-color-mode"
    case multipleDocumentHandling = "multiple-document-handling"
  }
}

/// What a print shop needs to print one prepared file as it was quoted.
///
/// The file holds `sheetSides` pages: the quote's `impressions` (one copy's printed sides after
/// n-up) and `blankBacks` blank ones (the back of a duplex job's odd last sheet, so that the
/// next copy starts on a new sheet; charged as the quote says, never printed on). Copies are
/// in the ticket, not in the file.
public struct JobTicket: Codable, Sendable, Equatable {
  /// The JSON schema version (1).
  public var schemaVersion = 1
  /// The file as the order names it.
  public var file: String
  /// The print-ready PDF's name, in the ticket's folder.
  public var document: String
  /// `application/pdf`.
  public var documentFormat = "application/pdf"
  /// The pages of the print-ready PDF: impressions and blank backs.
  public var sheetSides: Int
  /// Printed sides of one copy, as quoted.
  public var impressions: Int
  /// Blank sides added (0 or 1).
  public var blankBacks: Int
  /// The attributes to submit the file with.
  public var ipp: IPPJobAttributes
  /// The order's extras that no IPP finishing stands for (the shop does them by hand).
  public var extrasWithoutFinishing: [String]
  /// The quote's line for this file (the whole file's, when this is a part of it).
  public var quote: FileQuote
  /// The part of the file this ticket prints, when an `auto` colour file was split into its
  /// colour and monochrome runs (absent otherwise).
  public var split: ColorSplitPart?

  /// The ticket of a file quoted as `line`, or of `part` of it, written to `document`.
  ///
  /// - Parameters:
  ///   - line: the quote's line for the file.
  ///   - extras: the order's extras for the file, in order.
  ///   - document: the print-ready PDF's file name.
  ///   - media: the paper's PWG media name.
  ///   - part: the part of the file the document holds, or nil for the whole file.
  public init(
    line: FileQuote, extras: [String], document: String, media: String,
    part: ColorSplitPart? = nil
  ) {
    let impressions = part?.impressions ?? line.impressions
    let colorCount = part?.colorImpressions ?? line.colorImpressions
    let monoCount = part?.monoImpressions ?? line.monoImpressions
    let blank = line.duplex != Duplex.none.rawValue && impressions % 2 == 1 ? 1 : 0
    let mode: String
    switch ColorMode(rawValue: line.colorMode) {
    case .color: mode = "color"
    case .auto where colorCount > 0 && monoCount > 0: mode = "auto"
    case .auto where colorCount > 0: mode = "color"
    default: mode = "monochrome"
    }
    let finishings = extras.compactMap(Self.finishing)
    file = line.file
    self.document = document
    sheetSides = impressions + blank
    self.impressions = impressions
    blankBacks = blank
    ipp = IPPJobAttributes(
      copies: line.copies,
      sides: Self.sides(duplex: line.duplex, nUp: line.nUp),
      media: media, printColorMode: mode,
      finishings: finishings.isEmpty ? ["none"] : Array(Set(finishings)).sorted())
    extrasWithoutFinishing = extras.filter { Self.finishing($0) == nil }
    quote = line
    split = part
  }

  /// The IPP `sides` of a file the order prints `duplex` at `nUp` pages a side.
  ///
  /// The order's edge is the customer's: the edge of their pages the sheet turns on (a portrait
  /// document's long edge is book-style). IPP's is the paper's. Each page stands in its cell
  /// the way the cell stands (it is rotated when it does not), so the two agree on portrait
  /// sheets (1, 4, 9 and 16 up) and swap on the landscape sheets of 2 and 6 up, whose cells
  /// stand across the sheet (`SheetGrid.nUp`; CUPS's pdftopdf does not adjust): a book-style
  /// flip of a 2-up booklet sheet is IPP's `two-sided-short-edge`.
  static func sides(duplex: String, nUp: Int) -> String {
    guard let edge = Duplex(rawValue: duplex), edge != .none else { return "one-sided" }
    let landscapeSheet = SheetGrid.isLandscape(nUp: nUp)
    return (edge == .longEdge) != landscapeSheet ? "two-sided-long-edge" : "two-sided-short-edge"
  }

  /// The IPP finishing an extra's name stands for (`staple`, `hole-punch`, `binding`...), if
  /// any: the price list names extras freely, so the name's words decide.
  static func finishing(_ extra: String) -> String? {
    let name = extra.lowercased()
    let words: [(String, String)] = [
      ("saddle", "saddle-stitch"), ("booklet", "booklet-maker"), ("staple", "staple"),
      ("punch", "punch"), ("bind", "bind"), ("fold", "fold"), ("cover", "cover"),
    ]
    return words.first { name.contains($0.0) }?.1
  }
}

extension PaperSize {
  /// The PWG 5101.1 self-describing media name CUPS and IPP printers use (B4 and B5 are ISO,
  /// as their millimetres are).
  public var pwgMediaName: String {
    switch self {
    case .a3: "iso_a3_297x420mm"
    case .a4: "iso_a4_210x297mm"
    case .a5: "iso_a5_148x210mm"
    case .b4: "iso_b4_250x353mm"
    case .b5: "iso_b5_176x250mm"
    case .letter: "na_letter_8.5x11in"
    case .legal: "na_legal_8.5x14in"
    case .tabloid: "na_ledger_11x17in"
    case .sra3: "iso_sra3_320x450mm"
    }
  }
}
