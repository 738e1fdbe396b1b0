// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: orders, the facts of their files, and the exact quote.

import Foundation
import ImprintCore

/// One file of an order.
public struct OrderFile: Sendable, Equatable {
  /// The file's path as written in the order (relative to the order's folder).
  public var path: String
  /// The options it sets; the rest come from the price list's defaults.
  public var options: FileOptions
}

/// An order: files with options, ID cards, and a message for the store.
public struct Order: Sendable, Equatable {
  /// The store the order is for (checked against the price list when both say).
  public var store: String?
  /// The files.
  public var files: [OrderFile]
  /// ID cards ordered, and whether both sides are printed.
  public var cards: (count: Int, twoSided: Bool)?
  /// A message to the store owner, passed through.
  public var message: String?

  public static func == (a: Order, b: Order) -> Bool {
    a.store == b.store && a.files == b.files && a.cards?.count == b.cards?.count
      && a.cards?.twoSided == b.cards?.twoSided && a.message == b.message
  }

  /// Parses an order.
  ///
  /// - Throws: `PricingError` naming the file and the field.
  public static func parse(_ bytes: [UInt8], source: String) throws(PricingError) -> Order {
    var top = try JSONReader.parse(bytes, source: source)
    guard try top.integer("schemaVersion") == 1 else {
      throw .invalidField(
        source: source, field: "schemaVersion", value: describe(top.object["schemaVersion"]),
        expected: "1")
    }
    var order = Order(
      store: try top.string("store"), files: [], cards: nil, message: try top.string("message"))
    for (index, item) in (try top.array("files") ?? []).enumerated() {
      var file = try JSONReader(item, source: source, path: "files[\(index)]")
      guard let path = try file.string("path"), !path.isEmpty else {
        throw .invalidField(
          source: source, field: "files[\(index)].path", value: "missing",
          expected: "the file's path")
      }
      let options = try FileOptions.read(&file)
      try file.finish()
      order.files.append(OrderFile(path: path, options: options))
    }
    if var cards = try top.child("cards") {
      guard let count = try cards.integer("count", in: PriceList.cardsRange) else {
        throw .invalidField(
          source: source, field: "cards.count", value: describe(cards.object["count"]),
          expected: "1 to 100000")
      }
      let sides = try cards.string("sides") ?? "both"
      guard sides == "both" || sides == "front" else {
        throw .invalidField(
          source: source, field: "cards.sides", value: quoted(sides), expected: "front or both")
      }
      try cards.finish()
      order.cards = (count, sides == "both")
    }
    guard !order.files.isEmpty || order.cards != nil else {
      throw .invalidField(
        source: source, field: "files", value: "empty",
        expected: "at least one file or a cards line")
    }
    try top.finish()
    return order
  }
}

/// What pricing needs to know about a file: its pages, and which are colour or blank.
public struct PageFacts: Sendable, Equatable {
  /// The number of pages that will print.
  public var pages: Int
  /// 1-based colour pages (needed only for `auto` colour).
  public var colorPages: Set<Int>
  /// 1-based blank pages.
  public var blankPages: Set<Int>
  /// For a file counted on the PDF a converter made of it (an Office document): that PDF's
  /// SHA-256, lower-case hex.
  public var convertedPDF: String?

  /// Creates facts.
  public init(
    pages: Int, colorPages: Set<Int> = [], blankPages: Set<Int> = [], convertedPDF: String? = nil
  ) {
    self.pages = pages
    self.colorPages = colorPages
    self.blankPages = blankPages
    self.convertedPDF = convertedPDF
  }
}

/// One impression (a printed sheet side) of one copy of a file, as quotes count it.
public struct Impression: Sendable, Equatable {
  /// The selected pages on it, 1-based, in reading order (1 to n-up of them).
  public var pages: [Int]
  /// Whether it is charged the colour rate.
  public var color: Bool
  /// Whether every page on it is blank.
  public var blank: Bool

