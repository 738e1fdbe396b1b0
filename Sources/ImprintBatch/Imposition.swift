// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: card-printer files and N-up sheets drawn from laid-out cards as a batch runs,
// with crop marks where cards are, backs placed for the duplex flip, and a sheet map.

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics

extension SheetGrid {
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

/// One card copy to place: the item that makes it and which copy it is.
public struct PlacedCard: Sendable, Equatable {
  /// The item's id.
  public var id: String
  /// 1-based copy.
  public var copy: Int
  /// The card item (to lay the card out again, exactly as its PDF was made).
  public var card: CardItem

  /// Creates a placement.
  public init(id: String, copy: Int, card: CardItem) {
    self.id = id
    self.copy = copy
    self.card = card
  }
}

/// How a batch lays its cards out for printing.
public enum BatchLayout: Sendable, Equatable {
  /// One PDF, front and back pages of every card in order, at card size (`card-printer.pdf`).
  case cardPrinter
  /// N-up sheets of a sheet stock (`sheets-A4.pdf`...) and their map (`sheet-map.csv`).
  case sheets(PaperSize, cropMarks: Bool, flip: DuplexFlip)

  /// The file the cards go to, relative to the output folder.
  public var fileName: String {
    switch self {
    case .cardPrinter: "card-printer.pdf"
    case .sheets(let paper, _, _): "sheets-\(paper.rawValue).pdf"
    }
  }

  /// A writer for this layout into `folder`.
  public func imposer(folder: String) -> CardImposer {
    switch self {
    case .cardPrinter: CardPrinterImposer(path: folder + "/" + fileName)
    case .sheets(let paper, let cropMarks, let flip):
      SheetImposer(
        paper: paper, cropMarks: cropMarks, flip: flip, path: folder + "/" + fileName,
        mapPath: folder + "/sheet-map.csv")
    }
  }
}

/// What an imposer made.
public struct Imposed: Sendable, Equatable {
  /// Pages written (card-printer: one a side; sheets: one a sheet side).
  public var pages: Int
  /// Sheets (sheet layouts).
  public var sheets: Int
  /// The grid (sheet layouts).
  public var grid: SheetGrid?
  /// Cards left out, and why (`Imposition.impose`: a size the sheets were not laid out for).
  public var refused: [ImposeError] = []
}

/// Takes prepared cards in print order and writes them into one file as they come: memory holds
/// at most one sheet's cards, whatever the length of the batch.
///
/// Not Sendable: one imposer belongs to the task that feeds it. The file is written to a
/// temporary name and renamed by `finish()`, so a failure or a kill leaves no partial file.
public protocol CardImposer: AnyObject {
  /// Places copy `copy` of card `id`.
  ///
  /// - Throws: `ImposeError.sizeMismatch` (nothing placed, the imposer usable) for a card this
  ///   layout cannot take; `FileError`, `GraphicsError`, other `ImposeError`s.
  func add(id: String, copy: Int, card: PreparedCard) throws
  /// Writes what is pending and renames the file(s) into place.
  ///
  /// - Throws: `ImposeError.noCards` when nothing was added; `FileError`, `GraphicsError`.
  func finish() throws -> Imposed
  /// Removes the temporaries (after a failure).
  func discard()
}

/// The card-printer file: one page a side, card after card.
public final class CardPrinterImposer: CardImposer {
  private let path: String
  private var temporary: String?
  private var document: VectorDocument?
  private var pages = 0

  /// Writes to `path` (atomically).
  public init(path: String) { self.path = path }

  public func add(id: String, copy: Int, card: PreparedCard) throws {
    do {
      if document == nil {
        let temporary = try AtomicFile.temporaryPath(for: path)
        self.temporary = temporary
        document = try VectorDocument(
          format: .pdf, size: card.size, metadata: DocumentMetadata(title: "card printer job"),
          fonts: card.fonts, path: temporary)
      }
      for side in card.layouts.indices {
        try document?.page(size: card.size) { canvas in
          try card.draw(side: side, on: canvas, x: 0, y: 0)
        }
        pages += 1
      }
    } catch {
      throw namingFinal(error, temporary: temporary, path: path)
    }
  }

  public func finish() throws -> Imposed {
    guard let finished = document.take(), let temporary else { throw ImposeError.noCards }
    do {
      _ = try finished.finish()
      try AtomicFile.commit(temporary, to: path)
    } catch {
      AtomicFile.discard(temporary)
      throw namingFinal(error, temporary: temporary, path: path)
    }
    return Imposed(pages: pages, sheets: 0, grid: nil)
  }

  public func discard() {
    _ = document.take()
    if let temporary { AtomicFile.discard(temporary) }
  }
}

/// N-up sheets: for every sheet, the fronts, then (when cards have backs) the backs placed for
/// the duplex flip; crop marks at the sheet edges, only on the trim lines of cards that are
/// there; and the sheet map (sheet, side, row, column, id, copy), written a sheet at a time.
public final class SheetImposer: CardImposer {
  private let paper: PaperSize
  private let cropMarks: Bool
  private let flip: DuplexFlip
  private let path: String
  private let mapPath: String
  private var temporary: String?
  private var mapFile: AtomicOutput?
  private var document: VectorDocument?
  private var grid: SheetGrid?
  private var bleed = 0.0
  private var pending: [(id: String, copy: Int, card: PreparedCard)] = []
  private var sheets = 0
  private var pages = 0

