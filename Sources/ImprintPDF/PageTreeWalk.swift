// SPDX-License-Identifier: Apache-2.0
// ImprintPDF: what walking a PDF's page tree found, whichever reader walked it (the quick
// reader here, or libqpdf in ImprintDocuments).

import ImprintCore

/// The largest image a page draws, by its decoded size.
public struct LargestImage: Sendable, Equatable {
  /// 1-based page number.
  public let page: Int
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// Decoded size in bytes (width × height × components × bits / 8).
  public let bytes: Int

  /// Keeps in `largest` whichever is bigger: it, or this image (saturating on overflow).
  package static func keepLarger(
    _ largest: inout LargestImage?, page: Int, width: Int, height: Int, components: Int, bits: Int
  ) {
    let (product, overflow) = width.multipliedReportingOverflow(by: height)
    let bytes =
      overflow
      ? Int.max : product.multipliedReportingOverflow(by: components * bits).partialValue / 8
    if bytes > (largest?.bytes ?? 0) {
      largest = LargestImage(page: page, width: width, height: height, bytes: bytes)
    }
  }
}

/// What walking a PDF's page tree found (libqpdf reads and walks `/Kids`; poppler trusts
/// `/Count`).
public enum PageTreeWalk: Sendable, Equatable {
  /// The walk found `pages` pages; `declared` is the root's `/Count`. `repairedXref` is set
  /// when qpdf had to rebuild the cross-reference table; `largestImage` is the biggest image
  /// a page's resources hold (forms nested up to 3 deep are searched).
  ///
  /// `sizes` are the pages' displayed sizes in points (the crop box, clipped to the media box,
  /// both inherited through the tree, turned by `/Rotate`), read during the same walk.
  case pages(
    Int, declared: Int?, encrypted: Bool, repairedXref: Bool, largestImage: LargestImage?,
    sizes: [Size])
  /// The tree loops back on itself.
  case cycle(String)
  /// qpdf could not read the file.
  case unreadable(String)

  /// The quick reader's walk of a well-formed, unencrypted file, when the pages it found agree
  /// with the root's `/Count`; nil when only qpdf (or poppler) can tell.
  public static func quickWalk(_ data: DocumentBytes, imagePages: [Int] = []) -> PageTreeWalk? {
    guard let quick = data.withBuffer({ QuickPageTree.walk($0, imagePages: imagePages) }),
      case .pages(let found, let declared, _, _, _, _) = quick, found > 0, declared == found
    else { return nil }
    return quick
  }

  /// A page's displayed size: the crop box clipped to the media box (poppler's rule; US Letter
  /// when there is no media box), turned by the rotation.
  package static func displayedSize(media: [Double]?, crop: [Double]?, rotate: Int) -> Size {
    func normalised(_ box: [Double]) -> (Double, Double, Double, Double) {
      (min(box[0], box[2]), min(box[1], box[3]), max(box[0], box[2]), max(box[1], box[3]))
    }
    var area = normalised(media ?? [0, 0, 612, 792])
    if let crop {
      let c = normalised(crop)
      let clipped = (max(area.0, c.0), max(area.1, c.1), min(area.2, c.2), min(area.3, c.3))
      if clipped.2 > clipped.0 && clipped.3 > clipped.1 { area = clipped }
    }
    let width = area.2 - area.0
    let height = area.3 - area.1
    let turned = ((rotate % 360) + 360) % 180 == 90
    return turned ? Size(width: height, height: width) : Size(width: width, height: height)
  }
}
