// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the options of quoting an order declared once, and read once from any
// surface (`imprint quote` and `prepare`'s arguments, `POST /v1/quote` and `/v1/prepare`'s
// query, a batch quote or print item's fields): the same names and help everywhere.

import ImprintCore

/// An option of quoting an order (`OrderQuoter`), as every surface reads it
/// (`QuoteRequest.read`).
public enum QuoteOption: String, Sendable, CaseIterable {
  case prices, filesRoot, locale, format

  /// The option's names: `--files-root` on the command line, `filesRoot` in a request and a
  /// manifest line.
  public var names: OptionName { OptionName(key: rawValue) }

  /// The option as the table declares it: its names, what it holds, the command line's
  /// placeholder and help.
  public var entry: OptionEntry {
    switch self {
    case .prices:
      // A file on the command line and in a manifest; a name of the server's configuration in
      // a request.
      OptionEntry(
        names, .file, placeholder: "<file>",
        help: "The store's price list (JSON).")
    case .filesRoot:
      OptionEntry(
        names, .directory, placeholder: "<dir>",
        help:
          "The folder the order's files are relative to and confined to (default: the order's "
          + "folder).")
    case .locale:
      OptionEntry(
        names, .text, placeholder: "<id>",
        help: "Write the receipt in this locale's words, money and counts (BCP 47: ko, ja, ar, "
          + "es...; a language Imprint does not translate keeps English words).")
    case .format:
      OptionEntry(
        names, .choice(QuoteFormat.allCases.map(\.rawValue)),
        placeholder: "<format>",
        help: "json (the default: the quote as JSON) or receipt (the text receipt).")
    }
  }

  /// What `POST /v1/quote` reads: the price list by its name in the server's configuration
  /// (the files are the request's own parts).
  public static let request: [QuoteOption] = [.prices, .locale, .format]
  /// What `imprint quote` reads (`--json` says the format).
  public static let commandLine: [QuoteOption] = [.prices, .filesRoot, .locale]
}

/// How a quote is answered: the quote as JSON, or the text receipt.
public enum QuoteFormat: String, Sendable, CaseIterable {
  case json, receipt
}

/// The options of quoting an order as they are given: what `imprint quote`, `POST /v1/quote`
/// and the order-reading part of `imprint prepare` and `POST /v1/prepare` read.
public struct QuoteRequest: Sendable, Equatable {
  /// The price list: a file's path, or a name of the server's configuration (nil: not given).
  public var prices: String?
  /// The folder the order's files are confined to (nil: the order's folder).
  public var filesRoot: String?
  /// The receipt's locale (nil: English).
  public var locale: String?
  /// How the quote is answered (nil: the surface's default).
  public var format: QuoteFormat?

  /// Nothing given.
  public init() {}

  /// The options of quoting an order read from `source`, each by its `QuoteOption` name and
  /// kind, those of `offered` alone (what the surface takes).
  ///
  /// Nothing is checked but each value's kind: the locale is the receipt's to check.
  ///
  /// - Throws: `source`'s error for an option it refuses.
  public static func read(from source: inout some OptionSource, offering offered: [QuoteOption])
    throws -> QuoteRequest
  {
    func text(_ option: QuoteOption) throws -> String? {
      offered.contains(option) ? try source.text(option.names) : nil
    }
    var request = QuoteRequest()
    request.prices = try text(.prices)
    request.filesRoot = try text(.filesRoot)
    request.locale = try text(.locale)
    if offered.contains(.format) {
      request.format = try source.choice(
        QuoteOption.format.names, QuoteFormat.allCases.map(\.rawValue)
      ).flatMap(QuoteFormat.init(rawValue:))
    }
    return request
  }
}
