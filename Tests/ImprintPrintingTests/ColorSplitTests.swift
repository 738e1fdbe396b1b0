// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: `auto` colour files split into their colour and monochrome runs,
// against quotes computed by hand: pdfinfo's pages, pdftotext's page marks on each side, the
// tickets' counts, qpdf --check, and the same bytes twice.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing
import ImprintPrinting
import ImprintTestSupport
import Testing

/// One prepared file a split case expects.
struct ExpectedPart: Sendable {
  /// `color`, `mono`, or nil for a file left whole.
  var part: String?
  /// The file's pages on each sheet side, in order; `[]` for a blank back.
  var sides: [[Int]]
  /// The whole file's sheets it holds (nil when whole).
  var sheets: String?
  /// `print-color-mode`.
  var mode: String
  /// Colour and monochrome impressions of one copy of it.
  var color: Int
  var mono: Int
}

/// One row: a fixture's pages and colour pages, the file's options, the quote worked out by
/// hand from the price list below, and the files expected.
struct SplitCase: Sendable, CustomTestStringConvertible {
  var pages: Int
  var colorPages: Set<Int>
  var options: String
  /// The quote's colour and monochrome impressions and impression charge (all copies, cents).
  var quote: (color: Int, mono: Int, charge: Int)
  var parts: [ExpectedPart]

  var testDescription: String { "\(pages) pages, colour \(colorPages.sorted()), \(options)" }
}

