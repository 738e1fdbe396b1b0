// SPDX-License-Identifier: Apache-2.0
// ImprintPDFTests: the file layer of Imprint's own PDF writer: numbers and strings as PDF
// writes them, objects, streams and the cross-reference table, checked by qpdf and poppler.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintPDF

@Suite("PDF syntax and files written object by object", .liveHandlesChecked)
struct PDFFileWriterTests {
  private func text(_ value: Double) -> String {
    var out: [UInt8] = []
    PDFSyntax.append(value, to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  @Test("numbers: at most four decimals, no exponent, no trailing zeros, no negative zero")
  func numbers() {
    let cases: [(Double, String)] = [
      (0, "0"), (1, "1"), (-1, "-1"), (12.5, "12.5"), (-0.25, "-0.25"), (0.1, "0.1"),
      (3.14159265, "3.1416"), (-0.00004, "0"), (0.00005, "0.0001"), (1_000_000, "1000000"),
      (171.0141732, "171.0142"), (0.0102, "0.0102"), (1e15, "1000000000000"),
      (-1e15, "-1000000000000"), (.nan, "0"), (.infinity, "0"), (9.99999, "10"),
    ]
    for (value, expected) in cases { #expect(text(value) == expected, "\(value)") }
    // Whatever the value, what is written reads back within half of the last decimal.
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      let value = Double.random(in: -5000...5000, using: &generator)
      let written = text(value)
      #expect(!written.contains("e") && !written.hasSuffix("."))
      #expect(abs((Double(written) ?? .nan) - value) <= 0.00005 + 1e-9, "\(value) as \(written)")
    }
    var integers: [UInt8] = []
    for value in [0, 7, 10, 99, 1_234_567_890_123, -42, Int.min + 1] {
      integers = []
      PDFSyntax.append(value, to: &integers)
      #expect(String(decoding: integers, as: UTF8.self) == String(value))
    }
  }

  @Test("numbers written at once agree with the byte-at-a-time writer on 200,000 values")
  func numbersAgainstOldWriter() {
    // The writer before session 33 (one byte appended at a time), kept as the oracle.
    func old(_ value: Double) -> [UInt8] {
      var out: [UInt8] = []
      guard value.isFinite else { return Array("0".utf8) }
      let clamped = min(max(value, -1e12), 1e12)
      var scaled = Int64((clamped * 10_000).rounded())
      if scaled < 0 {
        out.append(UInt8(ascii: "-"))
        scaled = -scaled
      }
      out += Array(String(scaled / 10_000).utf8)
      var fraction = Int(scaled % 10_000)
      guard fraction != 0 else { return out }
      out.append(UInt8(ascii: "."))
      var digits = 4
      while fraction % 10 == 0 {
        fraction /= 10
        digits -= 1
      }
      var divisor = 1
      for _ in 1..<digits { divisor *= 10 }
      while divisor > 0 {
        out.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
        divisor /= 10
      }
      return out
    }
    var generator = SystemRandomNumberGenerator()
    var values: [Double] = [-0.0, 0.00005, -0.00005, 0.99995, -0.99995, 1e12, -1e12, 5e11 + 0.5]
    for _ in 0..<200_000 {
      let magnitude = Double.random(in: -6...13, using: &generator)
      let sign: Double = Bool.random(using: &generator) ? 1 : -1
      let value = sign * Foundation.pow(10, magnitude)
      // Some exact quarters and whole numbers too, as layouts often write.
      values.append(
        Bool.random(using: &generator) ? value : (value * 4).rounded() / 4)
    }
    var mismatches: [Double] = []
    for value in values {
      var out: [UInt8] = [0x20]
      PDFSyntax.append(value, to: &out)
      if Array(out.dropFirst()) != old(value) { mismatches.append(value) }
    }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    for value in [Int.min, Int.min + 1, -10, -9, -1, 0, 9, 10, 65_535, Int.max] {
      var out: [UInt8] = []
      PDFSyntax.append(value, to: &out)
      #expect(String(decoding: out, as: UTF8.self) == String(value))
    }
    var hex: [UInt8] = []
    var expected = ""
    for value in UInt16.min...UInt16.max {
      PDFSyntax.appendHex(value, to: &hex)
      expected += String(format: "%04X", value)
    }
    #expect(String(decoding: hex, as: UTF8.self) == expected)
  }

  @Test("text strings: ASCII literal with escapes, anything else UTF-16BE with its mark")
  func strings() {
    func string(_ text: String) -> String {
      var out: [UInt8] = []
      PDFSyntax.appendText(text, to: &out)
      return String(decoding: out, as: UTF8.self)
    }
    #expect(string("a (b) \\ c") == "(a \\(b\\) \\\\ c)")
    #expect(string("é") == "<FEFF00E9>")
    #expect(string("😀") == "<FEFFD83DDE00>")
    #expect(string("line\nbreak") == "<FEFF006C0069006E0065000A0062007200650061006B>")
  }

  @Test("a file of objects and deflated streams that qpdf and poppler read")
  func file() throws {
    let writer = PDFFileWriter()
    let pages = writer.reserve()
    let page = writer.reserve()
    let content = writer.reserve()
    var drained: [UInt8] = []
    let stream = Array(String(repeating: "0 0 1 rg 10 10 50 50 re f\n", count: 40).utf8)
    writer.stream(content, data: stream)
    drained += writer.drain()
    writer.object(page) { out in
      out += Array(
        "<</Type/Page/Parent \(pages) 0 R/MediaBox[0 0 100 100]/Contents \(content) 0 R>>".utf8)
    }
    writer.object(pages) { out in
      out += Array("<</Type/Pages/Kids[\(page) 0 R]/Count 1>>".utf8)
    }
    let catalog = writer.reserve()
    writer.object(catalog) { out in out += Array("<</Type/Catalog/Pages \(pages) 0 R>>".utf8) }
    // An object reserved and never written leaves the file unfinished.
    let unwritten = writer.reserve()
    #expect(!writer.finish(root: catalog, info: nil))
    writer.object(unwritten) { out in out += Array("null".utf8) }
    #expect(writer.finish(root: catalog, info: nil))
    drained += writer.drain()
    #expect(writer.position == drained.count)

    let folder = TemporaryFolder()
    let path = folder.file("objects.pdf")
    try Data(drained).write(to: URL(fileURLWithPath: path))
    let check = try runTool("qpdf", ["--check", path])
    #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
    #expect(!check.stdout.contains("WARNING"), "\(check.stdout)")
    #expect(try pdfInfo(path)["Pages"] == "1")
    // The stream is deflated, and inflates to what was written.
    #expect(String(decoding: drained, as: UTF8.self).contains("/Filter/FlateDecode"))
    let shown = try runTool("qpdf", ["--show-object=\(content)", "--filtered-stream-data", path])
    #expect(shown.stdoutBytes == stream)
  }

  @Test("streams at levels in turn: each inflates to its data, its zlib header names its level")
  func levels() throws {
    let writer = PDFFileWriter()
    // libdeflate's header level (FLEVEL, the second byte's top two bits): 0 fastest, 1 fast,
    // 2 default (6), 3 slowest.
    let levels: [(level: Int?, flag: UInt8)] = [
      (1, 0), (nil, 2), (12, 3), (1, 0), (4, 1), (nil, 2),
    ]
    var streams: [(number: Int, data: [UInt8], flag: UInt8)] = []
    for (index, entry) in levels.enumerated() {
      let data = Array(
        (0..<200).map { "\($0 * (index + 3) % 97) 0 0 rg \(index) w\n" }.joined().utf8)
      let number = writer.reserve()
      writer.stream(number, data: data, level: entry.level)
      streams.append((number, data, entry.flag))
    }
    let catalog = writer.reserve()
    let pages = writer.reserve()
    writer.object(catalog) { out in out += Array("<</Type/Catalog/Pages \(pages) 0 R>>".utf8) }
    writer.object(pages) { out in out += Array("<</Type/Pages/Kids[]/Count 0>>".utf8) }
    #expect(writer.finish(root: catalog, info: nil))
    let folder = TemporaryFolder()
    let path = folder.file("levels.pdf")
    try Data(writer.drain()).write(to: URL(fileURLWithPath: path))
    for stream in streams {
      let shown = try runTool(
        "qpdf", ["--show-object=\(stream.number)", "--filtered-stream-data", path])
      #expect(shown.stdoutBytes == stream.data, "stream \(stream.number)")
      let raw = try runTool("qpdf", ["--show-object=\(stream.number)", "--raw-stream-data", path])
      #expect(raw.stdoutBytes.count > 2 && raw.stdoutBytes.count < stream.data.count)
      #expect(raw.stdoutBytes.dropFirst().first.map { $0 >> 6 } == stream.flag, "\(stream.number)")
    }
  }
}
