// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: a month and year written from the learned month shape is Foundation's text,
// for every month of 70 years, in the languages cards are printed in.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintCards

@Suite("Month shapes", .liveHandlesChecked)
struct MonthShapeTests {
  @Test(
    "every month from 1971 to 2040 as Foundation writes it",
    arguments: [
      "en", "ko", "ja", "zh-TW", "zh-Hans", "hi", "bn", "ar", "fa", "he", "ur", "ru", "uk", "th",
      "vi", "es", "pt-BR", "fr", "de", "tr", "my", "km", "am", "ta", "ne", "mr", "el", "ka",
    ])
  func everyMonth(identifier: String) {
    for native in [false, true] {
      let locale = LocaleData.locale(identifier, nativeDigits: native)
      guard let shape = MonthShape.of(locale) else {
        // Kept on Foundation: still right, only slower. Most languages have a shape.
        #expect(!["en", "ko", "ja", "es", "ru", "hi"].contains(identifier), "\(identifier)")
        continue
      }
      for year in 1971...2040 {
        for month in 1...12 {
          #expect(
            shape.written(year: year, month: month)
              == CardLocale.foundationYearMonth(year: year, month: month, locale: locale),
            "\(identifier) \(native) \(year)-\(month)")
        }
      }
    }
  }
}
