// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: a quote's plain-text receipt, in English or in the customer's language: its
// words from the receipt's translations, its amounts and counts from Foundation's locale data.

import Foundation
import ImprintCore

extension Quote {
  /// The plain-text receipt: the store and price list, each file's pages, impressions, sheets
  /// and copies with its charges, then the order's lines and the total, amounts in a column
  /// ending at column 44.
  ///
  /// Without a locale the receipt is English, amounts as `formatted` writes them (`KRW 6,880`)
  /// and counts as plain digits. With one, its words are the language's (`ReceiptTranslations`;
  /// English for a language the table does not have, with the locale's numbers), each count's
  /// phrase in the form the language's plural rules give; amounts are written as the locale
  /// writes money (`₩6,880`, `6880 KRW`, `₹12,34,567.89`, exact to the minor unit) and counts
  /// and percentages as it writes them, in Latin digits. Columns are a terminal's: East Asian
  /// wide characters take two, marks and bidi controls none. In a right-to-left language
  /// each line starts with a left-to-right mark, so that a viewer that lays out bidirectional
  /// text keeps the label at the left and the amounts aligned in the right-hand column as a
  /// terminal shows them.
  ///
  /// Names from the order and the price list (files, store, paper types, adjustments, extras,
  /// the message) are printed as given, escaped: a receipt printed on a terminal cannot be
  /// driven by an uploaded order.
  ///
  /// - Parameters:
  ///   - identifier: a BCP 47 locale identifier (`ko`, `ar`, `zh-TW`, `pt-BR`), or nil.
  ///   - translations: the receipt's words per language; nil for those shipped with Imprint.
  /// - Returns: the receipt, one line per `\n`-ended line.
  /// - Throws: `PricingError.unknownLocale` for an identifier with no locale data;
  ///   `PricingError.file` when the shipped translations are needed and not deployed.
  public func receipt(locale identifier: String? = nil, translations: ReceiptTranslations? = nil)
    throws(PricingError) -> String
  {
    guard let identifier else { return ReceiptWriter(quote: self).text() }
    guard LocaleData.isKnown(identifier) else { throw .unknownLocale(identifier: identifier) }
    // English needs no table (nor the resource bundle).
    var language = ReceiptLanguage.english
    if LocaleData.lookupKeys(identifier).last?.lowercased() != "en" {
      if let translations {
        language = translations.language(for: identifier)
      } else {
        language = try ReceiptTranslations.shipped().language(for: identifier)
      }
    }
    return ReceiptWriter(
      quote: self, language: language, locale: LocaleData.locale(identifier),
      rightToLeft: Locale.Language(identifier: identifier).characterDirection == .rightToLeft
    ).text()
  }
}

/// Writes one receipt: a quote, the words of one language, and the locale its numbers follow.
private struct ReceiptWriter {
  let quote: Quote
  var language = ReceiptLanguage.english
  /// The locale of amounts, counts and percentages; nil for the plain English receipt.
  var locale: Locale?
  var rightToLeft = false

  /// The column the amounts end at.
  static let width = 44

