// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint demo`: runs every capability on the bundled sample data.

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics
import ImprintQR

enum DemoCommand {
  /// The options of `imprint demo`.
  enum Key {
    static let output = OptionKey.directory(
      "output", short: "o", "<dir>", "Output folder (default: imprint-demo).")
    static let json = OptionKey.flag("json", "Print the list of outputs as JSON.")
  }

  static let spec = CommandSpec(
    name: "demo",
    abstract: "Run Imprint on the bundled sample data and list what it made.",
    discussion: """
      Writes into the output folder: wallet-address QR codes in every format (with the address \
      printed under the code), an EIP-681 payment request, a BIP-21 request, a profile link, one \
      code per line of assets/samples/wallets.txt made in parallel, and ID cards from the sample \
      profiles in every shipped design (PDF, 300-dpi PNG and a share image), and one card in \
      five languages (Korean, Hindi, Arabic, Spanish, Japanese).
      """,
    options: [Key.output, Key.json]
  ) { arguments, console in
    try await run(folder: arguments.value(Key.output) ?? "imprint-demo", arguments, console)
  }

  struct Made: Codable, Sendable {
    var path: String
    var what: String
  }

  static func run(folder: String, _ arguments: ParsedArguments, _ console: Console) async throws
    -> Int32
  {
    // The sample data is the checkout's (assets/samples, examples/), not a library resource;
    // an installed imprint has it in ../share/imprint (the Debian package's /usr/share/imprint).
    guard
      let assets = try ResourceLocator.checkedAssetsDirectory()
        ?? ResourceLocator.checkoutDirectory("assets", marker: "samples")
        ?? ResourceLocator.installedDirectory("assets", marker: "samples")
    else {
      throw FileError.notFound(path: "assets")
    }
    let fonts = try DeploymentResources.fonts()
    let qrFolder = folder + "/qr"
    try FileIO.makeFolder(qrFolder)
    var made: [Made] = []
    let address = "0x52908400098527886E0F7030069857D2E4169EE7"
    var settings = QRSettings(
      kind: .ethereum, payment: PaymentOptions(), style: QRStyle(), captionAddress: true)
    settings.style.fonts = fonts
    for format in [QRFormat.png, .svg, .pdf, .eps] {
      let path = "\(qrFolder)/wallet-address.\(format.rawValue)"
      let (_, rendering) = try settings.make(
        address, format: format, source: "the demo address")
      try AtomicFile.write(rendering.bytes, to: path)
      made.append(Made(path: path, what: "Ethereum address, EIP-55, caption in fours"))
    }
    settings.captionAddress = false
    settings.payment.amount = "0.05"
    settings.payment.gasLimit = "21000"
    settings.payment.gasPrice = "20"
    settings.style.sizeMillimetres = 30
    let requestPath = "\(qrFolder)/payment-request.pdf"
    let (request, requestRendering) = try settings.make(
      address, format: .pdf, source: "the demo request")
    try AtomicFile.write(requestRendering.bytes, to: requestPath)
    made.append(Made(path: requestPath, what: "EIP-681 request, 30 mm: \(request.text)"))

    var bitcoin = QRSettings(
      kind: .bitcoin, payment: PaymentOptions(), style: QRStyle(), captionAddress: false)
    bitcoin.style.fonts = fonts
    bitcoin.payment.amount = "0.0015"
    bitcoin.payment.label = "Campus Print Shop"
    bitcoin.payment.message = "Order 1042"
    let bitcoinPath = "\(qrFolder)/bitcoin-request.svg"
    let (bip21, bitcoinRendering) = try bitcoin.make(
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", format: .svg,
      source: "the demo bitcoin address")
    try AtomicFile.write(bitcoinRendering.bytes, to: bitcoinPath)
    made.append(Made(path: bitcoinPath, what: "BIP-21 request: \(bip21.text)"))

    var link = QRSettings(
      kind: .text, payment: PaymentOptions(), style: QRStyle(), captionAddress: false)
    link.style.fonts = fonts
    link.style.level = .quartile
    link.style.caption = "steemit.com/@harbor-lamp"
    let linkPath = "\(qrFolder)/profile-link.png"
    let (_, linkRendering) = try link.make(
      "https://steemit.com/@harbor-lamp", format: .png, source: "the demo link")
    try AtomicFile.write(linkRendering.bytes, to: linkPath)
    made.append(Made(path: linkPath, what: "profile link, level Q, captioned"))

    let bulkFolder = "\(qrFolder)/wallets"
    let bulkConsole = Console(
      stdout: CapturedStream(), stderr: console.stderr, environment: console.environment)
    let code = await ImprintCLI.run(
      [
        "qr", "--eth", "--quiet", "--input", assets + "/samples/wallets.txt", "--output-dir",
        bulkFolder,
      ],
      console: bulkConsole)
    guard code == ImprintCLI.success else { return code }
    made.append(Made(path: bulkFolder, what: "one PNG per line of assets/samples/wallets.txt"))

    // ID cards: every shipped design, from the bundled sample profiles.
    let cardFolder = folder + "/cards"
    try FileIO.makeFolder(cardFolder)
    let samples = assets + "/samples"
    let designs = CardTemplate.shippedNames(folder: try ResourceLocator.checkedTemplatesDirectory())
    let people: [(profile: String, extra: [String])] = [
      (
        "harbor-lamp",
        [
          "--photo", samples + "/photos/harbor-lamp.jpg", "--follow-counts",
          samples + "/profiles/harbor-lamp.follow.json",
        ]
      ),
      ("sora-park", ["--photo", samples + "/photos/sora-park.png"]),
      ("layla-h", []),
      ("kenji.hive", []),
    ]
    for (index, design) in designs.enumerated() {
      for (offset, person) in people.enumerated()
      where offset % designs.count == index
        || offset == 0
      {
        let output = "\(cardFolder)/\(person.profile)-\(design).pdf"
        let code = await ImprintCLI.run(
          [
            "card", samples + "/profiles/\(person.profile).json", "--template", design, "-o",
            output,
            "--quiet",
          ] + person.extra, console: bulkConsole)
        guard code == ImprintCLI.success else { return code }
        made.append(Made(path: output, what: "ID card, \(design) design, front and back (PDF)"))
      }
    }
    let harbor = people[0]
    for (format, output) in [("png", "harbor-lamp-300dpi.png"), ("share", "harbor-lamp-share.png")]
    {
      let path = "\(cardFolder)/\(output)"
      let code = await ImprintCLI.run(
        ["card", samples + "/profiles/harbor-lamp.json", "--format", format, "-o", path, "--quiet"]
          + harbor.extra, console: bulkConsole)
      guard code == ImprintCLI.success else { return code }
      made.append(
        Made(
          path: path,
          what: format == "png"
            ? "ID card at 300 dpi, one PNG per side (-front, -back)" : "1200 x 630 share image"))
    }

    // One card in five languages, as share images (front and back side by side): Korean,
    // Hindi, Arabic (laid out right-to-left), Spanish, Japanese. Hindi only when the fonts draw
    // Devanagari (the bundled ones do; a deployment's own might not): never boxes.
    let library = try fonts ?? FontLibrary.bundled()
    let devanagari = library.uncoveredCharacters(in: "सदस्य").isEmpty
    for locale in ["ko", "hi", "ar", "es", "ja"] where locale != "hi" || devanagari {
      let path = "\(cardFolder)/harbor-lamp-share-\(locale).png"
      let code = await ImprintCLI.run(
        [
          "card", samples + "/profiles/harbor-lamp.json", "--format", "share", "--locale", locale,
          "-o", path, "--quiet",
        ] + harbor.extra, console: bulkConsole)
      guard code == ImprintCLI.success else { return code }
      let name = Locale(identifier: "en").localizedString(forLanguageCode: locale) ?? locale
      made.append(Made(path: path, what: "share image in \(name) (--locale \(locale))"))
    }

    // Uploaded documents: an inspection report with colour pages, and thumbnails.
    let documentFolder = folder + "/documents"
    try FileIO.makeFolder(documentFolder)
    let uploads = ["course-notes.pdf", "handout.pdf", "poster-photo.jpg"].map {
      samples + "/documents/" + $0
    }
    let report = CapturedStream()
    let inspectCode = await ImprintCLI.run(
      ["inspect", "--colors"] + uploads,
      console: Console(stdout: report, stderr: console.stderr, environment: console.environment))
    guard inspectCode == ImprintCLI.success else { return inspectCode }
    try AtomicFile.write(report.bytes, to: documentFolder + "/inspection.txt")
    made.append(
      Made(path: documentFolder + "/inspection.txt", what: "pages, sizes and colour pages"))
    let thumbCode = await ImprintCLI.run(
      ["thumb", "--pages", "all", "--size", "256", "-o", documentFolder] + uploads,
      console: bulkConsole)
    guard thumbCode == ImprintCLI.success else { return thumbCode }
    made.append(Made(path: documentFolder, what: "256-px thumbnails of every page"))

    // A quote for a sample order at a sample store (examples/).
    let examples = (assets as NSString).deletingLastPathComponent + "/examples"
    let receipt = CapturedStream()
    let quoteCode = await ImprintCLI.run(
      ["quote", examples + "/order-booster.json", "--prices", examples + "/prices-booster.json"],
      console: Console(stdout: receipt, stderr: console.stderr, environment: console.environment))
    guard quoteCode == ImprintCLI.success else { return quoteCode }
    try AtomicFile.write(receipt.bytes, to: documentFolder + "/quote.txt")
    made.append(
      Made(path: documentFolder + "/quote.txt", what: "a quote for examples/order-booster.json"))

    // The same order prepared for print: its auto colour file split into its colour and
    // monochrome sheets, each file with its ticket and a preview of every sheet side.
    let preparedFolder = documentFolder + "/prepared"
    let prepareCode = await ImprintCLI.run(
      [
        "prepare", examples + "/order-booster.json", "--prices", examples + "/prices-booster.json",
        "-o", preparedFolder, "--split-color", "--previews", "--preview-size", "256",
      ],
      console: bulkConsole)
    guard prepareCode == ImprintCLI.success else { return prepareCode }
    made.append(
      Made(
        path: preparedFolder,
        what: "print-ready PDFs and tickets of the order, colour split, 256-px sheet previews"))

    // A small print-shop batch: cards, a code, a thumbnail and a quote, imposed on A4.
    let batchFolder = folder + "/batch"
    let batchCode = await ImprintCLI.run(
      [
        "batch", samples + "/orders.jsonl", "-o", batchFolder, "--layout", "A4",
        "--crop-marks", "--card-files", "-q",
      ],
      console: bulkConsole)
    // The sample manifest holds three bad lines on purpose (exit 1); anything else is a failure.
    guard batchCode == ImprintCLI.failure || batchCode == ImprintCLI.success else {
      return batchCode
    }
    made.append(
      Made(
        path: batchFolder,
        what: "batch of assets/samples/orders.jsonl: cards, A4 sheets, labels, results.jsonl")
    )

    if arguments.flag(Key.json) {
      struct Document: Codable {
        var schemaVersion = 1
        var outputs: [Made]
      }
      console.stdout.write(JSONOutput.pretty(Document(outputs: made)))
    } else {
      for item in made { console.stdout.write("\(item.path)\t\(item.what)\n") }
    }
    return ImprintCLI.success
  }
}
