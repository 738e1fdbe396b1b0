// SPDX-License-Identifier: Apache-2.0
// ImprintQR: a payload's QR symbol rendered as PNG, SVG, PDF, EPS or terminal text.

import ImprintCore
import ImprintGraphics

/// The output formats of `imprint qr`.
public enum QRFormat: String, Sendable, CaseIterable, Codable {
  /// 1-bit PNG written with libpng, DPI stored (8-bit when a caption is drawn).
  case png
  /// SVG with one path of row runs.
  case svg
  /// Vector PDF at an exact physical size.
  case pdf
  /// Encapsulated PostScript, vector.
  case eps
  /// UTF-8 half blocks for a terminal (dark modules on a light background).
  case text

  /// The format implied by a file name's extension (`.txt` is text), or nil.
  public init?(pathExtension path: String) {
    guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
    let ext = path[path.index(after: dot)...].lowercased()
    if ext == "txt" {
      self = .text
      return
    }
    self.init(rawValue: ext)
  }

  /// Whether the format is binary (never written to a terminal).
  public var isBinary: Bool { self == .png || self == .pdf }
}

/// How a QR code looks and how large it prints.
public struct QRStyle: Sendable, Hashable {
  /// Error-correction level (default M).
  public var level: QRErrorCorrection = .medium
  /// Light modules around the symbol (default 4, the standard's minimum), 0-16.
  public var quietZone = 4
  /// Pixels per module for raster output when `sizeMillimetres` is nil, 1-64.
  public var modulePixels = 8
  /// Resolution stored in PNGs and used to convert `sizeMillimetres` to pixels.
  public var dpi: Double = 300
  /// The printed width of the symbol without its quiet zone, in millimetres, when set.
  public var sizeMillimetres: Double?
  /// Dark-module colour (default pure black).
  public var foreground: Color = .black
  /// Light-module colour (default white).
  public var background: Color = .white
  /// Render colours that fail the contrast check anyway.
  public var allowLowContrast = false
  /// Text under the code, when set (for example an address grouped in fours).
  public var caption: String?
  /// For terminal text: wrap in ANSI colours forcing black on white.
  public var ansiColors = false
  /// The fonts the caption is set with; the fonts shipped with Imprint
  /// (`FontLibrary.bundled()`) when nil.
  public var fonts: FontLibrary?

  /// The contrast ratio (WCAG 2) below which colours are refused.
  public static let minimumContrast = 4.5

  /// The most pixels a raster (PNG) QR code may have: 100 megapixels.
  ///
  /// That is a 10 000-pixel square (85 cm at 300 dpi). `--size` and `--dpi` are each in range, but together they could ask
  /// for a 188 976-pixel square (35 gigapixels); larger prints are vector (SVG, PDF, EPS).
  public static let maximumPixels = 100_000_000

  /// Creates the default style.
  public init() {}

  /// Checks the option ranges, the caption's length and the colour contrast.
  ///
  /// - Throws: `QRError.invalidOption`, `QRError.invertedColors` or `QRError.lowContrast`.
  public func validate() throws(QRError) {
    func expected<T>(_ range: ClosedRange<T>, _ unit: String = "") -> String {
      "\(range.lowerBound) to \(range.upperBound)" + (unit.isEmpty ? "" : " " + unit)
    }
    let (zones, modules) = (QROption.quietZoneRange, QROption.moduleRange)
    let (dpis, sizes) = (QROption.dpiRange, QROption.sizeRange)
    guard zones.contains(quietZone) else {
      throw .invalidOption(
        option: .quietZone, value: "\(quietZone)", expected: expected(zones, "modules"))
    }
    guard modules.contains(modulePixels) else {
      throw .invalidOption(
        option: .module, value: "\(modulePixels)", expected: expected(modules, "pixels"))
    }
    guard dpis.contains(dpi) else {
      throw .invalidOption(
        option: .dpi, value: "\(dpi)",
        expected: expected(Int(dpis.lowerBound)...Int(dpis.upperBound)))
    }
    if let size = sizeMillimetres, !sizes.contains(size) {
      throw .invalidOption(
        option: .size, value: "\(size)",
        expected: expected(Int(sizes.lowerBound)...Int(sizes.upperBound), "millimetres"))
    }
    // Counted in Unicode scalars, as JSON Schema's maxLength counts (never fewer than the
    // characters the caption is shrunk by).
    if let caption, caption.unicodeScalars.count > QROption.captionLimit {
      throw .invalidOption(
        option: .caption, value: "\(caption.unicodeScalars.count) characters",
        expected: "at most \(QROption.captionLimit) characters")
    }
    guard !allowLowContrast else { return }
    if foreground.relativeLuminance >= background.relativeLuminance {
      throw .invertedColors(foreground: foreground, background: background)
    }
    let ratio = foreground.contrastRatio(with: background)
    if ratio < Self.minimumContrast {
      throw .lowContrast(
        foreground: foreground, background: background, ratio: ratio,
        minimum: Self.minimumContrast)
    }
  }
}

