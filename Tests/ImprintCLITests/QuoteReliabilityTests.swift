// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint quote` under hostile input: checked money, strict JSON, and order
// files confined to their folder.

import Foundation
import ImprintTestSupport
import Testing

/// A USD price list: `rate` cents per mono simplex impression, paper free, `extra` appended.
private func prices(rate: String, extra: String = "") -> String {
  #"{"schemaVersion":1,"version":"v","currency":"USD","rates":{"default":{"mono":{"simplex":"#
    + rate + #"}}},"paper":{"A4":{"plain":0}}"# + extra + "}"
}

/// A folder with `mixed.pdf` (3 pages), `prices.json` and `order.json`.
private func orderFolder(prices text: String, files: String) throws -> TemporaryFolder {
  let folder = TemporaryFolder()
  try FileManager.default.copyItem(
    atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: folder.file("mixed.pdf"))
  try Data(text.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
  try Data(#"{"schemaVersion":1,"files":[\#(files)]}"#.utf8).write(
    to: URL(fileURLWithPath: folder.file("order.json")))
  return folder
}

@Suite("imprint quote under hostile input", .liveHandlesChecked)
struct QuoteReliabilityTests {
  @Test("four ordinary adjustments: exit 0 and the hand-computed total, USD 105.79")
  func fourAdjustments() throws {
    let folder = try orderFolder(
      prices: prices(
        rate: "400",
        extra: #","adjustments":[{"name":"a","percent":-5.1234},{"name":"b","percent":-2.3457},"#
          + #"{"name":"c","percent":-1.1111},{"name":"d","percent":-3.7777}]"#),
      files: #"{"path":"mixed.pdf","copies":10}"#)
    let run = try measuredImprint(
      ["quote", folder.file("order.json"), "--prices", folder.file("prices.json")], timeout: 60)
    // 3 pages × 10 copies × 400 = 12000 cents; each adjustment rounded half-up when applied:
    // -614.808 → -615 (11385); -267.057945 → -267 (11118); -123.532098 → -124 (10994);
    // -415.320338 → -415 (10579).
    #expect(run.status == 0, "\(run.stderr)")
    let receipt = try runTool(
      imprintBinary, ["quote", folder.file("order.json"), "--prices", folder.file("prices.json")])
    #expect(receipt.stdout.contains("USD -6.15") && receipt.stdout.contains("USD -4.15"))
    let total = receipt.stdout.split(separator: "\n").first { $0.hasPrefix("TOTAL") }
    #expect(total?.hasSuffix("USD 105.79") == true, "\(receipt.stdout)")
  }

  @Test(
    "prices and orders past the limits exit 1 naming the field, never a signal",
    arguments: [
      (prices(rate: "1e308"), #"{"path":"mixed.pdf"}"#, "'rates.default.mono.simplex' is 1e+308"),
      (prices(rate: "99999999999999999999"), #"{"path":"mixed.pdf"}"#, "from 0 to 1000000000000"),
      (prices(rate: "-1e308"), #"{"path":"mixed.pdf"}"#, "mono.simplex"),
      (prices(rate: "10"), #"{"path":"mixed.pdf","copies":1e308}"#, "'files[0].copies' is 1e+308"),
      (prices(rate: "10"), #"{"path":"mixed.pdf","copies":-9223372036854775808}"#, "copies"),
      (
        prices(rate: "1000000000000", extra: #","adjustments":[{"name":"x","percent":1000}]"#),
        Array(repeating: #"{"path":"mixed.pdf","copies":10000}"#, count: 100).joined(
          separator: ","), "adjustment 'x' exceeds 9223372036854775807"
      ),
      (
        prices(rate: "1000000000000"),
        Array(repeating: #"{"path":"mixed.pdf","copies":10000}"#, count: 400).joined(
          separator: ","), "subtotal exceeds"
      ),
    ] as [(String, String, String)])
  func limits(prices text: String, files: String, message: String) throws {
    let folder = try orderFolder(prices: text, files: files)
    let run = try measuredImprint(
      ["quote", folder.file("order.json"), "--prices", folder.file("prices.json")], timeout: 60)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr.contains(message), "\(run.stderr)")
  }

  @Test(
    "order files outside the order's folder are refused before anything is read",
    arguments: [
      "../outside.pdf", "/etc/passwd", "sub/../../outside.pdf", "link/outside.pdf",
      "escape.pdf", "./../outside.pdf",
    ])
  func escapes(path: String) async throws {
    let parent = TemporaryFolder()
    try FileManager.default.copyItem(
      atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: parent.file("outside.pdf"))
    let folder = parent.file("upload")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "..")
    try FileManager.default.createSymbolicLink(
      atPath: folder + "/escape.pdf", withDestinationPath: parent.file("outside.pdf"))
    try Data(prices(rate: "10").utf8).write(to: URL(fileURLWithPath: folder + "/prices.json"))
    // A readable file first: the escaping one refuses the whole order before either is read.
    try FileManager.default.copyItem(
      atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: folder + "/inside.pdf")
    let order = #"{"schemaVersion":1,"files":[{"path":"inside.pdf"},{"path":"\#(path)"}]}"#
    try Data(order.utf8).write(to: URL(fileURLWithPath: folder + "/order.json"))
    let run = await imprint([
      "quote", folder + "/order.json", "--prices", folder + "/prices.json", "--json",
    ])
    #expect(run.code == 1)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.contains("order file '\(path)' leads outside its folder"), "\(run.stderr)")
    #expect(!run.stderr.contains("root:"))
    // The refusal is the path's (escapesFolder), raised while resolving every path before
    // the first file is opened: had a file been read, a PDF error or a quote would show.
    #expect(!run.stderr.contains("page"))
  }

  @Test("--files-root confines to a chosen folder and accepts absolute paths inside it only")
  func filesRoot() async throws {
    let root = TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: root.file("files"), withIntermediateDirectories: false)
    try FileManager.default.copyItem(
      atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: root.file("files/mixed.pdf"))
    let orders = TemporaryFolder()
    try Data(prices(rate: "10").utf8).write(to: URL(fileURLWithPath: orders.file("prices.json")))
    func quote(_ path: String, root filesRoot: String?) async throws -> (Int32, String) {
      try Data(#"{"schemaVersion":1,"files":[{"path":"\#(path)"}]}"#.utf8).write(
        to: URL(fileURLWithPath: orders.file("order.json")))
      let run = await imprint(
        ["quote", orders.file("order.json"), "--prices", orders.file("prices.json"), "--json"]
          + (filesRoot.map { ["--files-root", $0] } ?? []))
      return (run.code, run.stderr)
    }
    #expect(try await quote("files/mixed.pdf", root: root.path).0 == 0)
    #expect(try await quote(root.file("files/mixed.pdf"), root: root.path).0 == 0)
    #expect(try await quote(root.file("files/mixed.pdf"), root: root.file("files")).0 == 0)
    let absoluteWithoutRoot = try await quote(root.file("files/mixed.pdf"), root: nil)
    #expect(absoluteWithoutRoot.0 == 1 && absoluteWithoutRoot.1.contains("leads outside"))
    let outsideRoot = try await quote("/etc/passwd", root: root.path)
    #expect(outsideRoot.0 == 1 && outsideRoot.1.contains("order file '/etc/passwd' leads outside"))
    let climbing = try await quote(root.file("files/../files/mixed.pdf"), root: root.path)
    #expect(climbing.0 == 1 && climbing.1.contains("leads outside"))
  }

  @Test(
    "strict JSON in orders and price lists: duplicate keys, 1e400, NaN, bad UTF-8, with place",
    arguments: [
      (
        #"{"schemaVersion":1,"files":[{"path":"mixed.pdf","copies":1,"copies":10000}]}"#, "'copies'"
      ),
      (#"{"schemaVersion":1,"files":[{"path":"mixed.pdf","copies":1e400}]}"#, "line 1"),
      (#"{"schemaVersion":1,"files":[{"path":"mixed.pdf","copies":NaN}]}"#, "line 1"),
      (
        "{\"schemaVersion\":1,\n  \"files\":[{\"path\":\"mixed.pdf\"}],\n  \"message\":\"\u{FF}\"}",
        "line 3"
      ),
    ] as [(String, String)])
  func strictJSON(order: String, place: String) async throws {
    let folder = try orderFolder(prices: prices(rate: "10"), files: #"{"path":"mixed.pdf"}"#)
    var bytes = Array(order.utf8)
    if let index = bytes.firstIndex(of: 0xC3) {
      bytes.replaceSubrange(index...index + 1, with: [0xFF])
    }
    try Data(bytes).write(to: URL(fileURLWithPath: folder.file("order.json")))
    let run = await imprint([
      "quote", folder.file("order.json"), "--prices", folder.file("prices.json"),
    ])
    #expect(run.code == 1)
    #expect(run.stdout.isEmpty)
    #expect(
      run.stderr.contains(folder.file("order.json")) && run.stderr.contains(place), "\(run.stderr)")
    #expect(!run.stderr.contains("not in the correct format"))
    // The same duplicate in the price list.
    try Data(prices(rate: "10", extra: #","roundTo":1,"roundTo":10"#).utf8).write(
      to: URL(fileURLWithPath: folder.file("prices.json")))
    let list = await imprint([
      "quote", folder.file("order.json"), "--prices", folder.file("prices.json"),
    ])
    #expect(list.code == 1 && list.stderr.contains("'roundTo'"), "\(list.stderr)")
  }

  @Test("names from the order are escaped on the receipt and cut in errors")
  func echoedInput() async throws {
    let folder = try orderFolder(prices: prices(rate: "10"), files: #"{"path":"mixed.pdf"}"#)
    let odd = "odd\u{1B}]0;title\u{07}.pdf"
    try FileManager.default.copyItem(atPath: folder.file("mixed.pdf"), toPath: folder.file(odd))
    let order: [String: Any] = [
      "schemaVersion": 1, "files": [["path": odd]], "message": "\u{1B}[2Jcleared",
    ]
    try JSONSerialization.data(withJSONObject: order).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    let run = await imprint([
      "quote", folder.file("order.json"), "--prices", folder.file("prices.json"),
    ])
    #expect(run.code == 0, "\(run.stderr)")
    #expect(!run.stdout.contains("\u{1B}") && !run.stdout.contains("\u{07}"))
    #expect(run.stdout.contains("odd\\u{1B}]0;title\\u{7}.pdf"), "\(run.stdout)")
    #expect(run.stdout.contains("message to the store: \\u{1B}[2Jcleared"))
    // A megabyte-long extra name and key are cut in the error.
    for file in [
      ["path": "mixed.pdf", "extras": [String(repeating: "x", count: 1_000_000)]],
      ["path": "mixed.pdf", String(repeating: "k", count: 1_000_000): 1],
    ] as [[String: Any]] {
      try JSONSerialization.data(withJSONObject: ["schemaVersion": 1, "files": [file]]).write(
        to: URL(fileURLWithPath: folder.file("order.json")))
      let bad = await imprint([
        "quote", folder.file("order.json"), "--prices", folder.file("prices.json"),
      ])
      #expect(bad.code == 1)
      #expect(bad.stderr.count < 2000 && bad.stderr.contains("…"), "\(bad.stderr.prefix(300))")
    }
  }
}
