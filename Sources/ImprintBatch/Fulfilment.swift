// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: the packing list and address labels for a batch's card orders.

import Foundation
import ImprintCore
import ImprintGraphics

/// Packing lists and address labels.
public enum Fulfilment {
  /// Writes `packing-list.csv` and `labels.pdf` into `folder` for the shipped orders, when
  /// there are any.
  ///
  /// - Throws: `FileError` when a file cannot be written; `GraphicsError` when drawing fails.
  public static func write(_ shipped: [ItemResult], folder: String, fonts: FontLibrary?) throws {
    guard !shipped.isEmpty else { return }
    try packingList(shipped, to: folder + "/packing-list.csv")
    try labels(shipped, to: folder + "/labels.pdf", fonts: fonts)
  }

  /// The finished items of a results file that ship (streamed, a line at a time).
  ///
  /// Only lines holding `"shipTo"` are decoded; each one's status is decoded, never searched
  /// for in the text.
  ///
  /// - Throws: `FileError` when the file cannot be read.
  public static func shipped(inResults path: String) throws -> [ItemResult] {
    var shipped: [ItemResult] = []
    var lines = try LineReader(path: path)
    let shipTo = Array("\"shipTo\"".utf8)
    while let line = try lines.next() {
      // Only shipped orders are needed: skip decoding the other lines.
      guard line.firstRange(of: shipTo) != nil,
        let result = try? JSONDecoder().decode(ItemResult.self, from: Data(line)),
        result.status.succeeded, result.shipTo != nil
      else { continue }
      shipped.append(result)
    }
    return shipped
  }

  /// A4 label stock, in millimetres: 3 columns × 8 rows of 70 × 37 mm cells from the sheet's
  /// corner, no margin (Avery 3475 and similar).
  public static let labelSheet = SheetGrid(
    columns: 3, rows: 8, cellWidth: 70, cellHeight: 37, sheet: PaperSize.a4.millimetres)
  /// The blank inside a label around its address, in millimetres.
  static let labelPadding = 5.0

  /// Writes a CSV packing list (id, copies, name, email, address, zip) of the shipped results.
  ///
  /// RFC 4180 (CRLF between records; fields with a comma, quote or line break quoted), and
  /// every text cell neutralised against spreadsheet formula injection (`SpreadsheetCSV`).
  public static func packingList(_ results: [ItemResult], to path: String) throws {
    var text = SpreadsheetCSV.record(["id", "copies", "name", "email", "address", "zip"])
    for result in results where result.shipTo != nil && result.status.succeeded {
      guard let ship = result.shipTo else { continue }
      text += SpreadsheetCSV.record([
        result.id, "\(result.copies ?? 1)", ship.name, ship.email ?? "", ship.address,
        ship.zip ?? "",
      ])
    }
    try AtomicFile.write(Array(text.utf8), to: path)
  }

  /// Writes address labels, one per shipped card order, on A4 3 × 8 stock.
  ///
  /// - Parameters:
  ///   - results: the items; those with a shipping address get a label.
  ///   - path: the PDF to write.
  ///   - fonts: the fonts the labels are set with; Imprint's own when nil.
  /// - Returns: the number of labels.
  /// - Throws: `FileError` when the file cannot be written; `GraphicsError` when drawing fails.
  @discardableResult
  public static func labels(_ results: [ItemResult], to path: String, fonts: FontLibrary? = nil)
    throws -> Int
  {
    let shipped = results.compactMap { $0.status.succeeded ? $0.shipTo.map { ($0, $0) } : nil }
      .map(\.0)
    guard !shipped.isEmpty else { return 0 }
    let k = 72 / 25.4
    let page = Size(width: labelSheet.sheetWidth * k, height: labelSheet.sheetHeight * k)
    try AtomicFile.write(to: path) { temporary in
      do {
        try drawLabels(shipped, page: page, fonts: fonts, to: temporary)
      } catch {
        throw namingFinal(error, temporary: temporary, path: path)
      }
    }
    return shipped.count
  }

  private static func drawLabels(
    _ shipped: [ShipTo], page: Size, fonts: FontLibrary?, to temporary: String
  ) throws {
    let k = 72 / 25.4
    let document = try VectorDocument(
      format: .pdf, size: page, metadata: DocumentMetadata(title: "address labels"),
      fonts: fonts, path: temporary)
    let grid = labelSheet
    var index = 0
    while index < shipped.count {
      let sheet = shipped[index..<min(index + grid.capacity, shipped.count)]
      try document.page(size: page) { canvas in
        for (offset, ship) in sheet.enumerated() {
          let (row, column) = grid.position(ofCell: offset)
          let corner = grid.cellOrigin(row: row, column: column)
          let x = (corner.x + labelPadding) * k
          let y = (corner.y + labelPadding) * k
          let lines =
            ([ship.name] + ship.address.split(separator: "\n").map(String.init) + [ship.zip ?? ""])
            .filter { !$0.isEmpty }.joined(separator: "\n")
          try canvas.draw(
            TextBlock(
              lines, style: TextStyle(family: "DejaVu Sans", size: 9),
              width: (grid.cellWidth - 2 * labelPadding) * k,
              maxLines: 5, ellipsis: .end), x: x, y: y)
        }
      }
      index += grid.capacity
    }
    _ = try document.finish()
  }
}

/// CSV for spreadsheets: RFC 4180 records, and cells that a spreadsheet would run as a formula
/// made plain text.
public enum SpreadsheetCSV {
  /// Characters that start a formula (or a DDE command) in Excel, LibreOffice or Google Sheets
  /// when they begin a cell, with their full-width forms (OWASP, "CSV Injection").
  static let formulaStarts: Set<Character> = [
    "=", "+", "-", "@", "\t", "\r", "\u{FF1D}", "\u{FF0B}", "\u{FF0D}", "\u{FF20}",
  ]

  /// `text` made safe as a cell: prefixed with a single quote (which spreadsheets take as
  /// "text", and do not show) when it starts, after any spaces, with a formula character.
  public static func neutralised(_ text: String) -> String {
    guard let first = text.first(where: { $0 != " " }), formulaStarts.contains(first) else {
      return text
    }
    return "'" + text
  }

  /// `text` as one RFC 4180 field: quoted (quotes doubled) when it holds a comma, a quote, a
  /// line break or a carriage return.
  public static func field(_ text: String) -> String {
    let safe = neutralised(text)
    guard safe.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return safe }
    return "\"" + safe.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// `fields` as one record, ended by CRLF.
  public static func record(_ fields: [String]) -> String {
    fields.map(field).joined(separator: ",") + "\r\n"
  }
}
