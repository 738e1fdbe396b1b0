// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: card-printer files and N-up sheets imposed from the batch's per-card PDFs,
// with crop marks where cards are, backs placed for the duplex flip, and a sheet map.

import Foundation
import ImprintCards
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

/// One card copy to place: the job that makes it and which copy it is.
public struct PlacedCard: Sendable, Equatable {
  /// The job's id.
  public var id: String
  /// 1-based copy.
  public var copy: Int
  /// The job (to lay the card out again, exactly as its PDF was made).
  public var job: ManifestJob

  /// Creates a placement.
  public init(id: String, copy: Int, job: ManifestJob) {
    self.id = id
    self.copy = copy
    self.job = job
  }
}

/// Writes card-printer files and imposed sheets.
///
/// Cards are laid out again from their jobs (deterministic: the same drawing as their PDFs) a
/// sheet at a time, in parallel, and drawn in order into a file written as it grows: memory
/// holds one sheet's cards, whatever the length of the batch.
public enum Imposition {
  static let k = 72 / 25.4

  /// Lays out the cards of `placed` (each job once), in parallel.
  static func prepareAll(
    _ placed: [PlacedCard], prepare: @escaping @Sendable (ManifestJob) async throws -> PreparedCard
  ) async throws -> [String: PreparedCard] {
    var unique: [String: ManifestJob] = [:]
    for card in placed { unique[card.id] = card.job }
    return try await withThrowingTaskGroup(of: (String, PreparedCard).self) { group in
      for (id, job) in unique { group.addTask { (id, try await prepare(job)) } }
      var prepared: [String: PreparedCard] = [:]
      for try await (id, card) in group { prepared[id] = card }
      return prepared
    }
  }

  /// One PDF with the front and back pages of every card, in order, at card size.
  ///
  /// What Evolis, Zebra and Fargo drivers take.
  /// - Returns: the number of pages.
  /// - Throws: `FileError`, `GraphicsError`, or a card's own error.
  @discardableResult
  public static func cardPrinterFile(
    next: () -> PlacedCard?,
    prepare: @escaping @Sendable (ManifestJob) async throws -> PreparedCard,
    to path: String
  ) async throws -> Int {
    let temporary = try AtomicFile.temporaryPath(for: path)
    var document: VectorDocument?
    var pages = 0
    do {
      while true {
        var chunk: [PlacedCard] = []
        while chunk.count < 32, let card = next() { chunk.append(card) }
        if chunk.isEmpty { break }
        let prepared = try await prepareAll(chunk, prepare: prepare)
        for placed in chunk {
          guard let card = prepared[placed.id] else { continue }
          if document == nil {
            document = try VectorDocument(
              format: .pdf, size: card.size, metadata: DocumentMetadata(title: "card printer job"),
              path: temporary)
          }
          for side in card.layouts.indices {
            try document?.page(size: card.size) { canvas in
              try card.draw(side: side, on: canvas, x: 0, y: 0)
            }
            pages += 1
          }
        }
      }
      guard let finished = document.take() else { throw ImposeError.noCards }
      _ = try finished.finish()
      try AtomicFile.commit(temporary, to: path)
      return pages
    } catch {
      AtomicFile.discard(temporary)
      throw error
    }
  }