  /// Sheets of `paper` (a sheet stock) into `path`, their map into `mapPath` (both
  /// atomically).
  public init(paper: PaperSize, cropMarks: Bool, flip: DuplexFlip, path: String, mapPath: String) {
    self.paper = paper
    self.cropMarks = cropMarks
    self.flip = flip
    self.path = path
    self.mapPath = mapPath
  }

  private var pageSize: Size {
    Size(
      width: paper.millimetres.width * Imposition.k, height: paper.millimetres.height * Imposition.k
    )
  }

  /// Opens the files and fixes the grid from the first card's size.
  private func start(_ card: PreparedCard) throws -> SheetGrid {
    let k = Imposition.k
    let grid = SheetGrid.best(
      cardWidth: card.size.width / k, cardHeight: card.size.height / k, sheet: paper.millimetres,
      margin: Imposition.margin)
    guard grid.capacity > 0 else { throw ImposeError.doesNotFit(stock: paper.rawValue) }
    let temporary = try AtomicFile.temporaryPath(for: path)
    self.temporary = temporary
    let mapFile = try AtomicOutput(path: mapPath)
    self.mapFile = mapFile
    try mapFile.write("sheet,side,row,column,id,copy\n")
    document = try VectorDocument(
      format: .pdf, size: pageSize, metadata: DocumentMetadata(title: "\(paper.rawValue) sheets"),
      fonts: card.fonts, path: temporary)
    self.grid = grid
    bleed = card.bleed
    return grid
  }

  /// A card of another size than the sheets were laid out for (the first card's).
  private func problem(with card: PreparedCard, id: String) -> ImposeError? {
    guard let grid else { return nil }
    let k = Imposition.k
    let width = card.size.width / k
    let height = card.size.height / k
    let expected =
      grid.rotated ? (grid.cellHeight, grid.cellWidth) : (grid.cellWidth, grid.cellHeight)
    guard abs(width - expected.0) > 0.01 || abs(height - expected.1) > 0.01 else { return nil }
    return .sizeMismatch(id: id, size: (width, height), expected: expected)
  }

  public func add(id: String, copy: Int, card: PreparedCard) throws {
    if let problem = problem(with: card, id: id) { throw problem }
    do {
      let grid = try self.grid ?? start(card)
      pending.append((id, copy, card))
      if pending.count == grid.capacity { try drawSheet(grid) }
    } catch {
      throw namingFinal(error, temporary: temporary, path: path)
    }
  }

  private func drawSheet(_ grid: SheetGrid) throws {
    let k = Imposition.k
    sheets += 1
    var map = ""
    let sides = pending.map(\.card.layouts.count).max() ?? 1
    for side in 0..<sides {
      var used: [(row: Int, column: Int)] = []
      try document?.page(size: pageSize) { canvas in
        for (offset, placed) in pending.enumerated() where side < placed.card.layouts.count {
          var (row, column) = grid.position(ofCell: offset)
          if side == 1 {
            (row, column) = grid.backPosition(row: row, column: column, flip: flip)
          }
          used.append((row, column))
          let corner = grid.cellOrigin(row: row, column: column)
          let x = corner.x * k
          let y = corner.y * k
          canvas.save()
          canvas.addRect(Rect(x: x, y: y, width: grid.cellWidth * k, height: grid.cellHeight * k))
          canvas.clip()
          if grid.rotated {
            canvas.translate(x + grid.cellWidth * k, y)
            canvas.rotate(Double.pi / 2)
          } else {
            canvas.translate(x, y)
          }
          try placed.card.draw(side: side, on: canvas, x: 0, y: 0)
          canvas.restore()
          map +=
            "\(sheets),\(side == 0 ? "front" : "back"),\(row + 1),\(column + 1),"
            + "\(SpreadsheetCSV.field(placed.id)),\(placed.copy)\n"
        }
        if cropMarks {
          Imposition.drawMarks(canvas, grid: grid, used: used, bleed: bleed)
        }
      }
      pages += 1
    }
    try mapFile?.write(map)
    pending.removeAll(keepingCapacity: true)
  }

  public func finish() throws -> Imposed {
    guard let grid, let temporary, let mapFile else { throw ImposeError.noCards }
    do {
      if !pending.isEmpty { try drawSheet(grid) }
      guard let finished = document.take() else { throw ImposeError.noCards }
      _ = try finished.finish()
      try AtomicFile.commit(temporary, to: path)
      self.temporary = nil
      try mapFile.commit()
      self.mapFile = nil
    } catch {
      discard()
      throw namingFinal(error, temporary: temporary, path: path)
    }
    return Imposed(pages: pages, sheets: sheets, grid: grid)
  }