/// A rendered QR code.
public struct QRRendering: Sendable {
  /// The file's bytes (UTF-8 for SVG and text).
  public let bytes: [UInt8]
  /// The format of `bytes`.
  public let format: QRFormat
  /// The encoded symbol.
  public let matrix: QRMatrix
  /// Pixels per module (raster output), or the nominal value used for sizing.
  public let modulePixels: Int
  /// The full width in pixels for PNG output (quiet zone included).
  public let pixelWidth: Int
  /// The full height in pixels for PNG output (quiet zone and caption included).
  public let pixelHeight: Int
  /// The printed size of one module, in millimetres.
  public let moduleMillimetres: Double
  /// The printed width of the symbol without its quiet zone, in millimetres.
  public let symbolMillimetres: Double
}

/// Renders QR codes; stateless and safe to call from many tasks at once.
public enum QRRenderer {
  /// Encodes `payload` and renders it.
  ///
  /// - Throws: `QRError` for bad options or colours, `QRError.payloadTooLarge` when the
  ///   payload does not fit, `GraphicsError`s from the C libraries.
  public static func render(payload: String, style: QRStyle, format: QRFormat) throws
    -> QRRendering
  {
    try style.validate()
    guard !payload.isEmpty else { throw QRError.emptyPayload(source: "the payload") }
    let matrix = try QRMatrix.encode(Array(payload.utf8), level: style.level)
    return try render(matrix: matrix, style: style, format: format)
  }

  /// Renders an encoded symbol.
  ///
  /// - Throws: `QRError` for bad options or colours, `QRError.imageTooLarge` for a PNG over
  ///   `QRStyle.maximumPixels`, `GraphicsError` from the C libraries.
  public static func render(matrix: QRMatrix, style: QRStyle, format: QRFormat) throws
    -> QRRendering
  {
    try style.validate()
    let geometry = Geometry(symbolSize: matrix.size, style: style)
    if format == .png { try geometry.checkRasterSize() }
    let bytes: [UInt8]
    switch format {
    case .png: bytes = try png(matrix, geometry, style)
    case .svg: bytes = Array(svg(matrix, geometry, style).utf8)
    case .pdf: bytes = try vector(matrix, geometry, style, .pdf)
    case .eps: bytes = try vector(matrix, geometry, style, .eps)
    case .text: bytes = Array(terminalText(matrix, style).utf8)
    }
    return QRRendering(
      bytes: bytes, format: format, matrix: matrix, modulePixels: geometry.modulePixels,
      pixelWidth: geometry.totalModules * geometry.modulePixels,
      pixelHeight: geometry.totalModules * geometry.modulePixels + geometry.captionPixels,
      moduleMillimetres: geometry.modulePoints / 72 * 25.4,
      symbolMillimetres: geometry.modulePoints * Double(matrix.size) / 72 * 25.4)
  }

