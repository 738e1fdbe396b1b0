// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: previews of the prepared sheets, read back by Pillow: one PNG a sheet
// side, the box's size, each page where the sheet puts it, blank backs blank, the same bytes
// twice.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintTestSupport
import Testing

/// USD rates; A4 paper.
private let prices = priceListFixture("usd-a4.json")

/// What Pillow finds in a preview: its size, the boxes (left, top, right, bottom, in pixels,
/// right and bottom exclusive) of its red and its blue pixels, and how many are not white.
private struct PreviewPixels: Decodable {
  var size: [Int]
  var red: [Int]?
  var blue: [Int]?
  var inked: Int
}

private func pixels(_ path: String) throws -> PreviewPixels {
  let code = pythonFixture("preview_pixels.py")
  let result = try runTool("python3", ["-c", code, path])
  precondition(result.status == 0, "Pillow could not read \(path): \(result.stderr)")
  return try JSONDecoder().decode(PreviewPixels.self, from: Data(result.stdout.utf8))
}

/// A4 pages, each filled with red (odd pages) or blue (even) inside a white 20 pt margin.
private func filledPages(_ count: Int) -> [UInt8] {
  HostileDocuments.pdf(
    pages: (1...count).map { page in
      (
        "q \(page % 2 == 1 ? "1 0 0" : "0 0 1") rg 20 20 555.276 801.89 re f Q",
        "/MediaBox [0 0 595.276 841.89] /Resources << >>"
      )
    })
}

@Suite("OrderPreparer: previews of the sheet sides", .liveHandlesChecked)
struct PreparePreviewTests {
  @Test("2-up duplex: a PNG a sheet side, each page in its cell, the blank back blank")
  func twoUp() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(filledPages(5), to: folder.file("doc.pdf"))
    let order = [#"{"path":"doc.pdf","nUp":2,"duplex":"long-edge"}"#]
    let prepared = try await prepareOrder(
      in: folder, prices: prices, files: order, options: PrepareOptions(previewSize: 400))
    let file = try #require(prepared.files.first)
    // Sides [1, 2] [3, 4] [5] and a blank back: four previews, named in order.
    #expect(file.ticket.sheetSides == 4)
    let previews = try #require(file.previews)
    #expect(previews == (1...4).map { folder.file("out/1-doc.side-\($0).png") })
    let read = try previews.map(pixels)

    // The sheet is A4 landscape (841.89 × 595.276 pt) in a 400 px box; each cell is A5, where
    // an A4 page fits at 1/√2: the coloured area (20 pt inside the page) lands here, in pixels.
    let scale = 400 / 841.89
    let fit = 595.276 / 841.89
    func region(cell: Int) -> [Double] {
      let left = Double(cell) * 420.945 + 20 * fit
      return [left, 20 * fit, left + 555.276 * fit, (20 + 801.89) * fit].map { $0 * scale }
    }
    func near(_ box: [Int]?, _ expected: [Double]) -> Bool {
      guard let box, box.count == 4 else { return false }
      return zip(box, expected).allSatisfy { abs(Double($0) - $1) <= 1.5 }
    }
    for side in read {
      #expect(side.size.count == 2 && side.size[0] == 400, "\(side.size)")
      #expect(side.size.count == 2 && abs(Double(side.size[1]) - 595.276 * scale) < 1)
    }
    // Side 1: page 1 (red) left, page 2 (blue) right, white between and around them.
    #expect(near(read[0].red, region(cell: 0)), "\(read[0].red ?? [])")
    #expect(near(read[0].blue, region(cell: 1)), "\(read[0].blue ?? [])")
    let area = region(cell: 0)
    let pagePixels = (area[2] - area[0]) * (area[3] - area[1])
    #expect(abs(Double(read[0].inked) - 2 * pagePixels) < 0.03 * pagePixels)
    // Side 3: page 5 alone in the left cell; side 4, the blank back: nothing.
    #expect(near(read[2].red, region(cell: 0)) && read[2].blue == nil)
    #expect(read[3].inked == 0)

    // Prepared again: the same previews, byte for byte.
    let again = try await prepareOrder(
      in: folder, prices: prices, files: order, output: "again",
      options: PrepareOptions(previewSize: 400))
    let second = try #require(again.files.first?.previews)
    for (a, b) in zip(previews, second) {
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)))
    }
  }

  @Test("a split file's parts have previews of their own sides")
  func splitParts() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 3), colorPages: [2]),
      to: folder.file("doc.pdf"))
    let prepared = try await prepareOrder(
      in: folder, prices: prices, files: [#"{"path":"doc.pdf","color":"auto"}"#],
      options: PrepareOptions(splitColor: true, previewSize: 64))
    #expect(
      prepared.files.map { $0.previews ?? [] } == [
        [folder.file("out/1-doc.color.side-1.png")],
        [folder.file("out/1-doc.mono.side-1.png"), folder.file("out/1-doc.mono.side-2.png")],
      ])
    // The colour part's one side shows the red square; the mono part's none.
    #expect(try pixels(folder.file("out/1-doc.color.side-1.png")).red != nil)
    #expect(try pixels(folder.file("out/1-doc.mono.side-2.png")).red == nil)
    #expect(try pixels(folder.file("out/1-doc.mono.side-2.png")).size.max() == 64)
  }

  @Test("a file longer than one worker's run of previews: every side, in order")
  func longFile() async throws {
    let folder = TemporaryFolder()
    // 205 sides: three runs of at most 100 (DocumentSandbox.previewRun).
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 205)), to: folder.file("doc.pdf"))
    let prepared = try await prepareOrder(
      in: folder, prices: prices, files: [#"{"path":"doc.pdf"}"#],
      options: PrepareOptions(previewSize: 16))
    let previews = try #require(prepared.files.first?.previews)
    #expect(previews == (1...205).map { folder.file("out/1-doc.side-\($0).png") })
    #expect(previews.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file("out"))
    #expect(names.count == 207, "the PDF, its ticket and 205 previews; nothing else")
  }

  @Test("a preview size outside 16 to 2048 px is document.previewSize, before anything is made")
  func badSize() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(filledPages(1), to: folder.file("doc.pdf"))
    let error = await #expect(throws: DocumentError.self) {
      try await prepareOrder(
        in: folder, prices: prices, files: [#"{"path":"doc.pdf"}"#],
        options: PrepareOptions(previewSize: 8))
    }
    #expect(error == .previewSize(size: 8))
    #expect(error?.message == "a preview size of 8 px is outside 16 to 2048 px")
    #expect(!FileManager.default.fileExists(atPath: folder.file("out")))
  }
}
