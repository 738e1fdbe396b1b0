// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: card-printer files and N-up sheets imposed from the batch's per-card PDFs,
// with crop marks where cards are, backs placed for the duplex flip, and a sheet map.

import Foundation
import ImprintCore
import ImprintGraphics

/// Sheet stocks for imposition.
public enum SheetStock: String, Sendable, CaseIterable {
  case a4 = "A4"
  case letter = "Letter"
  case a3 = "A3"
  case sra3 = "SRA3"

  /// Width and height in millimetres, portrait.
  public var millimetres: (width: Double, height: Double) {
    switch self {
    case .a4: (210, 297)
    case .letter: (215.9, 279.4)
    case .a3: (297, 420)
    case .sra3: (320, 450)
    }
  }
}

/// The grid of cards on a sheet, in millimetres.
public struct SheetGrid: Sendable, Equatable {
  /// Columns and rows.
  public var columns: Int
  /// Rows.
  public var rows: Int
  /// Whether cards are turned 90° (landscape cards standing up).
  public var rotated: Bool
  /// One cell (a card with its bleed) on the sheet.
  public var cellWidth: Double
  /// Cell height on the sheet.
  public var cellHeight: Double
  /// Top-left corner of the grid.
  public var originX: Double
  /// Top-left corner of the grid.
  public var originY: Double

  /// Cards per sheet side.
  public var capacity: Int { columns * rows }

  /// The best grid of `card` (with bleed) on `sheet`, inside a `margin` on every side: the
  /// orientation that fits more (unrotated on a tie), centred.
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
        columns: columns, rows: rows, rotated: rotated, cellWidth: w, cellHeight: h,
        originX: (sheet.width - Double(columns) * w) / 2,
        originY: (sheet.height - Double(rows) * h) / 2)
    }
    let plain = grid(false)
    let turned = grid(true)
    return turned.capacity > plain.capacity ? turned : plain
  }

  /// Where the back of the card at (row, column) goes.
  ///
  /// So that it lands behind its front when the sheet is flipped: about the vertical axis (long edge of a portrait sheet) the columns
  /// mirror; about the horizontal axis (short edge) the rows reverse. The art is never mirrored.
  public func backPosition(row: Int, column: Int, flip: DuplexFlip) -> (row: Int, column: Int) {
    switch flip {
    case .longEdge: (row, columns - 1 - column)
    case .shortEdge: (rows - 1 - row, column)
    }
  }
}

/// How the printer turns the sheet for its back.
public enum DuplexFlip: String, Sendable, CaseIterable {
  /// About the long edge.
  case longEdge = "long-edge"
  /// About the short edge.
  case shortEdge = "short-edge"
}

/// One card to place: its PDF (page 1 front, page 2 back, trim + bleed) and which copy it is.
public struct PlacedCard: Sendable, Equatable {
  /// The job's id.
  public var id: String
  /// 1-based copy.
  public var copy: Int
  /// The card's PDF.
  public var path: String

  /// Creates a placement.
  public init(id: String, copy: Int, path: String) {
    self.id = id
    self.copy = copy
    self.path = path
  }
}

/// Writes card-printer files and imposed sheets.
public enum Imposition {
  static let k = 72 / 25.4

  /// One PDF with the front and back pages of every card, in order, at card size.
  ///
  /// What Evolis, Zebra and Fargo drivers take. Pages are drawn from the cards' PDFs as vectors.
  ///
  /// - Throws: `FileError`, `GraphicsError`, or `ImposeError` for an unreadable card PDF.
  public static func cardPrinterFile(_ cards: [PlacedCard], to path: String) throws {
    guard let first = cards.first else { return }
    let size = try pageSize(first.path)
    try AtomicFile.write(to: path) { temporary in
      let document = try VectorDocument(
        format: .pdf, size: size, metadata: DocumentMetadata(title: "card printer job"),
        path: temporary)
      for card in cards {
        let pdf = try open(card.path)
        for page in 0..<pdf.pageCount {
          try document.page(size: size) { canvas in _ = pdf.render(page: page, on: canvas) }
        }
      }
      _ = try document.finish()
    }
  }

