// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint quote`: an order priced by a store's price list.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing

enum QuoteCommand {
  static let spec = CommandSpec(
    name: "quote",
    abstract: "Price a print order exactly from a store's price list.",
    discussion: """
      ORDER names files with options: copies, color \
      (color|mono|auto), duplex (none|long-edge|short-edge), nUp (1,2,4,6,9,16), pages \
      ("1-3,5,8-"), paper, paperType, extras. Files are read like 'imprint inspect' (page \
      counts, and colour pages for auto colour), in sandboxed workers. The quote is exact: \
      integer minor units; the tiers' change, each adjustment and the tax are rounded to the \
      minor unit as they are applied, so the receipt adds up. The counting and money rules are \
      in the README. The order's files are confined to one folder, the files root: paths are \
      relative to it, and '..', links leading out and absolute paths are refused \
      (file.escapesFolder), so an uploaded order cannot read other files. The files root is \
      the order's folder unless --files-root names one; absolute paths inside that folder are \
      then accepted too.
      """,
    arguments: [ArgumentSpec("order", "The order (JSON).")],
    options: [
      .value("prices", "<file>", "The store's price list (JSON)."),
      .value(
        "files-root", "<dir>",
        "The folder the order's files are relative to and confined to (default: the order's folder)."
      ),
      .value(
        "locale", "<id>",
        "Write the receipt's amounts and counts as this locale does (BCP 47: ko, hi, es...)."),
      .flag("json", "Print the quote as JSON."),
    ] + DocumentCommands.limitOptions.filter { $0.name != "password" }
  ) { arguments, console in
    guard let pricesPath = arguments.value("prices") else {
      throw UsageError(message: "missing --prices <file>")
    }
    let locale = try arguments.value("locale").map { identifier throws(PricingError) in
      guard LocaleData.isKnown(identifier) else { throw .unknownLocale(identifier: identifier) }
      return LocaleData.locale(identifier)
    }
    let jobs = try arguments.int("jobs", in: 1...256) ?? activeProcessorCount
    let sandbox = try DocumentCommands.sandbox(arguments, console, jobs: jobs)
    let quote = try await OrderQuoter(sandbox: sandbox, jobs: jobs).quote(
      order: arguments.positionals[0], prices: pricesPath,
      filesRoot: arguments.value("files-root")
    ).quote
    if arguments.flag("json") {
      console.stdout.write(JSONOutput.pretty(quote))
    } else {
      console.stdout.write(receipt(quote, locale: locale))
    }
    return ImprintCLI.success
  }

  /// The plain-text receipt.
  ///
  /// Names from the order and the price list (files, store, adjustments, extras, the message)
  /// are escaped: a receipt printed on a terminal cannot be driven by an uploaded order.
  ///
  /// With a `locale`, amounts are written as it writes money (`₩6,880`, `1,32 US$`) and counts
  /// grouped as it groups them; the words stay English.
  static func receipt(_ quote: Quote, locale: Locale? = nil) -> String {
    let safe = SafeText.escaped
    func amount(_ money: Money) -> String {
      locale.map { Currency.format(money.minor, code: quote.currency, locale: $0) }
        ?? money.formatted
    }
    func row(_ label: String, _ money: Money) -> String {
      let width = 44
      let text = amount(money)
      // Bidi marks in right-to-left locales' amounts take no column.
      let columns = text.unicodeScalars.filter { $0.properties.generalCategory != .format }.count
      let padding = max(1, width - label.count - columns)
      return label + String(repeating: " ", count: padding) + text + "\n"
    }
    func count(_ value: Int) -> String {
      locale.map { value.formatted(IntegerFormatStyle<Int>(locale: $0)) } ?? "\(value)"
    }
    var text = "\(safe(quote.store)) — price list \(safe(quote.priceListVersion))\n\n"
    for file in quote.files {
      text += "\(safe(file.file))\n"
      text +=
        "  \(count(file.selectedPages)) of \(count(file.pages)) page\(file.pages == 1 ? "" : "s"), "
        + "\(file.nUp)-up, \(file.duplex == "none" ? "one-sided" : "two-sided (\(file.duplex))"), "
        + "\(file.paper) \(safe(file.paperType)), \(file.colorMode)\n"
      text +=
        "  \(count(file.impressions)) impression\(file.impressions == 1 ? "" : "s") "
        + "(\(count(file.colorImpressions)) colour, \(count(file.blankImpressions)) blank) on "
        + "\(count(file.sheets)) sheet\(file.sheets == 1 ? "" : "s")"
        + " × \(count(file.copies)) cop\(file.copies == 1 ? "y" : "ies")\n"
      text += row("  printing", file.impressionCharge)
      text += row("  paper", file.paperCharge)
      for (name, amount) in file.extras.sorted(by: { $0.key < $1.key }) {
        text += row("  \(safe(name))", amount)
      }
      text += row("  file total", file.subtotal)
    }
    if let cards = quote.cards { text += row("ID cards", cards) }
    if let tier = quote.tier, let change = quote.tierAdjustment {
      text += row("volume (\(tier))", change)
    }
    text += row("subtotal", quote.subtotal)
    for (name, amount) in quote.adjustments.sorted(by: { $0.key < $1.key }) {
      text += row(safe(name), amount)
    }
    if let minimum = quote.minimumApplied { text += row("to the minimum order", minimum) }
    if let tax = quote.tax { text += row(quote.taxIncluded ? "tax included" : "tax", tax) }
    text += row("TOTAL", quote.total)
    if let message = quote.message { text += "\nmessage to the store: \(safe(message))\n" }
    return text
  }
}