  /// Creates an impression.
  public init(pages: [Int], color: Bool, blank: Bool) {
    self.pages = pages
    self.color = color
    self.blank = blank
  }
}

/// The priced lines of one file.
public struct FileQuote: Codable, Sendable, Equatable {
  /// The file as the order names it.
  public var file: String
  /// Pages in the file.
  public var pages: Int
  /// `conversion` when the pages were counted on the PDF LibreOffice made of an Office file
  /// (its layout, which a shop may check against the customer's copy); absent for a PDF or an
  /// image, whose pages are the file's own.
  public var pagesFrom: String?
  /// For `pagesFrom: conversion`: the SHA-256 of the PDF counted, the one the print-ready file
  /// is made from.
  public var pdfSHA256: String?
  /// Pages the range selects.
  public var selectedPages: Int
  /// Copies.
  public var copies: Int
  /// Pages per sheet side.
  public var nUp: Int
  /// `none`, `long-edge` or `short-edge`.
  public var duplex: String
  /// Paper size.
  public var paper: String
  /// Paper type.
  public var paperType: String
  /// `color`, `mono` or `auto`.
  public var colorMode: String
  /// Impressions per copy (printed sides after n-up).
  public var impressions: Int
  /// Impressions charged the colour rate, per copy.
  public var colorImpressions: Int
  /// Impressions charged the monochrome rate, per copy.
  public var monoImpressions: Int
  /// Impressions with only blank pages, per copy.
  public var blankImpressions: Int
  /// Sheets per copy.
  public var sheets: Int
  /// Sheets for all copies.
  public var totalSheets: Int
  /// The rates used, by name (`color.duplex`, `paper`...).
  public var rates: [String: Money]
  /// Printing (impressions × rates) for all copies, before tiers.
  public var impressionCharge: Money
  /// Paper for all copies.
  public var paperCharge: Money
  /// Each extra's charge.
  public var extras: [String: Money]
  /// The file's charge before order-level adjustments.
  public var subtotal: Money
}

/// A complete quote.
public struct Quote: Codable, Sendable, Equatable {
  /// The JSON schema version (1).
  public var schemaVersion = 1
  /// The store.
  public var store: String
  /// The price list's version.
  public var priceListVersion: String
  /// ISO 4217 code.
  public var currency: String
  /// Each file's lines.
  public var files: [FileQuote]
  /// The ID cards line.
  public var cards: Money?
  /// The highest volume tier reached, described.
  public var tier: String?
  /// What the tiers changed.
  public var tierAdjustment: Money?
  /// Files, tiers and cards.
  public var subtotal: Money
  /// Each adjustment's change.
  public var adjustments: [String: Money]
  /// What was added to reach the minimum order.
  public var minimumApplied: Money?
  /// The tax (added, or included in the total).
  public var tax: Money?
  /// Whether the tax is included in the total.
  public var taxIncluded: Bool
  /// What is charged.
  public var total: Money
  /// The customer's message to the store.
  public var message: String?
  /// The rounding rule and unit, as applied once to the total.
  public var rounding: String
  /// The tier reached: the impressions past which it applies, for the receipt's words (not in
  /// the JSON, where `tier` describes it).
  public var tierFromImpressions: Int? = nil
  /// The tier reached: its change in parts per million (-100000 for -10 %), for the receipt's
  /// words (not in the JSON, where `tier` describes it).
  public var tierPartsPerMillion: Int? = nil

  /// The JSON's keys: every property but the tier's numbers, which `tier` states in words.
  private enum CodingKeys: String, CodingKey {
    case schemaVersion, store, priceListVersion, currency, files, cards, tier, tierAdjustment
    case subtotal, adjustments, minimumApplied, tax, taxIncluded, total, message, rounding
  }
}

