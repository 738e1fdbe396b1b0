// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: a store's price list (JSON, schemaVersion 1; documented in docs/quotes.md).

import Foundation
import ImprintCore

/// Colour mode of a file.
public enum ColorMode: String, Sendable, Codable, CaseIterable {
  /// Every impression at the colour rate.
  case color
  /// Every impression at the monochrome rate.
  case mono
  /// Only impressions carrying a colour page at the colour rate (from colour detection).
  case auto
}

/// Two-sided printing.
public enum Duplex: String, Sendable, Codable, CaseIterable {
  /// One side of each sheet.
  case none
  /// Both sides, flipped on the long edge.
  case longEdge = "long-edge"
  /// Both sides, flipped on the short edge.
  case shortEdge = "short-edge"
}

/// Which blank impressions are charged.
public enum BlankPolicy: String, Sendable, Codable {
  /// Blank impressions cost like any other.
  case charge
  /// Blank impressions cost only their paper (no ink).
  case paperOnly = "paper-only"
}

/// Per-impression rates of one paper size, in minor units.
public struct ImpressionRates: Sendable, Equatable {
  /// `[color or mono][simplex or duplex]`.
  public var rates: [String: [String: Int]]

  /// The rate, if the list has one.
  public func rate(color: Bool, duplex: Bool) -> Int? {
    rates[color ? "color" : "mono"]?[duplex ? "duplex" : "simplex"]
  }
}

/// How an extra is charged.
public enum ExtraUnit: String, Sendable, Codable {
  /// Once per file (binding the whole job).
  case job
  /// Once per copy (stapling each copy).
  case copy
  /// Per sheet of every copy (heavy paper, hole punch).
  case sheet
}

/// An extra service.
public struct Extra: Sendable, Equatable {
  /// How it is charged.
  public var per: ExtraUnit
  /// Its price in minor units.
  public var amount: Int
}

/// A volume tier: past `fromImpressions` impressions in the whole order, impression charges
/// change by `partsPerMillion` (−100 000 is 10 % off).
public struct Tier: Sendable, Equatable {
  /// The order's impression count from which the tier applies.
  public var fromImpressions: Int
  /// The change in parts per million (−100 000 is 10 % off).
  public var partsPerMillion: Int
}

/// A percentage applied to the subtotal (a student discount, a surcharge).
public struct Adjustment: Sendable, Equatable {
  /// Shown on the quote.
  public var name: String
  /// Parts per million (−100 000 is 10 % off).
  public var partsPerMillion: Int
}

/// Defaults and options a file may set.
public struct FileOptions: Sendable, Equatable {
  /// Copies, 1 to 10 000.
  public var copies: Int?
  /// Colour mode.
  public var color: ColorMode?
  /// Duplex.
  public var duplex: Duplex?
  /// Pages per sheet side: 1, 2, 4, 6, 9 or 16.
  public var nUp: Int?
  /// Page range such as `1-3,5,8-` (all pages when nil).
  public var pages: String?
  /// Paper size (A4, Letter, ...).
  public var paper: String?
  /// Paper type (plain, heavy, ...).
  public var paperType: String?
  /// Extras by name.
  public var extras: [String]?

  /// No options.
  public init() {}
}

/// A store's price list.
public struct PriceList: Sendable, Equatable {
  /// The store's name.
  public var store: String
  /// The list's version, copied into every quote.
  public var version: String
  /// ISO 4217 currency code.
  public var currency: String
  /// Rates by paper size; `default` applies to sizes without their own.
  public var rates: [String: ImpressionRates]
  /// Paper cost per sheet by size and paper type.
  public var paper: [String: [String: Int]]
  /// Volume tiers.
  public var tiers: [Tier]
  /// Extras by name.
  public var extras: [String: Extra]
  /// Percentages applied to the subtotal, in order.
  public var adjustments: [Adjustment]
  /// The smallest total charged.
  public var minimumOrder: Int
  /// Tax rate in parts per million (10 % is 100 000), when the store charges tax.
  public var taxPartsPerMillion: Int?
  /// Whether prices include the tax (else it is added).
  public var taxIncluded: Bool
  /// How blank impressions are charged.
  public var blankPages: BlankPolicy
  /// The rounding rule, applied once to the total.
  public var rounding: RoundingRule
  /// The total is rounded to a multiple of this many minor units (10 for 10-won steps).
  public var roundTo: Int
  /// What a file that sets nothing gets.
  public var defaults: FileOptions
  /// Price of one ID card printed on one side, and on both.
  public var cardOneSided: Int?
  /// Price of one two-sided ID card.
  public var cardTwoSided: Int?

