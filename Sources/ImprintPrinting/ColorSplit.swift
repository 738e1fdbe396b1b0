// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: an `auto` colour file split into its colour and monochrome runs, each a
// print-ready file of its own, by the quote's own count of colour impressions.

import ImprintCore
import ImprintPricing

/// One of the two files an `auto` colour file is split into: what it holds of the file and how
/// the quote charged it.
///
/// The split follows the quote (`Pricing.impressions`): an impression (a sheet side) is colour
/// when any page on it is, so a side that puts colour and monochrome pages together n-up goes
/// to the colour file whole. A sheet is never cut: a duplex sheet with a colour side goes to
/// the colour file with both its sides, its monochrome side still counted (and charged, as
/// quoted) at the monochrome rate, so that the colour printer prints it (`print-color-mode`
/// `auto` then). The monochrome file holds the sheets with no colour side. Summed over the two
/// parts, the impressions, colour impressions and monochrome impressions are the quote's.
public struct ColorSplitPart: Codable, Sendable, Equatable {
  /// `color` or `mono`.
  public var part: String
  /// The sheets of one copy of the whole file this part holds, as a range (`1-2,5`): where
  /// its sheets go back among the other part's when a copy is put together.
  public var sheets: String
  /// The file's pages this part holds, as a range.
  public var pages: String
  /// Printed sides of one copy of this part.
  public var impressions: Int
  /// Of those, sides the quote charged the colour rate.
  public var colorImpressions: Int
  /// Of those, sides the quote charged the monochrome rate (or nothing, when blank and the
  /// price list charges blank sides for paper only).
  public var monoImpressions: Int
  /// This part's share of the file's quote line (`Pricing.share`).
  ///
  /// Its impressions at the rates the quote charged them, its sheets' paper and by-the-sheet
  /// extras, × copies; the colour part also carries the file's extras charged once a copy or
  /// once a job. The two parts' shares add up to the line exactly.
  public var share: FileShare?
}

/// Splits a file's impressions into the colour and monochrome parts of `ColorSplitPart`.
enum ColorSplit {
  /// The parts of a file whose impressions (one copy, as quoted) are `impressions`, printed
  /// two-sided when `duplex`: the colour part first; a part with no sheet is left out, so an
  /// all-colour or all-monochrome file has one part.
  ///
  /// - Returns: each part with the file's pages and the sheets of one copy it holds, in the
  ///   file's order (its `share` is left to the caller, which has the price list).
  static func parts(of impressions: [Impression], duplex: Bool) -> [(
    part: ColorSplitPart, pages: [Int], sheets: [Int]
  )] {
    let perSheet = duplex ? 2 : 1
    var sheets: [Bool: [Int]] = [:]
    var sides: [Bool: [Impression]] = [:]
    for (index, start) in stride(from: 0, to: impressions.count, by: perSheet).enumerated() {
      let sheet = impressions[start..<min(start + perSheet, impressions.count)]
      let color = sheet.contains { $0.color }
      sheets[color, default: []].append(index + 1)
      sides[color, default: []].append(contentsOf: sheet)
    }
    return [true, false].compactMap { color in
      guard let held = sides[color], let numbers = sheets[color] else { return nil }
      let pages = held.flatMap(\.pages)
      let colorCount = held.filter(\.color).count
      return (
        ColorSplitPart(
          part: color ? "color" : "mono", sheets: PageRange.text(numbers),
          pages: PageRange.text(pages), impressions: held.count, colorImpressions: colorCount,
          monoImpressions: held.count - colorCount),
        pages, numbers
      )
    }
  }
}
