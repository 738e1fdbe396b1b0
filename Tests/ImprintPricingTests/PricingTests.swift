// SPDX-License-Identifier: Apache-2.0
// ImprintPricingTests: hand-computed quotes, properties, and every refused input.

import Foundation
import ImprintPricing
import ImprintTestSupport
import Testing

/// USD, cents: mono 10/8, colour 50/40 (simplex/duplex); A3 twice that; paper A4 plain 2,
/// heavy 5, A3 4, Letter 2; staple 25 a copy, bind 300 a job, punch 1 a sheet; cards 300/400.
func usdList(_ extra: [String: Any] = [:]) throws -> PriceList {
  var json: [String: Any] = [
    "schemaVersion": 1, "store": "Campus Print", "version": "2026-fall", "currency": "USD",
    "rates": [
      "default": ["mono": ["simplex": 10, "duplex": 8], "color": ["simplex": 50, "duplex": 40]],
      "A3": ["mono": ["simplex": 20, "duplex": 16], "color": ["simplex": 100, "duplex": 80]],
    ],
    "paper": ["A4": ["plain": 2, "heavy": 5], "A3": ["plain": 4], "Letter": ["plain": 2]],
    "extras": [
      "staple": ["per": "copy", "amount": 25], "bind": ["per": "job", "amount": 300],
      "punch": ["per": "sheet", "amount": 1],
    ],
    "cards": ["oneSided": 300, "twoSided": 400],
  ]
  json.merge(extra) { $1 }
  return try PriceList.parse(
    [UInt8](try JSONSerialization.data(withJSONObject: json)), source: "prices.json")
}

func quote(
  _ list: PriceList, pages: Int, colorPages: Set<Int> = [], blank: Set<Int> = [],
  _ options: [String: Any] = [:], cards: [String: Any]? = nil
) throws -> Quote {
  var file: [String: Any] = ["path": "doc.pdf"]
  file.merge(options) { $1 }
  var order: [String: Any] = ["schemaVersion": 1, "files": [file]]
  if let cards { order["cards"] = cards }
  let parsed = try Order.parse(
    [UInt8](try JSONSerialization.data(withJSONObject: order)), source: "order.json")
  return try Pricing.quote(
    parsed, facts: ["doc.pdf": PageFacts(pages: pages, colorPages: colorPages, blankPages: blank)],
    prices: list)
}

