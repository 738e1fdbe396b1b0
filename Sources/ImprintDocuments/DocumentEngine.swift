// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: counting, measuring, colour analysis and thumbnails, in the calling process.
// Uploads are untrusted: call this only inside a worker (`DocumentSandbox`) unless the files are
// known to be safe.

import Foundation
import ImprintCore
import ImprintGraphics

/// Thumbnail file formats.
public enum ThumbnailFormat: String, Sendable, Codable, CaseIterable {
  /// PNG (8-bit grey or RGB).
  case png
  /// Baseline JPEG, quality 85.
  case jpeg
}

/// The work itself, without isolation: poppler, libjpeg and cairo in this process.
public enum DocumentEngine {
  /// Pages with a side above this many millimetres (about 1.7 × A0's long side) are refused.
  public static let maximumPageMM = 2000.0
  /// The most pixels an image may claim (100 megapixels).
  public static let maximumImagePixels = 100_000_000
  /// Images inside PDFs that decode to more than this many megabytes are refused (a 1 MB file
  /// can hold an image that expands to 1 GB).
  public static let maximumImageMB = 512
  /// Analysis renders are capped at this many pixels on the long side.
  public static let maximumAnalysisPixels = 2500

  /// Counts and measures a file, and with `colors` analyses each page.
  ///
  /// - Throws: `DocumentError` naming `file`.
  public static func inspect(
    _ bytes: [UInt8], file: String, password: String? = nil, colors: ColorRule? = nil
  ) throws(DocumentError) -> DocumentInfo {
    try inspect(DocumentBytes(copying: bytes), file: file, password: password, colors: colors)
  }

  /// Counts and measures a file held in `data` (a mapped file, for example), and with `colors`
  /// analyses each page.
  ///
  /// - Throws: `DocumentError` naming `file`.
  public static func inspect(
    _ data: DocumentBytes, file: String, password: String? = nil, colors: ColorRule? = nil
  ) throws(DocumentError) -> DocumentInfo {
    switch try sniff(data, file: file) {
    case .pdf:
      if colors == nil, password == nil,
        case .pages(let pages, _, _, _, _, let walked)? = PageTreeWalk.quickWalk(data)
      {
        // A well-formed, unencrypted file whose tree agrees with its /Count: counting and
        // measuring need nothing from poppler (nor its start-up), and printing is allowed.
        var sizes: [PageSize] = []
        for (index, size) in walked.enumerated() {
          sizes.append(try checked(size, index, file: file))
        }
        return DocumentInfo(
          file: file, type: .pdf, pages: pages, pageSizes: sizes, encrypted: false,
          printAllowed: true, colors: nil)
      }
      let document = try open(data, file: file, password: password)
      let (pages, encrypted, walked) = try checkPageTree(
        data, document: document, file: file, password: password, renderAll: colors != nil)
      // The sizes read during the page-tree walk, checked like poppler's; poppler's when the
      // walk could not read them (asking poppler page by page costs as much as the walk).
      var sizes: [PageSize] = []
      for index in 0..<pages {
        if let size = walked?[index] {
          sizes.append(try checked(size, index, file: file))
        } else {
          sizes.append(try pageSize(document, index, file: file))
        }
      }
      var verdicts: [PageColor]?
      if let colors {
        verdicts = []
        for index in 0..<pages {
          let size = try checkedSize(document, index, file: file)
          let scale = min(
            colors.dpi / 72, Double(maximumAnalysisPixels) / max(size.width, size.height))
          let image = try render(document, index, size: size, scale: scale, file: file)
          verdicts?.append(analyse(image, page: index + 1, rule: colors))
        }
      }
      return DocumentInfo(
        file: file, type: .pdf, pages: pages, pageSizes: sizes, encrypted: encrypted,
        printAllowed: document.printAllowed, colors: verdicts)
    case let type:
      let bytes = data.array
      let (width, height, dpi) = try imageHeader(bytes, file: file)
      var verdicts: [PageColor]?
      if let colors {
        let bitmap = try decodeImage(bytes, file: file)
        let longest = max(bitmap.width, bitmap.height)
        let scale = min(1, Double(maximumAnalysisPixels) / Double(longest), colors.dpi / dpi)
        let image = try draw(
          bitmap, width: max(1, Int(Double(bitmap.width) * scale)),
          height: max(1, Int(Double(bitmap.height) * scale)), file: file)
        verdicts = [analyse(image, page: 1, rule: colors)]
      }
      return DocumentInfo(
        file: file, type: type, pages: 1,
        pageSizes: [
          PageSize(
            page: 1, widthPoints: Double(width) / dpi * 72, heightPoints: Double(height) / dpi * 72)
        ], encrypted: false, printAllowed: true, colors: verdicts)
    }
  }

