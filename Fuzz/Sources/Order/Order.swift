// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a customer's order (`Order.parse`), then quoted against the example price list;
// each file's page facts are derived from its path so that different pages counts, page ranges,
// colour and blank pages are reached.

import Foundation
import FuzzSupport
import ImprintPricing

let prices: PriceList? = {
  guard
    let data = FileManager.default.contents(
      atPath: repositoryRoot + "/examples/prices-booster.json")
  else { return nil }
  return try? PriceList.parse([UInt8](data), source: "prices-booster.json")
}()

/// 1 to 400 pages from the path's bytes; every third page colour, every seventh blank.
func facts(_ path: String) -> PageFacts {
  let pages = 1 + path.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF } % 400
  return PageFacts(
    pages: pages, colorPages: Set(stride(from: 1, through: pages, by: 3)),
    blankPages: Set(stride(from: 7, through: pages, by: 7)))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let order = try? Order.parse(bytes(data, size), source: "order.json"), let prices
  else { return 0 }
  var table: [String: PageFacts] = [:]
  for file in order.files { table[file.path] = facts(file.path) }
  _ = try? Pricing.quote(order, facts: table, prices: prices)
  return 0
}

@_cdecl("Order_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  precondition(prices != nil, "examples/prices-booster.json does not parse")
  return runFuzzer(argc, argv, fuzzOne)
}
