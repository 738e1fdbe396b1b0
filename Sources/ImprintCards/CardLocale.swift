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
    written(.yearMonth(year: year, month: month)) {
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = Self.utc
      guard let date = calendar.date(from: DateComponents(year: year, month: month, day: 1)) else {
        return "\(year)-\(month)"
      }
      let style = Date.FormatStyle(locale: locale, calendar: calendar, timeZone: Self.utc)
        .year().month(.wide)
      return date.formatted(style)
    }
  }

  /// A count grouped as the locale groups it (`2,381`; `12,34,567` in Hindi; `2 381` in
  /// Russian).
  func count(_ value: Int) -> String { LocaleData.count(value, locale: locale) }

  /// A number of tenths written with one decimal (`69.8`, `-16.2`), with the locale's decimal
  /// separator and digits.
  func tenths(_ value: Int) -> String {
    written(.tenths(value)) {
      Decimal(sign: value < 0 ? .minus : .plus, exponent: -1, significand: Decimal(value.magnitude))
        .formatted(
          Decimal.FormatStyle(locale: locale).precision(.fractionLength(1)).grouping(.never))
    }
  }

  /// `value` without grouping, in the locale's digits (`-17`).
  func integer(_ value: Int) -> String {
    written(.integer(value)) {
      value.formatted(IntegerFormatStyle<Int>(locale: locale).grouping(.never))
    }
  }

  /// What a card writes with Foundation's formatting that repeats from card to card.
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