  /// Renders a thumbnail of one page that fits a `size` × `size` box (aspect kept, white behind
  /// transparency), rendered directly at that scale.
  ///
  /// - Parameters:
  ///   - bytes: the file's content.
  ///   - file: its name, for messages.
  ///   - password: the PDF password, if any.
  ///   - page: 1-based page number.
  ///   - size: the box's side in pixels.
  ///   - format: PNG or JPEG.
  ///   - text: PNG text chunks (freedesktop `Thumb::URI`, `Thumb::MTime`).
  /// - Returns: the image file's bytes.
  /// - Throws: `DocumentError` naming `file`.
  public static func thumbnail(
    _ bytes: [UInt8], file: String, password: String? = nil, page: Int, size: Int,
    format: ThumbnailFormat, text: [(key: String, value: String)] = []
  ) throws(DocumentError) -> [UInt8] {
    var result: [UInt8] = []
    try thumbnails(
      bytes, file: file, password: password, pages: "\(page)", size: size, format: format,
      text: text
    ) { _, image throws(DocumentError) in result = image }
    return result
  }

  /// Renders thumbnails of the pages `pages` names (`1`, `all`, `1-3,5,8-`), opening the file
  /// once, and hands each to `deliver` in page order.
  ///
  /// - Throws: `DocumentError` naming `file` (a range outside the document included).
  public static func thumbnails(
    _ bytes: [UInt8], file: String, password: String? = nil, pages: String, size: Int,
    format: ThumbnailFormat, text: [(key: String, value: String)] = [],
    deliver: (Int, [UInt8]) throws(DocumentError) -> Void
  ) throws(DocumentError) {
    try thumbnails(
      DocumentBytes(copying: bytes), file: file, password: password, pages: pages, size: size,
      format: format, text: text, deliver: deliver)
  }

  /// `thumbnails(_:file:...)` of a file held in `data` (a mapped file, for example).
  ///
  /// - Throws: `DocumentError` naming `file`.
  public static func thumbnails(
    _ data: DocumentBytes, file: String, password: String? = nil, pages: String, size: Int,
    format: ThumbnailFormat, text: [(key: String, value: String)] = [],
    deliver: (Int, [UInt8]) throws(DocumentError) -> Void
  ) throws(DocumentError) {
    func encode(_ image: borrowing RasterImage) throws(DocumentError) -> [UInt8] {
      guard max(image.width, image.height) <= size else {
        throw .badOutput(file: file, detail: "\(image.width) x \(image.height) exceeds \(size) px")
      }
      do {
        switch format {
        case .png: return try image.png(text: text)
        case .jpeg: return try image.jpeg()
        }
      } catch {
        throw .badOutput(file: file, detail: error.message)
      }
    }
    switch try sniff(data, file: file) {
    case .pdf:
      let document = try open(data, file: file, password: password)
      let declared = document.pageCount
      let wanted = try pageList(pages, count: max(1, declared), file: file)
      let (count, _, _) = try checkPageTree(
        data, document: document, file: file, password: password, renderPages: wanted)
      for page in wanted {
        guard (1...count).contains(page) else {
          throw .pageOutOfRange(file: file, page: page, pages: count)
        }
        let pageSize = try checkedSize(document, page - 1, file: file)
        let scale = Double(size) / max(pageSize.width, pageSize.height)
        let image = try render(document, page - 1, size: pageSize, scale: scale, file: file)
        try deliver(page, try encode(image))
      }
    default:
      let wanted = try pageList(pages, count: 1, file: file)
      guard wanted == [1] else {
        throw .pageOutOfRange(file: file, page: wanted.first { $0 != 1 } ?? 2, pages: 1)
      }
      let bytes = data.array
      _ = try imageHeader(bytes, file: file)
      let bitmap = try decodeImage(bytes, file: file)
      let scale = min(1, Double(size) / Double(max(bitmap.width, bitmap.height)))
      let image = try draw(
        bitmap, width: max(1, Int((Double(bitmap.width) * scale).rounded())),
        height: max(1, Int((Double(bitmap.height) * scale).rounded())), file: file)
      try deliver(1, try encode(image))
    }
  }

