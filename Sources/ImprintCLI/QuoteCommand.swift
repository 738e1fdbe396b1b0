// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint quote`: an order priced by a store's price list.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing

enum QuoteCommand {
  /// The options of `imprint quote`; `prepare` shares the price list, files root and limits.
  enum Key {
    // The order's options are the library's table (`QuoteOption`), as the service and
    // manifests read it.
    static let prices = OptionKey<String>(QuoteOption.prices.entry)
    static let filesRoot = OptionKey<String>(QuoteOption.filesRoot.entry)
    static let locale = OptionKey<String>(QuoteOption.locale.entry)
    static let json = OptionKey.flag("json", "Print the quote as JSON.")
  }

  /// The workers' limits and `--jobs`, without a password (orders name no passwords).
  static let limitOptions: [any OptionDeclaration] =
    DocumentCommands.sandboxLimitOptions + [DocumentCommands.Key.jobs]

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
      in docs/quotes.md. The order's files are confined to one folder, the files root: paths are \
      relative to it, and '..', links leading out and absolute paths are refused \
      (file.escapesFolder), so an uploaded order cannot read other files. The files root is \
      the order's folder unless --files-root names one; absolute paths inside that folder are \
      then accepted too.
      """,
    arguments: [ArgumentSpec("order", "The order (JSON).", kind: .file)],
    options: [Key.prices, Key.filesRoot, Key.locale, Key.json] + limitOptions
  ) { arguments, console in
    var source = ArgumentSource(arguments)
    let request = try QuoteRequest.read(from: &source, offering: QuoteOption.commandLine)
    guard let pricesPath = request.prices else {
      throw UsageError(message: "missing --prices <file>")
    }
    let locale = request.locale
    // Checked before any file is read: an unknown locale is refused at once.
    if let locale, !LocaleData.isKnown(locale) {
      throw PricingError.unknownLocale(identifier: locale)
    }
    let jobs = try arguments.int(DocumentCommands.Key.jobs) ?? activeProcessorCount
    let sandbox = try DocumentCommands.sandbox(arguments, console, jobs: jobs)
    defer { sandbox.stopIdleWorkers() }
    let quote = try await OrderQuoter(sandbox: sandbox, jobs: jobs).quote(
      order: arguments.positionals[0], prices: pricesPath, filesRoot: request.filesRoot
    ).quote
    if arguments.flag(Key.json) {
      console.stdout.write(JSONOutput.pretty(quote))
    } else {
      console.stdout.write(try quote.receipt(locale: locale))
    }
    return ImprintCLI.success
  }
}
