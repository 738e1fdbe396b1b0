// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: the one paper-size list and the grid of cells both imposers place on.

import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Paper sizes: page sizes and sheet stocks", .liveHandlesChecked)
struct PaperSizeTests {
  @Test("names the sizes as the CLI, JSON and price lists write them, in their old orders")
  func names() {
    #expect(
      PaperSize.pageSizes.map(\.rawValue)
        == ["A3", "A4", "A5", "B4", "B5", "Letter", "Legal", "Tabloid"])
    #expect(PaperSize.sheetStocks.map(\.rawValue) == ["A4", "Letter", "A3", "SRA3"])
    #expect(Set(PaperSize.pageSizes + PaperSize.sheetStocks) == Set(PaperSize.allCases))
    #expect(PaperSize.sra3.isSheetStock && !PaperSize.sra3.isPageSize)
    #expect(PaperSize.a5.isPageSize && !PaperSize.a5.isSheetStock)
  }

  @Test("keeps each size's millimetres; B4 and B5 are ISO")
  func millimetres() {
    #expect(PaperSize.b4.millimetres == (250, 353))
    #expect(PaperSize.b5.millimetres == (176, 250))
    #expect(PaperSize.sra3.millimetres == (320, 450))
    #expect(PaperSize.letter.millimetres == (215.9, 279.4))
  }

  @Test("matches page sizes within 2 mm either way round, never a sheet stock only")
  func matching() {
    #expect(PaperSize.matching(widthMM: 297, heightMM: 210) == .a4)
    #expect(PaperSize.matching(widthMM: 251.5, heightMM: 354.9) == .b4)
    #expect(PaperSize.matching(widthMM: 216, heightMM: 356) == .legal)
    #expect(PaperSize.matching(widthMM: 320, heightMM: 450) == nil)
    #expect(PaperSize.matching(widthMM: 450, heightMM: 320) == nil)
    #expect(PaperSize.matching(widthMM: 205, heightMM: 297) == nil)
  }
}

@Suite("Sheet grids: cells on a sheet for cards and pages", .liveHandlesChecked)
struct SheetGridTests {
  @Test("lays cards out in the orientation that fits more, centred inside the margin")
  func cards() {
    // CR80 + 3.175 mm bleed on A4 inside 5 mm margins: 3 x 3, rotated.
    let grid = SheetGrid.best(
      cardWidth: 91.95, cardHeight: 60.33, sheet: PaperSize.a4.millimetres, margin: 5)
    #expect(grid.columns == 3 && grid.rows == 3 && grid.rotated && !grid.landscape)
    #expect(grid.cellWidth == 60.33 && grid.cellHeight == 91.95)
    #expect(abs(grid.originX - (210 - 3 * 60.33) / 2) < 1e-12)
    let corner = grid.cellOrigin(row: 2, column: 1)
    #expect(corner.x == grid.originX + 60.33 && corner.y == grid.originY + 2 * 91.95)
    #expect(grid.position(ofCell: 7) == (2, 1))
  }

  @Test("a fixed grid from the sheet's corner: label stock")
  func labels() {
    let grid = SheetGrid(
      columns: 3, rows: 8, cellWidth: 70, cellHeight: 37, sheet: PaperSize.a4.millimetres)
    #expect(grid.capacity == 24 && grid.sheetWidth == 210 && grid.sheetHeight == 297)
    #expect(grid.cellOrigin(row: 0, column: 0) == (0, 0))
    #expect(grid.cellOrigin(row: 7, column: 2) == (140, 259))
  }

  @Test("nothing fits: an empty grid")
  func tooLarge() {
    let grid = SheetGrid.best(cardWidth: 300, cardHeight: 400, sheet: (210, 297), margin: 5)
    #expect(grid.capacity == 0)
  }

  @Test(
    "divides the paper by CUPS's number-up grid, 2 and 6 up landscape",
    arguments: [
      (1, 1, 1, false), (2, 2, 1, true), (4, 2, 2, false), (6, 3, 2, true), (9, 3, 3, false),
      (16, 4, 4, false),
    ])
  func nUp(_ n: Int, columns: Int, rows: Int, landscape: Bool) throws {
    let paper = (width: 210 / 25.4 * 72, height: 297 / 25.4 * 72)
    let grid = try #require(SheetGrid.nUp(n, sheet: paper))
    #expect(grid.columns == columns && grid.rows == rows && grid.landscape == landscape)
    #expect(SheetGrid.isLandscape(nUp: n) == landscape)
    #expect(grid.capacity == n && grid.originX == 0 && grid.originY == 0 && !grid.rotated)
    let width = landscape ? paper.height : paper.width
    let height = landscape ? paper.width : paper.height
    #expect(grid.sheetWidth == width && grid.sheetHeight == height)
    // The arithmetic the page imposer's C++ did itself, to the bit: the sheets keep their bytes.
    let cellWidth = width / Double(columns)
    let cellHeight = height / Double(rows)
    for index in 0..<n {
      let (row, column) = grid.position(ofCell: index)
      #expect(row == index / columns && column == index % columns)
      let corner = grid.pdfCellOrigin(row: row, column: column)
      #expect(corner.x == Double(column) * cellWidth)
      #expect(corner.y == height - Double(row + 1) * cellHeight)
    }
  }

  @Test("refuses a pages-per-side value no order may ask for", arguments: [0, 3, 5, 8, 12, 32])
  func nUpRefused(_ n: Int) {
    #expect(SheetGrid.nUp(n, sheet: (595, 842)) == nil)
    #expect(!SheetGrid.isLandscape(nUp: n))
    #expect(SheetGrid.nUpValues == [1, 2, 4, 6, 9, 16])
  }
}
