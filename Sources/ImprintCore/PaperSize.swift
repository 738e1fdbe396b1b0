// SPDX-License-Identifier: Apache-2.0
// Imprint: the paper sizes Imprint knows, for the pages of uploads and orders and for the
// sheets card batches are imposed on.

/// A paper size, portrait, in millimetres: the one list of sizes, with their names as written
/// in the CLI, in JSON and in price lists.
///
/// Two roles, each a subset: `pageSizes`, recognised in uploads (`matching`) and offered for
/// orders (A3 to Tabloid; B4 and B5 are ISO), and `sheetStocks`, the sheets a card batch is
/// imposed on (A4, Letter, A3 and SRA3). SRA3, a press sheet with room for bleed and grip, is a
/// sheet stock only: a 320 × 450 mm upload is not named, and an order cannot ask for it.
public enum PaperSize: String, Sendable, Codable, CaseIterable {
  case a3 = "A3"
  case a4 = "A4"
  case a5 = "A5"
  case b4 = "B4"
  case b5 = "B5"
  case letter = "Letter"
  case legal = "Legal"
  case tabloid = "Tabloid"
  case sra3 = "SRA3"

  /// Width and height in millimetres, portrait.
  public var millimetres: (width: Double, height: Double) {
    switch self {
    case .a3: (297, 420)
    case .a4: (210, 297)
    case .a5: (148, 210)
    case .b4: (250, 353)
    case .b5: (176, 250)
    case .letter: (215.9, 279.4)
    case .legal: (215.9, 355.6)
    case .tabloid: (279.4, 431.8)
    case .sra3: (320, 450)
    }
  }

  /// The sizes recognised in uploads and offered for orders, in the order price lists and
  /// messages list them.
  public static let pageSizes: [PaperSize] = [
    .a3, .a4, .a5, .b4, .b5, .letter, .legal, .tabloid,
  ]

  /// The sheets a card batch is imposed on (`imprint batch --layout`), in the order the CLI
  /// lists them.
  public static let sheetStocks: [PaperSize] = [.a4, .letter, .a3, .sra3]

  /// Whether uploads are recognised as this size and orders may ask for it.
  public var isPageSize: Bool { Self.pageSizes.contains(self) }

  /// Whether card batches are imposed on sheets of this size.
  public var isSheetStock: Bool { Self.sheetStocks.contains(self) }

  /// The page size (`pageSizes`, never a sheet stock only) within ±2 mm of `widthMM` ×
  /// `heightMM` (either orientation), or nil.
  public static func matching(widthMM: Double, heightMM: Double) -> PaperSize? {
    let short = min(widthMM, heightMM)
    let long = max(widthMM, heightMM)
    return pageSizes.first {
      abs($0.millimetres.width - short) <= 2 && abs($0.millimetres.height - long) <= 2
    }
  }
}
