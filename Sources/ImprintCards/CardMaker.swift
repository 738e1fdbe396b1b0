// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the card API for backends and the CLI: profile + template + photo in, bytes out.

import Foundation
import ImprintCore
import ImprintGraphics

/// Everything one card needs, decoded: Sendable, so many cards render concurrently.
public struct CardInput: Sendable {
  /// The account.
  public var profile: Profile
  /// The design.
  public var template: CardTemplate
  /// The photo (or the placeholder), upright.
  public var photo: Bitmap {
    didSet { photoID = nil }
  }
  /// Names `photo` in `ImageCache.shared` when it was decoded through it: its prepared
  /// versions are then shared with every card of the process that uses the same file.
  var photoID: UInt64?
  /// The template's images, decoded, by absolute path.
  public var images: [String: Bitmap]

  /// Decodes the photo in this process (upright, as `ImageDecoder.decode` does) and the
  /// template's images.
  ///
  /// For a photo the caller trusts. A photo from a stranger, whose header
  /// may lie about the size a decoder then allocates, is decoded by a sandbox instead
  /// (`init(profile:template:photo:placeholder:decoder:)`, or `CardInputLoader`).
  ///
  /// - Parameters:
  ///   - profile: the account.
  ///   - template: the design.
  ///   - photo: the photo file's bytes and name; the placeholder is used when nil.
  ///   - placeholder: the placeholder's bytes and name.
  /// - Throws: `CardError.photo` naming a photo that cannot be decoded; `ImageError` for a
  ///   template image.
  public init(
    profile: Profile, template: CardTemplate, photo: (bytes: [UInt8], source: String)?,
    placeholder: (bytes: [UInt8], source: String)
  ) throws {
    let decoded: ImageCache.Decoded
    if let photo {
      do {
        decoded = try ImageCache.shared.decode(photo.bytes, source: photo.source)
      } catch {
        throw CardError.photo(source: photo.source, reason: error.message, cause: error)
      }
    } else {
      decoded = try ImageCache.shared.decode(placeholder.bytes, source: placeholder.source)
    }
    try self.init(profile: profile, template: template, decoded: decoded)
  }

  /// Decodes the photo with `decoder` (a `DocumentSandbox`, whose workers decode it under
  /// their memory, CPU and time limits), the placeholder and the template's images in this
  /// process.
  ///
  /// A photo decoded before in this process (the same bytes) is not decoded again.
  ///
  /// - Throws: `CardError.photo` naming a photo that is not a usable image (its `ImageError`
  ///   as the cause); the decoder's own errors (a sandbox's `document.memoryLimit`,
  ///   `.cpuLimit`, `.timeout`, naming the photo); `ImageError` for a template image.
  public init(
    profile: Profile, template: CardTemplate, photo: (bytes: [UInt8], source: String)?,
    placeholder: (bytes: [UInt8], source: String), decoder: any ImageDecoding
  ) async throws {
    guard let photo else {
      try self.init(profile: profile, template: template, photo: nil, placeholder: placeholder)
      return
    }
    try self.init(
      profile: profile, template: template,
      decoded: try await Self.decodePhoto(photo, with: decoder))
  }

  /// Decodes a photo with `decoder` through `ImageCache.shared` (the same bytes are decoded
  /// once a process).
  ///
  /// - Throws: `CardError.photo` for a file that is not a usable image; the decoder's own
  ///   errors.
  static func decodePhoto(
    _ photo: (bytes: [UInt8], source: String), with decoder: any ImageDecoding
  )
    async throws -> ImageCache.Decoded
  {
    do {
      return try await ImageCache.shared.decode(photo.bytes, source: photo.source, with: decoder)
    } catch let error as ImageError {
      throw CardError.photo(source: photo.source, reason: error.message, cause: error)
    }
  }

  /// The inputs with the photo `decoded` (through `ImageCache.shared`), decoding the
  /// template's images (the template's own files, trusted as the template is).
  init(profile: Profile, template: CardTemplate, decoded: ImageCache.Decoded) throws {
    self.profile = profile
    self.template = template
    self.photo = decoded.bitmap
    self.photoID = decoded.id
    var images: [String: Bitmap] = [:]
    for side in [template.front, template.back] {
      var paths = side.backgroundImage.map { [$0] } ?? []
      for case .image(let element) in side.elements { paths.append(element.path) }
      for path in paths where images[path] == nil {
        let data = try FileIO.read(path, limit: FileIO.Limit.image)
        images[path] = try ImageCache.shared.decode(data, source: path).bitmap
      }
    }
    self.images = images
  }
}

