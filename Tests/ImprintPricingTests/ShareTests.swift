// SPDX-License-Identifier: Apache-2.0
// ImprintPricingTests: a file's quote line divided between runs of its sheets (a colour split's
// parts), against shares worked out by hand; the runs add up to the line exactly.

import Foundation
import ImprintPricing
import ImprintTestSupport
import Testing

/// One file, its line's subtotal by hand, and runs of its sheets with their shares by hand.
struct ShareCase: Sendable, CustomTestStringConvertible {
  var name: String
  var pages: Int
  var colorPages: Set<Int>
  var blankPages: Set<Int> = []
  /// The file's options (JSON object text).
  var options: String
  /// Changes to `usdList` (JSON object text).
  var list = "{}"
  /// The line's subtotal, in cents.
  var subtotal: Int
  /// Each run: its sheets, whether it carries the file's fees, and its share by hand
  /// (impressions, paper, extras, subtotal; cents, all copies).
  var runs: [(sheets: Set<Int>, fees: Bool, printing: Int, paper: Int, extras: [String: Int])]

  var testDescription: String { name }
}

@Suite("A file's quote line shared between runs of its sheets", .liveHandlesChecked)
struct ShareTests {
  // `usdList`: mono 10/8, colour 50/40 (simplex/duplex), A4 paper 2 a sheet; staple 25 a copy,
  // bind 300 a job, punch 1 a sheet.
  static let cases: [ShareCase] = [
    ShareCase(
      name: "simplex, 2 copies: colour sheets 2 and 5 at 50, the other four at 10",
      pages: 6, colorPages: [2, 5], options: #"{"color":"auto","copies":2}"#, subtotal: 304,
      runs: [
        ([2, 5], true, 2 * 50 * 2, 2 * 2 * 2, [:]),
        ([1, 3, 4, 6], false, 4 * 10 * 2, 4 * 2 * 2, [:]),
      ]),
    ShareCase(
      name: "duplex, 3 copies, stapled and punched: the colour sheet's mono back at 8 rides along",
      pages: 5, colorPages: [2],
      options: #"{"color":"auto","duplex":"long-edge","copies":3,"extras":["staple","punch"]}"#,
      subtotal: 324,
      runs: [
        // Sheet 1: page 1 mono duplex 8, page 2 colour duplex 40; the staple's 25 a copy.
        ([1], true, (8 + 40) * 3, 1 * 2 * 3, ["staple": 25 * 3, "punch": 1 * 1 * 3]),
        // Sheet 2: 8 + 8; sheet 3: page 5 alone, simplex 10.
        ([2, 3], false, (8 + 8 + 10) * 3, 2 * 2 * 3, ["punch": 1 * 2 * 3]),
      ]),
    ShareCase(
      name: "2-up, 2 copies, bound: the side [3, 4] is colour; the binding goes with it",
      pages: 7, colorPages: [3], options: #"{"color":"auto","nUp":2,"copies":2,"extras":["bind"]}"#,
      subtotal: 476,
      runs: [
        ([2], true, 50 * 2, 1 * 2 * 2, ["bind": 300]),
        ([1, 3, 4], false, 3 * 10 * 2, 3 * 2 * 2, [:]),
      ]),
    ShareCase(
      name: "2-up duplex: the odd last side is colour, one-sided at the simplex 50",
      pages: 9, colorPages: [9], options: #"{"color":"auto","nUp":2,"duplex":"short-edge"}"#,
      subtotal: 88,
      runs: [([3], true, 50, 2, [:]), ([1, 2], false, 4 * 8, 2 * 2, [:])]),
    ShareCase(
      name: "blank sides charged for paper only: page 3 costs its sheet alone",
      pages: 4, colorPages: [1], blankPages: [3], options: #"{"color":"auto"}"#,
      list: #"{"blankPages":"paper-only"}"#, subtotal: 78,
      runs: [([1], true, 50, 2, [:]), ([2, 3, 4], false, 10 + 0 + 10, 3 * 2, [:])]),
    ShareCase(
      name: "all colour, 2 copies, stapled: one run with the fees is the whole line",
      pages: 3, colorPages: [1, 2, 3], options: #"{"color":"auto","copies":2,"extras":["staple"]}"#,
      subtotal: 362, runs: [([1, 2, 3], true, 3 * 50 * 2, 3 * 2 * 2, ["staple": 50])]),
    ShareCase(
      name: "all mono: without the fees a run is its sheets alone; sheets past the end ignored",
      pages: 2, colorPages: [], options: #"{"color":"auto","extras":["staple"]}"#, subtotal: 49,
      runs: [([1, 2, 3, 9], false, 2 * 10, 2 * 2, [:]), ([], true, 0, 0, ["staple": 25])]),
  ]