  /// Paper sizes the price lists and orders may name.
  public static let paperSizes = PaperSize.pageSizes.map(\.rawValue)
  /// Allowed pages per sheet side.
  public static let nUpValues = SheetGrid.nUpValues
  /// The largest price (rate, paper, extra, card, minimum order) a list may state.
  ///
  /// In minor units: 10^12 (ten billion dollars in cents). Larger values are refused with
  /// `pricing.outOfRange`, so a typo fails at the list rather than in an overflow.
  public static let maximumAmount = 1_000_000_000_000
  /// Percentages (adjustments, tiers, tax) lie within -100 % to +1000 %.
  public static let percentRange = -100.0...1000.0
  /// `roundTo` lies within 1 to 1 000 000 minor units.
  public static let roundToRange = 1...1_000_000
  /// Copies of one file: 1 to 10 000.
  public static let copiesRange = 1...10_000
  /// ID cards in one order: 1 to 100 000.
  public static let cardsRange = 1...100_000

  /// Parses a price list.
  ///
  /// - Throws: `PricingError` naming the file and the field.
  public static func parse(_ bytes: [UInt8], source: String) throws(PricingError) -> PriceList {
    var top = try JSONReader.parse(bytes, source: source)
    guard try top.integer("schemaVersion") == 1 else {
      throw .invalidField(
        source: source, field: "schemaVersion", value: describe(top.object["schemaVersion"]),
        expected: "1")
    }
    let currency = try top.string("currency") ?? ""
    guard Currency.minorDigits[currency] != nil else {
      throw .unknownCurrency(source: source, code: currency)
    }
    var list = PriceList(
      store: try top.string("store") ?? "", version: try top.string("version") ?? "",
      currency: currency, rates: [:], paper: [:], tiers: [], extras: [:], adjustments: [],
      minimumOrder: try top.amount("minimumOrder") ?? 0, taxPartsPerMillion: nil,
      taxIncluded: false,
      blankPages: try top.choice("blankPages", BlankPolicy.self, expected: "charge or paper-only")
        ?? .charge,
      rounding: try top.choice(
        "rounding", RoundingRule.self, expected: "half-up, half-even, down or up") ?? .halfUp,
      roundTo: try top.integer("roundTo", in: roundToRange) ?? 1, defaults: FileOptions(),
      cardOneSided: nil,
      cardTwoSided: nil)
    guard !list.version.isEmpty else {
      throw .invalidField(
        source: source, field: "version", value: "missing", expected: "a version string")
    }
    guard var rates = try top.child("rates") else {
      throw .invalidField(
        source: source, field: "rates", value: "missing", expected: "rates by paper size")
    }
    for size in rates.object.keys.sorted() {
      guard size == "default" || paperSizes.contains(size) else {
        throw .invalidField(
          source: source, field: rates.key(size), value: quoted(size),
          expected: "default or one of \(paperSizes.joined(separator: ", "))")
      }
      var sizeReader = try rates.child(size)
      var table: [String: [String: Int]] = [:]
      for mode in ["color", "mono"] {
        guard var sides = try sizeReader?.child(mode) else { continue }
        for side in ["simplex", "duplex"] {
          if let amount = try sides.amount(side) { table[mode, default: [:]][side] = amount }
        }
        try sides.finish()
      }
      try sizeReader?.finish()
      list.rates[size] = ImpressionRates(rates: table)
    }
    try rates.finish()
    if var paper = try top.child("paper") {
      for size in paper.object.keys.sorted() {
        guard paperSizes.contains(size) else {
          throw .invalidField(
            source: source, field: paper.key(size), value: quoted(size),
            expected: "one of \(paperSizes.joined(separator: ", "))")
        }
        guard var types = try paper.child(size) else { continue }
        for type in types.object.keys.sorted() {
          list.paper[size, default: [:]][type] = try types.amount(type)
        }
        try types.finish()
      }
      try paper.finish()
    }
    for (index, item) in (try top.array("tiers") ?? []).enumerated() {
      var tier = try JSONReader(item, source: source, path: "tiers[\(index)]")
      guard let from = try tier.integer("fromImpressions", in: 1...Int(Int32.max)),
        let bp = try tier.partsPerMillion("percent", in: percentRange),
        bp > -1_000_000
      else {
        throw .invalidField(
          source: source, field: "tiers[\(index)]", value: "incomplete",
          expected: "fromImpressions >= 1 and percent > -100")
      }
      try tier.finish()
      list.tiers.append(Tier(fromImpressions: from, partsPerMillion: bp))
    }
    if var extras = try top.child("extras") {
      for name in extras.object.keys.sorted() {
        guard var extra = try extras.child(name) else { continue }
        guard let per = try extra.choice("per", ExtraUnit.self, expected: "job, copy or sheet"),
          let amount = try extra.amount("amount")
        else {
          throw .invalidField(
            source: source, field: extras.key(name), value: "incomplete", expected: "per and amount"
          )
        }
        try extra.finish()
        list.extras[name] = Extra(per: per, amount: amount)
      }
      try extras.finish()
    }
    for (index, item) in (try top.array("adjustments") ?? []).enumerated() {
      var adjustment = try JSONReader(item, source: source, path: "adjustments[\(index)]")
      guard let name = try adjustment.string("name"),
        let bp = try adjustment.partsPerMillion("percent", in: percentRange),
        bp > -1_000_000
      else {
        throw .invalidField(
          source: source, field: "adjustments[\(index)]", value: "incomplete",
          expected: "name and percent > -100")
      }
      try adjustment.finish()
      list.adjustments.append(Adjustment(name: name, partsPerMillion: bp))
    }
    if var tax = try top.child("tax") {
      guard let bp = try tax.partsPerMillion("percent", in: 0...percentRange.upperBound) else {
        throw .invalidField(
          source: source, field: "tax.percent", value: "missing or negative",
          expected: "a percentage >= 0")
      }
      list.taxPartsPerMillion = bp
      list.taxIncluded = try tax.bool("included") ?? false
      try tax.finish()
    }
    if var cards = try top.child("cards") {
      list.cardOneSided = try cards.amount("oneSided")
      list.cardTwoSided = try cards.amount("twoSided")
      try cards.finish()
    }
    if var defaults = try top.child("defaults") {
      list.defaults = try FileOptions.read(&defaults)
      try defaults.finish()
    }
    try top.finish()
    return list
  }
}

