// SPDX-License-Identifier: Apache-2.0
// ImprintPricingTests: the receipt of a quote computed by hand, in English and in other locales.

import Foundation
import ImprintPricing
import ImprintTestSupport
import Testing

/// A quote computed by hand, with every kind of line: 9 pages duplex (page 2 colour) × 3
/// copies with a staple, a volume tier, an adjustment, the minimum and tax added.
///
/// Per copy: impressions 1-8 two-sided (7 × 8 + colour 40 = 96), the odd 9th one-sided mono
/// 10: 106; × 3 = 318. Paper 5 sheets × 2 × 3 = 30; staple 25 × 3 = 75; file 423. The tier
/// (past 20 impressions, -50 %): impressions 21-27 are the third copy's 3rd to 9th, 6 × 8 + 10
/// = 58, so -29; subtotal 394. Rush +50 %: +197 = 591. Minimum 1000: +409. Tax 10 % added:
/// +100. Total 1100.
func handQuote() throws -> Quote {
  let list = try usdList([
    "tiers": [["fromImpressions": 20, "percent": -50]],
    "adjustments": [["name": "rush", "percent": 50]], "minimumOrder": 1000,
    "tax": ["percent": 10, "included": false],
  ])
  return try quote(
    list, pages: 9, colorPages: [2],
    ["duplex": "long-edge", "copies": 3, "color": "auto", "extras": ["staple"]])
}

@Suite("Receipts", .liveHandlesChecked)
struct ReceiptTests {
  @Test("the English receipt of the hand-computed quote, line by line")
  func english() throws {
    let expected = """
      Campus Print — price list 2026-fall

      doc.pdf
        9 of 9 pages, 1-up, two-sided (long-edge), A4 plain, auto
        9 impressions (1 colour, 0 blank) on 5 sheets × 3 copies
        printing                          USD 3.18
        paper                             USD 0.30
        staple                            USD 0.75
        file total                        USD 4.23
      volume (past 20 impressions: -50%) USD -0.29
      subtotal                            USD 3.94
      rush                                USD 1.97
      to the minimum order                USD 4.09
      tax                                 USD 1.00
      TOTAL                              USD 11.00

      """
    let text = try handQuote().receipt()
    #expect(text == expected, "\(text)")
  }

  @Test("one page, one impression, one sheet, one copy: the singular forms")
  func singular() throws {
    let text = try quote(try usdList(), pages: 1).receipt()
    #expect(text.contains("  1 of 1 page, 1-up, one-sided, A4 plain, mono\n"))
    #expect(text.contains("  1 impression (0 colour, 0 blank) on 1 sheet × 1 copy\n"))
  }

  @Test("names in Hangul take two columns a character: their amounts still end at column 44")
  func wideNames() throws {
    let list = try usdList([
      "extras": ["스테이플": ["per": "copy", "amount": 25]],
      "adjustments": [["name": "급행 요금", "percent": 100]],
    ])
    // 10 + paper 2 + staple 25 = 37; +100 %: +37.
    let text = try quote(list, pages: 1, ["extras": ["스테이플"]]).receipt()
    // "  스테이플": 2 + 4 × 2 = 10 columns, so 26 spaces before the 8 of "USD 0.25".
    #expect(text.contains("\n  스테이플" + String(repeating: " ", count: 26) + "USD 0.25\n"), "\(text)")
    // "급행 요금": 2 × 2 + 1 + 2 × 2 = 9 columns, so 27 spaces.
    #expect(text.contains("\n급행 요금" + String(repeating: " ", count: 27) + "USD 0.37\n"), "\(text)")
  }

  @Test("an identifier with no locale data is pricing.unknownLocale")
  func unknownLocale() throws {
    #expect(throws: PricingError.unknownLocale(identifier: "xx")) {
      try handQuote().receipt(locale: "xx")
    }
  }
}