/// Computes quotes.
///
/// Pure and deterministic: the same order, list and facts give the same quote.
public enum Pricing {
  /// The most pages one file may have to be priced: 100 000 (a file's pages are counted one by
  /// one, so this bounds the work and memory a quote takes as well as its numbers).
  public static let maximumPages = 100_000

  /// Prices an order.
  ///
  /// The counting rule, per copy: selected pages = the range ∩ 1...N; impressions =
  /// ⌈selected ÷ n-up⌉, each colour when any page on it is (auto); sheets = impressions
  /// (simplex) or ⌈impressions ÷ 2⌉ (duplex), an odd last impression being one-sided on its
  /// own sheet (charged the simplex rate). Then × copies.
  ///
  /// Money: impression charges + paper per sheet + extras (per sheet, per copy, per job), all
  /// whole minor units; the volume tiers' change (from the whole order's impressions, copies
  /// included); ID cards; each adjustment in order, as a percentage of the running total;
  /// raised to the minimum; tax added (or shown as included); the total rounded by the list's
  /// rule to a multiple of `roundTo`.
  ///
  /// Where the money is rounded: the tiers' change, each adjustment and the tax are exact
  /// fractions of one whole amount, each rounded to the minor unit by the list's rule when it
  /// is applied, as a shop's receipt prints them. So every line shown is exact to the minor
  /// unit, the lines add up to the total, and no fraction ever compounds: carrying the exact
  /// fractions through four adjustments of four decimals needs denominators of 10^24 and
  /// overflows even 128-bit arithmetic. Every sum and product is checked; a result past
  /// `Int.max` minor units is `PricingError.overflow`, never a trap.
  ///
  /// - Throws: `PricingError` naming the file, field and value.
  public static func quote(_ order: Order, facts: [String: PageFacts], prices: PriceList)
    throws(PricingError) -> Quote
  {
    var lines: [FileLine] = []
    for file in order.files {
      guard let fileFacts = facts[file.path] else {
        throw .invalidField(
          source: file.path, field: "pages", value: "unknown", expected: "the file's page facts")
      }
      lines.append(try price(file, fileFacts, prices))
    }
    let checked = Checked(source: "order")
    // Volume tiers are marginal: impressions past a tier's threshold (counted through the
    // order, file by file, copy by copy) get its change; the price never drops when one is added.
    let blocks = lines.map { (rates: $0.perCopyRates, copies: $0.quote.copies) }
    var orderImpressions = 0
    for block in blocks {
      orderImpressions = try checked.sum(
        orderImpressions, try checked.product(block.rates.count, block.copies, "impressions"),
        "the order's impressions")
    }
    let tiers = prices.tiers.sorted { $0.fromImpressions < $1.fromImpressions }
    let tier = tiers.last { orderImpressions > $0.fromImpressions }
    let money = { (minor: Int) -> Money in
      Money(minor: minor, formatted: Currency.format(minor, code: prices.currency))
    }
    var subtotal = 0
    for line in lines {
      subtotal = try checked.sum(subtotal, line.quote.subtotal.minor, "subtotal")
    }
    var exactTierChange = Fraction(0)
    for (index, current) in tiers.enumerated() {
      let upper = index + 1 < tiers.count ? tiers[index + 1].fromImpressions : Int.max
      let charge = try chargeOfImpressions(
        blocks, after: current.fromImpressions, upTo: upper, checked)
      exactTierChange = try checked.fraction(
        Fraction(minor: charge).multiplied(by: .ppm(current.partsPerMillion))
          .flatMap { exactTierChange.adding($0) }, "the volume tiers' change")
    }
    let tierChange = try checked.rounded(
      exactTierChange, prices.rounding, "the volume tiers' change")
    subtotal = try checked.sum(subtotal, tierChange, "subtotal")
    var cards: Money?
    if let line = order.cards {
      guard let price = line.twoSided ? prices.cardTwoSided : prices.cardOneSided else {
        throw .noCardPrice(source: "order")
      }
      let amount = try checked.product(price, line.count, "the ID cards (count × price)")
      subtotal = try checked.sum(subtotal, amount, "subtotal")
      cards = money(amount)
    }
    var adjustments: [String: Money] = [:]
    var total = subtotal
    for adjustment in prices.adjustments {
      let change = try checked.rounded(
        Fraction(minor: total).multiplied(by: .ppm(adjustment.partsPerMillion)), prices.rounding,
        "adjustment \(quoted(adjustment.name))")
      adjustments[adjustment.name] = money(change)
      total = try checked.sum(total, change, "the total after \(quoted(adjustment.name))")
    }
    var minimum: Money?
    if total < prices.minimumOrder {
      minimum = money(try checked.difference(prices.minimumOrder, total, "the minimum's top-up"))
      total = prices.minimumOrder
    }
    var tax: Money?
    if let rate = prices.taxPartsPerMillion {
      if prices.taxIncluded {
        // The tax inside a tax-included total: total × rate ÷ (1 + rate).
        let included = try checked.rounded(
          Fraction(minor: total).multiplied(by: Fraction(Int128(rate), Int128(1_000_000 + rate))),
          prices.rounding, "the tax")
        tax = money(included)
      } else {
        let added = try checked.rounded(
          Fraction(minor: total).multiplied(by: .ppm(rate)), prices.rounding, "the tax")
        tax = money(added)
        total = try checked.sum(total, added, "the total with tax")
      }
    }
    let charged = try checked.rounded(
      Fraction(minor: total), prices.rounding, "the total", unit: prices.roundTo)
    return Quote(
      store: prices.store, priceListVersion: prices.version, currency: prices.currency,
      files: lines.map(\.quote), cards: cards,
      tier: tier.map {
        "past \($0.fromImpressions) impressions: \(percentText($0.partsPerMillion))"
      },
      tierAdjustment: tier.map { _ in money(tierChange) }, subtotal: money(subtotal),
      adjustments: adjustments, minimumApplied: minimum, tax: tax,
      taxIncluded: prices.taxIncluded, total: money(charged), message: order.message,
      rounding:
        "\(prices.rounding.rawValue) to \(prices.roundTo) minor unit\(prices.roundTo == 1 ? "" : "s")",
      tierFromImpressions: tier?.fromImpressions, tierPartsPerMillion: tier?.partsPerMillion
    )
  }

