// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the selected pages of a PDF placed on printer sheets, losslessly, by
// libqpdf (CImprintImpose's C++ over libqpdf's C++ API).

internal import CImprintEngines
import Foundation
import ImprintCore
import ImprintGraphics

/// How the pages of one file go onto sheets: what `imprint prepare` asks a worker for.
public struct SheetLayout: Sendable, Codable, Equatable {
  /// The pages, as the order's range (`1-3,5`, or nil for all).
  public var pages: String?
  /// The pages the file had when it was quoted; the file must still have them.
  public var expectedPages: Int
  /// Pages per sheet side (cells of `SheetGrid.nUp`): 1, 2, 4, 6, 9 or 16.
  public var nUp: Int
  /// The paper size of the sheets (one of `PaperSize.pageSizes`, as the order's line names).
  public var paper: PaperSize
  /// Whether a blank side ends the file (the back of a duplex job's odd last sheet).
  public var blankBack: Bool

  /// Creates a layout.
  public init(pages: String?, expectedPages: Int, nUp: Int, paper: PaperSize, blankBack: Bool) {
    self.pages = pages
    self.expectedPages = expectedPages
    self.nUp = nUp
    self.paper = paper
    self.blankBack = blankBack
  }
}

/// Places pages on sheets with `CImprintImpose_run`: the page imposer, beside the card
/// imposer of a batch (ImprintBatch's `SheetImposer`); both place their cells on a `SheetGrid`.
///
/// The grid is `SheetGrid.nUp`: the sheet divided into `nUp` cells, without margin or gutter,
/// filled in reading order; 2-up and 6-up sheets are landscape, the others portrait; 1-up fits
/// the page to the paper. Each page becomes a form XObject of its own content streams, fonts
/// and images (nothing is drawn again or re-encoded), rotated a quarter turn counter-clockwise
/// when its orientation differs from its cell's, scaled uniformly to fit the cell and centred:
/// CUPS's number-up. Annotations and form fields are drawn into the pages first.
enum PageImposer {
  /// The sheets of `layout` for the PDF in `bytes`, written to `descriptor`.
  ///
  /// - Parameters:
  ///   - bytes: the PDF.
  ///   - file: its name in messages.
  ///   - password: its password, if any.
  ///   - layout: pages, n-up, paper, blank back.
  ///   - descriptor: where the PDF goes (not closed).
  ///   - output: the path `descriptor` writes, in messages.
  /// - Returns: the sheet sides written (the pages of the output, a blank back included).
  /// - Throws: `DocumentError` (`.encrypted`, `.badPageRange`, `.changedSinceQuote`,
  ///   `.emptyPage`, `.prepareFailed`, `.memoryLimit`) or `FileError.unwritable`.
  static func impose(
    _ bytes: DocumentBytes, file: String, password: String?, layout: SheetLayout,
    descriptor: Int32, output: String
  ) throws -> Int {
    try DocumentEngines.required(file: file)
    if try DocumentEngine.sniff(bytes, file: file) != .pdf {
      let pdf = try pdf(ofImage: Array(bytes.buffer), file: file)
      return try impose(
        DocumentBytes(copying: pdf), file: file, password: nil, layout: layout,
        descriptor: descriptor, output: output)
    }
    let pages: [Int32]
    switch PageRange.resolve(layout.pages ?? "all", count: layout.expectedPages) {
    case .pages(let list): pages = list.map { Int32(clamping: $0) }
    case .malformed, .outside:
      throw DocumentError.badPageRange(file: file, range: layout.pages ?? "all")
    }
    let (width, height) = layout.paper.millimetres
    guard let grid = SheetGrid.nUp(layout.nUp, sheet: (width / 25.4 * 72, height / 25.4 * 72))
    else {
      throw DocumentError.prepareFailed(file: file, reason: "the imposition job is not valid")
    }
    let result = run(
      bytes, password: password, pages: pages, expectedPages: layout.expectedPages, grid: grid,
      blankBack: layout.blankBack, descriptor: descriptor)
    if Int(result.status) == Int(CImprintImpose_writeFailed) {
      throw FileError.unwritable(path: output, reason: .system(result.systemError))
    }
    if let failure = failure(result, file: file, password: password, pages: layout.expectedPages) {
      throw failure
    }
    return Int(result.sheetSides)
  }

