// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: thumbnails of hairline drawings keep their tones. poppler's cairo
// backend widens every stroke thinner than a pixel to a whole pixel, so dense hairline art
// scaled down came out as a dark block, its shading lost; thumbnails are drawn with Splash.
// Checked from outside against pdftoppm (Splash in poppler-utils) pixel by pixel, and by the
// tones themselves: hatching that thins out from left to right gets lighter from left to right.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite struct HairlineThumbnailTests {
  /// A one-page PDF of `width` × `height` points drawing `content`, with `/Rotate` when given.
  static func drawing(_ content: String, width: Int = 595, height: Int = 842, rotate: Int = 0)
    -> [UInt8]
  {
    let stream = Array(content.utf8)
    let objects: [[UInt8]] = [
      Array("<</Type/Catalog/Pages 2 0 R>>".utf8),
      Array("<</Type/Pages/Kids[3 0 R]/Count 1>>".utf8),
      Array(
        "<</Type/Page/Parent 2 0 R/MediaBox[0 0 \(width) \(height)]/Rotate \(rotate)/Contents 4 0 R>>"
          .utf8),
      Array("<</Length \(stream.count)>>stream\n".utf8) + stream + Array("\nendstream".utf8),
    ]
    return HostileDocuments.pdf(bytes: objects)
  }

  /// Vertical 0.05 pt lines from x = 20 to 575 whose spacing grows from 0.5 pt to 4 pt: a tone
  /// that gets lighter from left to right, made of lines far thinner than a thumbnail's pixel.
  static let gradedHatching: String = {
    var lines = ["0.05 w"]
    var x = 20.0
    while x < 575 {
      lines.append("\(x) 20 m \(x) 820 l")
      x += 0.5 + 3.5 * (x - 20) / 555
    }
    return (lines + ["S"]).joined(separator: "\n")
  }()

  /// Cross-hatching at ±45° with 0.1 pt lines every 1.5 pt, and 0-width (device) circles.
  static let crossHatching: String = {
    var lines = ["0.1 w 0 0 0.6 RG"]
    for step in stride(from: -800.0, to: 800, by: 1.5) {
      lines.append("\(step) 0 m \(step + 842) 842 l \(step + 842) 0 m \(step) 842 l")
    }
    lines.append("S 0 w 0 G")
    for radius in stride(from: 10.0, to: 280, by: 0.8) {
      let k = radius * 0.5523
      lines.append(
        "\(297.5 + radius) 421 m \(297.5 + radius) \(421 + k) \(297.5 + k) \(421 + radius) 297.5 \(421 + radius) c "
          + "\(297.5 - k) \(421 + radius) \(297.5 - radius) \(421 + k) \(297.5 - radius) 421 c "
          + "\(297.5 - radius) \(421 - k) \(297.5 - k) \(421 - radius) 297.5 \(421 - radius) c "
          + "\(297.5 + k) \(421 - radius) \(297.5 + radius) \(421 - k) \(297.5 + radius) 421 c")
    }
    return (lines + ["S"]).joined(separator: "\n")
  }()

  /// Imprint's thumbnail and pdftoppm's `-scale-to` of the same file, as RGB rows.
  static func bothThumbnails(_ pdf: [UInt8], size: Int, in folder: TemporaryFolder) throws -> (
    ours: (width: Int, height: Int, rgb: [UInt8]), splash: (width: Int, height: Int, rgb: [UInt8])
  ) {
    let png = try DocumentEngine.thumbnail(
      pdf, file: "hairlines.pdf", page: 1, size: size, format: .png)
    let bitmap = try ImageDecoder.decode(png, source: "thumbnail.png")
    var rgb: [UInt8] = []
    rgb.reserveCapacity(bitmap.width * bitmap.height * 3)
    for pixel in stride(from: 0, to: bitmap.pixels.count, by: 4) {
      rgb += [bitmap.pixels[pixel + 2], bitmap.pixels[pixel + 1], bitmap.pixels[pixel]]
    }
    let path = folder.file("hairlines-\(size).pdf")
    try Data(pdf).write(to: URL(fileURLWithPath: path))
    let result = try runTool(
      "pdftoppm", ["-scale-to", "\(size)", "-singlefile", path, folder.file("splash-\(size)")])
    #expect(result.status == 0, "\(result.stderr)")
    let ppm = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file("splash-\(size).ppm"))))
    let (width, height, start) = try #require(ppmHeader(ppm))
    return ((bitmap.width, bitmap.height, rgb), (width, height, Array(ppm[start...])))
  }

  /// The share of channel values that differ by more than 8 between two images, over the
  /// area they share (pdftoppm's `-scale-to` rounds a side up, Imprint to the nearest pixel).
  static func differing(
    _ a: (width: Int, height: Int, rgb: [UInt8]), _ b: (width: Int, height: Int, rgb: [UInt8])
  ) -> Double {
    let (width, height) = (min(a.width, b.width), min(a.height, b.height))
    var count = 0
    for y in 0..<height {
      for x in 0..<width * 3
      where abs(Int(a.rgb[y * a.width * 3 + x]) - Int(b.rgb[y * b.width * 3 + x])) > 8 {
        count += 1
      }
    }
    return Double(count) / Double(max(1, width * height * 3))
  }

  /// The mean grey level (0 black, 255 white) of columns `columns` of an RGB image.
  static func meanTone(_ image: (width: Int, height: Int, rgb: [UInt8]), columns: Range<Int>)
    -> Double
  {
    var sum = 0
    for y in 0..<image.height {
      for x in columns {
        let at = (y * image.width + x) * 3
        sum += Int(image.rgb[at]) + Int(image.rgb[at + 1]) + Int(image.rgb[at + 2])
      }
    }
    return Double(sum) / Double(3 * image.height * columns.count)
  }

  /// The drawings the tests thumbnail (named, so that a failure names one, not its content).
  enum Drawing: String, CaseIterable, CustomTestStringConvertible {
    case gradedHatching = "graded hatching"
    case crossHatching = "cross-hatching and device-width circles"
    case turnedHatching = "graded hatching on a page turned by /Rotate 90"
    case landscapeHatching = "cross-hatching on a landscape page"

    var testDescription: String { rawValue }

    var pdf: [UInt8] {
      switch self {
      case .gradedHatching: HairlineThumbnailTests.drawing(HairlineThumbnailTests.gradedHatching)
      case .crossHatching: HairlineThumbnailTests.drawing(HairlineThumbnailTests.crossHatching)
      case .turnedHatching:
        HairlineThumbnailTests.drawing(HairlineThumbnailTests.gradedHatching, rotate: 90)
      case .landscapeHatching:
        HairlineThumbnailTests.drawing(
          HairlineThumbnailTests.crossHatching, width: 842, height: 595)
      }
    }
  }

  @Test(
    "hairline drawings are thumbnailed as pdftoppm draws them",
    arguments: Drawing.allCases, [64, 256, 700])
  func matchesSplash(_ drawing: Drawing, size: Int) throws {
    let folder = TemporaryFolder()
    let (ours, splash) = try Self.bothThumbnails(drawing.pdf, size: size, in: folder)
    #expect(abs(ours.width - splash.width) <= 1 && abs(ours.height - splash.height) <= 1)
    #expect(max(ours.width, ours.height) == size)
    // The same renderer at the same scale: the same pixels but for a handful at an edge.
    let share = Self.differing(ours, splash)
    #expect(share < 0.005, "\(share * 100) % of values differ")
  }

  @Test("a hatching keeps its tone where cairo's widened hairlines made a black block")
  func toneKept() throws {
    let folder = TemporaryFolder()
    let pdf = Self.drawing(Self.gradedHatching)
    let (ours, _) = try Self.bothThumbnails(pdf, size: 256, in: folder)
    let path = folder.file("hairlines-256.pdf")
    // pdftocairo draws with the backend thumbnails were drawn with; mutool with MuPDF's own.
    var result = try runTool(
      "pdftocairo", ["-png", "-scale-to", "256", "-singlefile", path, folder.file("cairo")])
    #expect(result.status == 0, "\(result.stderr)")
    result = try runTool(
      "mutool", ["draw", "-q", "-w", "256", "-h", "256", "-o", folder.file("mupdf.png"), path, "1"])
    #expect(result.status == 0, "\(result.stderr)")
    func tone(_ file: String) throws -> Double {
      let bitmap = try ImageDecoder.decode(
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file(file)))), source: file)
      var rgb: [UInt8] = []
      for pixel in stride(from: 0, to: bitmap.pixels.count, by: 4) {
        rgb += [bitmap.pixels[pixel + 2], bitmap.pixels[pixel + 1], bitmap.pixels[pixel]]
      }
      return Self.meanTone((bitmap.width, bitmap.height, rgb), columns: 0..<bitmap.width)
    }
    let (cairo, mupdf) = (try tone("cairo.png"), try tone("mupdf.png"))
    let mine = Self.meanTone(ours, columns: 0..<ours.width)
    // Measured: cairo 34 (nearly black), MuPDF 168, Splash 177 (of 255).
    #expect(cairo < 80, "cairo's tone \(cairo)")
    #expect(abs(mine - mupdf) < 25, "Imprint \(mine), MuPDF \(mupdf)")
    #expect(mine - cairo > 100, "Imprint \(mine), cairo \(cairo)")
  }
}
