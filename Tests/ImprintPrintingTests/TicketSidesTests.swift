// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: a duplex ticket names the paper's edge: the order's edge (its pages')
// swapped where n-up sheets are landscape, checked against each sheet's orientation as pdfinfo
// reads it and against what an IPP printer (ippeveprinter) received.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

/// USD rates on A4.
private let prices = priceListFixture("usd-a4.json")

/// Columns and rows of each n-up grid (CUPS's number-up, pdfjam).
private let grids: [Int: (columns: Double, rows: Double)] = [
  1: (1, 1), 2: (2, 1), 4: (2, 2), 6: (3, 2), 9: (3, 3), 16: (4, 4),
]

@Suite("JobTicket: duplex sides for n-up sheets", .liveHandlesChecked)
struct TicketSidesTests {
  static let cases: [(nUp: Int, duplex: String)] = [1, 2, 4, 6, 9, 16].flatMap { nUp in
    ["long-edge", "short-edge"].map { (nUp, $0) }
  }

  @Test("the order's edge is its pages'; the ticket's the paper's", arguments: cases)
  func sides(nUp: Int, duplex: String) async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 18)), to: folder.file("a.pdf"))
    let prepared = try await prepareOrder(
      in: folder, prices: prices, files: [#"{"path":"a.pdf","nUp":\#(nUp),"duplex":"\#(duplex)"}"#])
    let file = try #require(prepared.files.first)
    // The first sheet side as pdfinfo reads it: its size, turned by its /Rotate.
    let info = try pdfInfo(file.document)
    let size = try #require(info["Page size"]).split(separator: " ").compactMap { Double($0) }
    try #require(size.count == 2)
    let turned = (Int(info["Page rot"] ?? "0") ?? 0) % 180 != 0
    let (width, height) = turned ? (size[1], size[0]) : (size[0], size[1])
    let sheetLandscape = width > height
    #expect(sheetLandscape == (nUp == 2 || nUp == 6), "\(info)")
    // A portrait page stands as its cell does; its long edge is the cell's.
    let grid = try #require(grids[nUp])
    let cellLandscape = width / grid.columns > height / grid.rows
    #expect(!cellLandscape)
    let other = duplex == "long-edge" ? "short-edge" : "long-edge"
    let expected = "two-sided-" + (cellLandscape == sheetLandscape ? duplex : other)
    #expect(file.ticket.ipp.sides == expected)
  }

  @Test("a 2-up booklet flipped book-style reaches the printer as two-sided-short-edge")
  func printer() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      try NumberedPages.drawn(Array(repeating: .a4, count: 8)), to: folder.file("a.pdf"))
    let prepared = try await prepareOrder(
      in: folder, prices: prices,
      files: [
        #"{"path":"a.pdf","nUp":2,"duplex":"long-edge"}"#,
        #"{"path":"a.pdf","nUp":4,"duplex":"long-edge"}"#,
      ])
    let printer = try TestPrinter(folder: folder)
    let jobs = try PrintSubmitter.submit(prepared.files, printer: printer.uri)
    let received = printer.jobs(count: 2)
    #expect(received[jobs[0].jobID]?.attributes["sides"] == "two-sided-short-edge")
    #expect(received[jobs[1].jobID]?.attributes["sides"] == "two-sided-long-edge")
  }
}