  /// The pages of the PDF in `bytes` as a print-ready file carries them, each on a sheet of
  /// its own size, unscaled: the same form XObject of each page `impose` places, annotations
  /// drawn in exactly as there (those with the print flag and an appearance, not hidden; the
  /// others, and the link boxes a viewer draws, are not carried), and no optional-content
  /// configuration (the print-ready file has none).
  ///
  /// What colour is decided on (`DocumentEngine.inspect`), so that a quote charges the colour
  /// the print-ready file puts down.
  ///
  /// - Returns: the PDF, one page a page of the file, in order.
  /// - Throws: `DocumentError` (`.encrypted`, `.changedSinceQuote` when the page tree holds
  ///   another number than `expectedPages`, `.emptyPage`, `.prepareFailed`, `.memoryLimit`).
  static func printablePages(
    _ bytes: DocumentBytes, file: String, password: String?, expectedPages: Int
  ) throws(DocumentError) -> DocumentBytes {
    try DocumentEngines.required(file: file)
    let pages = (0..<Int32(clamping: expectedPages)).map { $0 + 1 }
    var output = CImprintImpose_Output()
    let result = run(
      bytes, password: password, pages: pages, expectedPages: expectedPages, grid: nil,
      blankBack: false, descriptor: -1
    ) { job, result in
      engines.impose_run_to_memory(&job, &result, &output)
    }
    defer { engines.impose_free(&output) }
    if let failure = failure(result, file: file, password: password, pages: expectedPages) {
      throw failure
    }
    guard let start = output.bytes else {
      throw .prepareFailed(file: file, reason: "libqpdf returned no pages")
    }
    // One copy, owned by Swift; libqpdf's is freed on return.
    return DocumentBytes(copying: UnsafeBufferPointer(start: start, count: output.length))
  }

  /// Runs one imposition job with `call` (`CImprintImpose_run` unless told otherwise): the
  /// pages placed in the cells of `grid` (points), or with no grid each on a sheet of its own
  /// size.
  private static func run(
    _ bytes: DocumentBytes, password: String?, pages: [Int32], expectedPages: Int,
    grid: SheetGrid?, blankBack: Bool, descriptor: Int32,
    call: (inout CImprintImpose_Job, inout CImprintImpose_Result) -> Int32 = {
      engines.impose_run(&$0, &$1)
    }
  ) -> CImprintImpose_Result {
    // Each cell's bottom-left corner (PDF's coordinates) and size, in reading order.
    let cells = (0..<(grid?.capacity ?? 0)).flatMap { index -> [Double] in
      guard let grid else { return [] }
      let (row, column) = grid.position(ofCell: index)
      let corner = grid.pdfCellOrigin(row: row, column: column)
      return [corner.x, corner.y, grid.cellWidth, grid.cellHeight]
    }
    var result = CImprintImpose_Result()
    pages.withUnsafeBufferPointer { list in
      cells.withUnsafeBufferPointer { cells in
        bytes.buffer.withMemoryRebound(to: UInt8.self) { data in
          (password ?? "").withCString { secret in
            var job = CImprintImpose_Job(
              bytes: data.baseAddress, length: data.count,
              password: password == nil ? nil : secret, pages: list.baseAddress,
              pageCount: Int32(clamping: list.count),
              expectedPages: Int32(clamping: expectedPages),
              sheetWidth: grid?.sheetWidth ?? 0, sheetHeight: grid?.sheetHeight ?? 0,
              cells: cells.baseAddress, cellCount: Int32(clamping: grid?.capacity ?? 0),
              blankBack: blankBack ? 1 : 0, descriptor: descriptor, ownSize: grid == nil ? 1 : 0)
            _ = call(&job, &result)
          }
        }
      }
    }
    return result
  }

  /// The error a job's status stands for; nil on success (and for a failed write, which the
  /// caller names).
  private static func failure(
    _ result: CImprintImpose_Result, file: String, password: String?, pages expectedPages: Int
  ) -> DocumentError? {
    let message = withUnsafeBytes(of: result.message) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    switch Int(result.status) {
    case Int(CImprintImpose_ok), Int(CImprintImpose_writeFailed): return nil
    case Int(CImprintImpose_password): return .encrypted(file: file, passwordGiven: password != nil)
    case Int(CImprintImpose_pageCount):
      return .changedSinceQuote(
        file: file, quotedPages: expectedPages, pages: Int(result.foundPages))
    case Int(CImprintImpose_emptyPage): return .emptyPage(file: file, page: Int(result.page))
    case Int(CImprintImpose_outOfMemory): return .memoryLimit(file: file, megabytes: 0)
    default:
      return .prepareFailed(file: file, reason: SafeText.excerpt(message, limit: 200))
    }
  }

  /// A PDF of the image in `bytes`: one page a page of the image (a TIFF's directories), each
  /// the image's size at its resolution (96 dpi when it states none), upright (EXIF
  /// orientation applied), drawn by cairo: an upright JPEG is embedded as it is (DCTDecode),
  /// other images as their decoded pixels, losslessly compressed.
  ///
  /// - Throws: `DocumentError` (`.image`, `.memoryLimit`) naming `file`.
  static func pdf(ofImage bytes: [UInt8], file: String) throws -> [UInt8] {
    let pages = try DocumentEngine.imagePages(bytes, file: file)
    func size(_ page: (width: Int, height: Int, dpi: Double)) -> Size {
      Size(width: Double(page.width) * 72 / page.dpi, height: Double(page.height) * 72 / page.dpi)
    }
    let first = pages.first.map(size) ?? Size(width: 72, height: 72)
    let document = try VectorDocument(format: .pdf, size: first)
    for (index, page) in pages.enumerated() {
      let bitmap = try DocumentEngine.decodeImage(bytes, page: index + 1, file: file)
      let pageSize = size(page)
      try document.page(size: pageSize) { canvas in
        try canvas.draw(
          bitmap, in: Rect(x: 0, y: 0, width: pageSize.width, height: pageSize.height),
          fit: .contain)
      }
    }
    return try document.finish()
  }
}