  /// Imposed sheets: for every sheet, the fronts, then (when cards have backs) the backs placed
  /// for `flip`; crop marks at the sheet edges, only on the trim lines of cards that are there.
  ///
  /// - Parameters:
  ///   - cards: the cards in order, copies repeated.
  ///   - stock: the sheet.
  ///   - bleed: the cards' bleed in millimetres (trim lines are that far inside each cell).
  ///   - cropMarks: whether to draw crop marks.
  ///   - flip: how the printer turns the sheet.
  ///   - path: the sheets PDF.
  ///   - mapPath: the sheet map CSV (sheet, side, row, column, id, copy).
  /// - Returns: the grid used and the number of sheets.
  /// - Throws: `FileError`, `GraphicsError`, `ImposeError`.
  @discardableResult
  public static func sheets(
    _ cards: [PlacedCard], stock: SheetStock, bleed: Double, cropMarks: Bool, flip: DuplexFlip,
    to path: String, mapPath: String
  ) throws -> (grid: SheetGrid, sheets: Int) {
    guard let first = cards.first else {
      throw ImposeError.noCards
    }
    let card = try pageSize(first.path)
    let sheet = stock.millimetres
    let grid = SheetGrid.best(
      cardWidth: card.width / k, cardHeight: card.height / k, sheet: sheet, margin: 5)
    guard grid.capacity > 0 else { throw ImposeError.doesNotFit(stock: stock.rawValue) }
    let pageSize = Size(width: sheet.width * k, height: sheet.height * k)
    var map = "sheet,side,row,column,id,copy\n"
    var sheetCount = 0
    try AtomicFile.write(to: path) { temporary in
      let document = try VectorDocument(
        format: .pdf, size: pageSize, metadata: DocumentMetadata(title: "\(stock.rawValue) sheets"),
        path: temporary)
      var index = 0
      while index < cards.count {
        let batch = Array(cards[index..<min(index + grid.capacity, cards.count)])
        sheetCount += 1
        let hasBacks = try open(batch[0].path).pageCount > 1
        for side in hasBacks ? ["front", "back"] : ["front"] {
          var used: [(row: Int, column: Int)] = []
          try document.page(size: pageSize) { canvas in
            for (offset, placed) in batch.enumerated() {
              var row = offset / grid.columns
              var column = offset % grid.columns
              if side == "back" {
                (row, column) = grid.backPosition(row: row, column: column, flip: flip)
              }
              used.append((row, column))
              let pdf = try open(placed.path)
              let x = (grid.originX + Double(column) * grid.cellWidth) * k
              let y = (grid.originY + Double(row) * grid.cellHeight) * k
              canvas.save()
              canvas.addRect(
                Rect(x: x, y: y, width: grid.cellWidth * k, height: grid.cellHeight * k))
              canvas.clip()
              if grid.rotated {
                canvas.translate(x + grid.cellWidth * k, y)
                canvas.rotate(Double.pi / 2)
              } else {
                canvas.translate(x, y)
              }
              _ = pdf.render(page: side == "front" ? 0 : 1, on: canvas)
              canvas.restore()
              map += "\(sheetCount),\(side),\(row + 1),\(column + 1),\(placed.id),\(placed.copy)\n"
            }
            if cropMarks { drawMarks(canvas, grid: grid, used: used, bleed: bleed, sheet: sheet) }
          }
        }
        index += grid.capacity
      }
      _ = try document.finish()
    }
    try AtomicFile.write(Array(map.utf8), to: mapPath)
    return (grid, sheetCount)
  }

  /// Hairlines on every trim line of the used cells, in the margins outside the grid.
  static func drawMarks(
    _ canvas: borrowing Canvas, grid: SheetGrid, used: [(row: Int, column: Int)], bleed: Double,
    sheet: (width: Double, height: Double)
  ) {
    var xs = Set<Double>()
    var ys = Set<Double>()
    for cell in used {
      let left = grid.originX + Double(cell.column) * grid.cellWidth
      let top = grid.originY + Double(cell.row) * grid.cellHeight
      xs.insert(left + bleed)
      xs.insert(left + grid.cellWidth - bleed)
      ys.insert(top + bleed)
      ys.insert(top + grid.cellHeight - bleed)
    }
    let gridBottom = grid.originY + Double(grid.rows) * grid.cellHeight
    let gridRight = grid.originX + Double(grid.columns) * grid.cellWidth
    let gap = 1.0
    let width = 0.25
    for x in xs {
      let length = min(5, grid.originY - gap - 0.5)
      guard length > 0.5 else { continue }
      canvas.line(
        from: (x * k, (grid.originY - gap) * k), to: (x * k, (grid.originY - gap - length) * k),
        width: width, color: .black)
      canvas.line(
        from: (x * k, (gridBottom + gap) * k), to: (x * k, (gridBottom + gap + length) * k),
        width: width, color: .black)
    }
    for y in ys {
      let length = min(5, grid.originX - gap - 0.5)
      guard length > 0.5 else { continue }
      canvas.line(
        from: ((grid.originX - gap) * k, y * k), to: ((grid.originX - gap - length) * k, y * k),
        width: width, color: .black)
      canvas.line(
        from: ((gridRight + gap) * k, y * k), to: ((gridRight + gap + length) * k, y * k),
        width: width, color: .black)
    }
  }

  static func open(_ path: String) throws -> PDFDocument {
    let bytes = try readBytes(path)
    do {
      return try PDFDocument(bytes: bytes, password: nil)
    } catch {
      throw ImposeError.unreadableCard(path: path)
    }
  }

  static func pageSize(_ path: String) throws -> Size {
    let pdf = try open(path)
    guard let size = pdf.pageSize(0) else { throw ImposeError.unreadableCard(path: path) }
    return size
  }
}

/// Why sheets could not be made.
public enum ImposeError: ImprintError, Equatable {
  /// No card job succeeded.
  case noCards
  /// The card does not fit the stock.
  case doesNotFit(stock: String)
  /// A card's PDF cannot be read.
  case unreadableCard(path: String)

  public var code: String {
    switch self {
    case .noCards: "batch.noCards"
    case .doesNotFit: "batch.doesNotFit"
    case .unreadableCard: "batch.unreadableCard"
    }
  }

  public var message: String {
    switch self {
    case .noCards: "no card was made, so there is nothing to impose"
    case .doesNotFit(let stock):
      "a card with its bleed does not fit on \(stock) inside 5 mm margins"
    case .unreadableCard(let path): "card '\(path)' cannot be read back"
    }
  }
}