  /// The pages `spec` names: `1`, `all`, or ranges such as `1-3,5,8-` against `count` pages.
  ///
  /// - Throws: `DocumentError.pageOutOfRange` for a page past the end; `.badPageRange` for text
  ///   that is not a range.
  public static func pageList(_ spec: String, count: Int, file: String) throws(DocumentError)
    -> [Int]
  {
    switch PageRange.resolve(spec, count: count) {
    case .pages(let pages): return pages
    case .malformed: throw .badPageRange(file: file, range: spec)
    case .outside(let page): throw .pageOutOfRange(file: file, page: page, pages: count)
    }
  }

  static func sniff(_ data: DocumentBytes, file: String) throws(DocumentError) -> DocumentType {
    guard data.count > 0 else { throw .empty(file: file) }
    let bytes = Array(data.buffer.prefix(1024))  // what sniffing looks at
    guard let type = DocumentType(sniffing: bytes) else {
      let printable = bytes.prefix(12).map {
        $0 >= 32 && $0 < 127 ? Character(Unicode.Scalar($0)) : "."
      }
      throw .unsupportedType(file: file, found: "'\(String(printable))'")
    }
    return type
  }

  static func open(_ data: DocumentBytes, file: String, password: String?)
    throws(DocumentError) -> PDFDocument
  {
    if let password, PageTreeWalk.isWrongPassword(data, password: password) {
      throw .encrypted(file: file, passwordGiven: true)
    }
    do {
      return try PDFDocument(data: data, password: password)
    } catch {
      switch error {
      case .encrypted: throw .encrypted(file: file, passwordGiven: password != nil)
      case .damaged(let reason), .invalid(let reason): throw .damaged(file: file, reason: reason)
      }
    }
  }

  /// Compares poppler's count (it trusts `/Count`) with qpdf's walk of `/Kids`.
  static func checkPageTree(
    _ data: DocumentBytes, document: borrowing PDFDocument, file: String, password: String?,
    renderAll: Bool = false, renderPages: [Int] = []
  ) throws(DocumentError) -> (pages: Int, encrypted: Bool, sizes: [Size]?) {
    let counted = document.pageCount
    let rendered = renderAll ? Array(1...max(1, counted)) : renderPages
    switch PageTreeWalk.walk(data, password: password, imagePages: rendered) {
    case .cycle: throw .pageTreeCycle(file: file)
    case .pages(let found, let declared, let encrypted, let repaired, let largest, let sizes):
      if let declared, declared != found {
        throw .countMismatch(file: file, declared: declared, found: found)
      }
      if repaired { throw .brokenXref(file: file) }
      if let largest, largest.bytes > maximumImageMB << 20 {
        throw .imageBomb(
          file: file, page: largest.page, width: largest.width, height: largest.height,
          megabytes: largest.bytes >> 20, maximumMB: maximumImageMB)
      }
      if counted != found { throw .countMismatch(file: file, declared: counted, found: found) }
      guard found > 0 else { throw .noPages(file: file) }
      return (found, encrypted, sizes.count == found ? sizes : nil)
    case .unreadable:
      // poppler repaired what qpdf could not read: trust poppler, which renders it.
      guard counted > 0 else { throw .noPages(file: file) }
      return (counted, false, nil)
    }
  }