  /// Checks, before any payload is encoded, that a PNG of even the smallest symbol (version 1,
  /// 21 modules) would stay within `QRStyle.maximumPixels`: a bulk run with `--size 1000
  /// --dpi 4800` fails once, up front, rather than on every line.
  ///
  /// - Throws: `QRError.imageTooLarge`, or the errors of `QRStyle.validate`.
  public static func checkRasterSize(style: QRStyle) throws(QRError) {
    try style.validate()
    try Geometry(symbolSize: 21, style: style).checkRasterSize()
  }

  /// Sizes shared by all outputs; caption sizes are in modules.
  struct Geometry {
    let totalModules: Int
    let modulePixels: Int
    let modulePoints: Double
    let captionLines: [String]
    let captionFontSize: Double
    let captionHeight: Double

    /// Sizes for a symbol of `symbolSize` modules a side, with a validated `style` (so every
    /// Double below is finite and small: at most 1000 mm at 4800 dpi).
    init(symbolSize: Int, style: QRStyle) {
      totalModules = symbolSize + 2 * style.quietZone
      if let size = style.sizeMillimetres {
        let pixels = size / 25.4 * style.dpi / Double(symbolSize)
        modulePixels = max(1, Int(pixels.rounded()))
        modulePoints = size / 25.4 * 72 / Double(symbolSize)
      } else {
        modulePixels = style.modulePixels
        modulePoints = Double(style.modulePixels) / style.dpi * 72
      }
      guard let caption = style.caption, !caption.isEmpty else {
        captionLines = []
        captionFontSize = 0
        captionHeight = 0
        return
      }
      // Monospaced caption (DejaVu Sans Mono advances 0.602 em): one line if it stays readable
      // at 1.8 modules, else two lines split at the space nearest the middle.
      let width = Double(symbolSize + max(2, style.quietZone))
      let advance = 0.62
      var lines = [caption]
      if width / (Double(caption.count) * advance) < 1.8, let split = middleSpace(caption) {
        lines = [String(caption[..<split]), String(caption[caption.index(after: split)...])]
      }
      let longest = Double(lines.map(\.count).max() ?? 1)
      captionLines = lines
      captionFontSize = min(2.4, width / (longest * advance))
      captionHeight = Double(lines.count) * captionFontSize * 1.25 + 1
    }

    /// The caption's height in pixels (a few modules' worth).
    var captionPixels: Int { Int((captionHeight * Double(modulePixels)).rounded(.up)) }

    /// Refuses a raster over `QRStyle.maximumPixels`, with checked arithmetic throughout.
    ///
    /// - Throws: `QRError.imageTooLarge` naming the width and height.
    func checkRasterSize() throws(QRError) {
      let width = totalModules.multipliedReportingOverflow(by: modulePixels)
      let height = width.partialValue.addingReportingOverflow(captionPixels)
      let pixels = width.partialValue.multipliedReportingOverflow(by: height.partialValue)
      guard !width.overflow, !height.overflow, !pixels.overflow,
        pixels.partialValue <= QRStyle.maximumPixels
      else {
        throw .imageTooLarge(
          width: width.overflow ? Int.max : width.partialValue,
          height: height.overflow || width.overflow ? Int.max : height.partialValue,
          limit: QRStyle.maximumPixels)
      }
    }
  }

  /// The space nearest the middle of `text` (the first of two equally near), in one pass: a
  /// long caption with many spaces stays linear.
  private static func middleSpace(_ text: String) -> String.Index? {
    let middle = text.count / 2
    var best: String.Index?
    var bestDistance = Int.max
    for (offset, index) in text.indices.enumerated() where text[index] == " " {
      let distance = abs(offset - middle)
      if distance < bestDistance {
        best = index
        bestDistance = distance
      }
    }
    return best
  }

