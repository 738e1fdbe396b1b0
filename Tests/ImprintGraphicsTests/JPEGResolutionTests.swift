// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: a JPEG's resolution, from its JFIF density, else its EXIF resolution
// (IFD0, both byte orders, inch or centimetre), else unstated; hostile EXIF never traps. The
// segments are built here byte by byte, so every expected value is computed independently.

import Foundation
import ImprintGraphics
import ImprintTestSupport
import Testing

@Suite("JPEG resolution: JFIF, then EXIF, then none", .liveHandlesChecked)
struct JPEGResolutionTests {
  /// The segments, what resolution they state (nil: none), and what the case is.
  static let cases: [(segments: [[UInt8]], dpi: Double?, what: String)] = [
    ([JPEGBytes.resolution(300)], 300, "EXIF only, 300/1 per inch, little-endian"),
    ([JPEGBytes.resolution(300, little: false)], 300, "EXIF only, big-endian"),
    ([JPEGBytes.resolution(600, 2)], 300, "EXIF 600/2 per inch"),
    ([JPEGBytes.resolution(300, unit: nil)], 300, "EXIF without ResolutionUnit: the inch"),
    ([JPEGBytes.resolution(11811, 100, unit: 3)], 118.11 * 2.54, "EXIF per centimetre"),
    ([JPEGBytes.resolution(300, unit: 1)], nil, "EXIF with no absolute unit"),
    ([JPEGBytes.resolution(300, unit: 4)], nil, "EXIF with an unknown unit"),
    ([JPEGBytes.jfif(units: 1, x: 200, y: 200)], 200, "JFIF only, dpi"),
    ([JPEGBytes.jfif(units: 2, x: 100, y: 100)], 254, "JFIF only, dots per cm"),
    ([JPEGBytes.jfif(units: 0, x: 1, y: 1)], nil, "JFIF aspect ratio only"),
    (
      [JPEGBytes.jfif(units: 1, x: 200, y: 200), JPEGBytes.resolution(300)], 200,
      "JFIF and EXIF: JFIF wins"
    ),
    (
      [JPEGBytes.jfif(units: 0, x: 1, y: 1), JPEGBytes.resolution(300)], 300,
      "JFIF aspect only, then EXIF"
    ),
    (
      [JPEGBytes.jfif(units: 1, x: 1, y: 1), JPEGBytes.resolution(300, little: false)], 300,
      "JFIF 1 dpi (not sane), then EXIF"
    ),
    (
      [JPEGBytes.jfif(units: 1, x: 300, y: 0), JPEGBytes.resolution(72)], 72,
      "JFIF with a zero Y density, then EXIF"
    ),
    ([], nil, "neither"),
    ([JPEGBytes.resolution(5)], nil, "EXIF 5 dpi: not sane"),
    ([JPEGBytes.resolution(300, 0)], nil, "EXIF zero denominator"),
    ([JPEGBytes.resolution(UInt32.max)], nil, "EXIF 4 294 967 295 dpi"),
  ]

  @Test(
    "each source in its order, sized as documented",
    arguments: cases.indices.map { ($0, cases[$0].what) })
  func table(index: Int, what: String) throws {
    let row = Self.cases[index]
    let bytes = try JPEGBytes.jpeg(width: 1000, height: 872, segments: row.segments)
    let dpi = ImageDecoder.jpegDPI(bytes)
    let header = try #require(try ImageDecoder.pages(bytes, source: "p.jpg").first)
    if let expected = row.dpi {
      #expect(abs((dpi ?? 0) - expected) < 1e-9, "\(what): \(String(describing: dpi))")
      #expect(abs((header.dpi ?? 0) - expected) < 1e-9)
    } else {
      #expect(dpi == nil && header.dpi == nil, "\(what): \(String(describing: dpi))")
    }
    // libjpeg decodes every one of them.
    let bitmap = try ImageDecoder.decode(bytes, source: "p.jpg")
    #expect(bitmap.width == 1000 && bitmap.height == 872)
  }

  @Test("EXIF's orientation and resolution read from one directory: turned, still 300 dpi")
  func orientationAndResolution() throws {
    let segment = JPEGBytes.exif(
      little: false,
      entries: [
        .short(tag: 0x0112, value: 6),
        .rational(tag: 0x011A, numerator: 300, denominator: 1),
        .rational(tag: 0x011B, numerator: 300, denominator: 1),
      ])
    let bytes = try JPEGBytes.jpeg(width: 40, height: 20, segments: [segment])
    #expect(ImageDecoder.exifOrientation(bytes) == 6)
    let header = try #require(try ImageDecoder.pages(bytes, source: "p.jpg").first)
    #expect(header.width == 20 && header.height == 40 && header.dpi == 300)
  }

