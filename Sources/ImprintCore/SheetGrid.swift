// SPDX-License-Identifier: Apache-2.0
// Imprint: the grid of cells on a sheet, the geometry shared by the card imposer
// (ImprintBatch) and the page imposer (ImprintDocuments).

/// A grid of equal cells on one side of a sheet: where card batches (`best`) and the pages of
/// an order (`nUp`) are placed.
///
/// Imposition's words, the same for cards and pages: the *sheet* (a `PaperSize`, portrait or
/// `landscape`) carries a grid of `columns` × `rows` *cells*, numbered from the top left and
/// filled in reading order (left to right, top to bottom); the *margin* is the border between
/// the sheet's edge and the grid; there is no *gutter*: cells touch. Content stands in its cell
/// as the cell stands, *rotated* a quarter turn when it does not (for cards, the whole grid's
/// `rotated`; for pages, each page's own, decided where it is placed).
///
/// Lengths are in the unit of the sheet the grid was made for: millimetres for card sheets,
/// points for page sheets. Every position is computed here once, by the arithmetic the
/// imposers have always used, so the sheets they write keep their bytes.
public struct SheetGrid: Sendable, Equatable {
  /// The sheet's width as it lies (landscape applied).
  public var sheetWidth: Double
  /// The sheet's height as it lies.
  public var sheetHeight: Double
  /// Whether the sheet lies landscape (a portrait paper size turned).
  public var landscape: Bool
  /// Columns of cells.
  public var columns: Int
  /// Rows of cells.
  public var rows: Int
  /// Whether the content is rotated a quarter turn in its cell (landscape cards standing up).
  public var rotated: Bool
  /// One cell's width (a card with its bleed; a page's share of the sheet).
  public var cellWidth: Double
  /// One cell's height.
  public var cellHeight: Double
  /// The left edge of the grid.
  public var originX: Double
  /// The top edge of the grid.
  public var originY: Double

  /// Cells per sheet side.
  public var capacity: Int { columns * rows }

  /// The best grid of `card` (with bleed) on `sheet` (portrait, millimetres), inside a `margin`
  /// on every side: the orientation that fits more cards (unrotated on a tie), centred.
  public static func best(
    cardWidth: Double, cardHeight: Double, sheet: (width: Double, height: Double), margin: Double
  ) -> SheetGrid {
    let usableWidth = sheet.width - 2 * margin
    let usableHeight = sheet.height - 2 * margin
    func grid(_ rotated: Bool) -> SheetGrid {
      let w = rotated ? cardHeight : cardWidth
      let h = rotated ? cardWidth : cardHeight
      let columns = max(0, Int((usableWidth / w).rounded(.down)))
      let rows = max(0, Int((usableHeight / h).rounded(.down)))
      return SheetGrid(
        sheetWidth: sheet.width, sheetHeight: sheet.height, landscape: false, columns: columns,
        rows: rows, rotated: rotated, cellWidth: w, cellHeight: h,
        originX: (sheet.width - Double(columns) * w) / 2,
        originY: (sheet.height - Double(rows) * h) / 2)
    }
    let plain = grid(false)
    let turned = grid(true)
    return turned.capacity > plain.capacity ? turned : plain
  }

  /// The pages-per-side an order may ask for, each with its grid: CUPS's number-up (and
  /// pdfjam's), 2 and 6 on landscape sheets.
  public static let nUpShapes: [(nUp: Int, columns: Int, rows: Int, landscape: Bool)] = [
    (1, 1, 1, false), (2, 2, 1, true), (4, 2, 2, false), (6, 3, 2, true), (9, 3, 3, false),
    (16, 4, 4, false),
  ]

  /// The pages-per-side values an order may ask for: 1, 2, 4, 6, 9 and 16.
  public static var nUpValues: [Int] { nUpShapes.map(\.nUp) }

  /// Whether `nUp` pages a side lie on a landscape sheet (2 and 6); false for a value not
  /// offered.
  public static func isLandscape(nUp: Int) -> Bool {
    nUpShapes.first { $0.nUp == nUp }?.landscape ?? false
  }

  /// The grid of `nUp` pages a side on `sheet` (portrait): the sheet turned landscape for 2 and
  /// 6, divided by the grid with neither margin nor gutter; nil for a value not offered.
  public static func nUp(_ nUp: Int, sheet: (width: Double, height: Double)) -> SheetGrid? {
    guard let shape = nUpShapes.first(where: { $0.nUp == nUp }) else { return nil }
    let width = shape.landscape ? sheet.height : sheet.width
    let height = shape.landscape ? sheet.width : sheet.height
    return SheetGrid(
      sheetWidth: width, sheetHeight: height, landscape: shape.landscape, columns: shape.columns,
      rows: shape.rows, rotated: false, cellWidth: width / Double(shape.columns),
      cellHeight: height / Double(shape.rows), originX: 0, originY: 0)
  }

  /// The row and column (0-based) of the `index`th cell in reading order.
  public func position(ofCell index: Int) -> (row: Int, column: Int) {
    (index / columns, index % columns)
  }

  /// The top-left corner of the cell at (`row`, `column`), y growing downwards.
  public func cellOrigin(row: Int, column: Int) -> (x: Double, y: Double) {
    (originX + Double(column) * cellWidth, originY + Double(row) * cellHeight)
  }

  /// The bottom-left corner of the cell at (`row`, `column`) in PDF's coordinates, y growing
  /// upwards from the sheet's bottom edge.
  public func pdfCellOrigin(row: Int, column: Int) -> (x: Double, y: Double) {
    (originX + Double(column) * cellWidth, sheetHeight - (originY + Double(row + 1) * cellHeight))
  }
}

extension SheetGrid {
  /// A grid of `columns` × `rows` cells of a fixed size whose top-left corner is at
  /// (`originX`, `originY`) on `sheet` (portrait): label stock, whose cells are cut where they
  /// are.
  public init(
    columns: Int, rows: Int, cellWidth: Double, cellHeight: Double,
    sheet: (width: Double, height: Double), originX: Double = 0, originY: Double = 0
  ) {
    self.init(
      sheetWidth: sheet.width, sheetHeight: sheet.height, landscape: false, columns: columns,
      rows: rows, rotated: false, cellWidth: cellWidth, cellHeight: cellHeight, originX: originX,
      originY: originY)
  }
}
