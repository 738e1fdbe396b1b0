// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the language a card is printed in: labels from the template's strings, dates and
// numbers from Foundation's locale data (Gregorian, UTC), right-to-left layout for RTL languages.

import Foundation
import ImprintCore

/// The language a card is printed in.
///
/// Labels come from the template's `strings` (source text → translation, per language); dates,
/// month names and number grouping from Foundation's `FormatStyle` with the Gregorian calendar
/// in UTC (never hand-kept tables); digits are Latin unless the template asks for the locale's
/// own (`"digits": "native"`). Arabic, Persian, Hebrew and Urdu cards are laid out right-to-left.
public struct CardLocale: Sendable, Hashable {
  /// The identifier asked for (BCP 47: `ko`, `zh-TW`, `pt-BR`).
  public let identifier: String
  /// The language whose strings the card uses: the template's own, or a key of its `strings`.
  public let language: String
  /// Right-to-left (Arabic, Persian, Hebrew, Urdu): the card is mirrored and its text set
  /// right-to-left.
  public let isRightToLeft: Bool
  /// Source text → translation; empty for the template's own language.
  let translations: [String: String]
  /// Whether numbers are written in the locale's own digits (the template's `digits`).
  let nativeDigits: Bool
  /// The Foundation locale numbers and dates are formatted with.
  let locale: Locale

  /// The locale of a card of `template`: `identifier`, or the template's own when nil.
  ///
  /// - Throws: `CardError.unknownLocale` for an identifier with no language data,
  ///   `.untranslatedLocale` for a language the template has no strings for.
  public static func resolve(_ identifier: String?, template: CardTemplate) throws(CardError)
    -> CardLocale
  {
    let asked = identifier ?? template.locale
    guard LocaleData.isKnown(asked) else { throw .unknownLocale(identifier: asked) }
    let keys = LocaleData.lookupKeys(asked).map { $0.lowercased() }
    let own = LocaleData.lookupKeys(template.locale).map { $0.lowercased() }
    var language: String?
    var translations: [String: String] = [:]
    for key in keys {
      if let found = template.strings.first(where: { $0.key.lowercased() == key }) {
        language = found.key
        translations = found.value
        break
      }
      if own.last == key || own.first == key {
        language = template.locale
        break
      }
    }
    guard let language else {
      throw .untranslatedLocale(
        identifier: asked, template: template.name,
        available: ([template.locale] + template.strings.keys).sorted())
    }
    return CardLocale(
      identifier: asked, language: language, isRightToLeft: LocaleData.isRightToLeft(asked),
      translations: translations, nativeDigits: template.nativeDigits,
      locale: LocaleData.locale(asked, nativeDigits: template.nativeDigits))
  }

  /// English as the shipped designs write it (no translations, Latin digits): what
  /// `Profile.fields` and `Profile.joined` give.
  public static let english = CardLocale(
    identifier: "en", language: "en", isRightToLeft: false, translations: [:],
    nativeDigits: false, locale: LocaleData.locale("en"))

  /// `text` in this locale: its translation, or itself in the template's own language.
  func translate(_ text: String) -> String { translations[text] ?? text }

  private static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current

  /// A month and year, as the locale writes it alone (`March 2017`, `2017년 3월`, `marzo de
  /// 2017`), Gregorian, in UTC.
  func yearMonth(year: Int, month: Int) -> String {
    if (1...12).contains(month), (1000...9999).contains(year),
      let months = MonthShape.of(locale)
    {
      return months.written(year: year, month: month)
    }
    return written(.yearMonth(year: year, month: month)) {
      Self.foundationYearMonth(year: year, month: month, locale: locale)
    }
  }

  /// A month and year as Foundation's `Date.FormatStyle` writes it.
  static func foundationYearMonth(year: Int, month: Int, locale: Locale) -> String {
    foundationYearMonths([(year, month)], locale: locale)[0]
  }

  /// Months and years as Foundation's `Date.FormatStyle` writes them, with one style.
  static func foundationYearMonths(_ dates: [(year: Int, month: Int)], locale: Locale) -> [String] {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = Self.utc
    let style = Date.FormatStyle(locale: locale, calendar: calendar, timeZone: Self.utc)
      .year().month(.wide)
    return dates.map { year, month in
      guard let date = calendar.date(from: DateComponents(year: year, month: month, day: 1))
      else { return "\(year)-\(month)" }
      return date.formatted(style)
    }
  }

  /// A count grouped as the locale groups it (`2,381`; `12,34,567` in Hindi; `2 381` in
  /// Russian).
  func count(_ value: Int) -> String { LocaleData.count(value, locale: locale) }

  /// A number of tenths written with one decimal (`69.8`, `-16.2`), with the locale's decimal
  /// separator and digits.
  func tenths(_ value: Int) -> String {
    if let shape = NumberShape.of(locale) { return shape.tenths(value) }
    return written(.tenths(value)) { NumberShape.foundationTenths(value, locale: locale) }
  }

