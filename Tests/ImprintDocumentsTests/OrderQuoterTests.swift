// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the order quoter called as a library: the hand-computed total, the
// store check before any file is read, and the first failing file in the order's order.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing
import ImprintTestSupport
import Testing

/// A USD price list of the store `store`: mono 10 / 8 cents (simplex / duplex), A4 plain 2
/// cents a sheet, 10 % tax on top.
private func priceList(store: String) -> String {
  #"{"schemaVersion":1,"store":"\#(store)","version":"v1","currency":"USD","#
    + #""rates":{"default":{"mono":{"simplex":10,"duplex":8}}},"paper":{"A4":{"plain":2}},"#
    + #""tax":{"percent":10,"included":false},"defaults":{"paper":"A4"}}"#
}

/// A folder holding `mixed.pdf` (3 pages), `cycle.pdf`, `prices.json` and `order.json`.
private func orderFolder(store: String, orderStore: String?, files: String) throws
  -> TemporaryFolder
{
  let folder = TemporaryFolder()
  for name in ["mixed.pdf", "cycle.pdf"] {
    try FileManager.default.copyItem(atPath: documents + name, toPath: folder.file(name))
  }
  try Data(priceList(store: store).utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
  let storeField = orderStore.map { #""store":"\#($0)","# } ?? ""
  try Data(#"{"schemaVersion":1,\#(storeField)"files":[\#(files)]}"#.utf8).write(
    to: URL(fileURLWithPath: folder.file("order.json")))
  return folder
}

@Suite("OrderQuoter, the one order pipeline", .liveHandlesChecked)
struct OrderQuoterTests {
  @Test("an order and a price list on disk: the hand-computed total, each file's facts")
  func handComputed() async throws {
    let folder = try orderFolder(
      store: "Copy Corner", orderStore: "Copy Corner",
      files: #"{"path":"mixed.pdf","copies":4,"duplex":"long-edge"}"#)
    let quoter = OrderQuoter(sandbox: DocumentSandbox(executable: worker, workers: 2), jobs: 2)
    let quoted = try await quoter.quote(
      order: folder.file("order.json"), prices: folder.file("prices.json"))
    // 3 pages two-sided: 3 impressions on 2 sheets a copy, the odd last one alone on its
    // sheet at the simplex rate. Printing (8 + 8 + 10) × 4 copies = 104; paper 2 sheets × 4
    // copies × 2 = 16; subtotal 120; tax 10 % = 12; total 132 cents.
    #expect(quoted.quote.files.first?.impressionCharge.minor == 104)
    #expect(quoted.quote.files.first?.paperCharge.minor == 16)
    #expect(quoted.quote.subtotal.minor == 120)
    #expect(quoted.quote.tax?.minor == 12)
    #expect(quoted.quote.total.minor == 132 && quoted.quote.total.formatted == "USD 1.32")
    #expect(quoted.files.count == 1)
    let file = try #require(quoted.files.first)
    #expect(file.file == "mixed.pdf" && file.path.hasSuffix("/mixed.pdf"))
    #expect(file.info.type == .pdf && file.info.pages == 3)
    // Mono by default and blank pages charged: no colour analysis was asked for.
    #expect(file.info.colors == nil && file.facts == PageFacts(pages: 3))
  }

  @Test("an order read by the caller (a request body) is quoted the same way")
  func parsedOrder() async throws {
    let folder = try orderFolder(
      store: "Copy Corner", orderStore: nil, files: #"{"path":"mixed.pdf"}"#)
    let prices = try PriceList.parse(Array(priceList(store: "Copy Corner").utf8), source: "p")
    let order = try Order.parse(
      Array(#"{"schemaVersion":1,"files":[{"path":"mixed.pdf","copies":2}]}"#.utf8), source: "o")
    let quoter = OrderQuoter(sandbox: DocumentSandbox(executable: worker, workers: 1), jobs: 1)
    let quoted = try await quoter.quote(order, prices: prices, filesRoot: folder.path)
    // 3 impressions × 10 × 2 copies = 60; 3 sheets × 2 copies × 2 = 12; 72 + 7.2 tax → 79.
    #expect(quoted.quote.total.minor == 79)
  }

  @Test(
    "an order for another store is refused before any file is read",
    arguments: [#"{"path":"missing.pdf"}"#, #"{"path":"../outside.pdf"}"#])
  func otherStore(files: String) async throws {
    let folder = try orderFolder(
      store: "Copy Corner", orderStore: "Elsewhere Print", files: files)
    let quoter = OrderQuoter(sandbox: DocumentSandbox(executable: worker, workers: 1))
    do {
      _ = try await quoter.quote(
        order: folder.file("order.json"), prices: folder.file("prices.json"))
      Issue.record("an order for another store must be refused")
    } catch let error as PricingError {
      // The store, not the missing or escaping file: the check comes first.
      #expect(error.code == "pricing.invalidField")
      #expect(
        error
          == .invalidField(
            source: folder.file("order.json"), field: "store", value: "'Elsewhere Print'",
            expected: "'Copy Corner', the store of \(folder.file("prices.json"))"))
    }
    // A list without a store prices any order; an order without one is priced by any list.
    let anyList = try orderFolder(store: "", orderStore: "Elsewhere Print", files: files)
    await #expect(throws: FileError.self) {
      _ = try await quoter.quote(
        order: anyList.file("order.json"), prices: anyList.file("prices.json"))
    }
  }

  @Test("the error is the first failing file's in the order's order, whatever finishes first")
  func firstFailure() async throws {
    // cycle.pdf fails in a worker; missing.pdf fails at once, before any worker: with both
    // read at the same time, the missing file's error arrives first, yet cycle.pdf comes first
    // in the order.
    let folder = try orderFolder(
      store: "Copy Corner", orderStore: nil,
      files: #"{"path":"mixed.pdf"},{"path":"cycle.pdf"},{"path":"missing.pdf"}"#)
    let quoter = OrderQuoter(sandbox: DocumentSandbox(executable: worker, workers: 3), jobs: 3)
    for _ in 0..<3 {
      do {
        _ = try await quoter.quote(
          order: folder.file("order.json"), prices: folder.file("prices.json"))
        Issue.record("the order must fail")
      } catch let error as any ImprintError {
        #expect(error.code == "pdf.pageTreeCycle", "\(error.message)")
      }
    }
  }
}