  /// The charge of the order's impressions numbered `after + 1 ... upTo` (1-based, counted
  /// file by file and copy by copy).
  ///
  /// - Throws: `PricingError.overflow` when a partial sum passes `Int.max`.
  static func chargeOfImpressions(
    _ blocks: [(rates: [Int], copies: Int)], after low: Int, upTo high: Int,
    _ checked: Checked = Checked(source: "order")
  ) throws(PricingError) -> Int {
    let what = "the impressions' charge"
    var total = 0
    var start = 0  // impressions before this block
    for block in blocks {
      let count = block.rates.count
      guard count > 0 else { continue }
      var prefix = [0]
      for rate in block.rates { prefix.append(try checked.sum(prefix.last ?? 0, rate, what)) }
      let impressions = try checked.product(count, block.copies, "impressions")
      // Charge of the block's impressions 1...n (copies repeat the per-copy sequence).
      func upTo(_ n: Int) throws(PricingError) -> Int {
        guard n > 0 else { return 0 }
        let clipped = min(n, impressions)
        return try checked.sum(
          try checked.product(clipped / count, prefix[count], what), prefix[clipped % count], what)
      }
      let from = low > start ? low - start : 0  // no overflow: start ≥ 0
      let to = high == Int.max ? impressions : max(0, high - start)
      if to > from { total = try checked.sum(total, try upTo(to) - upTo(from), what) }
      start = try checked.sum(start, impressions, "impressions")
    }
    return total
  }