/// Mono 10/8 cents simplex/duplex, colour 30/25, A4 plain paper 2.
private let prices = #"""
  {"schemaVersion":1,"store":"Copy Corner","version":"v1","currency":"USD",
   "rates":{"default":{"mono":{"simplex":10,"duplex":8},"color":{"simplex":30,"duplex":25}}},
   "paper":{"A4":{"plain":2}},"defaults":{"paper":"A4","color":"auto"}}
  """#

@Suite("OrderPreparer: the colour split, as quoted", .liveHandlesChecked)
struct ColorSplitTests {
  static let cases: [SplitCase] = [
    // Simplex 1-up: each side its own sheet. 2 × 30 + 4 × 10, two copies.
    SplitCase(
      pages: 6, colorPages: [2, 5], options: #""copies":2"#, quote: (2, 4, 200),
      parts: [
        ExpectedPart(
          part: "color", sides: [[2], [5]], sheets: "2,5", mode: "color", color: 2, mono: 0),
        ExpectedPart(
          part: "mono", sides: [[1], [3], [4], [6]], sheets: "1,3-4,6", mode: "monochrome",
          color: 0, mono: 4),
      ]),
    // 2-up: page 3 makes the side [3, 4] colour, whole. 30 + 3 × 10.
    SplitCase(
      pages: 7, colorPages: [3], options: #""nUp":2"#, quote: (1, 3, 60),
      parts: [
        ExpectedPart(
          part: "color", sides: [[3, 4]], sheets: "2", mode: "color", color: 1, mono: 0),
        ExpectedPart(
          part: "mono", sides: [[1, 2], [5, 6], [7]], sheets: "1,3-4", mode: "monochrome",
          color: 0, mono: 3),
      ]),
    // Duplex: sheet 1 (pages 1, 2) has a colour side and goes whole, its mono side charged
    // mono; page 5 is one-sided on sheet 3 (simplex rate), its back blank. 8 + 25 + 8 + 8 + 10.
    SplitCase(
      pages: 5, colorPages: [2], options: #""duplex":"long-edge""#, quote: (1, 4, 59),
      parts: [
        ExpectedPart(
          part: "color", sides: [[1], [2]], sheets: "1", mode: "auto", color: 1, mono: 1),
        ExpectedPart(
          part: "mono", sides: [[3], [4], [5], []], sheets: "2-3", mode: "monochrome", color: 0,
          mono: 3),
      ]),
    // 2-up duplex: the last sheet's one side is colour (simplex rate). 4 × 8 + 30.
    SplitCase(
      pages: 9, colorPages: [9], options: #""nUp":2,"duplex":"short-edge""#, quote: (1, 4, 62),
      parts: [
        ExpectedPart(
          part: "color", sides: [[9], []], sheets: "3", mode: "color", color: 1, mono: 0),
        ExpectedPart(
          part: "mono", sides: [[1, 2], [3, 4], [5, 6], [7, 8]], sheets: "1-2",
          mode: "monochrome", color: 0, mono: 4),
      ]),
    // A range: the sides are [2, 3] [4, 6] [8]. 30 + 2 × 10.
    SplitCase(
      pages: 8, colorPages: [6], options: #""pages":"2-4,6,8-","nUp":2"#, quote: (1, 2, 50),
      parts: [
        ExpectedPart(
          part: "color", sides: [[4, 6]], sheets: "2", mode: "color", color: 1, mono: 0),
        ExpectedPart(
          part: "mono", sides: [[2, 3], [8]], sheets: "1,3", mode: "monochrome", color: 0, mono: 2),
      ]),
    // One duplex sheet with a colour side: nothing to split. 25 + 8.
    SplitCase(
      pages: 5, colorPages: [1, 4], options: #""nUp":4,"duplex":"long-edge""#, quote: (1, 1, 33),
      parts: [ExpectedPart(sides: [[1, 2, 3, 4], [5]], mode: "auto", color: 1, mono: 1)]),
    // No colour page: one monochrome file. 3 × 10.
    SplitCase(
      pages: 3, colorPages: [], options: "", quote: (0, 3, 30),
      parts: [ExpectedPart(sides: [[1], [2], [3]], mode: "monochrome", color: 0, mono: 3)]),
    // Colour asked for, not auto: never split. 3 × 30.
    SplitCase(
      pages: 3, colorPages: [1], options: #""color":"color""#, quote: (3, 0, 90),
      parts: [ExpectedPart(sides: [[1], [2], [3]], mode: "color", color: 3, mono: 0)]),
  ]

  @Test(
    "each part's sides, pages, ticket and counts; the parts add up to the quote", arguments: cases)
  func table(_ row: SplitCase) async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      NumberedPages.written(
        Array(repeating: .a4, count: row.pages), colorPages: row.colorPages),
      to: folder.file("doc.pdf"))
    let separator = row.options.isEmpty ? "" : ","
    let prepared = try await prepareOrder(
      in: folder, prices: prices, files: [#"{"path":"doc.pdf"\#(separator)\#(row.options)}"#],
      options: PrepareOptions(splitColor: true))
    // The quote, against the hand-computed one.
    let line = try #require(prepared.quote.files.first)
    #expect(line.colorImpressions == row.quote.color && line.monoImpressions == row.quote.mono)
    #expect(line.impressionCharge.minor == row.quote.charge)

    #expect(prepared.files.count == row.parts.count)
    for (file, expected) in zip(prepared.files, row.parts) {
      let name = "1-doc" + (expected.part.map { "." + $0 } ?? "")
      #expect(file.document == folder.file("out/\(name).pdf"))
      #expect(file.ticketPath == folder.file("out/\(name).ticket.json"))
      let ticket = file.ticket
      #expect(ticket.split?.part == expected.part && ticket.split?.sheets == expected.sheets)
      #expect(ticket.ipp.printColorMode == expected.mode, "\(name)")
      #expect(ticket.quote == line)
      let blank = expected.sides.filter(\.isEmpty).count
      #expect(ticket.impressions == expected.sides.count - blank && ticket.blankBacks == blank)
      if let split = ticket.split {
        #expect(split.colorImpressions == expected.color && split.monoImpressions == expected.mono)
        #expect(split.impressions == ticket.impressions)
      }
      // The PDF, read back: one page a side, each side the pages expected, nothing else.
      #expect(try pdfInfo(file.document)["Pages"] == "\(expected.sides.count)")
      let read = try wordsByPage(file.document)
      #expect(
        read.map { $0.words.map(\.text).filter { $0.hasPrefix("P") }.sorted() }
          == expected.sides.map { $0.map { "P\($0)" }.sorted() }, "\(name)")
      let check = try runTool("qpdf", ["--check", file.document])
      #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }
    // Summed over the parts, the quote's impressions at each rate.
    let tickets = prepared.files.map(\.ticket)
    #expect(tickets.map(\.impressions).reduce(0, +) == line.impressions)
    if prepared.files.count > 1 {
      #expect(tickets.compactMap { $0.split?.colorImpressions }.reduce(0, +) == row.quote.color)
      #expect(tickets.compactMap { $0.split?.monoImpressions }.reduce(0, +) == row.quote.mono)
    }
  }

  @Test("the same order split twice gives the same bytes, and whole files are unchanged by it")
  func deterministic() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 7), colorPages: [2]),
      to: folder.file("doc.pdf"))
    let order = [
      #"{"path":"doc.pdf","nUp":2,"duplex":"long-edge"}"#, #"{"path":"doc.pdf","color":"mono"}"#,
    ]
    let split = PrepareOptions(splitColor: true)
    let one = try await prepareOrder(
      in: folder, prices: prices, files: order, output: "one", options: split)
    let two = try await prepareOrder(
      in: folder, prices: prices, files: order, output: "two", options: split)
    let whole = try await prepareOrder(in: folder, prices: prices, files: order, output: "whole")
    // Sheets [1, 2 | 3, 4] and [5, 6 | 7]: the first has the colour page.
    try #require(one.files.map(\.ticket.split?.part) == ["color", "mono", nil])
    // The same file named again in mono does not make the auto one's colour page mono (the
    // quote once priced both from the mono reading, which analyses no colours).
    #expect(one.quote.files.map(\.colorImpressions) == [1, 0])
    #expect(one.quote.files.first?.impressionCharge.minor == 25 + 3 * 8)
    try #require(two.files.count == 3 && whole.files.count == 2)
    for (a, b) in zip(one.files, two.files) {
      #expect(try bytes(a.document) == bytes(b.document))
      #expect(try bytes(a.ticketPath) == bytes(b.ticketPath))
    }
    // The file not split is the same file with or without the option.
    #expect(try bytes(one.files[2].document) == bytes(whole.files[1].document))
    #expect(try bytes(one.files[2].ticketPath) == bytes(whole.files[1].ticketPath))
  }

  private func bytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
  }
}
