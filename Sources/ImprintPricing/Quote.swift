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
      guard let count = try cards.integer("count"), (1...100_000).contains(count) else {
        throw .invalidField(
          source: source, field: "cards.count", value: describe(cards.object["count"]),
          expected: "1 to 100000")
      }
      let sides = try cards.string("sides") ?? "both"
      guard sides == "both" || sides == "front" else {
        throw .invalidField(
          source: source, field: "cards.sides", value: "'\(sides)'", expected: "front or both")
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

  /// Creates facts.
  public init(pages: Int, colorPages: Set<Int> = [], blankPages: Set<Int> = []) {
    self.pages = pages
    self.colorPages = colorPages
    self.blankPages = blankPages
  }
}

/// An amount in minor units with its formatted text.
public struct Money: Codable, Sendable, Equatable {
  /// Minor units (cents, won).
  public var minor: Int
  /// Formatted, for example `KRW 12,340` or `USD 12.34`.
  public var formatted: String
}

/// The priced lines of one file.
public struct FileQuote: Codable, Sendable, Equatable {
  /// The file as the order names it.
  public var file: String
  /// Pages in the file.
  public var pages: Int
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
}

/// Computes quotes.
///
/// Pure and deterministic: the same order, list and facts give the same quote.
public enum Pricing {
  /// Prices an order.
  ///
  /// The counting rule, per copy: selected pages = the range ∩ 1...N; impressions =
  /// ⌈selected ÷ n-up⌉, each colour when any page on it is (auto); sheets = impressions
  /// (simplex) or ⌈impressions ÷ 2⌉ (duplex), an odd last impression being one-sided on its
  /// own sheet (charged the simplex rate). Then × copies.
  ///
  /// Money: impression charges × the volume tier (from the whole order's impressions, copies
  /// included) + paper per sheet + extras (per sheet, per copy, per job); the subtotal ×
  /// each adjustment in order; raised to the minimum; tax added (or shown as included); the
  /// total rounded once by the list's rule to a multiple of `roundTo`. Line items are shown
  /// rounded by the same rule; only the total is the sum that is charged.
  ///
  /// - Throws: `PricingError` naming the file, field and value.
  public static func quote(_ order: Order, facts: [String: PageFacts], prices: PriceList)
    throws(PricingError) -> Quote
  {
    var lines: [(FileQuote, impressionCharge: Fraction, rest: Fraction, perCopyRates: [Int])] = []
    for file in order.files {
      guard let fileFacts = facts[file.path] else {
        throw .invalidField(
          source: file.path, field: "pages", value: "unknown", expected: "the file's page facts")
      }
      lines.append(try price(file, fileFacts, prices))
    }
    // Volume tiers are marginal: impressions past a tier's threshold (counted through the
    // order, file by file, copy by copy) get its change; the price never drops when one is added.
    let blocks = lines.map { (rates: $0.perCopyRates, copies: $0.0.copies) }
    let orderImpressions = blocks.reduce(0) { $0 + $1.rates.count * $1.copies }
    let tiers = prices.tiers.sorted { $0.fromImpressions < $1.fromImpressions }
    let tier = tiers.last { orderImpressions > $0.fromImpressions }
    let money = { (value: Fraction) -> Money in
      let minor = value.rounded(prices.rounding)
      return Money(minor: minor, formatted: Currency.format(minor, code: prices.currency))
    }
    var subtotal = Fraction(0)
    var tierChange = Fraction(0)
    for line in lines { subtotal = subtotal + line.impressionCharge + line.rest }
    for (index, current) in tiers.enumerated() {
      let upper = index + 1 < tiers.count ? tiers[index + 1].fromImpressions : Int.max
      let charge = chargeOfImpressions(blocks, after: current.fromImpressions, upTo: upper)
      tierChange = tierChange + Fraction(minor: charge) * Fraction.ppm(current.partsPerMillion)
    }
    subtotal = subtotal + tierChange
    var cards: Money?
    if let line = order.cards {
      guard let price = line.twoSided ? prices.cardTwoSided : prices.cardOneSided else {
        throw .noCardPrice(source: "order")
      }
      let amount = Fraction(minor: price) * line.count
      subtotal = subtotal + amount
      cards = money(amount)
    }
    var adjustments: [String: Money] = [:]
    var total = subtotal
    for adjustment in prices.adjustments {
      let change = total * Fraction.ppm(adjustment.partsPerMillion)
      adjustments[adjustment.name] = money(change)
      total = total + change
    }
    var minimum: Money?
    if total < Fraction(minor: prices.minimumOrder) {
      minimum = money(Fraction(minor: prices.minimumOrder) - total)
      total = Fraction(minor: prices.minimumOrder)
    }
    var tax: Money?
    if let rate = prices.taxPartsPerMillion {
      if prices.taxIncluded {
        // The tax inside a tax-included total: total × rate ÷ (1 + rate).
        tax = money(total * Fraction(Int128(rate), Int128(1_000_000 + rate)))
      } else {
        let added = total * Fraction.ppm(rate)
        tax = money(added)
        total = total + added
      }
    }
    let charged = total.rounded(prices.rounding, unit: prices.roundTo)
    return Quote(
      store: prices.store, priceListVersion: prices.version, currency: prices.currency,
      files: lines.map(\.0), cards: cards,
      tier: tier.map {
        "past \($0.fromImpressions) impressions: \(percentText($0.partsPerMillion))"
      },
      tierAdjustment: tier.map { _ in money(tierChange) }, subtotal: money(subtotal),
      adjustments: adjustments, minimumApplied: minimum, tax: tax,
      taxIncluded: prices.taxIncluded,
      total: Money(minor: charged, formatted: Currency.format(charged, code: prices.currency)),
      message: order.message,
      rounding:
        "\(prices.rounding.rawValue) to \(prices.roundTo) minor unit\(prices.roundTo == 1 ? "" : "s")"
    )
  }