  /// The impressions of one copy of a file, as quotes count and charge them: the selected
  /// pages in consecutive groups of n-up (the last group may be short), each group one printed
  /// sheet side; colour when the file is `color`, or `auto` with a colour page in the group;
  /// blank when every page in it is blank.
  ///
  /// - Parameters:
  ///   - options: the file's options with the price list's defaults applied.
  ///   - facts: the file's pages, colour pages and blank pages.
  ///   - file: the file's name in errors.
  /// - Returns: the impressions in order.
  /// - Throws: `PricingError` for a range that is malformed or reaches past the last page.
  public static func impressions(_ options: FileOptions, facts: PageFacts, file: String)
    throws(PricingError) -> [Impression]
  {
    let selected = try selectedPages(options.pages, count: facts.pages, file: file)
    let nUp = max(1, options.nUp ?? 1)
    let mode = options.color ?? .mono
    return stride(from: 0, to: selected.count, by: nUp).map { start in
      let group = Array(selected[start..<min(start + nUp, selected.count)])
      return Impression(
        pages: group,
        color: mode == .color
          || (mode == .auto && group.contains { facts.colorPages.contains($0) }),
        blank: group.allSatisfy { facts.blankPages.contains($0) })
    }
  }

  /// Selected pages of a range such as `1-3,5,8-` against `count` pages (all when nil).
  public static func selectedPages(_ range: String?, count: Int, file: String) throws(PricingError)
    -> [Int]
  {
    switch PageRange.resolve(range ?? "all", count: count) {
    case .pages(let pages): return pages
    case .malformed:
      throw .invalidField(
        source: file, field: "pages", value: quoted(range ?? ""), expected: "ranges like 1-3,5,8-")
    case .outside:
      throw .rangeOutsideDocument(file: file, range: range ?? "all", pages: count)
    }
  }

  /// One file's quote with what the order-level steps need.
  private struct FileLine {
    var quote: FileQuote
    /// The rate of each impression of one copy (0 for a free blank one).
    var perCopyRates: [Int]
  }

  private static func price(_ file: OrderFile, _ facts: PageFacts, _ prices: PriceList)
    throws(PricingError) -> FileLine
  {
    let checked = Checked(source: file.path)
    let options = file.options.resolved(prices.defaults)
    let charges = try FileCharges(file.path, options: options, facts: facts, prices: prices)
    let whole = try charges.charge(sheets: nil, fileFees: true, checked)
    let impressions = charges.impressions
    let colorCount = impressions.filter(\.color).count
    let quote = FileQuote(
      file: file.path, pages: facts.pages,
      pagesFrom: facts.convertedPDF == nil ? nil : "conversion", pdfSHA256: facts.convertedPDF,
      selectedPages: impressions.reduce(0) { $0 + $1.pages.count }, copies: charges.copies,
      nUp: options.nUp ?? 1, duplex: (options.duplex ?? Duplex.none).rawValue,
      paper: options.paper ?? "A4", paperType: options.paperType ?? "plain",
      colorMode: (options.color ?? .mono).rawValue, impressions: impressions.count,
      colorImpressions: colorCount, monoImpressions: impressions.count - colorCount,
      blankImpressions: impressions.filter(\.blank).count, sheets: charges.sheets,
      totalSheets: try checked.product(charges.sheets, charges.copies, "the sheets"),
      rates: charges.rateNames.mapValues {
        Money(minor: $0, formatted: Currency.format($0, code: prices.currency))
      }, impressionCharge: whole.impressionCharge,
      paperCharge: whole.paperCharge, extras: whole.extras, subtotal: whole.subtotal)
    return FileLine(quote: quote, perCopyRates: charges.impressionRates)
  }
}