/// A rendered card file and what to tell the person about it.
public struct RenderedCard: Sendable {
  /// The file's bytes.
  public var bytes: [UInt8]
  /// Non-fatal problems (invalid metadata, cut text, allowed missing glyphs).
  public var warnings: [String]
}

/// Renders cards.
///
/// Stateless; each call creates its own fonts map and surfaces.
public enum CardMaker {
  /// The row filter of card PNGs (sides and share images), at zlib level 3: none.
  ///
  /// Cards are flat drawings: unfiltered, their runs of equal pixels deflate as long matches,
  /// smaller and sooner than the Up filter's differences. Measured with libpng 1.6.39 and zlib
  /// 1.2.13 (CPU time of the encoding, best of 30, on the loaded 2-core machine) on the front of
  /// `sora-park` (classic, 300 dpi, 1086 × 713 RGB): Up, used before, 56 260 bytes in 8.0 ms;
  /// none 47 659 bytes in 6.7 ms (level 1: 50 166 bytes, 6.7 ms; level 6: 39 710 bytes, 11.4
  /// ms). Its back 53 456 -> 46 421 bytes (6.8 -> 5.6 ms), its share image 57 380 -> 50 774
  /// (9.6 -> 6.3 ms), the fronts of harbor-lamp and layla-h in classic and midnight 13-17 %
  /// smaller and 10-20 % sooner, with a JPEG photo 78 011 -> 72 294 bytes. (libdeflate deflates
  /// the same rows to 39-40 kB, but no sooner in the server: `PNGEncoder` has the figures.)
  static let pngFilter = PNGRowFilter.unfiltered

  /// The deflater of card PNGs: our own, which matches at the pixel before and the row above
  /// only (`PNGDeflater.runs` has the figures: a 300-dpi front 4.6 times sooner than zlib 3,
  /// 1-5 % larger).
  static let pngDeflater = PNGDeflater.runs

  /// The page size of a side in points: trim + 2 × bleed (+ crop-mark margins).
  public static func pageSize(_ template: CardTemplate, options: CardOptions) -> Size {
    let k = CardRenderer.pointsPerMM
    let extra =
      2 * (options.bleed ?? template.bleed)
      + (options.cropMarks ? 2 * CardOptions.cropMarkMargin : 0)
    return Size(width: (template.width + extra) * k, height: (template.height + extra) * k)
  }

  /// Lays out the requested sides (for inspection and golden tests).
  ///
  /// - Throws: `CardError.missingGlyphs` unless allowed; `CardError.unknownLocale` or
  ///   `.untranslatedLocale` for `options.locale`; `GraphicsError`.
  public static func layouts(_ input: CardInput, options: CardOptions, forPDF: Bool = false)
    throws -> ([CardLayout], [String])
  {
    var template = input.template
    if let bleed = options.bleed { template.bleed = bleed }
    let locale = try CardLocale.resolve(options.locale, template: template)
    let engine = try CardLayoutEngine(fonts: options.fonts)
    engine.allowMissingGlyphs = options.allowMissingGlyphs
    let fields = input.profile.fields(in: locale)
    let layouts = try options.faces.map { face in
      try engine.layout(
        face, of: template, fields: fields, photo: input.photo, photoID: input.photoID,
        images: input.images, dpi: max(options.dpi, 300), jpeg: forPDF, locale: locale)
    }
    return (layouts, input.profile.warnings + engine.warnings)
  }

  /// A PDF with one page per requested side: vector text with embedded fonts, fixed dates,
  /// title `@account`.
  ///
  /// - Throws: `CardError.missingGlyphs` unless allowed; `GraphicsError`.
  public static func pdf(_ input: CardInput, options: CardOptions) throws -> RenderedCard {
    try pdf(try prepare(input, options: options), of: input, options: options)
  }

  /// The PDF of `card`, laid out from `input` by `prepare` (a batch draws the same card on its
  /// sheets too).
  ///
  /// - Throws: `GraphicsError`.
  public static func pdf(_ card: PreparedCard, of input: CardInput, options: CardOptions) throws
    -> RenderedCard
  {
    // One card shows each label once: recording labels as forms (for a card printer's job of
    // many cards) only cost here, a recording surface, a form object and a compressed stream
    // each (5 of a classic card's 20 streams; cairo deflates every stream at zlib's level 6
    // with a fresh 256 KiB state). Drawn in place: server CPU per card PDF -30 %, the file
    // 36 388 -> 34 159 bytes for sora-park.
    var writer = try CardPDFWriter(
      template: input.template, options: options, title: input.profile.handle,
      labelForms: false)
    try writer.add(card)
    return RenderedCard(bytes: try writer.finish(), warnings: card.warnings)
  }

