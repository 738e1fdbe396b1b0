// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: a large JPEG on a page is thumbnailed from a reduced decode (libjpeg's
// DCT scaling, as MuPDF does) instead of every pixel decoded and averaged down; the images it
// must not reduce are drawn by poppler as before. Checked from outside against pdftoppm (poppler's
// Splash, every pixel decoded): the same pixels where nothing is reduced, close ones where the
// image is.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite struct JPEGThumbnailTests {
  /// A photograph-like JPEG of `width` × `height` pixels: red across, green down, and blue
  /// squares of 40 pixels, so that a colour mix-up or a shifted image shows.
  static func photo(width: Int, height: Int) throws -> [UInt8] {
    let image = try RasterImage(width: width, height: height)
    image.withMutablePixels { pixels, stride in
      for y in 0..<height {
        let row = pixels + y * stride / 4
        for x in 0..<width {
          let red = UInt32(x * 255 / max(1, width - 1))
          let green = UInt32(y * 255 / max(1, height - 1))
          let blue: UInt32 = (x / 40 + y / 40) % 2 == 0 ? 200 : 30
          row[x] = 0xFF00_0000 | red << 16 | green << 8 | blue
        }
      }
    }
    return try image.jpeg(quality: 90)
  }

  /// A one-page PDF of `page` points showing `jpeg` as an image XObject whose dictionary adds
  /// `extra` and says `size` (the JPEG's own when nil), placed by `placement` (a `cm` matrix).
  static func page(
    _ jpeg: [UInt8], size: (Int, Int), page: (Int, Int), placement: String, extra: String = ""
  ) -> [UInt8] {
    let content = Array("q \(placement) cm /Im1 Do Q".utf8)
    let objects: [[UInt8]] = [
      Array("<</Type/Catalog/Pages 2 0 R>>".utf8),
      Array("<</Type/Pages/Kids[3 0 R]/Count 1>>".utf8),
      Array(
        ("<</Type/Page/Parent 2 0 R/MediaBox[0 0 \(page.0) \(page.1)]"
          + "/Resources<</XObject<</Im1 5 0 R>>>>/Contents 4 0 R>>").utf8),
      Array("<</Length \(content.count)>>stream\n".utf8) + content + Array("\nendstream".utf8),
      Array(
        ("<</Type/XObject/Subtype/Image/Width \(size.0)/Height \(size.1)/ColorSpace/DeviceRGB"
          + "/BitsPerComponent 8/Filter/DCTDecode\(extra)/Length \(jpeg.count)>>stream\n").utf8)
        + jpeg + Array("\nendstream".utf8),
    ]
    return HostileDocuments.pdf(bytes: objects)
  }

  /// The pages the tests draw (named, so that a failure names one, not its content).
  enum Case: String, CaseIterable, CustomTestStringConvertible {
    case wholePage = "a 1600 x 1000 photo filling an 800 x 500 pt page"
    case turned = "the photo turned a quarter on a 500 x 800 pt page"
    case corner = "the photo in a quarter of the page, drawn at 128 x 80 px"
    case nearItsSize = "a 300 x 188 photo drawn at 256 x 160 px"
    case colorTransform = "the photo with /DecodeParms <</ColorTransform 1>>"
    case wrongSize = "the photo's dictionary saying 1600 x 999"
    case cutShort = "the photo cut after a third of its bytes"

    var testDescription: String { rawValue }

    /// The file, and how many images Imprint should draw from a reduced decode.
    func pdf() throws -> (pdf: [UInt8], reduced: Int) {
      let big = try JPEGThumbnailTests.photo(width: 1600, height: 1000)
      switch self {
      case .wholePage:
        return (page(big, size: (1600, 1000), page: (800, 500), placement: "800 0 0 500 0 0"), 1)
      case .turned:
        return (page(big, size: (1600, 1000), page: (500, 800), placement: "0 800 -500 0 500 0"), 1)
      case .corner:
        return (page(big, size: (1600, 1000), page: (800, 500), placement: "400 0 0 250 0 0"), 1)
      case .nearItsSize:
        let small = try JPEGThumbnailTests.photo(width: 300, height: 188)
        return (page(small, size: (300, 188), page: (800, 500), placement: "800 0 0 500 0 0"), 0)
      case .colorTransform:
        return (
          page(
            big, size: (1600, 1000), page: (800, 500), placement: "800 0 0 500 0 0",
            extra: "/DecodeParms<</ColorTransform 1>>"), 0
        )
      case .cutShort:
        // libjpeg warns (premature end of data): poppler draws what it read, as before.
        return (
          page(
            Array(big.prefix(big.count / 3)), size: (1600, 1000), page: (800, 500),
            placement: "800 0 0 500 0 0"), 0
        )
      case .wrongSize:
        return (page(big, size: (1600, 999), page: (800, 500), placement: "800 0 0 500 0 0"), 0)
      }
    }
  }

  /// Largest difference of one channel, and the mean difference, between two RGB images of
  /// one size.
  static func difference(_ a: [UInt8], _ b: [UInt8]) -> (largest: Int, mean: Double) {
    var (largest, sum) = (0, 0)
    for (x, y) in zip(a, b) {
      let delta = abs(Int(x) - Int(y))
      largest = max(largest, delta)
      sum += delta
    }
    return (largest, Double(sum) / Double(max(1, a.count)))
  }

  @Test(
    "a JPEG drawn much smaller is decoded reduced, close to pdftoppm; others as pdftoppm",
    arguments: Case.allCases)
  func thumbnails(_ drawn: Case) throws {
    let folder = try TemporaryFolder()
    let (pdf, reduced) = try drawn.pdf()
    // Imprint's thumbnail (the whole path: sniffing, page checks, PNG) and pdftoppm's, every
    // pixel of the JPEG decoded.
    let (ours, splash) = try HairlineThumbnailTests.bothThumbnails(pdf, size: 256, in: folder)
    try #require(
      ours.width == splash.width && ours.height == splash.height,
      "\(splash.width) x \(splash.height)")
    // How many images were reduced, asked of the renderer itself.
    let document = try SplashDocument(data: DocumentBytes(copying: pdf), password: nil)
    let image = try RasterImage(width: ours.width, height: ours.height)
    // Every page's longer side is 800 pt.
    #expect(try document.render(page: 0, scale: 256.0 / 800, into: image) == reduced)
    let (largest, mean) = Self.difference(ours.rgb, splash.rgb)
    if reduced == 0 {
      #expect(largest == 0, "largest difference \(largest), mean \(mean)")
    } else {
      // The same picture, averaged a little differently at the hard edges of its squares
      // (1.7 on average here; a shifted image or swapped channels is 10 or more).
      #expect(mean < 2.5, "mean difference \(mean)")
      #expect(largest < 96, "largest difference \(largest)")
    }
  }
}