/// What each impression and sheet of one copy of a file costs, as the quote charges them: the
/// one place a file's money is worked out, for its quote line and for any run of its sheets
/// (`Pricing.share`), so that the runs of a file add up to its line exactly.
struct FileCharges {
  /// The file as the order names it (in errors).
  let file: String
  /// The impressions of one copy, in order.
  let impressions: [Impression]
  /// The rate of each impression of one copy, in minor units (0 for a blank one the list
  /// charges for paper only).
  let impressionRates: [Int]
  /// The rates used, by name (`color.duplex`, `paper`...).
  let rateNames: [String: Int]
  /// Sheets of one copy.
  let sheets: Int
  /// Whether the sheets are printed on both sides.
  let duplex: Bool
  /// The price of one sheet of the file's paper.
  let sheetPrice: Int
  /// The file's extras in the order's order, with what the list charges for them.
  let extras: [(name: String, extra: Extra)]
  /// Copies.
  let copies: Int
  /// The list's currency.
  let currency: String

  /// The charges of a file with `options` (the list's defaults applied) and `facts`.
  ///
  /// - Throws: `PricingError` for a file past `Pricing.maximumPages`, a range that cannot be
  ///   read, a rate or paper price the list lacks, an extra it does not offer.
  init(_ file: String, options: FileOptions, facts: PageFacts, prices: PriceList)
    throws(PricingError)
  {
    self.file = file
    copies = options.copies ?? 1
    duplex = (options.duplex ?? Duplex.none) != Duplex.none
    currency = prices.currency
    let paper = options.paper ?? "A4"
    let paperType = options.paperType ?? "plain"
    guard facts.pages <= Pricing.maximumPages else {
      throw .outOfRange(
        source: file, field: "pages", value: "\(facts.pages)",
        expected: "at most \(Pricing.maximumPages) pages in one file")
    }
    impressions = try Pricing.impressions(options, facts: facts, file: file)
    sheets = duplex ? impressions.count / 2 + impressions.count % 2 : impressions.count
    let sizeRates = prices.rates[paper] ?? prices.rates["default"]
    var names: [String: Int] = [:]
    var rates: [Int] = []
    for (position, impression) in impressions.enumerated() {
      // In a duplex job, an odd last impression is one-sided on its own sheet.
      let twoSided = duplex && !(impressions.count % 2 == 1 && position == impressions.count - 1)
      if impression.blank && prices.blankPages == .paperOnly {
        rates.append(0)
        continue
      }
      guard let rate = sizeRates?.rate(color: impression.color, duplex: twoSided) ?? nil else {
        throw .missingRate(
          file: file, paper: paper, color: impression.color ? "colour" : "monochrome",
          sides: twoSided ? "duplex" : "simplex")
      }
      names["\(impression.color ? "color" : "mono").\(twoSided ? "duplex" : "simplex")"] = rate
      rates.append(rate)
    }
    impressionRates = rates
    guard let sheetPrice = prices.paper[paper]?[paperType] else {
      throw .missingPaperPrice(file: file, paper: paper, paperType: paperType)
    }
    self.sheetPrice = sheetPrice
    names["paper"] = sheetPrice
    rateNames = names
    var extras: [(name: String, extra: Extra)] = []
    for name in options.extras ?? [] {
      guard let extra = prices.extras[name] else {
        throw .unknownExtra(file: file, extra: name, offered: prices.extras.keys.sorted())
      }
      extras.append((name, extra))
    }
    self.extras = extras
  }

  /// The sheet (1-based, of one copy) impression `index` (0-based) is printed on.
  func sheet(ofImpression index: Int) -> Int { duplex ? index / 2 + 1 : index + 1 }

