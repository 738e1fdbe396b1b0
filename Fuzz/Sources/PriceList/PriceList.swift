// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a store's price list (`PriceList.parse`), then a fixed order quoted with it, so the
// parsed rates, tiers, adjustments, tax and rounding rules are all used in exact arithmetic.

import FuzzSupport
import ImprintPricing

let order = try? Order.parse(
  Array(
    """
    {"schemaVersion": 1, "files": [
      {"path": "a.pdf", "copies": 2, "duplex": "long-edge", "extras": ["staple"]},
      {"path": "b.pdf", "copies": 30, "color": "mono", "pages": "2-5,7-"},
      {"path": "c.jpg", "paper": "A3", "paperType": "plain", "color": "color", "nUp": 2}],
     "cards": {"count": 3, "sides": "front"}}
    """.utf8), source: "order.json")
let facts: [String: PageFacts] = [
  "a.pdf": PageFacts(pages: 12, colorPages: [1, 5], blankPages: [12]),
  "b.pdf": PageFacts(pages: 9, colorPages: [], blankPages: [3]),
  "c.jpg": PageFacts(pages: 1, colorPages: [1]),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let prices = try? PriceList.parse(bytes(data, size), source: "prices.json"),
    let order
  else { return 0 }
  _ = try? Pricing.quote(order, facts: facts, prices: prices)
  return 0
}

@_cdecl("PriceList_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  precondition(order != nil, "the fixed order does not parse")
  return runFuzzer(argc, argv, fuzzOne)
}