  /// The charge of the order's impressions numbered `after + 1 ... upTo` (1-based, counted
  /// file by file and copy by copy).
  static func chargeOfImpressions(
    _ blocks: [(rates: [Int], copies: Int)], after low: Int, upTo high: Int
  ) -> Int {
    var total = 0
    var start = 0  // impressions before this block
    for block in blocks {
      let count = block.rates.count
      guard count > 0 else { continue }
      var prefix = [0]
      for rate in block.rates { prefix.append((prefix.last ?? 0) + rate) }
      // Charge of the block's impressions 1...n (copies repeat the per-copy sequence).
      func upTo(_ n: Int) -> Int {
        guard n > 0 else { return 0 }
        let clipped = min(n, count * block.copies)
        return (clipped / count) * prefix[count] + prefix[clipped % count]
      }
      let from = max(0, low - start)
      let to = high == Int.max ? count * block.copies : max(0, high - start)
      if to > from { total += upTo(to) - upTo(from) }
      start += count * block.copies
    }
    return total
  }

  /// Selected pages of a range such as `1-3,5,8-` against `count` pages (all when nil).
  public static func selectedPages(_ range: String?, count: Int, file: String) throws(PricingError)
    -> [Int]
  {
    switch PageRange.resolve(range ?? "all", count: count) {
    case .pages(let pages): return pages
    case .malformed:
      throw .invalidField(
        source: file, field: "pages", value: "'\(range ?? "")'", expected: "ranges like 1-3,5,8-")
    case .outside:
      throw .rangeOutsideDocument(file: file, range: range ?? "all", pages: count)
    }
  }