extension FileOptions {
  /// Reads the option keys of an order file or of the price list's defaults.
  static func read(_ reader: inout JSONReader) throws(PricingError) -> FileOptions {
    var options = FileOptions()
    options.copies = try reader.integer("copies", in: PriceList.copiesRange)
    options.color = try reader.choice("color", ColorMode.self, expected: "color, mono or auto")
    options.duplex = try reader.choice(
      "duplex", Duplex.self, expected: "none, long-edge or short-edge")
    options.nUp = try reader.integer("nUp", in: 1...16)
    if let nUp = options.nUp, !PriceList.nUpValues.contains(nUp) {
      throw .invalidField(
        source: reader.source, field: reader.key("nUp"), value: "\(nUp)",
        expected: "1, 2, 4, 6, 9 or 16")
    }
    options.pages = try reader.string("pages")
    options.paper = try reader.string("paper")
    if let paper = options.paper, !PriceList.paperSizes.contains(paper) {
      throw .invalidField(
        source: reader.source, field: reader.key("paper"), value: quoted(paper),
        expected: "one of \(PriceList.paperSizes.joined(separator: ", "))")
    }
    options.paperType = try reader.string("paperType")
    if let list = try reader.array("extras") {
      options.extras = try list.enumerated().map { (index, item) throws(PricingError) in
        guard let name = item as? String else {
          throw .invalidField(
            source: reader.source, field: reader.key("extras[\(index)]"), value: describe(item),
            expected: "an extra's name")
        }
        return name
      }
    }
    return options
  }

  /// These options, with every unset one taken from `defaults` (and then the built-in ones:
  /// 1 copy, mono, simplex, 1-up, A4, plain).
  public func resolved(_ defaults: FileOptions) -> FileOptions {
    var result = FileOptions()
    result.copies = copies ?? defaults.copies ?? 1
    result.color = color ?? defaults.color ?? .mono
    result.duplex = duplex ?? defaults.duplex ?? Duplex.none
    result.nUp = nUp ?? defaults.nUp ?? 1
    result.pages = pages ?? defaults.pages
    result.paper = paper ?? defaults.paper ?? "A4"
    result.paperType = paperType ?? defaults.paperType ?? "plain"
    result.extras = extras ?? defaults.extras ?? []
    return result
  }
}
