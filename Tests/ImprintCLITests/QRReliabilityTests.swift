// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint qr` under hostile input: raster sizes bounded before allocation,
// EIP-681 amounts within uint256, 10 MB lines, bulk names that cannot escape or collide, and
// escaped failure lines.

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint qr under hostile input", .liveHandlesChecked)
struct QRReliabilityTests {
  @Test(
    "a raster that size × dpi makes too large fails at once, before any allocation",
    arguments: [
      ["--size", "1000", "--dpi", "4800"],
      ["--size", "300", "--dpi", "2400", "--caption", "big"],
      ["--size", "1000", "--dpi", "300"],
    ])
  func rasterBound(options: [String]) throws {
    let folder = TemporaryFolder()
    let run = try measuredImprint(
      ["qr", "https://example.org", "-o", folder.file("big.png")] + options,
      timeout: 20)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr.contains("megapixels, the limit for a raster QR code"), "\(run.stderr)")
    #expect(run.stderr.contains("hint: lower --size, --dpi or --module"))
    if Sanitizer.measuresMemory { #expect(run.peakKiB < 200 * 1024, "peak \(run.peakKiB) KiB") }
    #expect(run.seconds < Sanitizer.seconds(20))
    #expect(folder.contents().isEmpty)
  }

  @Test("the same bound holds in a bulk run: refused once, up front, nothing written")
  func rasterBoundBulk() async throws {
    let folder = TemporaryFolder()
    try Data("a\tone\nb\ttwo\n".utf8).write(to: URL(fileURLWithPath: folder.file("in.txt")))
    let run = await imprint([
      "qr", "--input", folder.file("in.txt"), "--output-dir", folder.file("out"), "--size",
      "1000", "--dpi", "4800",
    ])
    #expect(run.code == 1)
    #expect(run.stderr.components(separatedBy: "megapixels").count == 2, "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/a.png")))
  }

  @Test("vector formats and sizes within the bound still render at their size")
  func withinBound() async throws {
    let folder = TemporaryFolder()
    let vector = await imprint([
      "qr", "https://example.org", "-o", folder.file("big.pdf"), "--size", "1000", "--dpi",
      "4800",
    ])
    #expect(vector.code == 0, "\(vector.stderr)")
    // 100 mm at 600 dpi: about 2362 pixels for the symbol, well within 100 megapixels.
    let raster = await imprint([
      "qr", "https://example.org", "-o", folder.file("ok.png"), "--size", "100", "--dpi", "600",
      "--json",
    ])
    #expect(raster.code == 0, "\(raster.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(raster.stdout.utf8)) as? [String: Any]
    let width = report?["pixelWidth"] as? Int ?? 0
    #expect(width > 2362 && width < 4000)
  }

  @Test(
    "EIP-681 amounts past uint256 (after scaling) and huge chain ids are refused",
    arguments: [
      (["--amount", "115792089237316195423570985008687907853269984665640564039458"], "--amount"),
      (["--amount", String(repeating: "9", count: 5000)], "--amount"),
      (
        [
          "--token", "0xdAC17F958D2ee523a2206206994597C13D831ec7", "--decimals", "36",
          "--amount", "115792089237316195423570985008687907853270",
        ], "--amount"
      ),
      (["--chain-id", "18446744073709551616"], "--chain-id"),
      (["--chain-id", String(repeating: "1", count: 400)], "--chain-id"),
    ] as [([String], String)])
  func uint256(options: [String], field: String) async {
    let run = await imprint(["qr", "--eth", address, "--request"] + options)
    #expect(run.code == 2, "\(run.stderr)")
    #expect(run.stderr.contains("error: \(field) '") && run.stderr.contains("is too large"))
    #expect(run.stderr.count < 2000, "the value is cut, not echoed whole")
    #expect(run.stdout.isEmpty)
  }

