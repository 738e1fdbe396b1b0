// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: which locale identifiers Imprint knows, against Foundation asked directly.

import Foundation
import ImprintCore
import Testing

@Suite("locale identifiers known or not")
struct LocaleDataTests {
  /// Foundation's own answer, asked anew each time: a language code ISO 639 has (compared as
  /// `Locale.LanguageCode` compares) and some locale data for it.
  static func foundationKnows(_ identifier: String) -> Bool {
    let normalized = identifier.replacingOccurrences(of: "_", with: "-")
    guard !normalized.isEmpty,
      normalized.unicodeScalars.allSatisfy({
        $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-")
      }),
      let code = Locale.Language(identifier: normalized).languageCode?.identifier,
      code.count >= 2, Locale.LanguageCode.isoLanguageCodes.contains(Locale.LanguageCode(code))
    else { return false }
    return Locale.availableIdentifiers.contains {
      $0.prefix { $0 != "_" && $0 != "-" } == code
    }
  }

  @Test(
    "known and unknown identifiers, each as Foundation answers it",
    arguments: [
      "en", "ko", "zh-Hant-TW", "pt_BR", "hi-IN", "ar", "he", "ja_JP", "de-CH", "fil", "EN",
      "Ko-kr", "xx", "english", "", "e n", "zz-ZZ", "qaa", "en_", "-", "und", "root",
    ])
  func known(_ identifier: String) {
    // Twice: the second answer comes from what the first kept.
    #expect(LocaleData.isKnown(identifier) == Self.foundationKnows(identifier), "\(identifier)")
    #expect(LocaleData.isKnown(identifier) == Self.foundationKnows(identifier), "\(identifier)")
  }

  @Test("the common languages are known; made-up ones are not")
  func sample() {
    for identifier in ["en", "ko", "zh-Hant-TW", "pt_BR", "hi-IN", "ar", "he"] {
      #expect(LocaleData.isKnown(identifier), "\(identifier)")
    }
    for identifier in ["xx", "english", "", "e n", "zz-ZZ"] {
      #expect(!LocaleData.isKnown(identifier), "\(identifier)")
    }
  }
}