  static func pageSize(_ document: borrowing PDFDocument, _ index: Int, file: String)
    throws(DocumentError) -> PageSize
  {
    try checked(try checkedSize(document, index, file: file), index, file: file)
  }

  /// Page `index` (0-based) of `size`, refused as `check` refuses it.
  static func checked(_ size: Size, _ index: Int, file: String) throws(DocumentError) -> PageSize {
    try check(size, page: index + 1, file: file)
    return PageSize(page: index + 1, widthPoints: size.width, heightPoints: size.height)
  }

  /// The page's size in points, refused when empty or above `maximumPageMM`.
  static func checkedSize(_ document: borrowing PDFDocument, _ index: Int, file: String)
    throws(DocumentError) -> Size
  {
    guard let size = document.pageSize(index) else { throw .emptyPage(file: file, page: index + 1) }
    try check(size, page: index + 1, file: file)
    return size
  }

  /// Refuses empty boxes and pages above `maximumPageMM`.
  static func check(_ size: Size, page: Int, file: String) throws(DocumentError) {
    guard size.width > 0, size.height > 0 else { throw .emptyPage(file: file, page: page) }
    let widthMM = size.width / 72 * 25.4
    let heightMM = size.height / 72 * 25.4
    if max(widthMM, heightMM) > maximumPageMM {
      throw .pageTooLarge(
        file: file, page: page, widthMM: widthMM, heightMM: heightMM, maximumMM: maximumPageMM)
    }
  }

  static func render(
    _ document: borrowing PDFDocument, _ index: Int, size: Size, scale: Double, file: String
  ) throws(DocumentError) -> RasterImage {
    let width = max(1, Int((size.width * scale).rounded()))
    let height = max(1, Int((size.height * scale).rounded()))
    do {
      let image = try RasterImage(width: width, height: height)
      try image.draw { canvas in
        canvas.scale(Double(width) / size.width, Double(height) / size.height)
        _ = document.render(page: index, on: canvas)
      }
      return image
    } catch {
      throw .badOutput(file: file, detail: "\(error)")
    }
  }

