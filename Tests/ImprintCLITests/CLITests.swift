// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the `imprint` command in-process (exit codes, streams, messages) and end to end.

import Foundation
import ImprintCLI
import ImprintTestSupport
import Testing

/// What one in-process run of `imprint` printed and returned.
struct Run {
  let code: Int32
  let stdout: String
  let stdoutBytes: [UInt8]
  let stderr: String
}

func imprint(_ arguments: [String], stdoutIsTerminal: Bool = false) async -> Run {
  let out = CapturedStream(isTerminal: stdoutIsTerminal)
  let err = CapturedStream()
  let code = await ImprintCLI.run(
    arguments, console: Console(stdout: out, stderr: err, environment: [:]))
  return Run(code: code, stdout: out.text, stdoutBytes: out.bytes, stderr: err.text)
}

let address = "0x52908400098527886E0F7030069857D2E4169EE7"

@Suite("CLI conventions", .liveHandlesChecked)
struct ConventionTests {
  @Test("--version, root help and help for every command")
  func help() async {
    let version = await imprint(["--version"])
    #expect(version.code == 0 && version.stdout == "imprint \(ImprintCLI.version)\n")
    let root = await imprint(["--help"])
    #expect(root.code == 0)
    #expect(root.stdout.hasPrefix("OVERVIEW: "))
    #expect(root.stdout.contains("SUBCOMMANDS:\n") && root.stdout.contains("  qr "))
    for command in ["qr", "demo", "help"] {
      let viaFlag = await imprint([command, "--help"])
      let viaHelp = await imprint(["help", command])
      #expect(viaFlag.code == 0 && viaFlag.stderr.isEmpty)
      #expect(viaFlag.stdout == viaHelp.stdout)
      #expect(viaFlag.stdout.contains("USAGE: imprint \(command)"))
      #expect(viaFlag.stdout.hasSuffix("See 'imprint help <command>' for detailed help.\n"))
    }
  }

  @Test("an unknown option is a usage error with a suggestion")
  func unknownOption() async {
    let run = await imprint(["qr", "--levle", "H", "x"])
    #expect(run.code == 2)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.hasPrefix("error: unknown option '--levle'. Did you mean '--level'?\n"))
    #expect(run.stderr.contains("usage: imprint qr [<options>] [<payload>]"))
    #expect(run.stderr.contains("See 'imprint qr --help' for more information."))
  }

  @Test("an unknown command suggests the closest one")
  func unknownCommand() async {
    let run = await imprint(["qrr", "x"])
    #expect(run.code == 2)
    #expect(run.stderr.hasPrefix("error: unknown command 'qrr'. Did you mean 'qr'?"))
    let help = await imprint(["help", "dmeo"])
    #expect(help.code == 2 && help.stderr.contains("Did you mean 'demo'?"))
  }

  @Test(
    "malformed values are usage errors naming the option",
    arguments: [
      (["qr", "--level", "X", "a"], "option '--level' expects one of L, M, Q, H; got 'X'"),
      (["qr", "--module", "0", "a"], "option '--module' expects an integer from 1 to 64; got '0'"),
      (["qr", "--size", "abc", "a"], "option '--size' expects a number from 5 to 1000; got 'abc'"),
      (["qr", "--foreground", "blue-ish", "a"], "option '--foreground' expects a colour"),
      (
        ["qr", "--format", "jpg", "a"], "option '--format' expects one of png, svg, pdf, eps, text"
      ),
      (["qr", "-o"], "option '--output' needs a value"),
      (["qr", "--eth", "--btc", "a"], "--eth and --btc cannot be combined"),
      (["qr", "--amount", "1", "a"], "--request and --amount need --eth or --btc"),
      (["qr", "--btc", "--gas-price", "5", "a"], "--gas-price applies to Ethereum requests"),
      (["qr", "--eth", "--label", "x", "a"], "--label applies to Bitcoin requests; add --btc"),
      (["qr", "--chain-id", "1", "a"], "--chain-id applies to Ethereum requests; add --eth"),
      (["qr", "--eth", "--decimals", "6", "a"], "--decimals applies to token requests"),
      (["qr", "--caption-address", "a"], "--caption-address needs --eth or --btc"),
      (
        ["qr", "--btc", "--caption", "x", "--caption-address", "a"],
        "--caption and --caption-address cannot be combined"
      ),
      (["qr", "--json", "a"], "--json prints the report on standard output; give -o <file>"),
      (["qr"], "missing argument <payload>"),
      (["qr", "--eth", "--amount", "1e18", address], "--amount '1e18' is not valid"),
    ])
  func usageErrors(arguments: [String], message: String) async {
    let run = await imprint(arguments)
    #expect(run.code == 2)
    #expect(run.stderr.contains(message), "stderr: \(run.stderr)")
  }
}

