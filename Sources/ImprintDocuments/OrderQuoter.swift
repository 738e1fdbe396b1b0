// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: an order quoted from its files as the sandbox reads them: the one pipeline
// behind `imprint quote`, batch quote jobs and a server's quotes.

import Foundation
import ImprintCore
import ImprintPricing

/// One file of a quoted order, as the sandbox read it.
public struct QuotedFile: Sendable, Equatable {
  /// The file as the order names it.
  public var file: String
  /// The path it was read from, confined to the files root.
  public var path: String
  /// What the sandbox reported (type, pages, page sizes, and colours when they were analysed).
  public var info: DocumentInfo
  /// What pricing used: the pages, and which are colour or blank.
  public var facts: PageFacts
  /// The file's options with the price list's defaults applied (what was priced).
  public var options: FileOptions
}

/// A quote and the files it was priced from.
public struct OrderQuote: Sendable, Equatable {
  /// The quote.
  public var quote: Quote
  /// The order's files in the order's order (a file named twice is read twice).
  public var files: [QuotedFile]
  /// The price list the order was quoted with.
  public var prices: PriceList
}

/// Quotes orders: reads the order and the price list, checks that the order is for the list's
/// store, reads each file's page facts in the document sandbox, and prices.
///
/// Why here: the page facts come from the sandbox, which this module owns, and pricing
/// (`ImprintPricing`) stays pure Swift with no dependency on document reading, so the module
/// that may call both is this one (Documents depends on Pricing, never the other way).
/// `imprint quote`, batch quote jobs and a backend call the same code.
public struct OrderQuoter: Sendable {
  /// The sandbox that reads the order's files.
  public let sandbox: DocumentSandbox
  /// Files read at once (at least 1).
  public var jobs: Int

  /// A quoter reading files through `sandbox`, `jobs` at a time (a batch, which runs jobs in
  /// parallel itself, passes 1).
  public init(sandbox: DocumentSandbox, jobs: Int = DocumentSandbox.defaultWorkers) {
    self.sandbox = sandbox
    self.jobs = max(1, jobs)
  }

  /// Quotes the order at `orderPath` with the price list at `pricesPath`.
  ///
  /// The order's files are confined to the files root (see `Order.filePath`): `filesRoot`
  /// when given (absolute paths inside it are then accepted), otherwise the order's folder.
  ///
  /// - Parameters:
  ///   - orderPath: the order (JSON).
  ///   - pricesPath: the store's price list (JSON).
  ///   - filesRoot: the folder the order's files are relative to and confined to, or nil.
  /// - Returns: the quote and what each file was priced from.
  /// - Throws: `FileError` reading the order or the price list, or for a file path that leads
  ///   out (before any file is opened); `PricingError` for a list or order that cannot be
  ///   read, an order for another store (`pricing.invalidField` on `store`), or one that cannot
  ///   be priced; a file's `FileError` or `DocumentError` from the sandbox (the first failing
  ///   file in the order's order).
  public func quote(order orderPath: String, prices pricesPath: String, filesRoot: String? = nil)
    async throws -> OrderQuote
  {
    let prices = try PriceList.parse(
      try FileIO.read(pricesPath, limit: FileIO.Limit.structured), source: pricesPath)
    let order = try Order.parse(
      try FileIO.read(orderPath, limit: FileIO.Limit.structured), source: orderPath)
    return try await quote(
      order, prices: prices, filesRoot: filesRoot ?? Order.filesRoot(ofOrderAt: orderPath),
      explicitRoot: filesRoot != nil, orderSource: orderPath, pricesSource: pricesPath)
  }

