// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint qr`: one code, or one per line of a file, in any format.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR

enum QRCommand {
  /// The options of `imprint qr`.
  enum Key {
    static let eth = OptionKey.flag(
      "eth", "The payload is an Ethereum address (0x + 40 hex digits).")
    static let btc = OptionKey.flag("btc", "The payload is a Bitcoin address (1…, 3…, bc1…).")
    static let request = OptionKey.flag(
      QROption.request.names.flag,
      "Encode an EIP-681 / BIP-21 payment request instead of the bare address.")
    static let amount = OptionKey.text(
      QROption.amount.names.flag, "<number>", "Amount: ether, token units with --token, or BTC.")
    static let token = OptionKey.text(
      QROption.token.names.flag, "<contract>", "ERC-20 token contract: a token transfer request.")
    static let decimals = OptionKey.integer(
      QROption.decimals.names.flag, "<n>", in: QROption.decimalsRange,
      "The token's decimals (default 18).")
    static let chainID = OptionKey.text(
      QROption.chainID.names.flag, "<n>", "EIP-155 chain id (omitted unless given; 1 is mainnet).")
    static let gasLimit = OptionKey.text(
      QROption.gasLimit.names.flag, "<n>", "Suggested gas limit, 21000 to 30000000.")
    static let gasPrice = OptionKey.text(
      QROption.gasPrice.names.flag, "<gwei>", "Suggested gas price in gwei, 1 to 100.")
    static let label = OptionKey.text(
      QROption.label.names.flag, "<text>", "BIP-21 label (Bitcoin).")
    static let message = OptionKey.text(
      QROption.message.names.flag, "<text>", "BIP-21 message (Bitcoin).")
    static let level = OptionKey.choice(
      QROption.level.names.flag, "<L|M|Q|H>", QROption.levels, "Error correction (default M).")
    static let format = OptionKey.choice(
      "format", "<format>", formatNames,
      "png, svg, pdf, eps or text (default: from -o, else text).")
    static let output = OptionKey.file(
      "output", short: "o", "<file>", "Output file, or - for standard output.")
    static let module = OptionKey.integer(
      QROption.module.names.flag, "<px>", in: QROption.moduleRange,
      "Pixels per module in PNG output, 1 to 64 (default 8).")
    static let size = OptionKey.number(
      QROption.size.names.flag, "<mm>", in: QROption.sizeRange,
      "Printed width of the symbol without quiet zone, in millimetres.")
    static let dpi = OptionKey.number(
      QROption.dpi.names.flag, "<n>", in: QROption.dpiRange,
      "Resolution stored in PNGs and used with --size (default 300).")
    static let quietZone = OptionKey.integer(
      QROption.quietZone.names.flag, "<n>", in: QROption.quietZoneRange,
      "Light modules around the symbol, 0 to 16 (default 4).")
    static let foreground = OptionKey.text(
      QROption.foreground.names.flag, "<color>", "Dark-module colour, #RRGGBB (default #000000).")
    static let background = OptionKey.text(
      QROption.background.names.flag, "<color>", "Light-module colour, #RRGGBB (default #FFFFFF).")
    static let allowLowContrast = OptionKey.flag(
      QROption.allowLowContrast.names.flag, "Render colours that fail the contrast check.")
    static let caption = OptionKey.text(
      QROption.caption.names.flag, "<text>", "Text printed under the code, at most 256 characters.")
    static let captionAddress = OptionKey.flag(
      QROption.captionAddress.names.flag, "Print the address under the code, grouped in fours.")
    static let input = OptionKey.file(
      "input", "<file>", "Read one payload per line from a file, or - for standard input.")
    static let outputDir = OptionKey.directory(
      "output-dir", "<dir>", "Folder for the codes made from --input.")
    static let jobs = OptionKey.integer(
      "jobs", short: "j", "<n>", in: 1...256, "Parallel jobs for --input (default: all cores).")
    static let json = OptionKey.flag("json", "Print a JSON report on standard output.")
    static let quiet = OptionKey.flag("quiet", short: "q", "Print no warnings or summary.")
  }