  /// What the sheets `held` of every copy are charged (all of them when nil): their
  /// impressions at their rates, their paper and the extras charged by the sheet, × copies;
  /// with `fileFees`, also the extras charged once a copy or once a job.
  ///
  /// - Throws: `PricingError.overflow` naming the file and the sum.
  func charge(sheets held: Set<Int>?, fileFees: Bool, _ checked: Checked) throws(PricingError)
    -> FileShare
  {
    let holds = { (sheet: Int) in held?.contains(sheet) ?? true }
    var impressionCharge = 0
    for (index, rate) in impressionRates.enumerated() where holds(sheet(ofImpression: index)) {
      impressionCharge = try checked.sum(impressionCharge, rate, "the printing charge")
    }
    let sheetCount = held.map { $0.filter { (1...sheets).contains($0) }.count } ?? sheets
    let paperCharge = try checked.product(sheetCount, sheetPrice, "the paper charge")
    var perCopyExtras = 0
    var perJobExtras = 0
    var charged: [String: Int] = [:]
    for (name, extra) in extras {
      let what = "extra \(quoted(name))"
      switch extra.per {
      case .job where fileFees:
        perJobExtras = try checked.sum(perJobExtras, extra.amount, what)
        charged[name] = extra.amount
      case .copy where fileFees:
        perCopyExtras = try checked.sum(perCopyExtras, extra.amount, what)
        charged[name] = try checked.product(extra.amount, copies, what)
      case .sheet:
        let perCopy = try checked.product(extra.amount, sheetCount, what)
        perCopyExtras = try checked.sum(perCopyExtras, perCopy, what)
        charged[name] = try checked.product(perCopy, copies, what)
      case .job, .copy: break
      }
    }
    let printing = try checked.product(impressionCharge, copies, "the printing charge")
    let paperTotal = try checked.product(paperCharge, copies, "the paper charge")
    let perCopy = try checked.sum(paperCharge, perCopyExtras, "the file's charge")
    let rest = try checked.sum(
      try checked.product(perCopy, copies, "the file's charge"), perJobExtras, "the file's charge")
    let money = { (minor: Int) in
      Money(minor: minor, formatted: Currency.format(minor, code: currency))
    }
    return FileShare(
      impressionCharge: money(printing), paperCharge: money(paperTotal),
      extras: charged.mapValues(money),
      subtotal: money(try checked.sum(printing, rest, "the file's charge")))
  }
}

/// Checked arithmetic for one quote: a result past `Int` is `PricingError.overflow` naming what
/// was being computed and where, never a trap.
struct Checked {
  /// The file (or `order`) named in the error.
  let source: String

  func sum(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(PricingError) -> Int {
    let (value, overflow) = a.addingReportingOverflow(b)
    if overflow { throw .overflow(source: source, what: what()) }
    return value
  }

  func difference(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(PricingError)
    -> Int
  {
    let (value, overflow) = a.subtractingReportingOverflow(b)
    if overflow { throw .overflow(source: source, what: what()) }
    return value
  }

  func product(_ a: Int, _ b: Int, _ what: @autoclosure () -> String) throws(PricingError) -> Int {
    let (value, overflow) = a.multipliedReportingOverflow(by: b)
    if overflow { throw .overflow(source: source, what: what()) }
    return value
  }

  /// A fraction that `Fraction`'s checked operations returned, or the overflow error.
  func fraction(_ value: Fraction?, _ what: @autoclosure () -> String) throws(PricingError)
    -> Fraction
  {
    guard let value else { throw .overflow(source: source, what: what()) }
    return value
  }

  /// `value` rounded by `rule` to a multiple of `unit`, or the overflow error.
  func rounded(
    _ value: Fraction?, _ rule: RoundingRule, _ what: @autoclosure () -> String, unit: Int = 1
  ) throws(PricingError) -> Int {
    guard let minor = value?.rounded(rule, unit: unit) else {
      throw .overflow(source: source, what: what())
    }
    return minor
  }
}

/// Parts per million as a percentage text: `-100000` → `-10%`, `88750` → `8.875%`.
func percentText(_ partsPerMillion: Int) -> String {
  let sign = partsPerMillion < 0 ? "-" : ""
  let magnitude = partsPerMillion.magnitude
  var fraction =
    magnitude % 10_000 == 0 ? "" : "." + String(format: "%04d", Int(magnitude % 10_000))
  while fraction.hasSuffix("0") { fraction.removeLast() }
  return "\(sign)\(magnitude / 10_000)\(fraction)%"
}
