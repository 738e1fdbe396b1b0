// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: every reason a quote is refused, naming the file, the field and the value.

import ImprintCore

/// A price list or order that cannot be priced: nothing is priced on a guess.
public enum PricingError: ImprintError, Equatable {
  /// The JSON cannot be read (strict JSON: duplicate keys, depth, range, UTF-8, syntax); the
  /// code is the JSON error's own (`json.duplicateKey`, ...).
  case invalidJSON(JSONError)
  /// A field has the wrong type or value.
  case invalidField(source: String, field: String, value: String, expected: String)
  /// A key the schema does not know.
  case unknownKey(source: String, field: String)
  /// The currency is not an ISO 4217 code Imprint knows.
  case unknownCurrency(source: String, code: String)
  /// A price is negative.
  case negativePrice(source: String, field: String, value: Int)
  /// The price list has no rate the order needs.
  case missingRate(file: String, paper: String, color: String, sides: String)
  /// The price list has no paper price the order needs.
  case missingPaperPrice(file: String, paper: String, paperType: String)
  /// An extra the price list does not offer.
  case unknownExtra(file: String, extra: String, offered: [String])
  /// A page range reaches outside the document.
  case rangeOutsideDocument(file: String, range: String, pages: Int)
  /// The order asks for cards but the price list has no card price.
  case noCardPrice(source: String)
  /// A number outside the range Imprint prices with (a price past the maximum, copies past
  /// 10 000): `expected` states the limit.
  case outOfRange(source: String, field: String, value: String, expected: String)
  /// A total or line that does not fit in 64-bit minor units, even though every input was in
  /// range (a huge rate × a huge document × many copies).
  case overflow(source: String, what: String)
  /// A receipt locale Foundation has no data for (`xx`, `english`).
  case unknownLocale(identifier: String)
  /// A file pricing reads that cannot be read (the receipt's translations); the code is the
  /// file error's own (`file.notFound`, ...).
  case file(FileError)

  public var code: String {
    switch self {
    case .invalidJSON(let error): error.code
    case .invalidField: "pricing.invalidField"
    case .unknownKey: "pricing.unknownKey"
    case .unknownCurrency: "pricing.unknownCurrency"
    case .negativePrice: "pricing.negativePrice"
    case .missingRate: "pricing.missingRate"
    case .missingPaperPrice: "pricing.missingPaperPrice"
    case .unknownExtra: "pricing.unknownExtra"
    case .rangeOutsideDocument: "pricing.rangeOutsideDocument"
    case .noCardPrice: "pricing.noCardPrice"
    case .outOfRange: "pricing.outOfRange"
    case .overflow: "pricing.overflow"
    case .unknownLocale: "pricing.unknownLocale"
    case .file(let error): error.code
    }
  }

  /// The JSON or file error's own for those, 422 for the rest (an order or list refused).
  public var status: Int {
    switch self {
    case .invalidJSON(let error): error.status
    case .file(let error): error.status
    case .invalidField, .unknownKey, .unknownCurrency, .negativePrice, .missingRate,
      .missingPaperPrice, .unknownExtra, .rangeOutsideDocument, .noCardPrice, .outOfRange,
      .overflow, .unknownLocale:
      422
    }
  }

  public var message: String {
    // Names taken from input (paths, keys, extras) are cut and escaped: a 10 MB key is not
    // echoed whole.
    func cut(_ text: String) -> String { SafeText.excerpt(text, limit: 200) }
    return switch self {
    case .invalidJSON(let error): error.message
    case .invalidField(let source, let field, let value, let expected),
      .outOfRange(let source, let field, let value, let expected):
      "'\(cut(source))': '\(cut(field))' is \(value); expected \(expected)"
    case .unknownKey(let source, let field): "'\(cut(source))': '\(cut(field))' is not a known key"
    case .unknownCurrency(let source, let code):
      "'\(cut(source))': currency '\(cut(code))' is not an ISO 4217 code Imprint knows"
    case .negativePrice(let source, let field, let value):
      "'\(cut(source))': '\(cut(field))' is \(value); prices cannot be negative"
    case .missingRate(let file, let paper, let color, let sides):
      "'\(cut(file))' needs a \(color) \(sides) rate for \(cut(paper)), which the price list lacks"
    case .missingPaperPrice(let file, let paper, let type):
      "'\(cut(file))' needs a price for \(cut(paper)) \(cut(type)) paper, which the price list lacks"
    case .unknownExtra(let file, let extra, let offered):
      "'\(cut(file))' asks for extra '\(cut(extra))'; the store offers \(offered.isEmpty ? "none" : offered.joined(separator: ", "))"
    case .rangeOutsideDocument(let file, let range, let pages):
      "'\(cut(file))': pages \(cut(range)) reach outside the document, which has \(pages) page\(pages == 1 ? "" : "s")"
    case .noCardPrice(let source):
      "'\(cut(source))' orders ID cards but the price list has no card price"
    case .overflow(let source, let what):
      "'\(cut(source))': \(what) exceeds \(Int.max) minor units, the most a quote can hold"
    case .unknownLocale(let identifier):
      "locale '\(cut(identifier))' is not a language Imprint has data for: expected a BCP 47 "
        + "identifier such as ko, ja, zh-Hant or pt-BR"
    case .file(let error): error.message
    }
  }

  public var hint: String? {
    switch self {
    case .missingRate, .missingPaperPrice: "add the rate to the price list, or change the order"
    case .rangeOutsideDocument: "ranges look like 1-3,5,8- and stay within the page count"
    case .invalidJSON(let error): error.hint
    case .overflow: "check the prices, copies and page counts for a typo"
    case .unknownLocale: "give a language code (ISO 639), optionally with a script or region"
    case .file(let error): error.hint
    default: nil
    }
  }

  /// The system's error behind a file that cannot be read (`system.EACCES`...).
  public var underlying: (any Error)? {
    if case .file(let error) = self { error.underlying } else { nil }
  }
}
