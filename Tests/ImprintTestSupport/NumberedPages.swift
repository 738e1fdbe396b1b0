// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: PDFs whose pages carry their page number, to find where each page landed
// after imposition (`pdftotext -bbox`).

import Foundation
import ImprintCore
import ImprintGraphics

/// One page of a numbered fixture.
public struct NumberedPage: Sendable, CustomStringConvertible {
  /// The page box in points (MediaBox), before `/Rotate`.
  public var width: Double
  /// The page box's height in points.
  public var height: Double
  /// `/Rotate` (0, 90, 180, 270): only the hand-written fixtures carry it.
  public var rotate: Int

  /// A page of `width` × `height` points, turned by `rotate` degrees when displayed.
  public init(_ width: Double, _ height: Double, rotate: Int = 0) {
    self.width = width
    self.height = height
    self.rotate = rotate
  }

  /// An A4 portrait page.
  public static let a4 = NumberedPage(595.276, 841.89)
  /// An A4 landscape page.
  public static let a4Landscape = NumberedPage(841.89, 595.276)

  /// Whether the page is wider than high as displayed (`/Rotate` applied).
  public var displayedLandscape: Bool { (rotate % 180 == 0) == (width > height) }

  public var description: String {
    "\(Int(width))x\(Int(height))\(rotate == 0 ? "" : " rotated \(rotate)")"
  }
}

/// PDFs whose page N shows `PN` in its centre and `TN` near its top edge (as displayed), so
/// that a page's cell and orientation can be read back from any imposition of it.
public enum NumberedPages {
  /// A PDF drawn by cairo: DejaVu Sans embedded (subset), and on page 1 a 40 × 30 pixel image.
  public static func drawn(_ pages: [NumberedPage]) throws -> [UInt8] {
    let first = pages.first ?? .a4
    let document = try VectorDocument(
      format: .pdf, size: Size(width: first.width, height: first.height))
    var pixels: [UInt8] = []
    for index in 0..<(40 * 30) { pixels += [UInt8(index % 256), 90, 160, 255] }
    let image = Bitmap(width: 40, height: 30, pixels: pixels, hasAlpha: false)
    let style = TextStyle(family: "DejaVu Sans", size: 20)
    for (index, page) in pages.enumerated() {
      try document.page(size: Size(width: page.width, height: page.height)) { canvas in
        _ = try canvas.drawText(
          "P\(index + 1)", style: style, x: page.width / 2 - 14, y: page.height / 2 - 12)
        _ = try canvas.drawText(
          "T\(index + 1)", style: style, x: page.width / 2 - 14, y: 20)
        if index == 0 {
          try canvas.draw(
            image, in: Rect(x: 20, y: page.height - 50, width: 40, height: 30), fit: .contain)
        }
      }
    }
    return try document.finish()
  }

  /// A hand-written PDF (Helvetica, not embedded) whose pages may carry `/Rotate`; the marks
  /// are placed so that they read upright and centred once the rotation is applied.
  ///
  /// The pages numbered in `colorPages` (1-based) also carry a red 120 × 120 pt square near their
  /// bottom-left corner (about 3 % of an A4 page: a colour page by the default `ColorRule`);
  /// the others are black on white.
  public static func written(_ pages: [NumberedPage], colorPages: Set<Int> = []) -> [UInt8] {
    var list: [(content: String, entries: String)] = []
    for (index, page) in pages.enumerated() {
      let number = index + 1
      // Displayed coordinates (x right, y up on the page as shown), then the matrix that maps
      // them into the unrotated page box.
      let shownWidth = page.rotate % 180 == 0 ? page.width : page.height
      let shownHeight = page.rotate % 180 == 0 ? page.height : page.width
      let matrix: String
      switch page.rotate {
      case 90: matrix = "0 1 -1 0 \(page.width) 0"
      case 180: matrix = "-1 0 0 -1 \(page.width) \(page.height)"
      case 270: matrix = "0 -1 1 0 0 \(page.height)"
      default: matrix = "1 0 0 1 0 0"
      }
      let content =
        "q \(matrix) cm BT /F1 20 Tf \(shownWidth / 2 - 14) \(shownHeight / 2 - 8) Td (P\(number)) Tj ET "
        + "BT /F1 20 Tf \(shownWidth / 2 - 14) \(shownHeight - 40) Td (T\(number)) Tj ET"
        + (colorPages.contains(number) ? " 1 0 0 rg 30 30 120 120 re f Q" : " Q")
      let rotate = page.rotate == 0 ? "" : " /Rotate \(page.rotate)"
      list.append(
        (
          content,
          "/MediaBox [0 0 \(page.width) \(page.height)]\(rotate) "
            + "/Resources << /Font << /F1 3 0 R >> >>"
        ))
    }
    return HostileDocuments.pdf(
      pages: list, shared: ["<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])
  }
}

/// A word `pdftotext -bbox` found, in points from the page's top-left corner.
public struct PlacedWord: Sendable, Equatable {
  /// The text.
  public var text: String
  /// The box's centre, horizontally.
  public var x: Double
  /// The box's centre, vertically (downwards).
  public var y: Double
}

/// One page as `pdftotext -bbox` reads it.
public struct ReadPage: Sendable {
  /// The page's width in points.
  public var width: Double
  /// The page's height in points.
  public var height: Double
  /// The words on it.
  public var words: [PlacedWord]
}

/// Every page of the PDF at `path` with its words' positions, read by `pdftotext -bbox`.
public func wordsByPage(_ path: String) throws -> [ReadPage] {
  let result = try runTool("pdftotext", ["-bbox", path, "-"])
  precondition(result.status == 0, "pdftotext failed: \(result.stderr)")
  func attribute(_ name: String, _ line: Substring) -> Double? {
    guard let start = line.range(of: "\(name)=\"") else { return nil }
    let rest = line[start.upperBound...]
    return rest.firstIndex(of: "\"").flatMap { Double(rest[..<$0]) }
  }
  var pages: [ReadPage] = []
  for line in result.stdout.split(separator: "\n") {
    if line.contains("<page "), let width = attribute("width", line),
      let height = attribute("height", line)
    {
      pages.append(ReadPage(width: width, height: height, words: []))
    } else if line.contains("<word "), let xMin = attribute("xMin", line),
      let yMin = attribute("yMin", line), let xMax = attribute("xMax", line),
      let yMax = attribute("yMax", line), let open = line.firstIndex(of: ">"),
      let close = line.range(of: "</word>"), !pages.isEmpty
    {
      let text = String(line[line.index(after: open)..<close.lowerBound])
      pages[pages.count - 1].words.append(
        PlacedWord(text: text, x: (xMin + xMax) / 2, y: (yMin + yMax) / 2))
    }
  }
  return pages
}
