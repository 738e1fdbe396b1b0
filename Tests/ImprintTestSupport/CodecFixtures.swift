// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: HEIF, WebP, TIFF and GIF files for the decoder tests, made at test time by
// Pillow (flat source pictures) and Debian's own tools (cwebp, img2webp, gifsicle, tiffcp), and
// the damaged and lying versions of each.

import Foundation

/// Image files in the formats phones and scanners make, written into a temporary folder.
///
/// The pictures, by construction:
/// - `marker`: 64 × 32, white, with a red 16 × 8 block in the top-left corner;
/// - `frame2`: 64 × 32, green (0, 200, 0);
/// - `alpha`: 40 × 20, the left half opaque red, the right half fully transparent;
/// - each TIFF page: 83 × 117 pixels at 10 dpi (A4 portrait): red, grey (128), white.
public enum CodecFixtures {
  /// The files made: `alpha.webp` (lossless, alpha kept), `anim.webp` (two frames: `marker`,
  /// then `frame2`), `anim.gif` (the same two frames, merged by gifsicle), `three.tif` (the three
  /// pages, joined by tiffcp), and the sources (`marker.png`, `alpha.png`).
  public static func make(in folder: TemporaryFolder) throws {
    let script = pythonFixture("codec_fixtures.py")
    try check(runTool("python3", ["-c", script, folder.path]))
    let f = folder.file
    try check(
      runTool("cwebp", ["-quiet", "-lossless", "-exact", f("alpha.png"), "-o", f("alpha.webp")]))
    try check(
      runTool("img2webp", ["-lossless", f("marker.png"), f("frame2.png"), "-o", f("anim.webp")]))
    try check(
      runTool("gifsicle", ["--merge", f("marker.gif"), f("frame2.gif"), "-o", f("anim.gif")]))
    try check(runTool("tiffcp", [f("t1.tif"), f("t2.tif"), f("t3.tif"), f("three.tif")]))
  }

  /// The committed HEIC of the marker with EXIF-style orientation `orientation` (1-8) written
  /// as HEIF transformations (`irot`, `imir`), the EXIF Orientation kept beside them
  /// (`Tests/Fixtures/Images/heif/make.py` tells how they were made).
  public static func heic(orientation: Int) -> String {
    fixturesFolder + "/Images/heif/orientation-\(orientation).heic"
  }

  /// Where the red block of `marker` is after EXIF orientation `orientation`, and the upright
  /// size: worked out by hand from the EXIF/TIFF definition of the eight orientations.
  public static func markerCorner(orientation: Int) -> (corner: Corner, width: Int, height: Int) {
    switch orientation {
    case 2: (.topRight, 64, 32)
    case 3: (.bottomRight, 64, 32)
    case 4: (.bottomLeft, 64, 32)
    case 5: (.topLeft, 32, 64)
    case 6: (.topRight, 32, 64)
    case 7: (.bottomRight, 32, 64)
    case 8: (.bottomLeft, 32, 64)
    default: (.topLeft, 64, 32)
    }
  }

  /// A corner of a picture.
  public enum Corner: Sendable, CaseIterable {
    case topLeft, topRight, bottomLeft, bottomRight
  }

  /// `bytes` cut to half their length: the end of the picture's data is missing.
  public static func truncated(_ bytes: [UInt8]) -> [UInt8] { Array(bytes.prefix(bytes.count / 2)) }

  /// `bytes` with the size the header gives changed to `width` × `height` (the data unchanged):
  /// a GIF's logical screen, a lossless WebP's VP8L header, a TIFF's first ImageWidth and
  /// ImageLength, a HEIF's first `ispe` box (and its
  /// `clap` crop).
  public static func lying(_ bytes: [UInt8], width: Int, height: Int) -> [UInt8] {
    var out = bytes
    func le(_ value: Int, at offset: Int, count: Int) {
      for index in 0..<count {
        out[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
      }
    }
    func be(_ value: Int, at offset: Int, count: Int) {
      for index in 0..<count {
        out[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - index)))
      }
    }
    if bytes.starts(with: Array("GIF8".utf8)) {
      le(width, at: 6, count: 2)
      le(height, at: 8, count: 2)
    } else if bytes.starts(with: Array("RIFF".utf8)), Array(bytes[12..<16]) == Array("VP8L".utf8) {
      // Signature 0x2F at 20, then 14 bits width - 1 and 14 bits height - 1, little-endian.
      let bits = (width - 1) | (height - 1) << 14 | (Int(bytes[24]) >> 4) << 28
      le(bits, at: 21, count: 4)
    } else if bytes.starts(with: [0x49, 0x49, 0x2A, 0]) {
      func u(_ at: Int, _ count: Int) -> Int {
        (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
      }
      let ifd = u(4, 4)
      for entry in 0..<u(ifd, 2) {
        let at = ifd + 2 + entry * 12
        let tag = u(at, 2)
        guard tag == 256 || tag == 257 else { continue }
        out.replaceSubrange((at + 8)..<(at + 12), with: [0, 0, 0, 0])
        le(tag == 256 ? width : height, at: at + 8, count: u(at + 2, 2) == 3 ? 2 : 4)
      }
    } else if let at = bytes.firstRange(of: Array("ispe".utf8))?.lowerBound {
      be(width, at: at + 8, count: 4)
      be(height, at: at + 12, count: 4)
      // The clean aperture (a crop to the picture inside the coded size) made as large.
      if let clap = bytes.firstRange(of: Array("clap".utf8))?.lowerBound {
        for (index, value) in [width, 1, height, 1, 0, 1, 0, 1].enumerated() {
          be(value, at: clap + 4 + index * 4, count: 4)
        }
      }
    }
    return out
  }

  private static func check(_ result: ToolResult) throws {
    guard result.status == 0 else {
      throw CodecFixtureError(message: "a fixture tool failed: \(result.stderr)")
    }
  }
}

/// A tool that makes fixtures failed.
public struct CodecFixtureError: Error, CustomStringConvertible {
  /// What failed, with the tool's standard error.
  public let message: String
  public var description: String { message }
}