/// A JSON object written as text (test arguments must be Sendable).
func object(_ text: String) -> [String: Any] {
  (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}

@Suite("Quotes computed by hand", .liveHandlesChecked)
struct HandComputedTests {
  // (name, pages, colour pages, blank pages, options, list changes, expected total in minor units)
  static let cases: [(String, Int, Set<Int>, Set<Int>, String, String, Int)] = [
    ("1 page mono: 10 + paper 2", 1, [], [], #"{}"#, #"{}"#, 12),
    ("10 pages mono simplex: 100 + 20", 10, [], [], #"{}"#, #"{}"#, 120),
    ("10 pages duplex: 10 x 8 + 5 sheets x 2", 10, [], [], #"{"duplex": "long-edge"}"#, #"{}"#, 90),
    (
      "9 pages duplex: 8 x 8 + odd last at 10 + 5 sheets", 9, [], [], #"{"duplex": "short-edge"}"#,
      #"{}"#, 84
    ),
    ("10 pages 2-up: 5 impressions x 12", 10, [], [], #"{"nUp": 2}"#, #"{}"#, 60),
    (
      "10 pages 4-up duplex: 3 impressions (8 + 8 + 10) + 2 sheets", 10, [], [],
      #"{"nUp": 4, "duplex": "long-edge"}"#, #"{}"#, 30
    ),
    ("range 1-3,5 of 10: 4 x 12", 10, [], [], #"{"pages": "1-3,5"}"#, #"{}"#, 48),
    ("range 8- of 10: 3 x 12", 10, [], [], #"{"pages": "8-"}"#, #"{}"#, 36),
    ("colour 3 pages: 3 x 50 + 3 x 2", 3, [], [], #"{"color": "color"}"#, #"{}"#, 156),
    ("auto: 1 colour page of 4: 50 + 30 + 8", 4, [2], [], #"{"color": "auto"}"#, #"{}"#, 88),
    (
      "auto 2-up: impression with page 2 colour: 50 + 10 + 4", 4, [2], [],
      #"{"color": "auto", "nUp": 2}"#, #"{}"#, 64
    ),
    ("3 copies of 1 page", 1, [], [], #"{"copies": 3}"#, #"{}"#, 36),
    (
      "staple per copy, 2 copies of 2 pages: 48 + 50", 2, [], [],
      #"{"copies": 2, "extras": ["staple"]}"#, #"{}"#, 98
    ),
    ("bind per job: 12 + 300", 1, [], [], #"{"extras": ["bind"]}"#, #"{}"#, 312),
    (
      "punch per sheet, 4 pages duplex: 32 + 4 + 2", 4, [], [],
      #"{"duplex": "long-edge", "extras": ["punch"]}"#, #"{}"#, 38
    ),
    ("heavy paper: 20 + 10", 2, [], [], #"{"paperType": "heavy"}"#, #"{}"#, 30),
    (
      "A3 colour duplex 2 pages: 160 + 4", 2, [], [],
      #"{"paper": "A3", "color": "color", "duplex": "long-edge"}"#, #"{}"#, 164
    ),
    (
      "tier -10 % past 90 impressions: 900 + 10 x 9 + 200", 100, [], [], #"{}"#,
      #"{"tiers": [{"fromImpressions": 90, "percent": -10}]}"#, 1190
    ),
    (
      "tier not reached at 90: 900 + 180", 90, [], [], #"{}"#,
      #"{"tiers": [{"fromImpressions": 90, "percent": -10}]}"#, 1080
    ),
    (
      "two tiers: 10 at 10, 10 at 9, 5 at 8; + 50", 25, [], [], #"{}"#,
      #"{"tiers": [{"fromImpressions": 10, "percent": -10}, {"fromImpressions": 20, "percent": -20}]}"#,
      280
    ),
    (
      "student -10 %: 120 -> 108", 10, [], [], #"{}"#,
      #"{"adjustments": [{"name": "student", "percent": -10}]}"#, 108
    ),
    ("tax added 10 %: 120 -> 132", 10, [], [], #"{}"#, #"{"tax": {"percent": 10}}"#, 132),
    (
      "tax 8.875 % added: 120 + 10.65 = 130.65 -> 131", 10, [], [], #"{}"#,
      #"{"tax": {"percent": 8.875}}"#, 131
    ),
    (
      "tax included 10 %: total stays 120", 10, [], [], #"{}"#,
      #"{"tax": {"percent": 10, "included": true}}"#, 120
    ),
    ("minimum 500 raises 12", 1, [], [], #"{}"#, #"{"minimumOrder": 500}"#, 500),
    (
      "-3.33 % of 120 = 116.004, half-up 116", 10, [], [], #"{}"#,
      #"{"adjustments": [{"name": "a", "percent": -3.33}]}"#, 116
    ),
    (
      "-3.33 % of 120, rounded up: 117", 10, [], [], #"{}"#,
      #"{"adjustments": [{"name": "a", "percent": -3.33}], "rounding": "up"}"#, 117
    ),
    (
      "blank page paper-only: 2 x 10 + 3 x 2", 3, [], [2], #"{}"#, #"{"blankPages": "paper-only"}"#,
      26
    ),
    ("blank page charged by default: 36", 3, [], [2], #"{}"#, #"{}"#, 36),
    (
      "-10 % of 25 = 22.5: half-even 22", 1, [], [], #"{"extras": ["punch"], "copies": 2}"#,
      #"{"adjustments": [{"name": "a", "percent": -10}], "rounding": "half-even", "rates": {"default": {"mono": {"simplex": 10}}}, "paper": {"A4": {"plain": 2}}, "extras": {"punch": {"per": "sheet", "amount": 0}, "bind": {"per": "job", "amount": 1}}}"#,
      22
    ),
  ]

  @Test("USD quotes match the hand computation", arguments: cases)
  func usd(
    name: String, pages: Int, colors: Set<Int>, blank: Set<Int>, options: String,
    changes: String, expected: Int
  ) throws {
    let result = try quote(
      try usdList(object(changes)), pages: pages, colorPages: colors, blank: blank, object(options))
    #expect(result.total.minor == expected, "\(name)")
    #expect(result.priceListVersion == "2026-fall")
  }

  @Test("the 9-page duplex job is counted exactly")
  func counting() throws {
    let file = try quote(try usdList(), pages: 9, ["duplex": "long-edge", "copies": 2]).files[0]
    #expect(
      file.selectedPages == 9 && file.impressions == 9 && file.sheets == 5 && file.totalSheets == 10
    )
    #expect(file.rates["mono.duplex"]?.minor == 8 && file.rates["mono.simplex"]?.minor == 10)
  }

  @Test("KRW has no minor unit; totals round to 10 won steps once, at the end")
  func krw() throws {
    let list = try PriceList.parse(
      Array(
        #"{"schemaVersion":1,"store":"부스터","version":"v3","currency":"KRW","roundTo":100,"rates":{"default":{"mono":{"simplex":50,"duplex":40},"color":{"simplex":300,"duplex":250}}},"paper":{"A4":{"plain":10}},"adjustments":[{"name":"student","percent":-5}]}"#
          .utf8), source: "krw.json")
    // 7 pages: 7 x 60 = 420 won; -5 % = 399 won; to 100 won: 400.
    let result = try quote(list, pages: 7)
    #expect(result.total.minor == 400 && result.total.formatted == "KRW 400")
    #expect(result.subtotal.formatted == "KRW 420")
    let usd = try quote(try usdList(), pages: 123)
    #expect(usd.total.formatted == "USD 14.76")
  }

  @Test("tax included is shown, not added: 120 × 10 / 110 = 10.9 → 11")
  func taxIncluded() throws {
    let result = try quote(try usdList(["tax": ["percent": 10, "included": true]]), pages: 10)
    #expect(result.tax?.minor == 11 && result.taxIncluded && result.total.minor == 120)
  }

  @Test("the same order, list and facts give the same quote, byte for byte")
  func deterministic() throws {
    let list = try usdList([
      "adjustments": [["name": "a", "percent": -3.33], ["name": "b", "percent": 7]],
      "tax": ["percent": 8.875],
    ])
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let first = try encoder.encode(
      try quote(list, pages: 37, colorPages: [4, 9], ["color": "auto", "nUp": 2]))
    let second = try encoder.encode(
      try quote(list, pages: 37, colorPages: [9, 4], ["color": "auto", "nUp": 2]))
    #expect(first == second)
  }

  @Test("ID cards: count × the two-sided price, plus files")
  func cards() throws {
    let result = try quote(try usdList(), pages: 1, cards: ["count": 3, "sides": "both"])
    #expect(result.cards?.minor == 1200 && result.total.minor == 1212)
  }
}

@Suite("Pricing properties", .liveHandlesChecked)
struct PropertyTests {
  @Test("duplex never needs more sheets than simplex, nor costs more here", arguments: 1...40)
  func duplex(pages: Int) throws {
    let list = try usdList()
    for nUp in [1, 2, 4, 6, 9, 16] {
      let simplex = try quote(list, pages: pages, ["nUp": nUp]).files[0]
      let duplex = try quote(list, pages: pages, ["nUp": nUp, "duplex": "long-edge"]).files[0]
      #expect(duplex.sheets <= simplex.sheets)
      #expect(duplex.subtotal.minor <= simplex.subtotal.minor)
    }
  }

  @Test("adding pages never lowers the price")
  func monotonic() throws {
    let list = try usdList(["tiers": [["fromImpressions": 20, "percent": -20]]])
    for options: [String: Any] in [[:], ["duplex": "long-edge"], ["nUp": 4], ["color": "auto"]] {
      var previous = 0
      for pages in 1...60 {
        let total = try quote(list, pages: pages, colorPages: [3, 17], options).total.minor
        #expect(total >= previous, "\(options) at \(pages) pages")
        previous = max(previous, total)
      }
    }
  }
}

@Suite("Refused price lists and orders", .liveHandlesChecked)
struct RefusedTests {
  @Test(
    "bad orders are errors naming the file, field and value",
    arguments: [
      (#"{"paper": "A7"}"#, "'order.json': 'files[0].paper' is 'A7'"),
      (#"{"copies": 0}"#, "'files[0].copies' is 0; expected a whole number from 1 to 10000"),
      (#"{"copies": 20000}"#, "'files[0].copies' is 20000"),
      (#"{"nUp": 3}"#, "'files[0].nUp' is 3; expected 1, 2, 4, 6, 9 or 16"),
      (#"{"color": "sepia"}"#, "'files[0].color' is 'sepia'"),
      (#"{"colour": "mono"}"#, "'files[0].colour' is not a known key"),
      (#"{"pages": "5-9"}"#, "pages 5-9 reach outside the document, which has 3 pages"),
      (#"{"pages": "9-"}"#, "pages 9- reach outside the document, which has 3 pages"),
      (#"{"pages": "4-"}"#, "pages 4- reach outside the document, which has 3 pages"),
      (#"{"pages": "1-3,9-"}"#, "pages 1-3,9- reach outside the document, which has 3 pages"),
      (
        #"{"pages": "99999999999999999999-"}"#,
        "pages 99999999999999999999- reach outside the document, which has 3 pages"
      ),
      (#"{"pages": "x"}"#, "'pages' is 'x'"),
      (#"{"pages": "0-"}"#, "'pages' is '0-'; expected ranges like 1-3,5,8-"),
      (#"{"pages": "3-2"}"#, "'pages' is '3-2'; expected ranges like 1-3,5,8-"),
      (
        #"{"extras": ["gold-leaf"]}"#,
        "asks for extra 'gold-leaf'; the store offers bind, punch, staple"
      ),
      (#"{"paper": "Legal"}"#, "needs a price for Legal plain paper"),
    ] as [(String, String)])
  func orders(options: String, message: String) throws {
    do {
      _ = try quote(try usdList(), pages: 3, object(options))
      Issue.record("\(options) must be refused")
    } catch let error as PricingError {
      #expect(error.message.contains(message), "\(error.message)")
    }
  }

  @Test(
    "a range reaching past the last page is pricing.rangeOutsideDocument whatever its shape",
    arguments: ["9", "2-9", "9-", "4-", "1-3,9-", "99999999999999999999999-"])
  func rangesOutside(range: String) throws {
    #expect(throws: PricingError.rangeOutsideDocument(file: "a.pdf", range: range, pages: 3)) {
      try Pricing.selectedPages(range, count: 3, file: "a.pdf")
    }
    #expect(try Pricing.selectedPages("3-", count: 3, file: "a.pdf") == [3])
    #expect(try Pricing.selectedPages("-2", count: 3, file: "a.pdf") == [1, 2])
  }

  @Test(
    "bad price lists are refused naming the field",
    arguments: [
      (#"{"currency": "XYZ"}"#, "pricing.unknownCurrency"),
      (#"{"rates": {"default": {"mono": {"simplex": -5}}}}"#, "pricing.negativePrice"),
      (#"{"paper": {"A4": {"plain": -1}}}"#, "pricing.negativePrice"),
      (#"{"rates": {"A9": {}}}"#, "pricing.invalidField"),
      (#"{"discount": 5}"#, "pricing.unknownKey"),
      (#"{"rates": {"default": {"mono": {"simplex": 1.5}}}}"#, "pricing.invalidField"),
    ] as [(String, String)])
  func lists(changes: String, code: String) {
    do {
      _ = try usdList(object(changes))
      Issue.record("\(changes) must be refused")
    } catch let error as PricingError {
      #expect(error.code == code, "\(error.message)")
      #expect(error.message.hasPrefix("'prices.json'"))
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test("a rate the order needs but the list lacks is an error, not a guess")
  func missingRate() throws {
    let list = try usdList(["rates": ["default": ["mono": ["simplex": 10]]]])
    #expect(
      throws: PricingError.missingRate(
        file: "doc.pdf", paper: "A4", color: "colour", sides: "simplex")
    ) {
      _ = try quote(list, pages: 1, ["color": "color"])
    }
  }
}