  @Test("the largest amounts that fit uint256 are encoded exactly")
  func uint256Edge() async {
    let folder = TemporaryFolder()
    // 2^256 − 1 wei = 115792089237316195423570985008687907853269984665640564039457.584007913129639935 ether.
    let ether = await imprint([
      "qr", "--eth", address, "--format", "text", "--json", "-o", folder.file("code.txt"),
      "--amount",
      "115792089237316195423570985008687907853269984665640564039457.584007913129639935",
    ])
    #expect(ether.code == 0, "\(ether.stderr)")
    #expect(
      ether.stdout.contains(
        "value=115792089237316195423570985008687907853269984665640564039457584007913129639935"))
    let gas = await imprint([
      "qr", "--eth", address, "--gas-limit", String(repeating: "9", count: 40), "--gas-price",
      "1" + String(repeating: "0", count: 100),
    ])
    #expect(gas.code == 2 && gas.stderr.contains("--gas-"))
  }

  @Test("a 10 MB line in --input is that line's error; the others are made; memory stays flat")
  func longLine() throws {
    let folder = TemporaryFolder()
    var text = Data("first\thttps://example.org/1\n".utf8)
    text.append(Data(repeating: UInt8(ascii: "x"), count: 10_000_000))
    text.append(Data("\nthird\thttps://example.org/3\n".utf8))
    try text.write(to: URL(fileURLWithPath: folder.file("in.txt")))
    // The same list with a short second line: the long line may cost the reader's bounded buffer
    // (the 1 MiB limit and a chunk: about 3 MB measured), never the line itself (10 MB).
    var short = Data("first\thttps://example.org/1\n".utf8)
    short.append(Data(repeating: UInt8(ascii: "x"), count: 1_000))
    short.append(Data("\nthird\thttps://example.org/3\n".utf8))
    try short.write(to: URL(fileURLWithPath: folder.file("short.txt")))
    let baseline = try measuredImprint(
      [
        "qr", "--input", folder.file("short.txt"), "--output-dir", folder.file("s"), "--format",
        "svg",
      ],
      timeout: 20)
    #expect(baseline.status == 0, "\(baseline.stderr)")
    for stdin in [false, true] {
      let out = folder.file(stdin ? "from-stdin" : "from-file")
      let run = try measuredImprint(
        [
          "qr", "--input", stdin ? "-" : folder.file("in.txt"), "--output-dir", out, "--format",
          "svg",
        ],
        stdinPath: stdin ? folder.file("in.txt") : nil, timeout: 20)
      #expect(run.status == 1, "\(run.stderr)")
      #expect(run.stderr.contains("line 2 is longer than 1048576 bytes"), "\(run.stderr)")
      #expect(run.stderr.contains("2 of 3 codes written"))
      if Sanitizer.measuresMemory {
        #expect(run.peakKiB < 200 * 1024, "peak \(run.peakKiB) KiB")
        #expect(
          run.peakKiB - baseline.peakKiB < 8_000, "peak \(baseline.peakKiB) -> \(run.peakKiB) KiB")
      }
      #expect(run.seconds < Sanitizer.seconds(20))
      let made = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted()
      #expect(made == ["first.svg", "third.svg"])
    }
  }

  @Test("a 1 MiB Bitcoin line in --input fails at once by its length; the other lines are made")
  func longBitcoinLine() throws {
    let folder = TemporaryFolder()
    let text =
      "long\t" + String(repeating: "z", count: 1_048_000) + "\n"
      + "ok\tBC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4\n"
    try Data(text.utf8).write(to: URL(fileURLWithPath: folder.file("in.txt")))
    let run = try measuredImprint(
      [
        "qr", "--btc", "--input", folder.file("in.txt"), "--output-dir", folder.file("out"),
        "--format", "svg",
      ], timeout: 20)
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr.contains("line 1: bitcoin address"), "\(run.stderr.prefix(300))")
    #expect(run.stderr.contains("is 1048000 characters; a Base58 address has at most 35"))
    #expect(run.stderr.count < 2000, "the address is cut, not echoed whole")
    #expect(run.seconds < Sanitizer.seconds(20))
    if Sanitizer.measuresMemory { #expect(run.peakKiB < 200 * 1024, "peak \(run.peakKiB) KiB") }
    #expect(FileManager.default.fileExists(atPath: folder.file("out/ok.svg")))
  }

  @Test("bulk names cannot leave --output-dir, hide in it, or replace each other")
  func names() async throws {
    let folder = TemporaryFolder()
    let lines = [
      "../x\tone", "/etc/x\ttwo", ".hidden\tthree", "..\tfour", "a\u{1B}[31mred\tfive",
      "same\tsix", "same\tseven", "000009\teight", "nine",
      String(repeating: "n", count: 300) + "\tlong",
    ]
    try Data(lines.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("in.txt")))
    let out = folder.file("out")
    let run = await imprint([
      "qr", "--input", folder.file("in.txt"), "--output-dir", out, "--format", "svg", "--json",
    ])
    #expect(run.code == 1)
    let made = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted()
    #expect(
      made
        == [
          "_..", "_.._x", "_.hidden", "_etc_x", "a__31mred", "000009", "same",
          String(repeating: "n", count: 200),
        ].map { $0 + ".svg" }.sorted(), "\(made)")
    // Nothing outside the output folder.
    #expect(folder.contents() == ["in.txt", "out"])
    // Line 7 repeats line 6's name, line 9's default name repeats line 8's: both reported.
    #expect(
      run.stderr.contains("line 6' and '\(folder.file("in.txt")) line 7' would both be written"))
    #expect(
      run.stderr.contains("line 8' and '\(folder.file("in.txt")) line 9' would both be written"))
    let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    let failed = (report?["results"] as? [[String: Any]])?.filter {
      $0["status"] as? String == "failed"
    }
    #expect(
      failed?.compactMap { ($0["error"] as? [String: Any])?["code"] as? String }
        == ["file.outputCollision", "file.outputCollision"])
    // The first of the two "same" lines keeps its code.
    let svg = try String(contentsOfFile: out + "/same.svg", encoding: .utf8)
    #expect(try zbarDecode(rasteriseSVG(out + "/same.svg")) == "six", "\(svg.prefix(80))")
  }

  @Test("an output that is a FIFO (or a device) is refused, not replaced by a regular file")
  func specialOutput() async throws {
    let folder = TemporaryFolder()
    let fifo = folder.file("code.png")
    #expect(mkfifo(fifo, 0o600) == 0)
    let run = await imprint(["qr", "https://example.org", "-o", fifo])
    #expect(run.code == 1)
    #expect(run.stderr.contains("is a FIFO (named pipe); a regular file was expected"))
    var status = stat()
    #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
    #expect(folder.contents() == ["code.png"])
  }

  @Test("a line named after the input file, in the output folder, fails instead of replacing it")
  func inputAsOutput() async throws {
    let folder = TemporaryFolder()
    let text = "codes\tfirst\nother\tsecond\n"
    try Data(text.utf8).write(to: URL(fileURLWithPath: folder.file("codes.svg")))
    let run = await imprint([
      "qr", "--input", folder.file("codes.svg"), "--output-dir", folder.path, "--format", "svg",
    ])
    #expect(run.code == 1)
    #expect(run.stderr.contains("is also an input"), "\(run.stderr)")
    #expect(try String(contentsOfFile: folder.file("codes.svg"), encoding: .utf8) == text)
    #expect(FileManager.default.fileExists(atPath: folder.file("other.svg")))
  }

  @Test("failure lines echo payloads with control characters escaped")
  func escapedFailures() async throws {
    let folder = TemporaryFolder()
    try Data("bad\t0x12\u{1B}[2J\u{07}\n".utf8).write(
      to: URL(fileURLWithPath: folder.file("in.txt")))
    let run = await imprint([
      "qr", "--eth", "--input", folder.file("in.txt"), "--output-dir", folder.file("out"),
    ])
    #expect(run.code == 1)
    #expect(!run.stderr.contains("\u{1B}") && !run.stderr.contains("\u{07}"))
    #expect(run.stderr.contains("\\u{1B}[2J"), "\(run.stderr)")
  }

  @Test(
    "odd Bitcoin and Ethereum addresses are errors, never traps",
    arguments: [
      "1\u{301}", "z\u{301}\u{302}", "1é0", "bc1\u{301}qqqqqq", "0x\u{301}",
      "3" + String(repeating: "\u{301}", count: 50),
      "1" + String(repeating: "z", count: 5000), "bc1" + String(repeating: "q", count: 200),
      "tb1qqqqqqq", "bc1zzzzzzz", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
    ])
  func oddAddresses(text: String) async {
    let btc = await imprint(["qr", "--btc", text, "--format", "text"])
    let eth = await imprint(["qr", "--eth", text, "--format", "text"])
    #expect(btc.code == 1 || btc.code == 0)
    #expect(eth.code == 1)
    #expect(btc.stderr.count < 2000 && eth.stderr.count < 2000)
  }
}
