// SPDX-License-Identifier: Apache-2.0
// ImprintPricingTests: order and price-list fields read by Core's JSONObjectReader keep pricing's
// codes and wording ("'<file>': '<field>' is <found>; expected <what>").

import Foundation
import ImprintPricing
import ImprintTestSupport
import Testing

@Suite("Pricing fields", .liveHandlesChecked)
struct PricingFieldTests {
  @Test(
    "an order field of the wrong type, or unknown, names the file, field, value and expectation",
    arguments: [
      (#"[1]"#, "pricing.invalidField", "'(top level)' is an array; expected an object"),
      (
        #"{"schemaVersion": "1"}"#, "pricing.invalidField",
        "'schemaVersion' is '1'; expected a whole number"
      ),
      (
        #"{"schemaVersion": 1, "files": "a.pdf"}"#, "pricing.invalidField",
        "'files' is 'a.pdf'; expected an array"
      ),
      (
        #"{"schemaVersion": 1, "files": [5]}"#, "pricing.invalidField",
        "'files[0]' is 5; expected an object"
      ),
      (
        #"{"schemaVersion": 1, "files": [{"path": 5}]}"#, "pricing.invalidField",
        "'files[0].path' is 5; expected a string"
      ),
      (
        #"{"schemaVersion": 1, "files": [{"path": "a.pdf", "copies": true}]}"#,
        "pricing.invalidField",
        "'files[0].copies' is true; expected a whole number"
      ),
      (
        #"{"schemaVersion": 1, "files": [{"path": "a.pdf", "duplex": false}]}"#,
        "pricing.invalidField",
        "'files[0].duplex' is false; expected a string"
      ),
      (
        #"{"schemaVersion": 1, "cards": []}"#, "pricing.invalidField",
        "'cards' is an array; expected an object"
      ),
      (
        #"{"schemaVersion": 1, "files": [{"path": "a.pdf"}], "extra": 1}"#, "pricing.unknownKey",
        "'extra' is not a known key"
      ),
    ])
  func orders(json: String, code: String, message: String) {
    do {
      _ = try Order.parse(Array(json.utf8), source: "order.json")
      Issue.record("\(json) must be refused")
    } catch {
      #expect(error.code == code)
      #expect(error.message == "'order.json': " + message)
    }
  }

  @Test(
    "a price-list field of the wrong type names the field in pricing's words",
    arguments: [
      (#"{"percent": "5%"}"#, "'tax.percent' is '5%'; expected a percentage"),
      (#"{"percent": 5, "included": "yes"}"#, "'tax.included' is 'yes'; expected true or false"),
      (#"{"percent": 5, "rate": 1}"#, "'tax.rate' is not a known key"),
    ])
  func priceLists(tax: String, message: String) throws {
    let tax = try #require(
      try JSONSerialization.jsonObject(with: Data(tax.utf8)) as? [String: Any])
    do {
      _ = try usdList(["tax": tax])
      Issue.record("\(tax) must be refused")
    } catch let error as PricingError {
      #expect(error.message == "'prices.json': " + message)
    }
  }
}
