// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: the words of a quote's receipt, in English and in the languages of the
// translations shipped in this module's resources (or a deployment's own).

import Foundation
import ImprintCore

/// One phrase of a receipt.
///
/// Its English text (`english`) is the source; translations give the same phrase per language,
/// with the same placeholders.
public enum ReceiptWord: String, Sendable, CaseIterable {
  case header, selection, pages, nUp, oneSided, twoSided, longEdge, shortEdge
  case color, mono, auto, printed, impressions, colorImpressions, blankImpressions, sheets
  case copies, printing, paper, fileTotal, cards, volume, tier, subtotal, minimum, taxIncluded
  case tax, total, message

  /// The English text: one form, or the forms of English's plural categories.
  var english: [PluralCategory: String] {
    switch self {
    case .header: [.other: "{store} — price list {version}"]
    case .selection:
      [.other: "{selected} of {pages}, {nUp}, {sides}, {paper} {paperType}, {colorMode}"]
    case .pages: [.one: "{n} page", .other: "{n} pages"]
    case .nUp: [.other: "{n}-up"]
    case .oneSided: [.other: "one-sided"]
    case .twoSided: [.other: "two-sided ({edge})"]
    case .longEdge: [.other: "long-edge"]
    case .shortEdge: [.other: "short-edge"]
    case .color: [.other: "color"]
    case .mono: [.other: "mono"]
    case .auto: [.other: "auto"]
    case .printed:
      [.other: "{impressions} ({colorImpressions}, {blankImpressions}) on {sheets} × {copies}"]
    case .impressions: [.one: "{n} impression", .other: "{n} impressions"]
    case .colorImpressions: [.other: "{n} colour"]
    case .blankImpressions: [.other: "{n} blank"]
    case .sheets: [.one: "{n} sheet", .other: "{n} sheets"]
    case .copies: [.one: "{n} copy", .other: "{n} copies"]
    case .printing: [.other: "printing"]
    case .paper: [.other: "paper"]
    case .fileTotal: [.other: "file total"]
    case .cards: [.other: "ID cards"]
    case .volume: [.other: "volume ({tier})"]
    case .tier: [.other: "past {n} impressions: {percent}"]
    case .subtotal: [.other: "subtotal"]
    case .minimum: [.other: "to the minimum order"]
    case .taxIncluded: [.other: "tax included"]
    case .tax: [.other: "tax"]
    case .total: [.other: "TOTAL"]
    case .message: [.other: "message to the store: {message}"]
    }
  }

  /// The placeholders of the English text (`{n}` for a count, `{store}`...).
  var placeholders: Set<String> {
    Set(english.values.flatMap { ReceiptLanguage.placeholders(in: $0) })
  }
}

/// A receipt's words in one language: each phrase's forms by plural category, and the
/// language's plural rules.
public struct ReceiptLanguage: Sendable, Equatable {
  /// The language's key in its table (`ko`, `zh-Hant`), `en` for English.
  public let identifier: String
  /// The rules that choose a phrase's form for a count.
  let plurals: PluralRules
  /// Each phrase's forms by category; a phrase with one form files it under `other`.
  let words: [ReceiptWord: [PluralCategory: String]]

  /// English, the source of every translation.
  public static let english = ReceiptLanguage(
    identifier: "en", plurals: PluralRules([.one: "i = 1 and v = 0"]) ?? .invariable,
    words: Dictionary(uniqueKeysWithValues: ReceiptWord.allCases.map { ($0, $0.english) }))

  /// `word` with its placeholders filled from `values` in one pass (a value's own braces are
  /// never read as placeholders), in the form `count` takes.
  func text(_ word: ReceiptWord, count: Int? = nil, _ values: [String: String] = [:]) -> String {
    let forms = words[word] ?? word.english
    let category = count.map(plurals.category) ?? .other
    let template = forms[category] ?? forms[.other] ?? ""
    var result = ""
    var rest = template[...]
    while let open = rest.firstIndex(of: "{") {
      result += rest[..<open]
      guard let close = rest[open...].firstIndex(of: "}"),
        let value = values[String(rest[rest.index(after: open)..<close])]
      else {
        result.append("{")
        rest = rest[rest.index(after: open)...]
        continue
      }
      result += value
      rest = rest[rest.index(after: close)...]
    }
    return result + rest
  }

  /// The names in braces in `text` (`{n} of {pages}`: `n`, `pages`).
  static func placeholders(in text: String) -> [String] {
    var names: [String] = []
    var rest = text[...]
    while let open = rest.firstIndex(of: "{"),
      let close = rest[open...].firstIndex(of: "}")
    {
      names.append(String(rest[rest.index(after: open)..<close]))
      rest = rest[rest.index(after: close)...]
    }
    return names
  }
}