  /// Lays out a card for PDF output (photos carry JPEG data): the work that can run on any
  /// task; drawing it into a `CardPDFWriter` is the rest.
  ///
  /// - Throws: `CardError.missingGlyphs` unless allowed; `GraphicsError`.
  public static func prepare(_ input: CardInput, options: CardOptions) throws -> PreparedCard {
    let (layouts, warnings) = try self.layouts(input, options: options, forPDF: true)
    var noMarks = options
    noMarks.cropMarks = false
    return PreparedCard(
      layouts: layouts, warnings: warnings, size: pageSize(input.template, options: noMarks),
      bleed: options.bleed ?? input.template.bleed, fonts: options.fonts)
  }

  /// One PNG of one side at `options.dpi` (trim + bleed), the DPI stored in the file.
  ///
  /// - Throws: `CardError.missingGlyphs` unless allowed; `GraphicsError`.
  public static func png(_ input: CardInput, face: CardFace, options: CardOptions) throws
    -> RenderedCard
  {
    var single = options
    single.faces = [face]
    single.cropMarks = false
    let (layouts, warnings) = try self.layouts(input, options: single)
    let size = pageSize(input.template, options: single)
    let scale = options.dpi / 72
    let bleed = (options.bleed ?? input.template.bleed) * CardRenderer.pointsPerMM
    let image = try RasterImage(
      width: Int((size.width * scale).rounded()), height: Int((size.height * scale).rounded()),
      fonts: options.fonts,
      unset: whiteFirstEverywhere
        ? nil : layouts.first.flatMap { painted(by: $0, at: bleed, scale) })
    try image.draw { canvas in
      canvas.scale(scale, scale)
      for layout in layouts {
        try CardRenderer.draw(layout, on: canvas, originX: bleed, originY: bleed)
      }
    }
    return RenderedCard(
      bytes: try image.png(dpi: options.dpi, filter: pngFilter, deflater: pngDeflater),
      warnings: warnings)
  }

  /// Makes `png`'s images white in every pixel before the card is drawn (tests compare the
  /// two: the same pixels).
  @TaskLocal static var whiteFirstEverywhere = false

  /// The top-left pixels that `layout`'s background paints opaquely in full.
  ///
  /// The background is drawn first with the bleed box's corner at (`bleed`, `bleed`) points and
  /// `scale` device pixels a point: its box from the image's corner on, less the last row and
  /// column it covers only in part (cairo blends those with what is underneath, the white). Nil
  /// when it does not start at the corner.
  static func painted(by layout: CardLayout, at bleed: Double, _ scale: Double) -> (
    width: Int, height: Int
  )? {
    guard case .background(_, let box)? = layout.items.first else { return nil }
    let k = CardRenderer.pointsPerMM
    // As CardRenderer.draw places it; cairo rounds device coordinates to 1/256 pixel, so an
    // edge within 1/512 of the corner is on it.
    let left = (bleed + box.x * k) * scale
    let top = (bleed + box.y * k) * scale
    let right = (bleed + box.x * k + box.width * k) * scale
    let bottom = (bleed + box.y * k + box.height * k) * scale
    guard left < 1.0 / 1024, top < 1.0 / 1024, right.isFinite, bottom.isFinite else { return nil }
    // Less 1/64 of a pixel, so that no rounding of cairo's makes a pixel it covers in part look
    // covered in full; at most a side of the largest image.
    func pixels(_ edge: Double) -> Int { Int(min(max(edge - 1.0 / 64, 0), 32_767).rounded(.down)) }
    return (pixels(right), pixels(bottom))
  }

  /// A 1200 × 630 PNG for social posts: front and back side by side with rounded corners.
  ///
  /// - Throws: `CardError.missingGlyphs` unless allowed; `GraphicsError`.
  public static func share(_ input: CardInput, options: CardOptions) throws -> RenderedCard {
    var both = options
    both.faces = [.front, .back]
    both.bleed = 0
    let (layouts, warnings) = try self.layouts(input, options: both)
    let image = try RasterImage(width: 1200, height: 630, fonts: options.fonts)
    let template = input.template
    // Each card 540 px wide, 40 px apart, centred.
    let cardWidth = 540.0
    let scale = cardWidth / (template.width * CardRenderer.pointsPerMM)
    let cardHeight = template.height * CardRenderer.pointsPerMM * scale
    let top = (630 - cardHeight) / 2
    try image.draw { canvas in
      canvas.fill(
        Rect(x: 0, y: 0, width: 1200, height: 630), color: Color(red: 0xEE, green: 0xF1, blue: 0xF6)
      )
      for (index, layout) in layouts.enumerated() {
        let left = 40 + Double(index) * (cardWidth + 40)
        let frame = Rect(x: left, y: top, width: cardWidth, height: cardHeight)
        canvas.addRoundedRect(
          Rect(x: frame.x + 3, y: frame.y + 5, width: frame.width, height: frame.height),
          radius: template.cornerRadius * CardRenderer.pointsPerMM * scale)
        canvas.setColor(Color(red: 0xC9, green: 0xCF, blue: 0xD9))
        canvas.fill()
        canvas.save()
        canvas.addRoundedRect(
          frame, radius: template.cornerRadius * CardRenderer.pointsPerMM * scale)
        canvas.clip()
        canvas.translate(left, top)
        canvas.scale(scale, scale)
        try CardRenderer.draw(layout, on: canvas, originX: 0, originY: 0)
        canvas.restore()
      }
    }
    return RenderedCard(
      bytes: try image.png(dpi: 72, filter: pngFilter, deflater: pngDeflater), warnings: warnings)
  }
}

