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
    let direction = Locale.Language(identifier: asked).characterDirection
    return CardLocale(
      identifier: asked, language: language, isRightToLeft: direction == .rightToLeft,
      translations: translations,
      locale: LocaleData.locale(asked, nativeDigits: template.nativeDigits))
  }

  /// `text` in this locale: its translation, or itself in the template's own language.
  func translate(_ text: String) -> String { translations[text] ?? text }

  private static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current

  /// A month and year, as the locale writes it alone (`March 2017`, `2017년 3월`, `marzo de
  /// 2017`), Gregorian, in UTC.
  func yearMonth(year: Int, month: Int) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = Self.utc
    guard let date = calendar.date(from: DateComponents(year: year, month: month, day: 1)) else {
      return "\(year)-\(month)"
    }
    let style = Date.FormatStyle(locale: locale, calendar: calendar, timeZone: Self.utc)
      .year().month(.wide)
    return date.formatted(style)
  }

  /// A count grouped as the locale groups it (`2,381`; `12,34,567` in Hindi; `2 381` in
  /// Russian).
  func count(_ value: Int) -> String { LocaleData.count(value, locale: locale) }

  /// A decimal written with a `.` (`69.8`), with the locale's decimal separator and digits.
  func decimal(_ text: String) -> String {
    guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
      return text
    }
    let digits = text.split(separator: ".").dropFirst().first?.count ?? 0
    return value.formatted(
      Decimal.FormatStyle(locale: locale).precision(.fractionLength(digits)).grouping(.never))
  }

  /// An integer written in ASCII digits (`-17`), in the locale's digits.
  func integer(_ text: String) -> String {
    guard let value = Int(text) else { return text }
    return value.formatted(IntegerFormatStyle<Int>(locale: locale).grouping(.never))
  }
}

extension Profile {
  /// The source text of the `joined` field, which templates translate like their own texts.
  public static let joinedText = "Joined {joinedDate}"

  /// The values template text can refer to, written for `locale`: the join date in its
  /// language, counts grouped as it groups them, reputation with its decimal separator (account
  /// ids and names as they are).
  public func fields(in locale: CardLocale) -> [String: String] {
    var fields = self.fields
    if let created {
      let date = locale.yearMonth(year: created.year, month: created.month)
      fields["joinedDate"] = date
      fields["joined"] = fill(locale.translate(Self.joinedText), with: ["joinedDate": date])
    }
    fields["postCount"] = postCount.map(locale.count)
    if let follow {
      fields["followers"] = locale.count(follow.followers)
      fields["following"] = locale.count(follow.following)
    }
    if let reputation = fields["reputation"] { fields["reputation"] = locale.integer(reputation) }
    if let precise = fields["reputationPrecise"] {
      fields["reputationPrecise"] = locale.decimal(precise)
    }
    return fields
  }
}