  func text() -> String {
    let safe = SafeText.escaped
    var lines = [
      words(.header, ["store": safe(quote.store), "version": safe(quote.priceListVersion)]), "",
    ]
    for file in quote.files {
      lines.append(safe(file.file))
      let sides =
        switch file.duplex {
        case "none": words(.oneSided)
        case "long-edge": words(.twoSided, ["edge": words(.longEdge)])
        case "short-edge": words(.twoSided, ["edge": words(.shortEdge)])
        default: words(.twoSided, ["edge": safe(file.duplex)])
        }
      let mode =
        switch file.colorMode {
        case "color": words(.color)
        case "mono": words(.mono)
        case "auto": words(.auto)
        default: safe(file.colorMode)
        }
      lines.append(
        "  "
          + words(
            .selection,
            [
              "selected": count(file.selectedPages), "pages": counted(.pages, file.pages),
              "nUp": counted(.nUp, file.nUp), "sides": sides, "paper": safe(file.paper),
              "paperType": safe(file.paperType), "colorMode": mode,
            ]))
      lines.append(
        "  "
          + words(
            .printed,
            [
              "impressions": counted(.impressions, file.impressions),
              "colorImpressions": counted(.colorImpressions, file.colorImpressions),
              "blankImpressions": counted(.blankImpressions, file.blankImpressions),
              "sheets": counted(.sheets, file.sheets), "copies": counted(.copies, file.copies),
            ]))
      lines.append(row("  " + words(.printing), file.impressionCharge))
      lines.append(row("  " + words(.paper), file.paperCharge))
      for (name, amount) in file.extras.sorted(by: { $0.key < $1.key }) {
        lines.append(row("  " + safe(name), amount))
      }
      lines.append(row("  " + words(.fileTotal), file.subtotal))
    }
    if let cards = quote.cards { lines.append(row(words(.cards), cards)) }
    if let tier = quote.tier, let change = quote.tierAdjustment {
      lines.append(row(words(.volume, ["tier": tierText ?? safe(tier)]), change))
    }
    lines.append(row(words(.subtotal), quote.subtotal))
    for (name, amount) in quote.adjustments.sorted(by: { $0.key < $1.key }) {
      lines.append(row(safe(name), amount))
    }
    if let minimum = quote.minimumApplied { lines.append(row(words(.minimum), minimum)) }
    if let tax = quote.tax {
      lines.append(row(words(quote.taxIncluded ? .taxIncluded : .tax), tax))
    }
    lines.append(row(words(.total), quote.total))
    if let message = quote.message {
      lines += ["", words(.message, ["message": safe(message)])]
    }
    let mark = rightToLeft ? "\u{200E}" : ""
    return lines.map { $0.isEmpty ? "\n" : mark + $0 + "\n" }.joined()
  }

  /// The tier reached in this language (`past 200 impressions: -10%`), or nil for a quote that
  /// does not carry its numbers (one decoded from JSON).
  var tierText: String? {
    guard let start = quote.tierFromImpressions, let change = quote.tierPartsPerMillion else {
      return nil
    }
    return words(.tier, count: start, ["n": count(start), "percent": percent(change)])
  }

  func words(_ word: ReceiptWord, count: Int? = nil, _ values: [String: String] = [:]) -> String {
    language.text(word, count: count, values)
  }

  /// A phrase counting `value` (`3 pages`), in the form the language gives that count.
  func counted(_ word: ReceiptWord, _ value: Int) -> String {
    words(word, count: value, ["n": count(value)])
  }

  /// A count: plain digits, or grouped as the locale groups it.
  func count(_ value: Int) -> String {
    locale.map { LocaleData.count(value, locale: $0) } ?? "\(value)"
  }

  /// A percentage of parts per million (`-10%`, `-10 %` in Spanish, `%-10` in Turkish).
  func percent(_ partsPerMillion: Int) -> String {
    guard let locale else { return percentText(partsPerMillion) }
    return (Decimal(partsPerMillion) / 1_000_000).formatted(
      Decimal.FormatStyle.Percent(locale: locale).precision(.fractionLength(0...4)))
  }

  /// An amount: as `formatted` has it, or as the locale writes money.
  func amount(_ money: Money) -> String {
    locale.map { Currency.format(money.minor, code: quote.currency, locale: $0) }
      ?? money.formatted
  }

  /// `label`, then `money` ending at column `width` (at least one space between them), in a
  /// terminal's columns.
  func row(_ label: String, _ money: Money) -> String {
    let text = amount(money)
    let padding = max(1, Self.width - columns(label) - columns(text))
    return label + String(repeating: " ", count: padding) + text
  }
}

/// The columns `text` takes on a terminal: two for an East Asian wide or fullwidth character,
/// none for a combining mark or a format character (bidi marks, joiners), one for the rest.
private func columns(_ text: String) -> Int {
  text.unicodeScalars.reduce(0) { total, scalar in
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: total
    default: total + (isWide(scalar.value) ? 2 : 1)
    }
  }
}

/// Whether a code point is East Asian Wide or Fullwidth: Hangul, CJK, kana, fullwidth forms.
private func isWide(_ value: UInt32) -> Bool {
  switch value {
  case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
    0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
    0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
    true
  default: false
  }
}