  /// Quotes an order already read (a server's request body) with a price list already read.
  ///
  /// - Parameters:
  ///   - order: the order.
  ///   - prices: the store's price list.
  ///   - filesRoot: the folder the order's files are relative to and confined to.
  ///   - explicitRoot: whether absolute paths inside `filesRoot` are accepted.
  ///   - orderSource: the order's name in messages.
  ///   - pricesSource: the price list's name in messages.
  /// - Returns: the quote and what each file was priced from.
  /// - Throws: as `quote(order:prices:filesRoot:)`, less the reading of the two files.
  public func quote(
    _ order: Order, prices: PriceList, filesRoot: String, explicitRoot: Bool = true,
    orderSource: String = "order", pricesSource: String = "the price list"
  ) async throws -> OrderQuote {
    try order.checkStore(of: prices, orderSource: orderSource, pricesSource: pricesSource)
    let paths = try order.filePaths(root: filesRoot, explicitRoot: explicitRoot)
    let infos = try await inspect(order, paths: paths, prices: prices)
    var files: [QuotedFile] = []
    var facts: [String: PageFacts] = [:]
    for (index, file) in order.files.enumerated() {
      let info = infos[index]
      let colors = info.colors ?? []
      let fileFacts = PageFacts(
        pages: info.pages, colorPages: Set(colors.filter(\.color).map(\.page)),
        blankPages: Set(colors.filter(\.blank).map(\.page)),
        convertedPDF: info.conversion?.pdfSHA256)
      // A file named twice is priced from the reading that analysed its colours (an auto
      // file's), not from a later one that did not (the same file ordered in mono).
      if info.colors != nil || facts[file.path] == nil { facts[file.path] = fileFacts }
      files.append(
        QuotedFile(
          file: file.path, path: paths[index], info: info, facts: fileFacts,
          options: file.options.resolved(prices.defaults)))
    }
    return OrderQuote(
      quote: try Pricing.quote(order, facts: facts, prices: prices), files: files, prices: prices)
  }

  /// Reads every file in the sandbox, `jobs` at a time; one info per file, in order.
  ///
  /// Colours are analysed only where they change the price: auto colour, or blank pages
  /// charged for paper only. After a failure no further file is started, and the failure
  /// thrown is that of the first failing file in the order's order (see `inOrder`).
  private func inspect(_ order: Order, paths: [String], prices: PriceList) async throws
    -> [DocumentInfo]
  {
    let needsColors = prices.blankPages == .paperOnly
    return try await inOrder(
      count: paths.count, jobs: jobs,
      work: { [sandbox] index in
        let file = order.files[index]
        let mode = file.options.color ?? prices.defaults.color ?? .mono
        return try await sandbox.inspect(
          path: paths[index], file: file.path,
          colors: mode == .auto || needsColors ? ColorRule() : nil)
      })
  }
}

/// Runs `work` for `0..<count`, `jobs` at a time, and returns the outputs in index order.
///
/// After a failure no further index is started, and the failure thrown is that of the lowest
/// failing index (every index before it was started, so the choice does not depend on
/// timing); `discard` receives each output that succeeded before the failure is thrown (to
/// remove what it wrote).
package func inOrder<Output: Sendable>(
  count: Int, jobs: Int, discard: (Output) -> Void = { _ in },
  work: @escaping @Sendable (Int) async throws -> Output
) async throws -> [Output] {
  var outputs: [Int: Output] = [:]
  var failure: (index: Int, error: any Error)?
  var next = 0
  let inputs = { () -> Int? in
    guard failure == nil, next < count else { return nil }
    defer { next += 1 }
    return next
  }
  await forEachConcurrently(
    inputs: inputs, jobs: jobs,
    work: { index -> (Int, Result<Output, any Error>) in
      do { return (index, .success(try await work(index))) } catch {
        return (index, .failure(error))
      }
    },
    collect: { (index, result) in
      switch result {
      case .success(let output): outputs[index] = output
      case .failure(let error):
        if index < failure?.index ?? Int.max { failure = (index, error) }
      }
    })
  if let failure {
    for index in outputs.keys.sorted() { if let output = outputs[index] { discard(output) } }
    throw failure.error
  }
  return (0..<count).map { index in
    guard let output = outputs[index] else {
      preconditionFailure("item \(index) was neither done nor failed")
    }
    return output
  }
}