  private static func price(_ file: OrderFile, _ facts: PageFacts, _ prices: PriceList)
    throws(PricingError) -> (
      FileQuote, impressionCharge: Fraction, rest: Fraction, perCopyRates: [Int]
    )
  {
    let options = file.options.resolved(prices.defaults)
    let copies = options.copies ?? 1
    let nUp = options.nUp ?? 1
    let duplex = (options.duplex ?? Duplex.none) != Duplex.none
    let paper = options.paper ?? "A4"
    let paperType = options.paperType ?? "plain"
    let mode = options.color ?? .mono
    let selected = try selectedPages(options.pages, count: facts.pages, file: file.path)
    // Impressions: consecutive groups of n-up selected pages.
    var impressions: [(color: Bool, blank: Bool)] = []
    var index = 0
    while index < selected.count {
      let group = selected[index..<min(index + nUp, selected.count)]
      let color =
        mode == .color || (mode == .auto && group.contains { facts.colorPages.contains($0) })
      impressions.append((color, group.allSatisfy { facts.blankPages.contains($0) }))
      index += nUp
    }
    let sheets = duplex ? (impressions.count + 1) / 2 : impressions.count
    let sizeRates = prices.rates[paper] ?? prices.rates["default"]
    var rates: [String: Money] = [:]
    func money(_ value: Int) -> Money {
      Money(minor: value, formatted: Currency.format(value, code: prices.currency))
    }
    var impressionCharge = 0
    var perCopyRates: [Int] = []
    for (position, impression) in impressions.enumerated() {
      // In a duplex job, an odd last impression is one-sided on its own sheet.
      let twoSided = duplex && !(impressions.count % 2 == 1 && position == impressions.count - 1)
      if impression.blank && prices.blankPages == .paperOnly {
        perCopyRates.append(0)
        continue
      }
      guard let rate = sizeRates?.rate(color: impression.color, duplex: twoSided) ?? nil else {
        throw .missingRate(
          file: file.path, paper: paper, color: impression.color ? "colour" : "monochrome",
          sides: twoSided ? "duplex" : "simplex")
      }
      rates["\(impression.color ? "color" : "mono").\(twoSided ? "duplex" : "simplex")"] = money(
        rate)
      impressionCharge += rate
      perCopyRates.append(rate)
    }
    guard let sheetPrice = prices.paper[paper]?[paperType] else {
      throw .missingPaperPrice(file: file.path, paper: paper, paperType: paperType)
    }
    rates["paper"] = money(sheetPrice)
    let paperCharge = sheets * sheetPrice
    var perCopyExtras = 0
    var perJobExtras = 0
    var extras: [String: Money] = [:]
    for name in options.extras ?? [] {
      guard let extra = prices.extras[name] else {
        throw .unknownExtra(file: file.path, extra: name, offered: prices.extras.keys.sorted())
      }
      switch extra.per {
      case .job:
        perJobExtras += extra.amount
        extras[name] = money(extra.amount)
      case .copy:
        perCopyExtras += extra.amount
        extras[name] = money(extra.amount * copies)
      case .sheet:
        perCopyExtras += extra.amount * sheets
        extras[name] = money(extra.amount * sheets * copies)
      }
    }
    let impressionTotal = Fraction(minor: impressionCharge) * copies
    let rest = Fraction(minor: (paperCharge + perCopyExtras) * copies + perJobExtras)
    let colorCount = impressions.filter(\.color).count
    let quote = FileQuote(
      file: file.path, pages: facts.pages, selectedPages: selected.count, copies: copies,
      nUp: nUp, duplex: (options.duplex ?? Duplex.none).rawValue, paper: paper,
      paperType: paperType, colorMode: mode.rawValue, impressions: impressions.count,
      colorImpressions: colorCount, monoImpressions: impressions.count - colorCount,
      blankImpressions: impressions.filter(\.blank).count, sheets: sheets,
      totalSheets: sheets * copies, rates: rates,
      impressionCharge: money(impressionCharge * copies), paperCharge: money(paperCharge * copies),
      extras: extras,
      subtotal: money(
        impressionCharge * copies + (paperCharge + perCopyExtras) * copies + perJobExtras))
    return (quote, impressionTotal, rest, perCopyRates)
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