  /// Runs of dark modules per row: (row, start column, length).
  static func runs(_ matrix: QRMatrix) -> [(y: Int, x: Int, length: Int)] {
    var result: [(Int, Int, Int)] = []
    for y in 0..<matrix.size {
      var x = 0
      while x < matrix.size {
        guard matrix.isDark(x: x, y: y) else {
          x += 1
          continue
        }
        let start = x
        while x < matrix.size && matrix.isDark(x: x, y: y) { x += 1 }
        result.append((y, start, x - start))
      }
    }
    return result
  }

  private static func png(_ matrix: QRMatrix, _ g: Geometry, _ style: QRStyle) throws -> [UInt8] {
    let scale = g.modulePixels
    let side = g.totalModules * scale
    if !g.captionLines.isEmpty { return try captionedPNG(matrix, g, style) }
    // 1 bit a pixel, bit set = light; rows built once per module row and repeated.
    let rowBytes = (side + 7) / 8
    var pixels = [UInt8](repeating: 0xFF, count: rowBytes * side)
    var row = [UInt8](repeating: 0xFF, count: rowBytes)
    for y in 0..<matrix.size {
      for i in row.indices { row[i] = 0xFF }
      for x in 0..<matrix.size where matrix.isDark(x: x, y: y) {
        let start = (x + style.quietZone) * scale
        for px in start..<(start + scale) { row[px >> 3] &= ~(0x80 >> UInt8(px & 7)) }
      }
      let top = (y + style.quietZone) * scale
      for line in top..<(top + scale) {
        pixels.replaceSubrange((line * rowBytes)..<((line + 1) * rowBytes), with: row)
      }
    }
    let format: PNGPixelFormat =
      style.foreground == .black && style.background == .white
      ? .gray1 : .palette1(style.foreground, style.background)
    // Our own deflater (matches at the byte before and the row above): a symbol's rows repeat
    // module by module; zlib (level 6, its tables made anew for every image) was 29 % of a
    // served QR PNG's CPU. serve-bench's payload: 446 bytes by zlib, 404 by runs; the same
    // pixels; served 1 159-1 240 a second at one connection before, 1 677-1 742 after.
    return try PNGEncoder.encode(
      width: side, height: side, format: format, pixels: pixels, dpi: style.dpi, deflater: .runs)
  }

  private static func captionedPNG(_ matrix: QRMatrix, _ g: Geometry, _ style: QRStyle) throws
    -> [UInt8]
  {
    let scale = Double(g.modulePixels)
    let width = g.totalModules * g.modulePixels
    let height = width + g.captionPixels
    let image = try RasterImage(width: width, height: height, fonts: style.fonts)
    try image.draw { canvas in
      canvas.setAntialias(false)
      canvas.scale(scale, scale)
      try drawSymbol(canvas, matrix, g, style, width: Double(g.totalModules))
      canvas.setAntialias(true)
    }
    return try image.png(dpi: style.dpi)
  }

  /// Draws background, modules and caption in module units.
  private static func drawSymbol(
    _ canvas: borrowing Canvas, _ matrix: QRMatrix, _ g: Geometry, _ style: QRStyle, width: Double
  ) throws {
    canvas.fill(
      Rect(x: 0, y: 0, width: width, height: width + g.captionHeight), color: style.background)
    canvas.setColor(style.foreground)
    let q = Double(style.quietZone)
    for run in runs(matrix) {
      canvas.addRect(
        Rect(x: q + Double(run.x), y: q + Double(run.y), width: Double(run.length), height: 1))
    }
    canvas.fill()
    guard !g.captionLines.isEmpty else { return }
    let font = TextStyle(
      family: "DejaVu Sans Mono", size: g.captionFontSize, color: style.foreground,
      alignment: .center)
    canvas.setAntialias(true)
    try canvas.drawText(
      g.captionLines.joined(separator: "\n"), style: font, x: 0,
      y: width - Double(style.quietZone) / 2 + 0.5, width: width)
  }

