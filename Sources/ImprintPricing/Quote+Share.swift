// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: a file's quote line divided between runs of its sheets (the colour and
// monochrome parts of a file split by colour), exactly, in minor units.

/// What some of a file's sheets are charged: their share of the file's quote line.
///
/// Worked out as the line is (`Pricing.share`), so that the shares of runs that hold every
/// sheet once, the file's fees with one of them, add up to the line to the minor unit.
public struct FileShare: Codable, Sendable, Equatable {
  /// The run's impressions at the rates the quote charged each of them, × copies.
  public var impressionCharge: Money
  /// The run's sheets of paper, × copies.
  public var paperCharge: Money
  /// The extras charged to the run: those charged by the sheet, for its sheets; those charged
  /// once a copy or once a job when the run carries the file's fees.
  public var extras: [String: Money]
  /// The run's charge: printing, paper and extras.
  public var subtotal: Money
}

extension Pricing {
  /// The share of a file's quote line that the sheets `sheets` of every copy are charged.
  ///
  /// The rule: each impression on those sheets at the rate the quote charged it (a colour
  /// sheet's monochrome back at the monochrome rate, a duplex job's one-sided last sheet at the
  /// simplex rate, a blank side at nothing when the list charges blank sides for paper only),
  /// each of those sheets' paper and the extras charged by the sheet, all × copies; and, only
  /// with `fileFees`, the extras charged once a copy (stapling a copy) or once a job. Every
  /// amount is a whole number of minor units, so nothing is rounded: runs that hold each sheet
  /// once, with `fileFees` for exactly one of them, add up to the line's `impressionCharge`,
  /// `paperCharge`, `extras` and `subtotal` exactly. Order-level steps (volume tiers,
  /// adjustments, the minimum, tax) are the order's, not a file's, and are not divided.
  ///
  /// - Parameters:
  ///   - sheets: the sheets of one copy (1-based) the run holds; sheets past the file's last
  ///     are ignored.
  ///   - fileFees: whether the run carries the file's per-copy and per-job extras.
  ///   - file: the file as the order names it (in errors).
  ///   - options: the file's options (the list's defaults are applied).
  ///   - facts: the file's page facts.
  ///   - prices: the price list the file was quoted with.
  /// - Returns: the run's share.
  /// - Throws: `PricingError`, as `quote` throws for the file.
  public static func share(
    ofSheets sheets: Set<Int>, fileFees: Bool, file: String, options: FileOptions,
    facts: PageFacts, prices: PriceList
  ) throws(PricingError) -> FileShare {
    try FileCharges(file, options: options.resolved(prices.defaults), facts: facts, prices: prices)
      .charge(sheets: sheets, fileFees: fileFees, Checked(source: file))
  }
}