@Suite("imprint qr", .liveHandlesChecked)
struct QRCommandTests {
  @Test("writes a PNG that zbarimg decodes, and reports it as JSON")
  func png() async throws {
    let folder = TemporaryFolder()
    let output = folder.file("a.png")
    let run = await imprint(["qr", "--eth", address.lowercased(), "-o", output, "--json"])
    #expect(run.code == 0, "stderr: \(run.stderr)")
    #expect(try zbarDecode(output) == address)
    let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    #expect(json?["schemaVersion"] as? Int == 1)
    #expect(json?["payload"] as? String == address)
    #expect(json?["version"] as? Int == 3)
    #expect(json?["pixelWidth"] as? Int == 296)
    #expect(folder.contents() == ["a.png"])
  }

  @Test("infers the format from -o's extension", arguments: ["svg", "pdf", "eps", "txt"])
  func formats(ext: String) async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "qr", "https://steemit.com/@harbor-lamp", "-o", folder.file("q.\(ext)"),
    ])
    #expect(run.code == 0)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.file("q.\(ext)")))
    let head = String(decoding: bytes.prefix(20), as: UTF8.self)
    switch ext {
    case "svg": #expect(head.hasPrefix("<?xml"))
    case "pdf": #expect(head.hasPrefix("%PDF-1.5"))
    case "eps": #expect(head.hasPrefix("%!PS-Adobe-3.0 EPSF"))
    default: #expect(String(decoding: bytes, as: UTF8.self).contains("\u{2588}"))
    }
  }

  @Test("with no -o, a terminal gets half blocks in forced black-on-white")
  func terminal() async {
    let run = await imprint(["qr", "hello"], stdoutIsTerminal: true)
    #expect(run.code == 0)
    #expect(run.stdout.contains("\u{1B}[38;5;16;48;5;231m"))
    #expect(run.stdout.contains("\u{2580}") || run.stdout.contains("\u{2584}"))
  }

  @Test("-o - writes PNG bytes to a pipe but refuses a terminal")
  func stdoutBinary() async {
    let piped = await imprint(["qr", "hello", "-o", "-", "--format", "png"])
    #expect(piped.code == 0)
    #expect(piped.stdoutBytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    let tty = await imprint(["qr", "hello", "-o", "-", "--format", "png"], stdoutIsTerminal: true)
    #expect(tty.code == 2)
    #expect(tty.stdout.isEmpty && tty.stderr.contains("refusing to write binary PNG"))
  }

  @Test(
    "bad input: exit 1, one error line naming the input, no file left",
    arguments: [
      (
        ["--eth", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"], "eth.badChecksum",
        "EIP-55 checksum"
      ),
      (["--eth", "0x1234"], "eth.invalidAddress", "has 4 hex digits after 0x; 40 expected"),
      (
        ["--eth", "0xZZ08400098527886E0F7030069857D2E4169EE7"], "eth.invalidAddress",
        "'Z' at position 3"
      ),
      (
        ["--btc", "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"], "btc.invalidAddress",
        "Base58Check checksum"
      ),
      ([""], "qr.emptyPayload", "the payload is empty"),
      (
        [String(repeating: "x", count: 1300), "--level", "H"], "qr.payloadTooLarge",
        "the maximum at error-correction level H is 1273"
      ),
      (
        ["--eth", "--request", "--gas-price", "101", address], "qr.invalidAmount",
        "--gas-price '101' is not valid; expected a price from 1 to 100 gwei"
      ),
      (
        ["x", "--foreground", "#FFFFFF", "--background", "#000000"], "qr.invertedColors", "lighter"
      ),
    ])
  func badInput(arguments: [String], code: String, message: String) async {
    let folder = TemporaryFolder()
    let run = await imprint(["qr"] + arguments + ["-o", folder.file("out.png")])
    let usage = code == "qr.invalidAmount"
    #expect(run.code == (usage ? 2 : 1), "stderr: \(run.stderr)")
    #expect(run.stderr.contains(message), "stderr: \(run.stderr)")
    #expect(run.stderr.hasPrefix("error: "))
    #expect(folder.contents().isEmpty)
  }

  @Test("an unknown extension, an existing directory and a missing folder are errors")
  func badOutputs() async {
    let folder = TemporaryFolder()
    let unknown = await imprint(["qr", "x", "-o", folder.file("x.gif")])
    #expect(unknown.code == 1 && unknown.stderr.contains("unknown output format 'gif'"))
    let directory = await imprint(["qr", "x", "-o", folder.path, "--format", "png"])
    #expect(directory.code == 1 && directory.stderr.contains("is a directory"))
    let missing = await imprint(["qr", "x", "-o", folder.file("no/such/x.png")])
    #expect(missing.code == 1 && missing.stderr.contains("does not exist"))
    #expect(folder.contents().isEmpty)
  }

  @Test("bulk: every good line is written, bad lines are reported by number, exit 1")
  func bulk() async throws {
    let folder = TemporaryFolder()
    let input = folder.file("in.txt")
    var bytes = Array(
      "alice\t\(address)\n0xBAD\n\n0x8617E340B3D01FA5F11F306F4090FD50E238070D\n".utf8)
    bytes += [0xFF, 0xFE, 0x0A]  // line 5 is not UTF-8
    bytes += Array("bob/../x\t0xde709f2102306220921060314715629080e2fb77".utf8)
    try Data(bytes).write(to: URL(fileURLWithPath: input))
    let out = folder.file("codes")
    let run = await imprint([
      "qr", "--eth", "--input", input, "--output-dir", out, "--json", "-j", "2",
    ])
    #expect(run.code == 1)
    #expect(run.stderr.contains("error: \(input) line 2: ethereum address '0xBAD'"))
    #expect(run.stderr.contains("error: \(input) line 5: '\(input)' line 5 is not valid UTF-8"))
    #expect(run.stderr.contains("qr: 3 of 5 codes written"))
    let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
    #expect(files == ["000004.png", "alice.png", "bob_.._x.png"])
    #expect(try zbarDecode(out + "/alice.png") == address)
    #expect(try zbarDecode(out + "/000004.png") == "0x8617E340B3D01FA5F11F306F4090FD50E238070D")
    let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    let results = json?["results"] as? [[String: Any]]
    #expect(results?.map { $0["line"] as? Int } == [1, 2, 4, 5, 6])
    #expect(results?.map { $0["status"] as? String } == ["ok", "failed", "ok", "failed", "ok"])
    #expect((results?[1]["error"] as? [String: Any])?["code"] as? String == "eth.invalidAddress")
  }

  @Test("bulk checks payment options once, before any line: exit 2 and no files")
  func bulkOptions() async throws {
    let folder = TemporaryFolder()
    let input = folder.file("in.txt")
    try Data("\(address)\n\(address)\n".utf8).write(to: URL(fileURLWithPath: input))
    let run = await imprint([
      "qr", "--eth", "--gas-price", "101", "--input", input, "--output-dir", folder.file("out"),
    ])
    #expect(run.code == 2)
    #expect(run.stderr.components(separatedBy: "error:").count == 2)
    #expect(folder.contents() == ["in.txt"])
  }

  @Test("bulk reads standard input when --input is -, and refuses a missing file")
  func bulkErrors() async {
    let folder = TemporaryFolder()
    let missing = await imprint([
      "qr", "--input", folder.file("nope.txt"), "--output-dir", folder.path,
    ])
    #expect(missing.code == 1 && missing.stderr.contains("nope.txt' does not exist"))
    let noDir = await imprint(["qr", "--input", folder.file("nope.txt")])
    #expect(noDir.code == 2 && noDir.stderr.contains("--input needs --output-dir"))
  }
}

