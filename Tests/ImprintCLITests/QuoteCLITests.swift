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

  @Test("--locale writes the receipt in the locale's words and money; the quote is the same")
  func locale() async throws {
    func receipt(_ extra: [String]) async -> Run {
      await imprint(
        [
          "quote", Self.examples + "order-booster.json", "--prices",
          Self.examples + "prices-booster.json",
        ] + extra)
    }
    let plain = await receipt([])
    let korean = await receipt(["--locale", "ko"])
    #expect(korean.code == 0, "\(korean.stderr)")
    // The same lines, each amount written the Korean way (6,880 won: ₩6,880).
    let lines = korean.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let plainLines = plain.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == plainLines.count)
    for (line, original) in zip(lines, plainLines) {
      guard let range = original.range(of: "KRW ") else { continue }
      // `KRW -362` is `-₩362`.
      let number = original[range.upperBound...]
      let won = number.hasPrefix("-") ? "-₩" + number.dropFirst() : "₩" + number
      #expect(line.hasSuffix(" " + won), "'\(line)', '\(original)'")
    }
    // In Korean words: "합계" takes 4 columns and "₩6,880" 6, so 34 spaces end it at column 44.
    #expect(lines.first == "BOOSTER Campus Print (Sinchon) — 가격표 2026-11-01")
    #expect(lines.contains("합계" + String(repeating: " ", count: 34) + "₩6,880"), "\(korean.stdout)")
    #expect(lines.contains("  인쇄 3면(컬러 1, 빈 면 1), 용지 2매 × 2부"), "\(korean.stdout)")
    #expect(lines.contains("  1페이지 중 1페이지, 면당 1페이지, 단면, A4 plain, 흑백"))
    #expect(lines.last == "" && lines.dropLast().last == "요청 사항: Pick-up after 3 pm, please")
    // Spanish writes the currency after the number, with a no-break space.
    let spanish = await receipt(["--locale", "es"])
    #expect(spanish.stdout.contains("6880\u{A0}KRW"), "\(spanish.stdout)")
    #expect(
      spanish.stdout.contains("\n  1 impresión (0 en color, 0 en blanco) en 1 hoja × 30 copias\n"))
    let unknown = await receipt(["--locale", "xx"])
    #expect(unknown.code == 1 && unknown.stdout.isEmpty)
    #expect(unknown.stderr.hasPrefix("error: locale 'xx' is not a language Imprint has data for"))
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

  @Test("a batch quote job for another store fails as imprint quote does; the others go on")
  func batchStore() async throws {
    let folder = TemporaryFolder()
    try FileManager.default.copyItem(
      atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: folder.file("mixed.pdf"))
    // prices-usd.json is Copy Corner's list.
    try FileManager.default.copyItem(
      atPath: Self.examples + "prices-usd.json", toPath: folder.file("prices.json"))
    for (name, store) in [("right", "Copy Corner"), ("wrong", "Elsewhere Print")] {
      try Data(
        #"{"schemaVersion":1,"store":"\#(store)","files":[{"path":"mixed.pdf"}]}"#.utf8
      ).write(to: URL(fileURLWithPath: folder.file("\(name).json")))
    }
    let manifest = [
      #"{"id":"right","kind":"quote","file":"right.json","prices":"prices.json"}"#,
      #"{"id":"wrong","kind":"quote","file":"wrong.json","prices":"prices.json"}"#,
      #"{"id":"code","kind":"qr","payload":"after the failed quote"}"#,
    ]
    try Data(manifest.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1, "\(run.stderr)")
    let lines = try results(folder.file("out/results.jsonl"))
    #expect(lines.map { $0["status"] as? String } == ["ok", "failed", "ok"])
    let error = lines.count == 3 ? lines[1]["error"] as? [String: Any] : nil
    #expect(error?["code"] as? String == "pricing.invalidField", "\(error ?? [:])")
    #expect(FileManager.default.fileExists(atPath: folder.file("out/quotes/right.json")))
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/quotes/wrong.json")))
    #expect(FileManager.default.fileExists(atPath: folder.file("out/qr/code.png")))
    // The same refusal, word for word, as `imprint quote` gives for that order.
    let quote = await imprint([
      "quote", folder.file("wrong.json"), "--prices", folder.file("prices.json"),
    ])
    #expect(quote.code == 1 && quote.stdout.isEmpty)
    let message = try #require(error?["message"] as? String)
    #expect(quote.stderr == "error: \(message)\n", "\(quote.stderr)")
    #expect(message.contains("'store' is 'Elsewhere Print'; expected 'Copy Corner'"))
  }
}