  static let spec = CommandSpec(
    name: "qr",
    abstract: "Make QR codes for text, URLs, wallet addresses and payment requests.",
    discussion: """
      The payload is plain text or a URL unless --eth or --btc says it is an address. Addresses \
      are validated (EIP-55 checksum for mixed-case Ethereum addresses; Base58Check, Bech32 and \
      Bech32m for Bitcoin) and encoded bare unless --request (or an amount, label, etc.) asks \
      for an EIP-681 or BIP-21 payment URI. The format comes from --format or the extension of \
      -o; with no -o the code is drawn on the terminal. With --input, every line of the file is \
      a payload ("NAME<TAB>PAYLOAD" names the output file) and the codes go to --output-dir.
      """,
    arguments: [ArgumentSpec("payload", "The text, URL or address to encode.", optional: true)],
    options: [
      Key.eth, Key.btc, Key.request, Key.amount, Key.token, Key.decimals, Key.chainID,
      Key.gasLimit, Key.gasPrice, Key.label, Key.message, Key.level, Key.format, Key.output,
      Key.module, Key.size, Key.dpi, Key.quietZone, Key.foreground, Key.background,
      Key.allowLowContrast, Key.caption, Key.captionAddress, Key.input, Key.outputDir, Key.jobs,
      Key.json, Key.quiet,
    ]
  ) { arguments, console in
    try await run(arguments, console)
  }

  static func run(_ arguments: ParsedArguments, _ console: Console) async throws -> Int32 {
    let settings = try settings(arguments, console)
    if let input = arguments.value(Key.input) {
      guard arguments.positionals.isEmpty else {
        throw UsageError(message: "give either <payload> or --input, not both")
      }
      guard let folder = arguments.value(Key.outputDir) else {
        throw UsageError(message: "--input needs --output-dir <dir>")
      }
      if arguments.value(Key.output) != nil {
        throw UsageError(message: "--input writes to --output-dir; -o is for a single code")
      }
      let format =
        try arguments.choice(Key.format).flatMap { QRFormat(rawValue: $0) } ?? .png
      let jobs = try arguments.int(Key.jobs) ?? activeProcessorCount
      let items = try await QRList.make(
        input: input, folder: folder, format: format, settings: settings, jobs: jobs)
      return report(items, input: input, folder: folder, arguments: arguments, console: console)
    }
    guard let payloadText = arguments.positionals.first else {
      throw UsageError(message: "missing argument <payload> (or --input <file>)")
    }
    if arguments.value(Key.outputDir) != nil {
      throw UsageError(message: "--output-dir is for --input; use -o for a single code")
    }
    return try single(payloadText, settings: settings, arguments: arguments, console: console)
  }

  static let formatNames = QRFormat.allCases.map(\.rawValue)

  private static func settings(_ arguments: ParsedArguments, _ console: Console) throws
    -> QRSettings
  {
    if arguments.flag(Key.eth) && arguments.flag(Key.btc) {
      throw UsageError(message: "--eth and --btc cannot be combined")
    }
    let kind: QRPayloadKind =
      arguments.flag(Key.eth) ? .ethereum : arguments.flag(Key.btc) ? .bitcoin : .text
    // The library reads the options by their names (`QROption`), as the service does.
    var source = ArgumentSource(arguments)
    let read = try QRSettings.read(kind: kind, from: &source)
    var settings = read.settings
    settings.style.fonts = try DeploymentResources.fonts()
    // The library's rules, worded as flags (the service words them as its keys).
    try settings.validate(moduleGiven: read.moduleGiven, refusing: usageError)
    return settings
  }

  /// The usage error for a combination of flags the settings refuse (`QRSettings.conflict`).
  private static func usageError(_ conflict: QRConflict) -> UsageError {
    switch conflict {
    case .ethereumOnly(let option):
      return UsageError(message: "\(option.flag) applies to Ethereum requests; add --eth")
    case .bitcoinOnly(let option):
      return UsageError(message: "\(option.flag) applies to Bitcoin requests; add --btc")
    case .needsPayment(.captionAddress):
      return UsageError(message: "--caption-address needs --eth or --btc")
    case .needsPayment:
      return UsageError(message: "--request and --amount need --eth or --btc")
    case .decimalsWithoutToken:
      return UsageError(message: "--decimals applies to token requests; add --token <contract>")
    case .captionAndCaptionAddress:
      return UsageError(message: "--caption and --caption-address cannot be combined")
    case .moduleAndSize:
      return UsageError(
        message: "--module and --size cannot be combined; --size sets the module's size")
    }
  }

  /// The JSON report of one code.
  struct Report: Codable, Sendable {
    var schemaVersion = 1
    var line: Int?
    var status: ItemStatus
    var payload: String?
    var output: String?
    var format: String?
    var version: Int?
    var level: String?
    var segmentation: String?
    var modules: Int?
    var pixelWidth: Int?
    var pixelHeight: Int?
    var moduleMillimetres: Double?
    var symbolMillimetres: Double?
    var warnings: [String]?
    var error: ErrorRecord?