@Suite("End to end with the built binary", .liveHandlesChecked)
struct EndToEndTests {
  static let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path

  @Test("imprint qr from stdin lines, and imprint demo, leak no C handles")
  func binary() throws {
    let folder = TemporaryFolder()
    let input = "one\thttps://example.org/1\ntwo\thttps://example.org/2\n"
    let process = try runTool(
      "/usr/bin/env",
      [
        "IMPRINT_DEBUG_HANDLES=1", Self.binary, "qr", "--input", "-", "--output-dir", folder.path,
        "--format", "svg",
      ],
      stdin: Array(input.utf8))
    #expect(process.status == 0, "\(process.stderr)")
    #expect(try zbarDecode(rasteriseSVG(folder.file("two.svg"))) == "https://example.org/2")
    #expect(process.stderr.contains("live handles: 0"))
    let demo = try runTool(
      "/usr/bin/env", ["IMPRINT_DEBUG_HANDLES=1", Self.binary, "demo", "-o", folder.file("demo")])
    #expect(demo.status == 0, "\(demo.stderr)")
    #expect(demo.stderr.contains("live handles: 0"))
    #expect(try zbarDecode(folder.file("demo/qr/wallet-address.png")) == address)
    #expect(
      try zbarDecode(rasterisePDF(folder.file("demo/qr/payment-request.pdf")))?.hasPrefix(
        "ethereum:") == true)
  }
}

@Suite("Help text goldens", .tags(.golden), .liveHandlesChecked)
struct HelpGoldenTests {
  @Test(
    "help for every command matches its golden",
    arguments: ["qr", "card", "inspect", "thumb", "quote", "prepare", "batch", "serve", "demo"])
  func help(command: String) async {
    let run = await imprint([command, "--help"])
    let mismatch = goldenMismatch(
      run.stdout, module: "ImprintCLITests", name: "Help/\(command).txt")
    #expect(mismatch == nil, "\(mismatch ?? "")")
  }
}

extension Tag {
  @Tag static var golden: Self
}
