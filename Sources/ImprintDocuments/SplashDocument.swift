// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: PDF pages rasterised by poppler's Splash backend (CImprintSplash), the one
// pdftoppm uses, for thumbnails.

internal import CImprintSplash
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
struct SplashDocument: ~Copyable {
  private let raw: OpaquePointer
  private let data: DocumentBytes
  private let handleScope: LiveHandles.Scope?

  /// Why a page could not be drawn.
  enum Failure: Error {
    /// poppler could not open the document (the caller opened it with poppler-glib first,
    /// so this is a file larger than 2 GiB or a disagreement between the two).
    case unreadable
    /// No such page.
    case noPage
    /// Splash returned no image.
    case failed
    /// An allocation failed.
    case noMemory
  }

  /// Opens the PDF in `data` with `password` (owner and user password alike).
  init(data: DocumentBytes, password: String?) throws(Failure) {
    var status: Int32 = 0
    let opened = CImprintSplash_open(
      data.buffer.baseAddress, data.count, password, JPEGDecoder.cDecode, &status)
    guard let opened else {
      throw status == Int32(CImprintSplash_NO_MEMORY) ? .noMemory : .unreadable
    }
    raw = opened
    self.data = data
    handleScope = LiveHandles.opened("PDFDoc")
  }

  deinit {
    CImprintSplash_close(raw)
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
      CImprintSplash_render(
        raw, Int32(index), xdpi, ydpi, width, height, pixels, stride, &reduced)
    }
    switch status {
    case Int32(CImprintSplash_OK): return Int(reduced)
    case Int32(CImprintSplash_NO_PAGE): throw .noPage
    case Int32(CImprintSplash_NO_MEMORY): throw .noMemory
    default: throw .failed
    }
  }
}