/// A card laid out and ready to draw: Sendable, so it can be made on any task.
public struct PreparedCard: Sendable {
  /// One layout per requested side, in order.
  public var layouts: [CardLayout]
  /// Non-fatal problems.
  public var warnings: [String]
  /// The card with its bleed, in points.
  public var size: Size = Size(width: 0, height: 0)
  /// The bleed per side, in millimetres.
  public var bleed: Double = 0
  /// The fonts it was laid out with (`CardOptions.fonts`): a document it is drawn on sets its
  /// text with the same ones.
  public var fonts: FontLibrary?

  /// Draws side `index` with the card's bleed box at (`x`, `y`) points: for imposing cards on
  /// sheets and card-printer pages without a PDF in between.
  public func draw(side index: Int, on canvas: borrowing Canvas, x: Double, y: Double) throws {
    let offset = bleed * CardRenderer.pointsPerMM
    try CardRenderer.draw(layouts[index], on: canvas, originX: x + offset, originY: y + offset)
  }
}

/// Writes cards into one PDF, one page per side, in the order they are added.
///
/// A card printer's job file (front, back, front, back, ...), or a single card. Fonts and identical images are
/// embedded once for the whole file.
///
/// Not Sendable: one writer belongs to one task. With a path, pages go to the file as they are
/// added, so memory does not grow with the number of cards.
public struct CardPDFWriter: ~Copyable {
  private let document: VectorDocument
  private let template: CardTemplate
  private let options: CardOptions
  private let size: Size
  /// The number of pages written so far.
  public private(set) var pages = 0

  /// Starts a PDF.
  ///
  /// - Parameters:
  ///   - template: the design (for the page size).
  ///   - options: bleed and crop marks.
  ///   - title: the document title (a card's @handle, or the job's name).
  ///   - path: the file to write as pages are added; in memory when nil.
  ///   - labelForms: whether each fixed label, and each run of what every card of the design
  ///     shows (background, bands, labels: `CardRenderer.draw`), is written once as a form that
  ///     every card refers to (the default, for files of many cards); off for one card.
  /// - Throws: `FileError.unwritable` when `path` cannot be created; `GraphicsError.cairo`.
  public init(
    template: CardTemplate, options: CardOptions, title: String, path: String? = nil,
    labelForms: Bool = true
  ) throws {
    size = CardMaker.pageSize(template, options: options)
    document = try VectorDocument(
      format: .pdf, size: size, metadata: DocumentMetadata(title: title, creator: "Imprint"),
      fonts: options.fonts, path: path, labelForms: labelForms, layerForms: labelForms,
      producer: .imprint)
    self.template = template
    self.options = options
  }

  /// Draws every side of `card` as a page.
  ///
  /// - Throws: `GraphicsError`.
  public mutating func add(_ card: PreparedCard) throws {
    let bleed = (options.bleed ?? template.bleed) * CardRenderer.pointsPerMM
    let margin = options.cropMarks ? CardOptions.cropMarkMargin * CardRenderer.pointsPerMM : 0
    for layout in card.layouts {
      try document.page(size: size) { canvas in
        try CardRenderer.draw(layout, on: canvas, originX: bleed + margin, originY: bleed + margin)
        if options.cropMarks {
          let trim = Rect(
            x: bleed + margin, y: bleed + margin,
            width: template.width * CardRenderer.pointsPerMM,
            height: template.height * CardRenderer.pointsPerMM)
          CardRenderer.drawCropMarks(on: canvas, trim: trim, bleed: bleed, margin: margin)
        }
      }
      pages += 1
    }
  }

  /// Finishes the file; returns its bytes when it was built in memory.
  ///
  /// - Throws: `FileError.unwritable` when the file could not be written (a full disk);
  ///   `GraphicsError.cairo`.
  public consuming func finish() throws -> [UInt8] {
    try document.finish()
  }
}