  /// EXIF segments that lie: each must give no resolution and no trap.
  static let broken: [(segment: [UInt8], what: String)] = [
    (JPEGBytes.exif(little: true, entries: [], ifdOffset: 0xFFFF_FFF0), "IFD0 far past the end"),
    (JPEGBytes.exif(little: true, entries: [], ifdOffset: 0x7FFF_FFFF), "IFD0 at 2^31 - 1"),
    (
      JPEGBytes.exif(
        little: true, entries: [.raw(tag: 0x011A, type: 5, count: 1, value: 0xFFFF_FFFC)]),
      "the rational's offset past the segment"
    ),
    (
      JPEGBytes.exif(
        little: false, entries: [.raw(tag: 0x011A, type: 5, count: 1, value: 30)]),
      "the rational's offset cut by the segment's end"
    ),
    (
      JPEGBytes.exif(
        little: true, entries: [.raw(tag: 0x011A, type: 3, count: 1, value: 300)]),
      "XResolution typed SHORT"
    ),
    (
      JPEGBytes.exif(little: true, entries: [.raw(tag: 0x011A, type: 5, count: 1, value: 0)]),
      "the rational pointing at the TIFF header itself"
    ),
    (JPEGBytes.segment(0xE1, Array("Exif\0\0".utf8) + [0x49, 0x49]), "a cut TIFF header"),
    (JPEGBytes.segment(0xE1, Array("Exif\0\0".utf8)), "no TIFF header"),
    (JPEGBytes.segment(0xE1, Array("Exif".utf8)), "a cut signature"),
    (
      JPEGBytes.segment(
        0xE1, Array("Exif\0\0".utf8) + [0x49, 0x49, 42, 0, 8, 0, 0, 0, 0xFF, 0xFF]),
      "65 535 entries announced, none there"
    ),
    (
      JPEGBytes.segment(
        0xE1, Array("Exif\0\0".utf8) + [0x58, 0x58, 42, 0, 8, 0, 0, 0, 0, 0]),
      "an unknown byte order"
    ),
  ]

  @Test(
    "hostile EXIF: no resolution, no trap, the image still decodes",
    arguments: broken.indices.map { ($0, broken[$0].what) })
  func hostile(index: Int, what: String) throws {
    let bytes = try JPEGBytes.jpeg(width: 30, height: 20, segments: [Self.broken[index].segment])
    #expect(ImageDecoder.jpegDPI(bytes) == nil, "\(what)")
    #expect(ImageDecoder.exifOrientation(bytes) == 1)
    let header = try #require(try ImageDecoder.pages(bytes, source: "p.jpg").first)
    #expect(header.dpi == nil && header.width == 30)
  }

  @Test("a segment length past the file's end, and every cut of an EXIF JPEG: never a trap")
  func cuts() throws {
    let bytes = try JPEGBytes.jpeg(
      width: 30, height: 20,
      segments: [JPEGBytes.jfif(units: 0, x: 1, y: 1), JPEGBytes.resolution(300)])
    #expect(ImageDecoder.jpegDPI(bytes) == 300)
    // The segment ends with XResolution's 8 bytes, then YResolution's.
    let exifEnd = 2 + 18 + JPEGBytes.resolution(300).count
    for length in 0...exifEnd {
      let cut = Array(bytes.prefix(length))
      let dpi = ImageDecoder.jpegDPI(cut)
      if length < exifEnd - 8 {
        #expect(dpi == nil, "cut at \(length): XResolution is gone")
      } else {
        #expect(dpi == 300, "cut at \(length): XResolution is whole")
      }
      #expect(ImageDecoder.exifOrientation(cut) == 1)
    }
    var lying = bytes
    lying[2 + 18 + 2] = 0xFF  // the EXIF segment's length: far past the end
    lying[2 + 18 + 3] = 0xFF
    _ = ImageDecoder.jpegDPI(Array(lying.prefix(2 + 18 + 40)))
  }

  @Test("2 000 seeded random corruptions of an EXIF segment: never a trap")
  func corrupted() throws {
    let bytes = try JPEGBytes.jpeg(
      width: 8, height: 8,
      segments: [
        JPEGBytes.exif(
          little: true,
          entries: [
            .short(tag: 0x0112, value: 3), .rational(tag: 0x011A, numerator: 300, denominator: 1),
            .rational(tag: 0x011B, numerator: 300, denominator: 1), .short(tag: 0x0128, value: 2),
          ])
      ])
    let exifRange = 2..<(2 + JPEGBytes.resolution(300).count + 12)
    var state: UInt64 = 2026
    func next() -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(truncatingIfNeeded: state >> 33)
    }
    var stated = 0
    for _ in 0..<2000 {
      var copy = bytes
      for _ in 0..<(1 + next() % 4) {
        copy[exifRange.lowerBound + next() % exifRange.count] = UInt8(truncatingIfNeeded: next())
      }
      if let dpi = ImageDecoder.jpegDPI(copy) {
        #expect(ImageDecoder.plausibleDPI.contains(dpi))
        stated += 1
      }
      #expect((1...8).contains(ImageDecoder.exifOrientation(copy)))
    }
    // Most corruptions leave the resolution readable: the walk really reached it.
    #expect(stated > 0)
  }

  @Test("PNG pHYs (per metre) is honoured, as TIFF's resolution is (CodecTests)")
  func pngDensity() throws {
    let png = try PNGEncoder.encode(
      width: 16, height: 8, format: .gray8, pixels: [UInt8](repeating: 0, count: 128), dpi: 300)
    let header = try #require(try ImageDecoder.pages(png, source: "p.png").first)
    // pHYs holds whole pixels per metre: round(300 / 0.0254) = 11 811.
    #expect(header.dpi == 11_811 * 0.0254)
  }
}