  /// `value` without grouping, in the locale's digits (`-17`).
  func integer(_ value: Int) -> String {
    if let shape = NumberShape.of(locale) { return shape.integer(value) }
    return written(.integer(value)) { NumberShape.foundationInteger(value, locale: locale) }
  }

  /// What a card writes with Foundation's formatting that repeats from card to card, for a
  /// locale whose numbers or months `NumberShape` and `MonthShape` cannot copy.
  ///
  /// The months accounts joined in and reputation scores are kept: formatting them cost more
  /// than the rest of a card's fields together. Counts differ on every card and are not kept.
  private enum Written: Hashable, Sendable {
    case yearMonth(year: Int, month: Int)
    case tenths(Int)
    case integer(Int)
  }

  private struct WrittenKey: Hashable, Sendable {
    let identifier: String
    let nativeDigits: Bool
    let value: Written
  }

  private static let writtenValues = Memo<WrittenKey, String>(limit: 4096)

  private func written(_ value: Written, _ format: () -> String) -> String {
    Self.writtenValues.value(
      WrittenKey(identifier: identifier, nativeDigits: nativeDigits, value: value)
    ) { _ in format() }
  }
}

extension Profile {
  /// The source text of the `joined` field, which templates translate like their own texts.
  public static let joinedText = "Joined {joinedDate}"

  /// The values template text can refer to, written for `locale`: the join date in its
  /// language, counts grouped as it groups them, reputation with its decimal separator (account
  /// ids and names as they are).
  public func fields(in locale: CardLocale) -> [String: String] {
    var fields: [String: String] = [
      "account": account, "handle": handle, "displayName": displayName,
      "profileUrl": profileURL, "profileUrlShort": "\(platform.host)/@\(account)",
      "platform": platform.displayName,
    ]
    fields["about"] = about
    fields["location"] = location
    fields["website"] = website
    fields["accountId"] = accountID.map { "#\($0)" }
    if let created {
      let date = locale.yearMonth(year: created.year, month: created.month)
      fields["joinedDate"] = date
      fields["joined"] = fill(locale.translate(Self.joinedText), with: ["joinedDate": date])
    }
    fields["postCount"] = postCount.map(locale.count)
    if let reputationRaw, let score = Reputation.score(reputationRaw) {
      fields["reputation"] = locale.integer(Reputation.displayed(score))
      fields["reputationPrecise"] = locale.tenths(Reputation.tenths(score))
    }
    if let follow {
      fields["followers"] = locale.count(follow.followers)
      fields["following"] = locale.count(follow.following)
    }
    return fields
  }

  /// The values template text can refer to as `{name}`, in English (`CardLocale.english`);
  /// absent values are missing keys.
  public var fields: [String: String] { fields(in: .english) }

  /// "Joined March 2017" in UTC, or nil when the date is unknown.
  public var joined: String? {
    created.flatMap {
      fill(
        Self.joinedText,
        with: ["joinedDate": CardLocale.english.yearMonth(year: $0.year, month: $0.month)])
    }
  }
}

/// How a locale writes a month and year: Foundation's text for each month of 2000, with the
/// year's digits replaced, used only after it wrote probe months of other years exactly as
/// Foundation does (a locale whose year is not written as four digits keeps Foundation).
struct MonthShape: Sendable {
  /// Each month's text before and after the year.
  let months: [(before: String, after: String)]
  let digits: [String]

  static func of(_ locale: Locale) -> MonthShape? {
    shapes.valueComputedOnce(locale.identifier) { _ in learn(locale) }
  }

  private static let shapes = Memo<String, MonthShape?>(limit: 256)

  func written(year: Int, month: Int) -> String {
    let year = String(year).utf8.map { digits[Int($0 - UInt8(ascii: "0"))] }.joined()
    let parts = months[month - 1]
    return parts.before + year + parts.after
  }

  private static func learn(_ locale: Locale) -> MonthShape? {
    guard let numbers = NumberShape.of(locale) else { return nil }
    let digits = (0...9).map { numbers.integer($0) }
    let year = [2, 0, 0, 0].map { digits[$0] }.joined()
    let probes = [(2017, 3), (1999, 12), (2038, 11)]
    let texts = CardLocale.foundationYearMonths(
      (1...12).map { (2000, $0) } + probes.map { ($0.0, $0.1) }, locale: locale)
    var months: [(before: String, after: String)] = []
    for text in texts.prefix(12) {
      guard let range = text.range(of: year), text[range.upperBound...].range(of: year) == nil
      else { return nil }
      months.append((String(text[..<range.lowerBound]), String(text[range.upperBound...])))
    }
    let shape = MonthShape(months: months, digits: digits)
    return zip(probes, texts.suffix(probes.count)).allSatisfy {
      shape.written(year: $0.0.0, month: $0.0.1) == $0.1
    } ? shape : nil
  }
}
