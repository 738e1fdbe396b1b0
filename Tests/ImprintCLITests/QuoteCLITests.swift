// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint quote` over real files, checked against the hand computation.

import Foundation
import ImprintCLI
import ImprintTestSupport
import Testing

@Suite("imprint quote", .liveHandlesChecked)
struct QuoteCLITests {
  static let examples = repositoryRoot + "/examples/"

  @Test("the sample order: every line as computed by hand, total KRW 6,880")
  func sample() async throws {
    let run = await imprint([
      "quote", Self.examples + "order-booster.json", "--prices",
      Self.examples + "prices-booster.json",
      "--json",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    let quote = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    let files = quote?["files"] as? [[String: Any]]
    // course-notes: duplex mono 40 + colour 250 + blank odd last (paper only) = 290 a copy.
    #expect((files?[0]["impressionCharge"] as? [String: Any])?["minor"] as? Int == 580)
    #expect(files?[0]["sheets"] as? Int == 2 && files?[0]["colorImpressions"] as? Int == 1)
    #expect((files?[1]["subtotal"] as? [String: Any])?["minor"] as? Int == 1800)
    #expect((quote?["subtotal"] as? [String: Any])?["minor"] as? Int == 7240)
    // -5 % = 6,878; tax included 6,878 × 10 / 110 = 625.3; total to 10 won: 6,880.
    #expect((quote?["tax"] as? [String: Any])?["minor"] as? Int == 625)
    #expect((quote?["total"] as? [String: Any])?["formatted"] as? String == "KRW 6,880")
    #expect(quote?["priceListVersion"] as? String == "2026-11-01")
    #expect(quote?["message"] as? String == "Pick-up after 3 pm, please")
    let receipt = await imprint([
      "quote", Self.examples + "order-booster.json", "--prices",
      Self.examples + "prices-booster.json",
    ])
    #expect(receipt.stdout.contains("TOTAL") && receipt.stdout.contains("KRW 6,880"))
  }

  @Test(
    "bad orders name the file, the field and the value; nothing is priced",
    arguments: [
      (
        #"{"path":"mixed.pdf","pages":"5-9"}"#,
        "pages 5-9 reach outside the document, which has 3 pages"
      ),
      (#"{"path":"mixed.pdf","copies":0}"#, "'files[0].copies' is 0"),
      (#"{"path":"mixed.pdf","paper":"A0"}"#, "'files[0].paper' is 'A0'"),
      (#"{"path":"cycle.pdf"}"#, "has a page tree that loops back on itself"),
      (#"{"path":"missing.pdf"}"#, "missing.pdf' does not exist"),
    ])
  func bad(file: String, message: String) async throws {
    let folder = TemporaryFolder()
    for name in ["mixed.pdf", "cycle.pdf"] {
      try FileManager.default.copyItem(
        atPath: fixturesFolder + "/Documents/" + name, toPath: folder.file(name))
    }
    try Data(#"{"schemaVersion":1,"files":[\#(file)]}"#.utf8).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    let run = await imprint([
      "quote", folder.file("order.json"), "--prices", Self.examples + "prices-usd.json",
    ])
    #expect(run.code == 1)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.contains(message), "\(run.stderr)")
  }

  @Test("an order for another store, and a missing --prices, are refused")
  func store() async {
    let wrong = await imprint([
      "quote", Self.examples + "order-booster.json", "--prices", Self.examples + "prices-usd.json",
    ])
    #expect(wrong.code == 1 && wrong.stderr.contains("'store' is 'BOOSTER Campus Print (Sinchon)'"))
    let missing = await imprint(["quote", Self.examples + "order-booster.json"])
    #expect(missing.code == 2 && missing.stderr.contains("missing --prices"))
  }
}
