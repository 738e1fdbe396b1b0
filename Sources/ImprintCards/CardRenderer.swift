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
  ///
  /// On a page of a PDF of many cards (`CardPDFWriter`), each run of the design's fixed items
  /// (the background, bands, rules, fixed labels and images: what every card of the design
  /// shows) is a layer drawn once per document (`Canvas.drawLayer`), which every page refers to.
  static func draw(
    _ layout: CardLayout, on canvas: borrowing Canvas, originX: Double, originY: Double
  ) throws {
    guard canvas.recordsLayers else {
      for item in layout.items { try draw(item, on: canvas, originX: originX, originY: originY) }
      return
    }
    var index = layout.items.startIndex
    while index < layout.items.endIndex {
      var end = index
      while end < layout.items.endIndex, FixedLayer.part(layout.items[end]) != nil { end += 1 }
      if end - index < 2 {
        // A lone fixed label is a form already; a lone shape costs less drawn in place.
        try draw(layout.items[index], on: canvas, originX: originX, originY: originY)
        index += 1
        continue
      }
      let items = layout.items[index..<end]
      let layer = FixedLayer(items)
      try canvas.drawLayer(
        key: layer.key, keeping: layer.bitmaps, bounds: layer.bounds, x: originX, y: originY
      ) { inner in
        for item in items { try draw(item, on: inner, originX: 0, originY: 0) }
      }
      index = end
    }
  }

  /// Draws one item with the trim box's top-left corner at (`originX`, `originY`) points.
  private static func draw(
    _ item: LaidOutItem, on canvas: borrowing Canvas, originX: Double, originY: Double
  ) throws {
    let k = pointsPerMM
    func rect(_ box: Box) -> Rect {
      Rect(
        x: originX + box.x * k, y: originY + box.y * k, width: box.width * k, height: box.height * k
      )
    }
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

  /// A run of a design's fixed items as a layer: its key, the bitmaps the key names, and
  /// what it covers.
  private struct FixedLayer {
    /// One fixed item, as the layer's key holds it.
    ///
    /// Compared whole; hashed by kind and place only (a text's box, not its characters and
    /// style): every card of a run looks its layer up, and hashing each label's text cost more
    /// than the comparison that follows, which for the same template finds the same strings.
    enum Part: Hashable {
      case background(Color, Box)
      /// A bitmap named by its pixels' storage, which the layer keeps alive.
      case backgroundImage(UInt, Box)
      case text(TextBlock, Box, top: Double)
      case rect(RectElement)
      case line(LineElement)
      case image(UInt, ImageElement)

      func hash(into hasher: inout Hasher) {
        switch self {
        case .background(_, let box):
          hasher.combine(0)
          hasher.combine(box)
        case .backgroundImage(let storage, _):
          hasher.combine(1)
          hasher.combine(storage)
        case .text(_, let box, let top):
          hasher.combine(2)
          hasher.combine(box)
          hasher.combine(top)
        case .rect: hasher.combine(3)
        case .line: hasher.combine(4)
        case .image(let storage, _):
          hasher.combine(5)
          hasher.combine(storage)
        }
      }
    }

    /// The layer's parts as one key.
    ///
    /// A struct, not the array itself: an array given as `AnyHashable` is compared and hashed
    /// element by element through `AnyHashable` boxes of each part (dynamic casts, generic
    /// metadata), 2.3 % of a 1000-card run's CPU where `Array`'s own `==` takes a tenth of it.
    struct Key: Hashable {
      var parts: [Part] = []
    }

    var key = Key()
    var bitmaps: [Bitmap] = []
    var bounds = Rect(x: 0, y: 0, width: 0, height: 0)

    /// `item` as a part of a fixed layer; nil for what changes from card to card (the photo,
    /// texts with the profile's fields, codes).
    static func part(_ item: LaidOutItem) -> Part? {
      switch item {
      case .background(let color, let box): .background(color, box)
      case .backgroundImage(let bitmap, let box): .backgroundImage(storage(bitmap), box)
      case .text(let block, let box, let top, _, let repeated):
        repeated ? .text(block, box, top: top) : nil
      case .rect(let element): .rect(element)
      case .line(let element): .line(element)
      case .image(let bitmap, let element): .image(storage(bitmap), element)
      case .photo, .qr: nil
      }
    }

    /// The address of `bitmap`'s pixels: the same storage is the same image (the pixels are
    /// never changed in place), as long as it is alive.
    private static func storage(_ bitmap: Bitmap) -> UInt {
      bitmap.pixels.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    init(_ items: ArraySlice<LaidOutItem>) {
      let k = CardRenderer.pointsPerMM
      var minX = Double.infinity
      var minY = Double.infinity
      var maxX = -Double.infinity
      var maxY = -Double.infinity
      // What an item may cover, in millimetres from the trim's corner: its box, with room for
      // a stroke's half width or a text's overhanging ink.
      func cover(_ box: Box, margin: Double) {
        minX = min(minX, box.x - margin)
        minY = min(minY, box.y - margin)
        maxX = max(maxX, box.x + box.width + margin)
        maxY = max(maxY, box.y + box.height + margin)
      }
      for item in items {
        guard let part = Self.part(item) else { continue }
        key.parts.append(part)
        switch item {
        case .background(_, let box): cover(box, margin: 0)
        case .backgroundImage(let bitmap, let box):
          bitmaps.append(bitmap)
          cover(box, margin: 0)
        case .text(let block, let box, let top, let metrics, _):
          // The label's own form allows one em on each side of its block.
          let em = block.style.size / k
          cover(
            Box(
              x: box.x, y: top, width: max(block.width ?? metrics.width, metrics.width) / k,
              height: metrics.height / k), margin: em)
          cover(box, margin: 0)
        case .rect(let element): cover(element.box, margin: element.strokeWidth)
        case .line(let line):
          cover(
            Box(
              x: min(line.x1, line.x2), y: min(line.y1, line.y2), width: abs(line.x2 - line.x1),
              height: abs(line.y2 - line.y1)), margin: line.width)
        case .image(let bitmap, let element):
          bitmaps.append(bitmap)
          cover(element.box, margin: 0)
        case .photo, .qr: break
        }
      }
      // A point more all round: an edge drawn on the form's box would be antialiased twice
      // (poppler shades its pixels differently from the same edge drawn in place).
      bounds = Rect(
        x: minX * k - 1, y: minY * k - 1, width: (maxX - minX) * k + 2,
        height: (maxY - minY) * k + 2)
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
