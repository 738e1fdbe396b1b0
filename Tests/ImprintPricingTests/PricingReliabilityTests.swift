// SPDX-License-Identifier: Apache-2.0
// ImprintPricingTests: hostile price lists and orders: checked arithmetic, strict JSON, ranges.

import Foundation
import ImprintCore
import ImprintPricing
import ImprintTestSupport
import Testing

/// A price list from JSON text (so that duplicate keys and odd numbers reach the parser as
/// written).
func listText(_ text: String) throws(PricingError) -> PriceList {
  try PriceList.parse(Array(text.utf8), source: "prices.json")
}

/// A USD list with `rate` per mono simplex impression, paper free, and `extra` keys appended.
func plainList(rate: String = "10", extra: String = "") -> String {
  #"{"schemaVersion":1,"version":"v","currency":"USD","rates":{"default":{"mono":{"simplex":"#
    + rate + #"}}},"paper":{"A4":{"plain":0}}"# + extra + "}"
}

@Suite("Pricing under hostile input", .liveHandlesChecked)
struct PricingReliabilityTests {
  @Test("four ordinary adjustments quote by hand: 12000 → -615 → -267 → -124 → -415 = 10579")
  func fourAdjustments() throws {
    let list = try listText(
      plainList(
        rate: "12",
        extra: #","adjustments":[{"name":"a","percent":-5.1234},{"name":"b","percent":-2.3457},"#
          + #"{"name":"c","percent":-1.1111},{"name":"d","percent":-3.7777}]"#))
    // 1000 pages × 12 = 12000 cents. Each change is a percentage of the running total, rounded
    // half-up to the cent when applied: -614.808 → -615 (11385); -267.057945 → -267 (11118);
    // -123.532098 → -124 (10994); -415.320338 → -415 (10579).
    let result = try quote(list, pages: 1000)
    #expect(result.subtotal.minor == 12000)
    #expect(result.adjustments["a"]?.minor == -615 && result.adjustments["b"]?.minor == -267)
    #expect(result.adjustments["c"]?.minor == -124 && result.adjustments["d"]?.minor == -415)
    #expect(result.total.minor == 10579 && result.total.formatted == "USD 105.79")
  }

  @Test("fifty adjustments with four decimals: no overflow, and the receipt adds up")
  func manyAdjustments() throws {
    let adjustments = (0..<50).map {
      #"{"name":"a\#($0)","percent":\#($0 % 2 == 0 ? "-" : "")1.2345}"#
    }
    let list = try listText(
      plainList(
        rate: "1000000000",
        extra: #","adjustments":[\#(adjustments.joined(separator: ","))],"tax":{"percent":8.8751}"#)
    )
    let result = try quote(list, pages: 997, ["copies": 9999])
    let sum = result.adjustments.values.reduce(result.subtotal.minor) { $0 + $1.minor }
    #expect(result.subtotal.minor == 1_000_000_000 * 997 * 9999)
    #expect(sum + (result.tax?.minor ?? 0) == result.total.minor)
    #expect(result.adjustments.count == 50)
  }

  @Test(
    "prices, percentages and counts outside the documented ranges fail with their code",
    arguments: [
      (plainList(rate: "1e308"), "pricing.outOfRange", "rates.default.mono.simplex"),
      (plainList(rate: "1000000000001"), "pricing.outOfRange", "1000000000000"),
      (plainList(rate: "9223372036854775807"), "pricing.outOfRange", "mono.simplex"),
      (plainList(rate: "18446744073709551616"), "pricing.outOfRange", "mono.simplex"),
      (plainList(rate: "-1e308"), "pricing.outOfRange", "mono.simplex"),
      (plainList(rate: "-5"), "pricing.negativePrice", "mono.simplex"),
      (plainList(rate: "2.5"), "pricing.invalidField", "mono.simplex"),
      (plainList(extra: #","minimumOrder":1e20"#), "pricing.outOfRange", "minimumOrder"),
      (plainList(extra: #","cards":{"twoSided":1e19}"#), "pricing.outOfRange", "cards.twoSided"),
      (
        plainList(extra: #","extras":{"gold":{"per":"sheet","amount":1e300}}"#),
        "pricing.outOfRange", "extras.gold.amount"
      ),
      (plainList(extra: #","roundTo":0"#), "pricing.outOfRange", "roundTo"),
      (plainList(extra: #","roundTo":1e18"#), "pricing.outOfRange", "roundTo"),
      (
        plainList(extra: #","adjustments":[{"name":"x","percent":1e9}]"#), "pricing.outOfRange",
        "adjustments[0].percent"
      ),
      (
        plainList(extra: #","adjustments":[{"name":"x","percent":0.00001}]"#),
        "pricing.invalidField", "at most four decimals"
      ),
      (
        plainList(extra: #","adjustments":[{"name":"x","percent":-5.12341}]"#),
        "pricing.invalidField", "at most four decimals"
      ),
      (plainList(extra: #","tax":{"percent":-1}"#), "pricing.outOfRange", "tax.percent"),
      (plainList(extra: #","tax":{"percent":1e308}"#), "pricing.outOfRange", "tax.percent"),
      (
        plainList(extra: #","tiers":[{"fromImpressions":1e20,"percent":-5}]"#),
        "pricing.outOfRange", "tiers[0].fromImpressions"
      ),
    ] as [(String, String, String)])
  func outOfRange(text: String, code: String, named: String) {
    do {
      _ = try listText(text)
      Issue.record("\(text) must be refused")
    } catch {
      #expect(error.code == code, "\(error.message)")
      #expect(error.message.hasPrefix("'prices.json'") && error.message.contains(named))
    }
  }

  @Test(
    "results past 64 bits fail with pricing.overflow naming what overflowed, never trap",
    arguments: [
      // 1000 pages × 10^12 × 10000 copies = 10^19 cents.
      ("1000000000000", "", 1000, 10000, 1, "the printing charge"),
      // 10^18 + 1000 % = 1.1 × 10^19.
      (
        "1000000000000", #","adjustments":[{"name":"surcharge","percent":1000}]"#, 1000, 1000, 1,
        "adjustment 'surcharge'"
      ),
      // 10 files of 10^18 each.
      ("1000000000000", "", 1000, 1000, 10, "subtotal"),
      // 9 × 10^18 + 5 % tax = 9.45 × 10^18.
      ("1000000000000", #","tax":{"percent":5}"#, 900, 10000, 1, "the total with tax"),
      // The tier's change is computed from 10^19 cents of impressions.
      (
        "1000000000000", #","tiers":[{"fromImpressions":1,"percent":-1}]"#, 1000, 10000, 1,
        "printing charge"
      ),
    ] as [(String, String, Int, Int, Int, String)])
  func overflow(rate: String, extra: String, pages: Int, copies: Int, files: Int, what: String)
    throws
  {
    let list = try listText(plainList(rate: rate, extra: extra))
    let entries = (0..<files).map { #"{"path":"f\#($0).pdf","copies":\#(copies)}"# }
    let order = try Order.parse(
      Array(#"{"schemaVersion":1,"files":[\#(entries.joined(separator: ","))]}"#.utf8),
      source: "order.json")
    var facts: [String: PageFacts] = [:]
    for index in 0..<files { facts["f\(index).pdf"] = PageFacts(pages: pages) }
    #expect {
      _ = try Pricing.quote(order, facts: facts, prices: list)
    } throws: { error in
      guard let error = error as? PricingError else { return false }
      return error.code == "pricing.overflow" && error.message.contains(what)
        && error.message.contains("9223372036854775807")
    }
  }

  @Test("a file past 100 000 pages is pricing.outOfRange; 100 000 pages quote")
  func pages() throws {
    let list = try listText(plainList(rate: "1"))
    #expect(try quote(list, pages: 100_000).total.minor == 100_000)
    for pages in [100_001, Int.max] {
      #expect {
        _ = try quote(list, pages: pages)
      } throws: { error in
        (error as? PricingError)?.code == "pricing.outOfRange"
          && (error as? PricingError)?.message.contains("at most 100000 pages") == true
      }
    }
  }

  @Test("the largest prices at the largest counts that fit still quote exactly")
  func largestThatFits() throws {
    // 10^12 × 900 pages × 10000 copies = 9 × 10^18 cents, just under Int.max.
    let list = try listText(plainList(rate: "1000000000000"))
    let result = try quote(list, pages: 900, ["copies": 10000])
    #expect(result.total.minor == 9_000_000_000_000_000_000)
    let cards = try listText(plainList(extra: #","cards":{"oneSided":1000000000000}"#))
    let withCards = try quote(cards, pages: 1, cards: ["count": 100_000, "sides": "front"])
    #expect(withCards.cards?.minor == 100_000_000_000_000_000)
  }

  @Test(
    "strict JSON: duplicate keys, 1e400, NaN, bad UTF-8 and deep nesting, with line and column",
    arguments: [
      (
        #"{"schemaVersion":1,"files":[{"path":"a.pdf","copies":1,"copies":10000}]}"#,
        "json.duplicateKey"
      ),
      (#"{"schemaVersion":1,"files":[{"path":"a.pdf","copies":1e400}]}"#, "json.numberOutOfRange"),
      (#"{"schemaVersion":1,"files":[{"path":"a.pdf","copies":NaN}]}"#, "json.syntax"),
      ("{\"schemaVersion\":1,\n\"message\":\"\u{FF}\"}", "json.notUTF8"),
      (String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "json.tooDeep"),
      (#"{"schemaVersion":1,"files":[{"path":"a.pdf"}],}"#, "json.syntax"),
    ] as [(String, String)])
  func strictJSON(text: String, code: String) {
    var bytes = Array(text.utf8)
    // The notUTF8 case: replace the two-byte U+00FF by a lone 0xFF byte.
    if let index = bytes.firstIndex(of: 0xC3) {
      bytes.replaceSubrange(index...index + 1, with: [0xFF])
    }
    do {
      _ = try Order.parse(bytes, source: "order.json")
      Issue.record("\(text) must be refused")
    } catch {
      #expect(error.code == code, "\(error.message)")
      #expect(error.message.contains("order.json") && error.message.contains("line"))
      #expect(!error.message.contains("not in the correct format"))
    }
  }

  @Test("a duplicate key in a price list is refused too, naming the key")
  func duplicateInPriceList() {
    #expect {
      _ = try listText(plainList(extra: #","roundTo":1,"roundTo":100"#))
    } throws: { error in
      (error as? PricingError)?.code == "json.duplicateKey"
        && (error as? PricingError)?.message.contains("roundTo") == true
    }
  }

  @Test("Fraction: exact and checked at the edges of 128 bits")
  func fractionEdges() {
    let big = Fraction(Int128.max / 3, 7)
    #expect(big.adding(big) != nil)
    #expect(Fraction(Int128.max).adding(Fraction(1)) == nil)
    #expect(Fraction(Int128.max, 2).multiplied(by: Fraction(3)) == nil)
    // Cross-cancelling keeps this in range: (max/3)/7 × 7/(max/3) = 1.
    #expect(big.multiplied(by: Fraction(7, Int128.max / 3)) == Fraction(1))
    // Comparison at full width.
    #expect(Fraction(Int128.max - 1, Int128.max) < Fraction(Int128.max, Int128.max - 1))
    #expect(!(Fraction(Int128.max) < Fraction(Int128.max - 1)))
    // Rounding past Int is nil, not a trap.
    #expect(Fraction(Int128(Int.max) + 1).rounded(.halfUp) == nil)
    #expect(Fraction(Int128(Int.max)).rounded(.halfUp, unit: 10) == nil)
    #expect(Fraction(Int128(Int.max)).rounded(.down) == Int.max)
    #expect(Fraction(5, 2).rounded(.halfEven) == 2 && Fraction(-5, 2).rounded(.halfUp) == -3)
    #expect(Fraction(7, 2).rounded(.halfEven) == 4 && Fraction(-1, 3).rounded(.down) == -1)
  }
}