    init(line: Int? = nil, payload: QRPayload, facts: QRRenderingFacts, output: String) {
      self.line = line
      status = .ok
      self.payload = payload.text
      self.output = output
      format = facts.format.rawValue
      version = facts.version
      level = facts.level.rawValue
      segmentation = facts.segmentation.rawValue
      modules = facts.modules
      pixelWidth = facts.pixelWidth
      pixelHeight = facts.pixelHeight
      moduleMillimetres = (facts.moduleMillimetres * 1000).rounded() / 1000
      symbolMillimetres = (facts.symbolMillimetres * 1000).rounded() / 1000
      warnings = payload.warnings
    }

    init(_ item: QRListItem) {
      switch item.result {
      case .success(let code):
        self.init(line: item.line, payload: code.payload, facts: code.facts, output: code.output)
      case .failure(let error):
        self.init(line: item.line, error: error)
      }
    }

    init(line: Int, error: any Error) {
      self.line = line
      status = .failed
      self.error = ErrorRecord(error)
    }
  }

  private static func single(
    _ input: String, settings: QRSettings, arguments: ParsedArguments, console: Console
  ) throws -> Int32 {
    let output = arguments.value(Key.output)
    let toStdout = output == nil || output == "-"
    let format: QRFormat
    if let name = try arguments.choice(Key.format) {
      format = QRFormat(rawValue: name) ?? .png
    } else if let output, output != "-" {
      guard let inferred = QRFormat(pathExtension: output) else {
        throw QRError.unknownFormat((output as NSString).pathExtension)
      }
      format = inferred
    } else {
      format = .text
    }
    if toStdout && arguments.flag(Key.json) {
      throw UsageError(message: "--json prints the report on standard output; give -o <file>")
    }
    if toStdout && format.isBinary && console.stdout.isTerminal {
      throw UsageError(
        message: "refusing to write binary \(format.rawValue.uppercased()) data to a terminal; "
          + "give -o <file> or redirect standard output")
    }
    var settings = settings
    if toStdout && format == .text {
      settings.style.ansiColors = console.colorAllowed(on: console.stdout)
    }
    let (payload, rendering) = try settings.make(input, format: format, source: "the payload")
    if !arguments.flag(Key.quiet) { payload.warnings.forEach(console.warn) }
    if let output, output != "-" {
      try AtomicFile.write(rendering.bytes, to: output)
      if arguments.flag(Key.json) {
        console.stdout.write(
          JSONOutput.pretty(
            Report(payload: payload, facts: QRRenderingFacts(rendering), output: output)))
      }
    } else {
      console.stdout.write(rendering.bytes)
    }
    return ImprintCLI.success
  }

  /// Prints the errors, warnings, JSON report and summary of a `--input` run; returns the exit
  /// code.
  private static func report(
    _ items: [QRListItem], input: String, folder: String, arguments: ParsedArguments,
    console: Console
  ) -> Int32 {
    let sourceName = QRList.sourceName(input)
    let reports = items.map(Report.init)
    let quiet = arguments.flag(Key.quiet)
    var failed = 0
    // Each distinct hint once, after the errors (a full disk fails every line alike).
    var hints: [String] = []
    for report in reports {
      if let error = report.error {
        failed += 1
        // Messages echo payloads and names from the file: escaped, so a line cannot drive the
        // terminal.
        console.stderr.write(
          SafeText.escaped("error: \(sourceName) line \(report.line ?? 0): \(error.message)")
            + "\n")
        console.reportCauses(error)
        if let hint = error.hint, !hints.contains(hint) { hints.append(hint) }
      } else if !quiet {
        for warning in report.warnings ?? [] {
          console.warn("\(sourceName) line \(report.line ?? 0): \(warning)")
        }
      }
    }
    for hint in hints { console.stderr.write("hint: " + SafeText.escaped(hint) + "\n") }
    if arguments.flag(Key.json) {
      struct Document: Codable {
        var schemaVersion = 1
        var results: [Report]
        var summary: [String: Int]
      }
      console.stdout.write(
        JSONOutput.pretty(
          Document(
            results: reports,
            summary: ["total": reports.count, "ok": reports.count - failed, "failed": failed])))
    }
    if !quiet {
      console.stderr.write(
        "qr: \(reports.count - failed) of \(reports.count) codes written to "
          + SafeText.escaped(folder) + (failed > 0 ? "; \(failed) failed\n" : "\n"))
    }
    return failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }
}
