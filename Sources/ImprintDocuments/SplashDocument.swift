// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: PDF pages rasterised by poppler's Splash backend (CImprintSplash), the one
// pdftoppm uses, for thumbnails.

internal import CImprintEngines
import ImprintCore
import ImprintGraphics

/// A PDF opened with poppler's `PDFDoc` for Splash rendering.
///
/// Thumbnails are drawn with Splash, not with poppler's cairo backend (`PDFDocument.render`):
/// cairo widens every stroke thinner than a device pixel to one pixel, so a dense hairline
/// drawing scaled down to a thumbnail came out as a dark or washed-out block with its shading
/// lost, where Splash (like pdftoppm and mutool) draws each line at its coverage. Owns one
/// `PDFDoc` over `data` (not copied; held as long as the document lives) and one Splash
/// output device for all its pages, so fonts and glyphs are loaded once a document. Never
/// shared across tasks.
struct SplashDocument: PDFPages, ~Copyable {
  private let raw: OpaquePointer
  private let data: DocumentBytes
  private let handleScope: LiveHandles.Scope?

  /// Why a document could not be opened or a page drawn.
  enum Failure: Error {
    /// poppler refused the document, with poppler-glib's verdict and message for it.
    case refused(PDFOpenFailure)
    /// No such page.
    case noPage
    /// Splash returned no image.
    case failed
    /// An allocation failed.
    case noMemory
  }

  /// Opens the PDF in `data` with `password` (owner and user password alike), as poppler-glib
  /// opens it (`PDFDocument`): a refusal says what poppler-glib says.
  init(data: DocumentBytes, password: String?) throws(Failure) {
    // poppler's global parameters, made once a process (`CImprintSplash_keep_global_params`).
    engines.splash_keep_global_params()
    var status: Int32 = 0
    let opened = engines.splash_open(
      data.buffer.baseAddress, data.count, password, JPEGDecoder.cDecode, &status)
    guard let opened else {
      switch status {
      case Int32(CImprintSplash_NO_MEMORY): throw .noMemory
      case Int32(CImprintSplash_ENCRYPTED): throw .refused(.encrypted)
      // poppler-glib's messages for its error codes (_poppler_document_new_from_pdfdoc).
      case Int32(CImprintSplash_DAMAGED): throw .refused(.damaged("PDF document is damaged"))
      case Int32(CImprintSplash_BAD_CATALOG):
        throw .refused(.invalid("Failed to read the document catalog"))
      default: throw .refused(.invalid("Failed to load document"))
      }
    }
    raw = opened
    self.data = data
    handleScope = LiveHandles.opened("PDFDoc")
  }

  /// The number of pages poppler reads (it trusts the page tree's `/Count`), as
  /// `PDFDocument.pageCount`.
  var pageCount: Int { Int(engines.splash_page_count(raw)) }

  /// The page's size in points as displayed (`/Rotate` applied), or nil for a missing page, as
  /// `PDFDocument.pageSize`.
  func pageSize(_ index: Int) -> Size? {
    guard index >= 0, index < Int(Int32.max) else { return nil }
    var width = 0.0
    var height = 0.0
    guard engines.splash_page_size(raw, Int32(index), &width, &height) == Int32(CImprintSplash_OK)
    else { return nil }
    return Size(width: width, height: height)
  }

  deinit {
    engines.splash_close(raw)
    LiveHandles.closed("PDFDoc", in: handleScope)
  }

  /// Draws page `index` (0-based) onto `image` at `scale` pixels a point, both ways.
  ///
  /// As pdftoppm's `-scale-to` (the same pixels), from the top-left corner; what the page does
  /// not cover of the image's last column or row stays white. A plain JPEG image the page
  /// draws at half its pixels or fewer is decoded at a half, a quarter or an eighth of its size
  /// (`CImprintSplash_open` says which), so its pixels differ slightly from pdftoppm's.
  ///
  /// - Returns: how many images were drawn from such a reduced decode.
  @discardableResult
  func render(page index: Int, scale: Double, into image: borrowing RasterImage) throws(Failure)
    -> Int
  {
    let (xdpi, ydpi) = (72 * scale, 72 * scale)
    let (width, height) = (Int32(image.width), Int32(image.height))
    var reduced: Int32 = 0
    let status = image.withMutablePixels { pixels, stride in
      engines.splash_render(
        raw, Int32(index), xdpi, ydpi, width, height, pixels, stride, &reduced)
    }
    switch status {
    case Int32(CImprintSplash_OK): return Int(reduced)
    case Int32(CImprintSplash_NO_PAGE): throw .noPage
    case Int32(CImprintSplash_NO_MEMORY): throw .noMemory
    default: throw .failed
    }
  }

  /// How many fonts the pages drawn so far made (each once a document), and how many pages
  /// were drawn with them (`CImprintSplash_font_counts`).
  var fontCounts: (made: Int, pages: Int) {
    var (made, pages): (Int32, Int32) = (0, 0)
    engines.splash_font_counts(raw, &made, &pages)
    return (Int(made), Int(pages))
  }
}
