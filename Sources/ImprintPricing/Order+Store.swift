// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: an order is priced only by the price list of the store it is for.

import ImprintCore

extension Order {
  /// Refuses an order that names another store than the price list's.
  ///
  /// An order sent to one store and priced with another's list would quote a price no one
  /// offered. The check applies when both name a store; an order or a list without one is
  /// priced as it stands.
  ///
  /// - Parameters:
  ///   - prices: the price list the order is to be priced with.
  ///   - orderSource: the order's name, for the message.
  ///   - pricesSource: the price list's name, for the message.
  /// - Throws: `PricingError.invalidField` on the order's `store`, naming both stores.
  public func checkStore(of prices: PriceList, orderSource: String, pricesSource: String)
    throws(PricingError)
  {
    guard let store, !prices.store.isEmpty, store != prices.store else { return }
    throw .invalidField(
      source: orderSource, field: "store", value: "'\(SafeText.excerpt(store, limit: 100))'",
      expected: "'\(SafeText.excerpt(prices.store, limit: 100))', the store of \(pricesSource)")
  }
}