  private static func vector(
    _ matrix: QRMatrix, _ g: Geometry, _ style: QRStyle, _ format: VectorFormat
  ) throws -> [UInt8] {
    let side = Double(g.totalModules) * g.modulePoints
    let size = Size(width: side, height: side + g.captionHeight * g.modulePoints)
    let document = try VectorDocument(format: format, size: size, fonts: style.fonts)
    try document.page(size: size) { canvas in
      canvas.scale(g.modulePoints, g.modulePoints)
      try drawSymbol(canvas, matrix, g, style, width: Double(g.totalModules))
    }
    return try document.finish()
  }

  private static func svg(_ matrix: QRMatrix, _ g: Geometry, _ style: QRStyle) -> String {
    let side = g.totalModules
    let height = Double(side) + g.captionHeight
    let q = style.quietZone
    var path = ""
    for run in runs(matrix) { path += "M\(run.x + q),\(run.y + q)h\(run.length)v1h-\(run.length)z" }
    let (width, heightText): (String, String)
    if style.sizeMillimetres != nil {
      let mm = g.modulePoints / 72 * 25.4
      width = "\(format(Double(side) * mm))mm"
      heightText = "\(format(height * mm))mm"
    } else {
      width = "\(side * g.modulePixels)"
      heightText = "\(format(height * Double(g.modulePixels)))"
    }
    var svg = """
      <?xml version="1.0" encoding="UTF-8"?>
      <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(width)" height="\(heightText)" \
      viewBox="0 0 \(side) \(format(height))">
      <rect x="0" y="0" width="\(side)" height="\(format(height))" fill="\(style.background.hex)"/>
      <path fill="\(style.foreground.hex)" shape-rendering="crispEdges" d="\(path)"/>

      """
    for (index, line) in g.captionLines.enumerated() {
      let baseline =
        Double(side) - Double(q) / 2 + 0.5 + g.captionFontSize * (0.95 + 1.25 * Double(index))
      svg +=
        "<text x=\"\(format(Double(side) / 2))\" y=\"\(format(baseline))\" "
        + "font-family=\"DejaVu Sans Mono, monospace\" font-size=\"\(format(g.captionFontSize))\" "
        + "text-anchor=\"middle\" fill=\"\(style.foreground.hex)\">\(xmlEscape(line))</text>\n"
    }
    return svg + "</svg>\n"
  }

  /// Half blocks: each character is one module wide and two tall.
  private static func terminalText(_ matrix: QRMatrix, _ style: QRStyle) -> String {
    let q = style.quietZone
    let side = matrix.size + 2 * q
    func dark(_ x: Int, _ y: Int) -> Bool {
      let (mx, my) = (x - q, y - q)
      guard mx >= 0, my >= 0, mx < matrix.size, my < matrix.size else { return false }
      return matrix.isDark(x: mx, y: my)
    }
    var text = ""
    for y in stride(from: 0, to: side, by: 2) {
      if style.ansiColors { text += "\u{1B}[38;5;16;48;5;231m" }
      for x in 0..<side {
        switch (dark(x, y), dark(x, y + 1)) {
        case (true, true): text += "\u{2588}"
        case (true, false): text += "\u{2580}"
        case (false, true): text += "\u{2584}"
        case (false, false): text += " "
        }
      }
      if style.ansiColors { text += "\u{1B}[0m" }
      text += "\n"
    }
    if let caption = style.caption { text += caption + "\n" }
    return text
  }
}

/// Formats a number for SVG: at most 4 decimals, no trailing zeros.
private func format(_ value: Double) -> String {
  let scaled = (value * 10_000).rounded() / 10_000
  if scaled == scaled.rounded() { return String(Int(scaled)) }
  var text = String(scaled)
  while text.hasSuffix("0") { text.removeLast() }
  return text
}

private func xmlEscape(_ text: String) -> String {
  var result = ""
  for character in text {
    switch character {
    case "&": result += "&amp;"
    case "<": result += "&lt;"
    case ">": result += "&gt;"
    case "\"": result += "&quot;"
    default: result.append(character)
    }
  }
  return result
}
