// SPDX-License-Identifier: Apache-2.0
// ImprintCards: draws laid-out sides as PDF pages (vector, fonts embedded) or PNG images.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR

/// Output options for a card.
public struct CardOptions: Sendable, Hashable {
  /// Which sides to render, in order.
  public var faces: [CardFace] = [.front, .back]
  /// PNG resolution (default 300: 1011 × 638 pixels at trim size).
  public var dpi: Double = 300
  /// Bleed per side in millimetres; the template's when nil.
  public var bleed: Double?
  /// Draw crop marks outside the bleed (PDF); the page grows by `cropMarkMargin` on each side.
  public var cropMarks = false
  /// Allow characters no bundled font covers (warn instead of failing).
  public var allowMissingGlyphs = false
  /// The fonts text is set with; the fonts shipped with Imprint (`FontLibrary.bundled()`) when
  /// nil.
  public var fonts: FontLibrary?
  /// The card's language (BCP 47: `ko`, `zh-Hant`, `pt-BR`); the template's own when nil.
  public var locale: String?

  /// The margin crop marks need outside the bleed box, in millimetres.
  public static let cropMarkMargin = 8.0

  /// Default options: both sides, 300 dpi, the template's bleed, no crop marks.
  public init() {}
}

/// Draws card layouts.
public enum CardRenderer {
  static let pointsPerMM = 72 / 25.4

  /// Draws `layout` with the trim box's top-left corner at (`originX`, `originY`) points.
  static func draw(
    _ layout: CardLayout, on canvas: borrowing Canvas, originX: Double, originY: Double
  ) throws {
    let k = pointsPerMM
    func rect(_ box: Box) -> Rect {
      Rect(
        x: originX + box.x * k, y: originY + box.y * k, width: box.width * k, height: box.height * k
      )
    }
    for item in layout.items {
      switch item {
      case .background(let color, let box):
        canvas.fill(rect(box), color: color)
      case .backgroundImage(let bitmap, let box):
        try canvas.draw(bitmap, in: rect(box), fit: .cover)
      case .text(let block, let box, let top, _, let repeated):
        // The block's width is the box's, so alignment holds whatever size it was fitted at.
        if repeated {
          try canvas.drawRepeated(block, x: originX + box.x * k, y: originY + top * k)
        } else {
          try canvas.draw(block, x: originX + box.x * k, y: originY + top * k)
        }
      case .photo(let bitmap, let element):
        let target = rect(element.box)
        canvas.save()
        switch element.mask {
        case .none: canvas.addRect(target)
        case .circle: canvas.addEllipse(in: target)
        case .rounded: canvas.addRoundedRect(target, radius: element.cornerRadius * k)
        }
        canvas.clip()
        try canvas.draw(bitmap, in: target, fit: element.fit)
        canvas.restore()
        if let border = element.borderColor, element.borderWidth > 0 {
          switch element.mask {
          case .none: canvas.addRect(target)
          case .circle: canvas.addEllipse(in: target)
          case .rounded: canvas.addRoundedRect(target, radius: element.cornerRadius * k)
          }
          canvas.stroke(width: element.borderWidth * k, color: border)
        }
      case .qr(let matrix, let element):
        // One pixel a module, scaled without smoothing: pure black squares, and a few hundred
        // bytes in a PDF instead of a path of hundreds of rectangles.
        try canvas.draw(
          matrix.bitmap(quietZone: element.quietZone),
          in: rect(Box(x: element.x, y: element.y, width: element.size, height: element.size)),
          fit: .contain, smooth: false)
      case .rect(let element):
        let target = rect(element.box)
        if let fill = element.fill {
          canvas.addRoundedRect(target, radius: element.cornerRadius * k)
          canvas.setColor(fill)
          canvas.fill()
        }
        if let stroke = element.stroke, element.strokeWidth > 0 {
          canvas.addRoundedRect(target, radius: element.cornerRadius * k)
          canvas.stroke(width: element.strokeWidth * k, color: stroke)
        }
      case .line(let line):
        canvas.line(
          from: (originX + line.x1 * k, originY + line.y1 * k),
          to: (originX + line.x2 * k, originY + line.y2 * k), width: line.width * k,
          color: line.color)
      case .image(let bitmap, let element):
        try canvas.draw(bitmap, in: rect(element.box), fit: element.fit)
      }
    }
  }

  /// Draws crop marks: a short hairline on each trim line, outside the bleed, at every corner.
  static func drawCropMarks(
    on canvas: borrowing Canvas, trim: Rect, bleed: Double, margin: Double
  ) {
    let gap = bleed + 1.0 * pointsPerMM  // start beyond the bleed
    let length = margin - 1.5 * pointsPerMM - (gap - bleed)
    let width = 0.25
    for x in [trim.x, trim.maxX] {
      canvas.line(
        from: (x, trim.y - gap), to: (x, trim.y - gap - length), width: width, color: .black)
      canvas.line(
        from: (x, trim.maxY + gap), to: (x, trim.maxY + gap + length), width: width, color: .black)
    }
    for y in [trim.y, trim.maxY] {
      canvas.line(
        from: (trim.x - gap, y), to: (trim.x - gap - length, y), width: width, color: .black)
      canvas.line(
        from: (trim.maxX + gap, y), to: (trim.maxX + gap + length, y), width: width, color: .black)
    }
  }
}