  public func discard() {
    _ = document.take()
    mapFile?.discard()
    mapFile = nil
    if let temporary { AtomicFile.discard(temporary) }
  }
}

/// Imposes cards that must be laid out again from their items (`imprint batch merge`, after
/// shards ran on other machines): a chunk at a time laid out in parallel, then drawn in order.
public enum Imposition {
  static let k = 72 / 25.4
  /// The margin around the grid of cards on every sheet, in millimetres.
  static let margin = 5.0

  /// Feeds every card copy of `next`, laid out by `prepare`, to `imposer`, then finishes it.
  ///
  /// - Throws: what `prepare` or the imposer throws (the imposer's temporaries removed).
  public static func impose(
    next: () -> PlacedCard?,
    prepare: @escaping @Sendable (_ id: String, _ card: CardItem) async throws -> PreparedCard,
    into imposer: CardImposer
  ) async throws -> Imposed {
    var refused: [ImposeError] = []
    do {
      while true {
        var chunk: [PlacedCard] = []
        while chunk.count < 32, let card = next() { chunk.append(card) }
        if chunk.isEmpty { break }
        var unique: [String: CardItem] = [:]
        for placed in chunk { unique[placed.id] = placed.card }
        let prepared = try await withThrowingTaskGroup(of: (String, PreparedCard).self) { group in
          for (id, card) in unique { group.addTask { (id, try await prepare(id, card)) } }
          var prepared: [String: PreparedCard] = [:]
          for try await (id, card) in group { prepared[id] = card }
          return prepared
        }
        for placed in chunk {
          guard let card = prepared[placed.id] else { continue }
          do {
            try imposer.add(id: placed.id, copy: placed.copy, card: card)
          } catch let problem as ImposeError where problem.refusesOneCard {
            if placed.copy == 1 { refused.append(problem) }
          }
        }
      }
      var imposed = try imposer.finish()
      imposed.refused = refused
      return imposed
    } catch {
      imposer.discard()
      throw error
    }
  }

  /// Hairlines on every trim line of the used cells, in the margins outside the grid.
  static func drawMarks(
    _ canvas: borrowing Canvas, grid: SheetGrid, used: [(row: Int, column: Int)], bleed: Double
  ) {
    var xs = Set<Double>()
    var ys = Set<Double>()
    for cell in used {
      let (left, top) = grid.cellOrigin(row: cell.row, column: cell.column)
      xs.insert(left + bleed)
      xs.insert(left + grid.cellWidth - bleed)
      ys.insert(top + bleed)
      ys.insert(top + grid.cellHeight - bleed)
    }
    // The grid's far corner: the origin of the cell past its last row and column.
    let (gridRight, gridBottom) = grid.cellOrigin(row: grid.rows, column: grid.columns)
    let gap = 1.0
    let width = 0.25
    // In order: a set's order changes from run to run, and the bytes must not.
    for x in xs.sorted() {
      let length = min(5, grid.originY - gap - 0.5)
      guard length > 0.5 else { continue }
      canvas.line(
        from: (x * k, (grid.originY - gap) * k), to: (x * k, (grid.originY - gap - length) * k),
        width: width, color: .black)
      canvas.line(
        from: (x * k, (gridBottom + gap) * k), to: (x * k, (gridBottom + gap + length) * k),
        width: width, color: .black)
    }
    for y in ys.sorted() {
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
  /// No card item succeeded.
  case noCards
  /// The card does not fit the sheet stock (its name, as `PaperSize` writes it).
  case doesNotFit(stock: String)
  /// A card of another size than the one the sheets were laid out for (millimetres, with bleed).
  case sizeMismatch(id: String, size: (Double, Double), expected: (Double, Double))

  public static func == (a: ImposeError, b: ImposeError) -> Bool {
    a.code == b.code && a.message == b.message
  }

  public var code: String {
    switch self {
    case .noCards: "batch.noCards"
    case .doesNotFit: "batch.doesNotFit"
    case .sizeMismatch: "batch.sizeMismatch"
    }
  }

  /// 422: cards understood and refused.
  public var status: Int {
    switch self {
    case .noCards, .doesNotFit, .sizeMismatch: 422
    }
  }

  public var message: String {
    switch self {
    case .noCards: "no card was made, so there is nothing to impose"
    case .doesNotFit(let stock):
      "a card with its bleed does not fit on \(stock) inside "
        + "\(Formatting.number(Imposition.margin)) mm margins"
    case .sizeMismatch(let id, let size, let expected):
      "card '\(id)' is \(mm(size.0)) x \(mm(size.1)) mm with its bleed, but the sheets were "
        + "laid out for the first card's \(mm(expected.0)) x \(mm(expected.1)) mm"
    }
  }

  private func mm(_ value: Double) -> String { Formatting.number((value * 100).rounded() / 100) }

  /// Whether only the card at hand is refused (the layout goes on with the others).
  public var refusesOneCard: Bool {
    if case .sizeMismatch = self { true } else { false }
  }

  public var hint: String? {
    switch self {
    case .sizeMismatch: "run the cards of each size as a batch of their own"
    default: nil
    }
  }
}