  /// Imposed sheets: for every sheet, the fronts, then (when cards have backs) the backs placed
  /// for `flip`; crop marks at the sheet edges, only on the trim lines of cards that are there.
  ///
  /// - Parameters:
  ///   - next: the next card copy, in order.
  ///   - prepare: lays a job's card out.
  ///   - stock: the sheet.
  ///   - cropMarks: whether to draw crop marks.
  ///   - flip: how the printer turns the sheet.
  ///   - path: the sheets PDF.
  ///   - mapPath: the sheet map CSV (sheet, side, row, column, id, copy).
  /// - Returns: the grid used and the number of sheets.
  /// - Throws: `FileError`, `GraphicsError`, `ImposeError`, or a card's own error.
  @discardableResult
  public static func sheets(
    next: () -> PlacedCard?,
    prepare: @escaping @Sendable (ManifestJob) async throws -> PreparedCard,
    stock: SheetStock, cropMarks: Bool, flip: DuplexFlip, to path: String, mapPath: String
  ) async throws -> (grid: SheetGrid, sheets: Int) {
    guard let first = next() else { throw ImposeError.noCards }
    let firstCard = try await prepare(first.job)
    let sheet = stock.millimetres
    let grid = SheetGrid.best(
      cardWidth: firstCard.size.width / k, cardHeight: firstCard.size.height / k, sheet: sheet,
      margin: 5)
    guard grid.capacity > 0 else { throw ImposeError.doesNotFit(stock: stock.rawValue) }
    let pageSize = Size(width: sheet.width * k, height: sheet.height * k)
    var map = "sheet,side,row,column,id,copy\n"
    var sheetCount = 0
    let temporary = try AtomicFile.temporaryPath(for: path)
    let mapTemporary = try AtomicFile.temporaryPath(for: mapPath)
    guard FileManager.default.createFile(atPath: mapTemporary, contents: nil),
      let mapFile = FileHandle(forWritingAtPath: mapTemporary)
    else { throw FileError.unwritable(path: mapPath, reason: "cannot create it") }
    defer { try? mapFile.close() }
    do {
      let document = try VectorDocument(
        format: .pdf, size: pageSize, metadata: DocumentMetadata(title: "\(stock.rawValue) sheets"),
        path: temporary)
      var pending: PlacedCard? = first
      while true {
        var batch: [PlacedCard] = []
        if let card = pending {
          batch.append(card)
          pending = nil
        }
        while batch.count < grid.capacity, let card = next() { batch.append(card) }
        if batch.isEmpty { break }
        let prepared = try await prepareAll(batch, prepare: prepare)
        sheetCount += 1
        let sides = batch.compactMap { prepared[$0.id]?.layouts.count }.max() ?? 1
        for side in 0..<sides {
          var used: [(row: Int, column: Int)] = []
          try document.page(size: pageSize) { canvas in
            for (offset, placed) in batch.enumerated() {
              guard let card = prepared[placed.id], side < card.layouts.count else { continue }
              var row = offset / grid.columns
              var column = offset % grid.columns
              if side == 1 {
                (row, column) = grid.backPosition(row: row, column: column, flip: flip)
              }
              used.append((row, column))
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
              try card.draw(side: side, on: canvas, x: 0, y: 0)
              canvas.restore()
              map +=
                "\(sheetCount),\(side == 0 ? "front" : "back"),\(row + 1),\(column + 1),"
                + "\(placed.id),\(placed.copy)\n"
            }
            if cropMarks {
              drawMarks(canvas, grid: grid, used: used, bleed: firstCard.bleed, sheet: sheet)
            }
          }
        }
        // The map goes to its file a sheet at a time.
        mapFile.write(Data(map.utf8))
        map = ""
      }
      _ = try document.finish()
      try AtomicFile.commit(temporary, to: path)
      try AtomicFile.commit(mapTemporary, to: mapPath)
    } catch {
      AtomicFile.discard(temporary)
      AtomicFile.discard(mapTemporary)
      throw error
    }
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
}

/// Why sheets could not be made.
public enum ImposeError: ImprintError, Equatable {
  /// No card job succeeded.
  case noCards
  /// The card does not fit the stock.
  case doesNotFit(stock: String)

  public var code: String {
    switch self {
    case .noCards: "batch.noCards"
    case .doesNotFit: "batch.doesNotFit"
    }
  }

  public var message: String {
    switch self {
    case .noCards: "no card was made, so there is nothing to impose"
    case .doesNotFit(let stock):
      "a card with its bleed does not fit on \(stock) inside 5 mm margins"
    }
  }
}