  @Test("each run's share by hand; the runs add up to the line", arguments: cases)
  func shares(_ row: ShareCase) throws {
    let list = try usdList(object(row.list))
    let options = try #require(
      try Order.parse(
        Array(#"{"schemaVersion":1,"files":[{"path":"doc.pdf","#.utf8)
          + Array(row.options.dropFirst().utf8) + Array("]}".utf8), source: "order.json"
      ).files.first?.options)
    let facts = PageFacts(pages: row.pages, colorPages: row.colorPages, blankPages: row.blankPages)
    let line = try #require(
      try quote(
        list, pages: row.pages, colorPages: row.colorPages, blank: row.blankPages,
        object(row.options)
      ).files.first)
    #expect(line.subtotal.minor == row.subtotal)
    var sums = (printing: 0, paper: 0, extras: [String: Int](), subtotal: 0)
    for run in row.runs {
      let share = try Pricing.share(
        ofSheets: run.sheets, fileFees: run.fees, file: "doc.pdf", options: options,
        facts: facts, prices: list)
      let extras = run.extras.values.reduce(0, +)
      #expect(share.impressionCharge.minor == run.printing, "\(run.sheets)")
      #expect(share.paperCharge.minor == run.paper, "\(run.sheets)")
      #expect(share.extras.mapValues(\.minor) == run.extras, "\(run.sheets)")
      #expect(share.subtotal.minor == run.printing + run.paper + extras, "\(run.sheets)")
      #expect(share.subtotal.formatted == Currency.format(share.subtotal.minor, code: "USD"))
      sums.printing += share.impressionCharge.minor
      sums.paper += share.paperCharge.minor
      sums.subtotal += share.subtotal.minor
      sums.extras.merge(share.extras.mapValues(\.minor)) { $0 + $1 }
    }
    // Exactly the line, line by line.
    #expect(sums.printing == line.impressionCharge.minor)
    #expect(sums.paper == line.paperCharge.minor)
    #expect(sums.extras == line.extras.mapValues(\.minor))
    #expect(sums.subtotal == line.subtotal.minor)
  }

  @Test("every sheet with the fees is the line itself, for any file of the hand-computed table")
  func whole() throws {
    for row in Self.cases {
      let list = try usdList(object(row.list))
      let line = try #require(
        try quote(
          list, pages: row.pages, colorPages: row.colorPages, blank: row.blankPages,
          object(row.options)
        ).files.first)
      let options = try #require(
        try Order.parse(
          Array(#"{"schemaVersion":1,"files":[{"path":"doc.pdf","#.utf8)
            + Array(row.options.dropFirst().utf8) + Array("]}".utf8), source: "order.json"
        ).files.first?.options)
      let share = try Pricing.share(
        ofSheets: Set(1...max(1, line.sheets)), fileFees: true, file: "doc.pdf", options: options,
        facts: PageFacts(pages: row.pages, colorPages: row.colorPages, blankPages: row.blankPages),
        prices: list)
      #expect(share.impressionCharge == line.impressionCharge, "\(row.name)")
      #expect(share.paperCharge == line.paperCharge && share.extras == line.extras, "\(row.name)")
      #expect(share.subtotal == line.subtotal, "\(row.name)")
    }
  }
}
