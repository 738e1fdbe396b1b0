// SPDX-License-Identifier: Apache-2.0
// ImprintCore: which locale identifiers Foundation has data for, and locales with Latin digits,
// shared by cards and receipts.

import Foundation

/// Locale identifiers checked against Foundation's locale data.
public enum LocaleData {
  /// Whether Foundation has data for the language of `identifier` (`ko`, `zh-Hant-TW`,
  /// `pt_BR`); false for `xx`, `english`, an empty or malformed identifier.
  public static func isKnown(_ identifier: String) -> Bool {
    let normalized = identifier.replacingOccurrences(of: "_", with: "-")
    guard !normalized.isEmpty,
      normalized.unicodeScalars.allSatisfy({
        $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-")
      }),
      let code = Locale.Language(identifier: normalized).languageCode?.identifier,
      code.count >= 2, Locale.LanguageCode.isoLanguageCodes.contains(Locale.LanguageCode(code))
    else { return false }
    return knownLanguages.contains(code)
  }

  /// The languages Foundation has locale data for.
  private static let knownLanguages: Set<String> = Set(
    Locale.availableIdentifiers.map { String($0.prefix { $0 != "_" && $0 != "-" }) })

  /// The locale of `identifier`, with Latin digits unless `nativeDigits`.
  public static func locale(_ identifier: String, nativeDigits: Bool = false) -> Locale {
    var components = Locale.Components(
      identifier: identifier.replacingOccurrences(of: "_", with: "-"))
    if !nativeDigits { components.numberingSystem = Locale.NumberingSystem("latn") }
    return Locale(components: components)
  }
}
