// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: a batch QR job takes the library path `imprint qr` takes (QRSettings.make):
// the same bytes for the same payload, type and format, read back by zbarimg; an unknown
// payloadType or format fails its line alone.

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint batch: QR jobs made as imprint qr makes them", .liveHandlesChecked)
struct BatchQRCLITests {
  /// A payload type as a manifest names it, the `imprint qr` flag that means the same, the
  /// payload, the format and the text a reader must decode.
  struct Case: Sendable, CustomStringConvertible {
    var payloadType: String?
    var flags: [String]
    var payload: String
    var format: String
    var decoded: String
    var description: String { "\(payloadType ?? "none") \(format)" }
  }

  static let cases = [
    Case(
      payloadType: nil, flags: [], payload: "https://steemit.com/@harbor-lamp", format: "png",
      decoded: "https://steemit.com/@harbor-lamp"),
    Case(
      payloadType: "text", flags: [], payload: "HELLO WORLD 12345", format: "svg",
      decoded: "HELLO WORLD 12345"),
    // A lower-case address is encoded in its EIP-55 checksummed form.
    Case(
      payloadType: "eth", flags: ["--eth"], payload: "0x52908400098527886e0f7030069857d2e4169ee7",
      format: "png", decoded: "0x52908400098527886E0F7030069857D2E4169EE7"),
    Case(
      payloadType: "eth", flags: ["--eth"], payload: "0xde709f2102306220921060314715629080e2fb77",
      format: "pdf", decoded: "0xde709f2102306220921060314715629080e2fb77"),
    Case(
      payloadType: "btc", flags: ["--btc"], payload: "bc1qvyq0cc6rahyvsazfdje0twl7ez82ndmuac2lhv",
      format: "png", decoded: "bc1qvyq0cc6rahyvsazfdje0twl7ez82ndmuac2lhv"),
    Case(
      payloadType: "btc", flags: ["--btc"], payload: "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
      format: "eps", decoded: "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"),
  ]

  @Test(
    "a batch QR job's file is byte for byte what imprint qr writes, and zbarimg reads it",
    arguments: cases)
  func sameBytes(_ item: Case) async throws {
    let folder = TemporaryFolder()
    var line = #"{"id":"code","kind":"qr","payload":"\#(item.payload)","format":"\#(item.format)""#
    if let type = item.payloadType { line += #","payloadType":"\#(type)""# }
    try Data((line + "}\n").utf8).write(to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let batch = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(batch.code == 0, "\(batch.stderr)")
    let single = folder.file("single.\(item.format)")
    let qr = await imprint(["qr"] + item.flags + [item.payload, "-o", single, "-q"])
    #expect(qr.code == 0, "\(qr.stderr)")
    let made = folder.file("out/qr/code.\(item.format)")
    let batchBytes = try Data(contentsOf: URL(fileURLWithPath: made))
    #expect(!batchBytes.isEmpty)
    #expect(batchBytes == (try Data(contentsOf: URL(fileURLWithPath: single))))
    let image: String =
      switch item.format {
      case "svg": try rasteriseSVG(made)
      case "pdf": try rasterisePDF(made)
      case "eps": try rasteriseEPS(made)
      default: made
      }
    #expect(try zbarDecode(image) == item.decoded)
  }

  @Test("an unknown payloadType or format fails its line alone, naming what is accepted; exit 1")
  func unknownChoices() async throws {
    let folder = TemporaryFolder()
    let lines = [
      #"{"id":"first","kind":"qr","payload":"one"}"#,
      #"{"id":"type","kind":"qr","payload":"0x52908400098527886e0f7030069857d2e4169ee7","payloadType":"ethereum"}"#,
      #"{"id":"format","kind":"qr","payload":"two","format":"gif"}"#,
      #"{"id":"thumb","kind":"thumb","file":"a.pdf","format":"tiff"}"#,
      #"{"id":"last","kind":"qr","payload":"0x52908400098527886e0f7030069857d2e4169ee7","payloadType":"eth"}"#,
    ]
    try Data(lines.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1, "\(run.stderr)")
    let results = try results(folder.file("out/results.jsonl"))
    #expect(results.map { $0["status"] as? String } == ["ok", "failed", "failed", "failed", "ok"])
    let errors = results.map { $0["error"] as? [String: Any] }
    #expect(
      errors.map { $0?["code"] as? String } == [nil] + Array(repeating: "batch.badLine", count: 3)
        + [nil])
    let messages = errors.map { $0?["message"] as? String ?? "" }
    #expect(
      messages[1].hasSuffix(
        "item 'type' (line 2): 'payloadType' is 'ethereum'; expected text, eth or btc"),
      "\(messages[1])")
    #expect(
      messages[2].hasSuffix(
        "item 'format' (line 3): 'format' is 'gif'; expected png, svg, pdf, eps or text"),
      "\(messages[2])")
    #expect(
      messages[3].hasSuffix("item 'thumb' (line 4): 'format' is 'tiff'; expected png or jpeg"),
      "\(messages[3])")
    let made = try FileManager.default.contentsOfDirectory(atPath: folder.file("out/qr")).sorted()
    #expect(made == ["first.png", "last.png"])
    #expect(
      try zbarDecode(folder.file("out/qr/last.png")) == "0x52908400098527886E0F7030069857D2E4169EE7"
    )
  }
}
