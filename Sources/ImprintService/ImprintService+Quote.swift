// SPDX-License-Identifier: Apache-2.0
// ImprintService: `POST /v1/quote`: an order and its files as multipart parts, priced by a
// price list the server was configured with, through `OrderQuoter` (`imprint quote`).

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintHTTP
import ImprintPricing

extension ImprintService {
  /// `POST /v1/quote`: the quote of an order, as `imprint quote` makes it.
  ///
  /// The body is multipart: the part `order` (the order JSON) and one part per file of the
  /// order, named by the file's path as the order gives it (`poster.pdf`, `docs/a.pdf`). The
  /// files are written to a private folder (their paths confined to it as `--files-root`
  /// confines them) and read in the sandbox's workers. Query parameters: `prices` (the name of
  /// a price list of the configuration's `PriceListStore`, as reloaded last; may be left out
  /// when it has one), `format`
  /// (`json`, the default: `imprint quote --json`'s document; `receipt`: the text receipt),
  /// `locale` (the receipt's language).
  func quote(_ request: HTTPRequest) async throws -> HTTPResponse {
    try Self.expect(request, ["multipart/form-data"])
    var options = try RequestOptions(query: request)
    // The library reads the options by their names (`QuoteOption`), as `imprint quote`.
    let asked = try QuoteRequest.read(from: &options, offering: QuoteOption.request)
    let (format, locale) = (asked.format ?? .json, asked.locale)
    try options.finish()
    let (name, prices, _) = try priceList(asked.prices, route: request.path)
    if let locale, !LocaleData.isKnown(locale) {
      throw PricingError.unknownLocale(identifier: locale)
    }
    let parts = try Self.parts(of: request, known: nil)
    guard let orderPart = parts["order"] else {
      throw ServiceError.missingPart(path: request.path, name: "order")
    }
    let orderSource = orderPart.filename ?? "order"
    let held = try takeJSON(orderPart, route: request.path)
    defer { server.release(held) }
    let order = try Order.parse(orderPart.bytes, source: orderSource)
    let folder = try RequestFolder()
    let root = folder.path + "/files"
    let quoted: OrderQuote
    do {
      try FileIO.makeFolder(root)
      let paths = try order.filePaths(root: root)
      // Copies for the workers to read, removed with the request: written and checked, not
      // flushed to the disk (an fsync of each file and its folder cost more than the quote).
      try AtomicFile.$flushEachFile.withValue(false) {
        try Self.place(parts, of: order, at: paths, route: request.path)
      }
      quoted = try await OrderQuoter(sandbox: sandbox, jobs: configuration.concurrentRequests)
        .quote(
          order, prices: prices, filesRoot: root, explicitRoot: false, orderSource: orderSource,
          pricesSource: "price list '\(name)'")
    } catch {
      // The order's file names as the client sent them, never the request's private folder.
      throw Self.withoutFolders(error, [root, folder.path])
    }
    guard format == .receipt else { return .json(quoted.quote) }
    return HTTPResponse(
      status: 200, contentType: "text/plain; charset=utf-8",
      body: Array(try quoted.quote.receipt(locale: locale).utf8))
  }

  /// The price list a request names (`prices`; may be left out when the server has one), as
  /// last loaded, with the bytes it was read from.
  ///
  /// - Throws: `ServiceError.missingParameter` without a name when the server has several or
  ///   none; `.unknownPriceList` for a name it does not have.
  func priceList(_ requested: String?, route: String) throws(ServiceError) -> (
    name: String, list: PriceList, bytes: [UInt8]
  ) {
    let lists = configuration.priceLists
    guard let name = requested ?? (lists.names.count == 1 ? lists.names.first : nil) else {
      throw .missingParameter(name: QuoteOption.prices.names.key, route: route)
    }
    guard let (list, bytes) = lists.listWithBytes(name) else {
      throw .unknownPriceList(name: name, available: lists.names)
    }
    return (name, list, bytes)
  }

  /// Writes the part of each of the order's files to its confined path.
  ///
  /// - Throws: `ServiceError.missingPart` for a file of the order that has no part;
  ///   `.unknownPart` for a part that is neither `order` nor a file of the order;
  ///   `.duplicatePart` for two file names that lead to one path (`a.pdf`, `./a.pdf`) or a
  ///   file name that another uses as a folder; `FileError` when a file cannot be written.
  static func place(
    _ parts: [String: FormPart], of order: Order, at paths: [String], route: String
  ) throws {
    let names = order.files.map(\.path)
    if let stray = parts.keys.sorted().first(where: { $0 != "order" && !names.contains($0) }) {
      throw ServiceError.unknownPart(path: route, name: stray, expected: ["order"] + names)
    }
    var placed: [String: String] = [:]
    for (name, path) in zip(names, paths) {
      guard let part = parts[name] else { throw ServiceError.missingPart(path: route, name: name) }
      if let first = placed[path] {
        guard first == name else { throw ServiceError.duplicatePart(path: route, name: name) }
        continue
      }
      if let other = placed.keys.first(where: {
        $0.hasPrefix(path + "/") || path.hasPrefix($0 + "/")
      }) {
        throw ServiceError.duplicatePart(path: route, name: placed[other] ?? name)
      }
      placed[path] = name
      try FileIO.makeFolder((path as NSString).deletingLastPathComponent)
      try AtomicFile.write(part.bytes, to: path)
    }
  }
}