  /// Width, height and resolution (pHYs or JFIF density; 96 dpi when the file has none).
  static func imageHeader(
    _ bytes: [UInt8], file: String
  ) throws(DocumentError) -> (Int, Int, Double) {
    var width = 0
    var height = 0
    var dpi = 96.0
    if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
      guard bytes.count >= 33 else { throw .damagedImage(file: file, reason: "no PNG header") }
      func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
      width = be32(16)
      height = be32(20)
      var offset = 8
      while offset + 12 <= bytes.count {
        let length = be32(offset)
        if Array(bytes[(offset + 4)..<(offset + 8)]) == Array("pHYs".utf8),
          offset + 17 <= bytes.count,
          bytes[offset + 16] == 1
        {
          dpi = Double(be32(offset + 8)) * 0.0254
        }
        if Array(bytes[(offset + 4)..<(offset + 8)]) == Array("IDAT".utf8) { break }
        offset += 12 + length
      }
    } else {
      do {
        let info = try JPEGDecoder.info(bytes, source: file)
        width = info.width
        height = info.height
      } catch {
        throw .damagedImage(file: file, reason: error.message)
      }
      // JFIF APP0: units (1 = dpi, 2 = dots per cm) and the X density.
      if bytes.count > 18, Array(bytes[6..<11]) == Array("JFIF\0".utf8) {
        let units = bytes[13]
        let density = Double(Int(bytes[14]) << 8 | Int(bytes[15]))
        if density > 0 { dpi = units == 1 ? density : units == 2 ? density * 2.54 : dpi }
      }
      if ImageDecoder.exifOrientation(bytes) >= 5 { swap(&width, &height) }
    }
    guard width > 0, height > 0 else { throw .damagedImage(file: file, reason: "no size") }
    guard width * height <= maximumImagePixels, width <= 65_535, height <= 65_535 else {
      throw .imageTooLarge(
        file: file, width: width, height: height, maximumPixels: maximumImagePixels)
    }
    if dpi < 10 || dpi > 10_000 { dpi = 96 }
    return (width, height, dpi)
  }

  static func decodeImage(_ bytes: [UInt8], file: String) throws(DocumentError) -> Bitmap {
    do {
      return try ImageDecoder.decode(bytes, source: file)
    } catch .tooLarge(_, let width, let height, let maximum) {
      throw .imageTooLarge(file: file, width: width, height: height, maximumPixels: maximum)
    } catch {
      throw .damagedImage(file: file, reason: error.message)
    }
  }

  /// Draws a bitmap scaled to `width` × `height` on white.
  static func draw(_ bitmap: Bitmap, width: Int, height: Int, file: String) throws(DocumentError)
    -> RasterImage
  {
    do {
      let image = try RasterImage(width: width, height: height)
      try image.draw { canvas in
        try canvas.draw(
          bitmap, in: Rect(x: 0, y: 0, width: Double(width), height: Double(height)), fit: .contain)
      }
      return image
    } catch {
      throw .badOutput(file: file, detail: "\(error)")
    }
  }

  /// The colour verdict and ink estimate of a rendered page.
  static func analyse(_ image: borrowing RasterImage, page: Int, rule: ColorRule) -> PageColor {
    // Naive RGB → CMYK with full black generation, per pixel: K = 1 − max/255 and, when the
    // pixel is not black, C = (max − R) / max (M and Y alike). The sums are kept in integers,
    // C, M and Y per value of max, and divided once at the end: white and grey pixels (most of
    // a page) cost a comparison and an addition.
    var colored = 0
    var inked = 0
    var blackSum = 0
    var differences = [Int](repeating: 0, count: 3 * 256)
    let tolerance = Int(max(0, min(255, rule.chromaTolerance)))
    image.forEachRow { row in
      differences.withUnsafeMutableBufferPointer { differences in
        for pixel in row {
          if pixel & 0xFF_FFFF == 0xFF_FFFF { continue }  // white
          let r = Int(pixel >> 16 & 0xFF)
          let g = Int(pixel >> 8 & 0xFF)
          let b = Int(pixel & 0xFF)
          let high = max(r, g, b)
          let low = min(r, g, b)
          if low < 250 { inked += 1 }
          blackSum += 255 - high
          guard high != low else { continue }  // grey: no C, M or Y
          if high - low > tolerance { colored += 1 }
          differences[3 * high] += high - r
          differences[3 * high + 1] += high - g
          differences[3 * high + 2] += high - b
        }
      }
    }
    var c = 0.0
    var m = 0.0
    var y = 0.0
    for high in 1..<256 {
      c += Double(differences[3 * high]) / Double(high)
      m += Double(differences[3 * high + 1]) / Double(high)
      y += Double(differences[3 * high + 2]) / Double(high)
    }
    let k = Double(blackSum) / 255
    let total = Double(max(1, image.width * image.height))
    let area = Double(colored) / total * 100
    func percent(_ value: Double) -> Double { (value / total * 10_000).rounded() / 100 }
    return PageColor(
      page: page, color: area > rule.minimumAreaPercent && colored > 0,
      blank: inked == 0, coloredAreaPercent: (area * 1000).rounded() / 1000,
      cyan: percent(c), magenta: percent(m), yellow: percent(y), black: percent(k))
  }

}
