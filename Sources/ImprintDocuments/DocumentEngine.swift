// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: counting, measuring, colour analysis and thumbnails, in the calling process.
// Uploads are untrusted: call this only inside a worker (`DocumentSandbox`) unless the files are
// known to be safe.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintPDF

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
  /// The most pixels an image may claim: `ImageDecoder.maximumPixels` (50 megapixels), the
  /// one limit both measuring (`inspect`) and decoding (`thumbnails`, colours) apply.
  public static let maximumImagePixels = ImageDecoder.maximumPixels
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
        verdicts = try printedColors(
          data, document: document, pages: pages, file: file, password: password, rule: colors)
      }
      return DocumentInfo(
        file: file, type: .pdf, pages: pages, pageSizes: sizes, encrypted: encrypted,
        printAllowed: document.printAllowed, colors: verdicts)
    case let type:
      let bytes = data.array
      let pages = try imagePages(bytes, file: file)
      var verdicts: [PageColor]? = colors == nil ? nil : []
      // Every page decoded whole, as a thumbnail or a print would decode it: a picture cut
      // short or damaged after its header is image.damaged here too, never a report (and a
      // quote) of a file that cannot be printed.
      for (index, page) in pages.enumerated() {
        let bitmap = try decodeImage(bytes, page: index + 1, file: file)
        if let colors {
          let longest = max(bitmap.width, bitmap.height)
          let scale = min(
            1, Double(maximumAnalysisPixels) / Double(longest), colors.dpi / page.dpi)
          let image = try draw(
            bitmap, width: try pixels(Double(bitmap.width) * scale, file: file),
            height: try pixels(Double(bitmap.height) * scale, file: file), file: file)
          verdicts?.append(analyse(image, page: index + 1, rule: colors))
        }
      }
      return DocumentInfo(
        file: file, type: type, pages: pages.count,
        pageSizes: pages.enumerated().map { index, page in
          PageSize(
            page: index + 1, widthPoints: Double(page.width) / page.dpi * 72,
            heightPoints: Double(page.height) / page.dpi * 72)
        }, encrypted: false, printAllowed: true, colors: verdicts)
    }
  }

  /// Each page's colour verdict, decided on what prints: the pages as the print-ready file
  /// carries them (`PageImposer.printablePages`: the annotations it draws in, and no others).
  ///
  /// Those pages hold no annotation and no optional-content configuration, so poppler's
  /// screen rendering draws exactly their content (its printing mode would draw nothing
  /// more, and anti-aliases differently: 0.125 % coloured instead of 0.087 % on a page of
  /// blue text). When libqpdf cannot make them (a file poppler repairs and libqpdf cannot
  /// read, which `prepare` refuses anyway), the file's own pages are rendered for printing
  /// (`poppler_page_render_for_printing`: no link boxes, annotations by their print flag).
  ///
  /// - Throws: `DocumentError` naming `file`: `.memoryLimit`, and what rendering throws.
  static func printedColors(
    _ data: DocumentBytes, document: borrowing PDFDocument, pages: Int, file: String,
    password: String?, rule: ColorRule
  ) throws(DocumentError) -> [PageColor] {
    func verdict(_ document: borrowing PDFDocument, _ index: Int, printing: Bool)
      throws(DocumentError) -> PageColor
    {
      let size = try checkedSize(document, index, file: file)
      let scale = min(rule.dpi / 72, Double(maximumAnalysisPixels) / max(size.width, size.height))
      let image = try render(
        document, index, size: size, scale: scale, file: file, printing: printing)
      return analyse(image, page: index + 1, rule: rule)
    }
    var verdicts: [PageColor] = []
    let printable: PDFDocument
    do {
      printable = try open(
        try PageImposer.printablePages(
          data, file: file, password: password, expectedPages: pages), file: file, password: nil)
    } catch .memoryLimit {
      throw memoryLimit(file: file)
    } catch {
      for index in 0..<pages { verdicts.append(try verdict(document, index, printing: true)) }
      return verdicts
    }
    guard printable.pageCount == pages else {
      throw .changedSinceQuote(file: file, quotedPages: pages, pages: printable.pageCount)
    }
    for index in 0..<pages { verdicts.append(try verdict(printable, index, printing: false)) }
    return verdicts
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
        // libdeflate at its default level: a page thumbnail is anti-aliased text and lines,
        // which it deflates with 7 % less of the whole thumbnail's CPU than zlib at level 3
        // (every page of gnuplot.pdf), the files 1 % larger (`PNGDeflater`).
        case .png: return try image.png(text: text, compressionLevel: 6, deflater: .libdeflate)
        case .jpeg: return try image.jpeg()
        }
      } catch {
        throw .badOutput(file: file, detail: error.message, cause: error)
      }
    }
    switch try sniff(data, file: file) {
    case .pdf:
      // Opened once, for Splash, which draws the thumbnails: its count and page sizes are
      // poppler-glib's (`SplashDocument`).
      let document = try splashDocument(data, file: file, password: password)
      let declared = document.pageCount
      if !isPlausible(pages: declared, in: data) {
        // A /Count no file of this size can hold: the walk alone tells what is wrong.
        _ = try checkPageTree(data, document: document, file: file, password: password)
      }
      let wanted = try pageList(pages, count: max(1, declared), file: file)
      let (count, _, walked) = try checkPageTree(
        data, document: document, file: file, password: password, renderPages: wanted)
      // Every page is checked before the first is drawn: the sizes the walk read (those
      // `inspect` reports) and poppler's (those it draws), so a page refused by one is refused
      // by both, and no thumbnail is made of a file that has a page that fails.
      var sizes: [Size] = []
      for page in wanted {
        guard (1...count).contains(page) else {
          throw .pageOutOfRange(file: file, page: page, pages: count)
        }
        if let walkedSize = walked?[page - 1] { try check(walkedSize, page: page, file: file) }
        sizes.append(try checkedSize(document, page - 1, file: file))
      }
      for (page, pageSize) in zip(wanted, sizes) {
        let scale = Double(size) / max(pageSize.width, pageSize.height)
        let image = try thumbnailImage(
          document, page - 1, size: pageSize, scale: scale, file: file)
        try deliver(page, try encode(image))
      }
    default:
      let bytes = data.array
      let count = try imagePages(bytes, file: file).count
      // Every page is decoded before the first thumbnail is handed over: a page that fails
      // fails the file, and no thumbnail of it is made.
      var images: [(Int, [UInt8])] = []
      for page in try pageList(pages, count: count, file: file) {
        let bitmap = try decodeImage(bytes, page: page, file: file)
        let scale = min(1, Double(size) / Double(max(bitmap.width, bitmap.height)))
        let image = try draw(
          bitmap, width: try pixels((Double(bitmap.width) * scale).rounded(), file: file),
          height: try pixels((Double(bitmap.height) * scale).rounded(), file: file), file: file)
        images.append((page, try encode(image)))
      }
      for (page, image) in images { try deliver(page, image) }
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
      throw .unsupportedType(file: file, found: ContentKind.describe(bytes))
    }
    return type
  }

  static func open(_ data: DocumentBytes, file: String, password: String?)
    throws(DocumentError) -> PDFDocument
  {
    try refuseWrongPassword(data, file: file, password: password)
    do {
      return try PDFDocument(data: data, password: password)
    } catch {
      throw refusal(error, file: file, passwordGiven: password != nil)
    }
  }

  /// Refuses a password qpdf finds wrong before poppler is asked (`PageTreeWalk`).
  static func refuseWrongPassword(_ data: DocumentBytes, file: String, password: String?)
    throws(DocumentError)
  {
    // The first step of every PDF opened (poppler-glib's or Splash's).
    try DocumentEngines.required(file: file)
    if let password, PageTreeWalk.isWrongPassword(data, password: password) {
      throw .encrypted(file: file, passwordGiven: true)
    }
  }

  /// The error for a PDF poppler would not open, naming `file`.
  static func refusal(_ failure: PDFOpenFailure, file: String, passwordGiven: Bool)
    -> DocumentError
  {
    switch failure {
    case .encrypted: .encrypted(file: file, passwordGiven: passwordGiven)
    case .damaged(let reason), .invalid(let reason):
      .damaged(file: file, reason: reason, cause: failure)
    }
  }

  /// Compares poppler's count (it trusts `/Count`) with qpdf's walk of `/Kids`.
  static func checkPageTree<Document: PDFPages & ~Copyable>(
    _ data: DocumentBytes, document: borrowing Document, file: String, password: String?,
    renderAll: Bool = false, renderPages: [Int] = []
  ) throws(DocumentError) -> (pages: Int, encrypted: Bool, sizes: [Size]?) {
    let counted = document.pageCount
    // Pages are looked at only when the count is one the file can hold (a /Count of 2^31
    // would be a list of 2^31 pages): otherwise the walk finds the real count and refuses it.
    let rendered =
      !renderAll
      ? renderPages : isPlausible(pages: counted, in: data) ? Array(1...max(1, counted)) : []
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
      if counted != found {
        // poppler reads a /Count it cannot hold (past 64 bits) as 0; qpdf cannot read it at all.
        throw .countMismatch(file: file, declared: declared == nil ? nil : counted, found: found)
      }
      guard found > 0 else { throw .noPages(file: file) }
      return (found, encrypted, sizes.count == found ? sizes : nil)
    case .unreadable:
      // poppler repaired what qpdf could not read: trust poppler, which renders it.
      guard counted > 0 else { throw .noPages(file: file) }
      return (counted, false, nil)
    }
  }

  /// Whether a file of `data.count` bytes can hold `pages` pages (a page object takes more
  /// than 16 bytes: `<</Type/Page>>` alone is 15).
  static func isPlausible(pages: Int, in data: DocumentBytes) -> Bool {
    pages <= max(1, data.count / 16)
  }

  /// A pixel count computed from a page or image size, refused unless it is a finite number
  /// of at most `ImageDecoder.maximumSide` pixels (at least 1).
  static func pixels(_ value: Double, file: String) throws(DocumentError) -> Int {
    guard value.isFinite, value < Double(ImageDecoder.maximumSide) else {
      throw .badOutput(file: file, detail: "a side of \(Formatting.number(value)) pixels")
    }
    return max(1, Int(value))
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
  static func checkedSize<Document: PDFPages & ~Copyable>(
    _ document: borrowing Document, _ index: Int, file: String
  )
    throws(DocumentError) -> Size
  {
    guard let size = document.pageSize(index) else { throw .emptyPage(file: file, page: index + 1) }
    try check(size, page: index + 1, file: file)
    return size
  }

  /// Refuses empty boxes (NaN included) and pages above `maximumPageMM` (infinite included).
  static func check(_ size: Size, page: Int, file: String) throws(DocumentError) {
    guard size.width > 0, size.height > 0 else { throw .emptyPage(file: file, page: page) }
    // Infinity is kept as the largest finite number, so that the error encodes as JSON.
    let widthMM = min(size.width / 72 * 25.4, .greatestFiniteMagnitude)
    let heightMM = min(size.height / 72 * 25.4, .greatestFiniteMagnitude)
    if max(widthMM, heightMM) > maximumPageMM {
      throw .pageTooLarge(
        file: file, page: page, widthMM: widthMM, heightMM: heightMM, maximumMM: maximumPageMM)
    }
  }

  static func render(
    _ document: borrowing PDFDocument, _ index: Int, size: Size, scale: Double, file: String,
    printing: Bool = false
  ) throws(DocumentError) -> RasterImage {
    let width = try pixels((size.width * scale).rounded(), file: file)
    let height = try pixels((size.height * scale).rounded(), file: file)
    do {
      let image = try RasterImage(width: width, height: height)
      try image.draw { canvas in
        canvas.scale(Double(width) / size.width, Double(height) / size.height)
        _ = document.render(page: index, on: canvas, printing: printing)
      }
      return image
    } catch {
      throw drawingError(error, file: file)
    }
  }

  /// The document opened for Splash, which draws thumbnails (`SplashDocument` says why),
  /// refused as `open` refuses it with poppler-glib.
  static func splashDocument(_ data: DocumentBytes, file: String, password: String?)
    throws(DocumentError) -> SplashDocument
  {
    try refuseWrongPassword(data, file: file, password: password)
    do {
      return try SplashDocument(data: data, password: password)
    } catch {
      throw splashError(error, file: file, passwordGiven: password != nil)
    }
  }

  /// Page `index` (0-based) of `size` points drawn by Splash at `scale` pixels a point.
  static func thumbnailImage(
    _ document: borrowing SplashDocument, _ index: Int, size: Size, scale: Double, file: String
  ) throws(DocumentError) -> RasterImage {
    let width = try pixels((size.width * scale).rounded(), file: file)
    let height = try pixels((size.height * scale).rounded(), file: file)
    let image: RasterImage
    do {
      image = try RasterImage(width: width, height: height)
    } catch {
      throw drawingError(error, file: file)
    }
    do {
      try document.render(page: index, scale: scale, into: image)
    } catch {
      throw splashError(error, file: file)
    }
    return image
  }

  static func splashError(
    _ error: SplashDocument.Failure, file: String, passwordGiven: Bool = false
  ) -> DocumentError {
    switch error {
    case .noMemory: memoryLimit(file: file)
    case .refused(let failure): refusal(failure, file: file, passwordGiven: passwordGiven)
    case .noPage: .badOutput(file: file, detail: "poppler's Splash renderer found no such page")
    case .failed: .badOutput(file: file, detail: "poppler's Splash renderer drew nothing")
    }
  }

  /// A failure to draw: out of memory (cairo could not allocate a surface) is the memory
  /// limit; anything else a wrong output.
  static func drawingError(_ error: any Error, file: String) -> DocumentError {
    if case .cairo(_, let status)? = error as? GraphicsError,
      status.contains("out of memory") || status.contains("no memory")
    {
      return memoryLimit(file: file)
    }
    return .badOutput(file: file, detail: "\(error)", cause: error as? GraphicsError)
  }

  /// The memory limit of this process (its address-space limit; 0 when it has none).
  static func memoryLimit(file: String) -> DocumentError {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_AS.rawValue), &limit)
    let megabytes = limit.rlim_cur == rlim_t.max ? 0 : Int(limit.rlim_cur >> 20)
    return .memoryLimit(file: file, megabytes: megabytes)
  }

  /// Each page's width, height and resolution (pHYs; a JPEG's JFIF density, else its EXIF
  /// resolution; TIFF resolution; 96 dpi when the file has none or an implausible one), read
  /// by `ImageDecoder.pages` against `maximumImagePixels`: one page, or a TIFF's directories.
  static func imagePages(
    _ bytes: [UInt8], file: String
  ) throws(DocumentError) -> [(width: Int, height: Int, dpi: Double)] {
    let headers: [ImageHeader]
    do {
      headers = try ImageDecoder.pages(bytes, source: file, maximumPixels: maximumImagePixels)
    } catch {
      throw imageError(error, file: file)
    }
    return headers.map { header in
      var dpi = header.dpi ?? 96
      if !ImageDecoder.plausibleDPI.contains(dpi) { dpi = 96 }
      return (header.width, header.height, dpi)
    }
  }

  static func imageError(_ error: ImageError, file: String) -> DocumentError {
    switch error {
    case .outOfMemory: memoryLimit(file: file)
    default: .image(error)
    }
  }

  static func decodeImage(
    _ bytes: [UInt8], page: Int, file: String
  ) throws(DocumentError) -> Bitmap {
    do {
      return try ImageDecoder.decode(
        bytes, source: file, page: page, maximumPixels: maximumImagePixels)
    } catch {
      throw imageError(error, file: file)
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
      throw drawingError(error, file: file)
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
      blank: inked == 0, coloredAreaPercent: (area * 10_000).rounded() / 10_000,
      cyan: percent(c), magenta: percent(m), yellow: percent(y), black: percent(k))
  }

}
