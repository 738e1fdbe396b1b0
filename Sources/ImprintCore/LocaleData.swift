// SPDX-License-Identifier: Apache-2.0
// ImprintCore: which locale identifiers Foundation has data for, locales with Latin digits, the
// keys a translation table files a language under, and counts as a locale writes them; shared by
// cards and receipts.

import Foundation

/// Locale identifiers checked against Foundation's locale data.
public enum LocaleData {
  /// Whether Foundation has data for the language of `identifier` (`ko`, `zh-Hant-TW`,
  /// `pt_BR`); false for `xx`, `english`, an empty or malformed identifier.
  public static func isKnown(_ identifier: String) -> Bool {
    // Asked once a card: the answer is kept (Foundation builds its list of ISO codes on every
    // call, a tenth of a card's layout).
    answers.value(identifier, decide)
  }

  private static let answers = Memo<String, Bool>()

  private static func decide(_ identifier: String) -> Bool {
    let normalized = identifier.replacingOccurrences(of: "_", with: "-")
    guard !normalized.isEmpty,
      normalized.unicodeScalars.allSatisfy({
        $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-")
      }),
      let code = Locale.Language(identifier: normalized).languageCode?.identifier,
      code.count >= 2, isoLanguageCodes.contains(code.lowercased())
    else { return false }
    return knownLanguages.contains(code)
  }

  /// ISO 639's codes as Foundation knows them, in lower case as it compares them: made once
  /// (Foundation builds the list anew on every call, and a template's translations ask for each
  /// of their languages).
  private static let isoLanguageCodes: Set<String> = Set(
    Locale.LanguageCode.isoLanguageCodes.map { $0.identifier.lowercased() })

  /// The languages Foundation has locale data for.
  private static let knownLanguages: Set<String> = Set(
    Locale.availableIdentifiers.map { identifier in
      // By bytes: by Characters, this cost more than asking Foundation for the identifiers.
      let end = identifier.utf8.firstIndex { $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
      return String(identifier[..<(end ?? identifier.endIndex)])
    })

  /// The locale of `identifier`, with Latin digits unless `nativeDigits`.
  public static func locale(_ identifier: String, nativeDigits: Bool = false) -> Locale {
    // Kept: built once a card, and Foundation parses the identifier each time.
    locales.value(LocaleKey(identifier: identifier, nativeDigits: nativeDigits)) { key in
      makeLocale(key.identifier, nativeDigits: key.nativeDigits)
    }
  }

  private struct LocaleKey: Hashable, Sendable {
    let identifier: String
    let nativeDigits: Bool
  }

  private static let locales = Memo<LocaleKey, Locale>()

  private static func makeLocale(_ identifier: String, nativeDigits: Bool) -> Locale {
    var components = Locale.Components(
      identifier: identifier.replacingOccurrences(of: "_", with: "-"))
    if !nativeDigits { components.numberingSystem = Locale.NumberingSystem("latn") }
    return Locale(components: components)
  }

  /// The keys a table of translations may file `identifier` under, most specific first: as
  /// given, language-script-region, language-region, language-script, language (`zh-TW`:
  /// `zh-TW`, `zh-Hant-TW`, `zh-Hant`, `zh`; `pt-BR`: `pt-BR`, `pt-Latn-BR`, `pt-Latn`, `pt`).
  public static func lookupKeys(_ identifier: String) -> [String] {
    keys.value(identifier, makeLookupKeys)
  }

  private static let keys = Memo<String, [String]>()

  /// Whether `identifier`'s language is written right to left (Arabic, Persian, Hebrew, Urdu),
  /// from Foundation's locale data.
  public static func isRightToLeft(_ identifier: String) -> Bool {
    directions.value(identifier) {
      Locale.Language(identifier: $0).characterDirection == .rightToLeft
    }
  }

  private static let directions = Memo<String, Bool>()

  private static func makeLookupKeys(_ identifier: String) -> [String] {
    let normalized = identifier.replacingOccurrences(of: "_", with: "-")
    let language = Locale.Language(identifier: normalized)
    let full = Locale.Language(identifier: language.maximalIdentifier)
    guard let code = full.languageCode?.identifier else { return [normalized] }
    let script = full.script?.identifier
    let region = full.region?.identifier
    var keys = [normalized]
    if let script, let region { keys.append("\(code)-\(script)-\(region)") }
    if let region { keys.append("\(code)-\(region)") }
    if let script { keys.append("\(code)-\(script)") }
    keys.append(code)
    var seen = Set<String>()
    return keys.filter { seen.insert($0.lowercased()).inserted }
  }

  /// A count grouped as `locale` groups it, in its digits (`2,381`; `12,34,567` in Hindi;
  /// `2 381` in Russian): the one way cards and receipts write counts.
  public static func count(_ value: Int, locale: Locale) -> String {
    NumberShape.of(locale)?.count(value) ?? NumberShape.foundationCount(value, locale: locale)
  }
}
