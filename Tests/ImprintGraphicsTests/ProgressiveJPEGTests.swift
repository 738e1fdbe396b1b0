// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: a progressive JPEG decoded at 1/8 from its DC scans (the copy without
// the AC scans libjpeg's 1x1 inverse DCT never reads) gives libjpeg's pixels from every scan, for
// every subsampling, grey, CMYK and restart markers; the files it must not shorten (a progression
// left unfinished, which libjpeg smooths; a file cut short) are decoded whole.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintGraphics

@Suite struct ProgressiveJPEGTests {
  /// The progressive files `progressive_jpegs.py` writes (Pillow), made once for the suite.
  static let folder: TemporaryFolder? = {
    guard let folder = try? TemporaryFolder() else { return nil }
    let made = try? runTool("python3", ["-c", pythonFixture("progressive_jpegs.py"), folder.path])
    return made?.status == 0 ? folder : nil
  }()

  /// One decode's status and pixels at 1/`scale` with `flags`, in `layout` (0 B G R X, 1 grey).
  static func decode(_ bytes: [UInt8], scale: Int32, layout: Int32, flags: Int32) -> (
    status: Int32, width: UInt32, height: UInt32, pixels: [UInt8]
  ) {
    // At most the full size, 4 bytes a pixel (the fixtures are at most 803 x 397).
    var pixels = [UInt8](repeating: 0, count: 803 * 397 * 4)
    var (width, height): (UInt32, UInt32) = (0, 0)
    var message = [CChar](repeating: 0, count: 256)
    let stride = 804 * (layout == 1 ? 1 : 4)
    let status = bytes.withUnsafeBufferPointer { input in
      pixels.withUnsafeMutableBufferPointer { output in
        JPEGDecoder.cDecode(
          input.baseAddress, input.count, layout, scale, flags, output.baseAddress, stride,
          output.count, &width, &height, &message, message.count)
      }
    }
    let used = Int(height) * stride
    return (status, width, height, status == 0 ? Array(pixels.prefix(used)) : [])
  }

  @Test(
    "a progressive JPEG at 1/8 from its DC scans: the pixels of every scan decoded",
    arguments: [
      "rgb444.jpg", "rgb422.jpg", "rgb420.jpg", "rgb420-restarts.jpg", "rgb444-restart-rows.jpg",
      "grey.jpg", "cmyk.jpg", "small.jpg", "incomplete.jpg", "cut.jpg",
    ])
  func sameAsEveryScan(_ name: String) throws {
    let folder = try #require(Self.folder, "progressive_jpegs.py (Pillow) made no files")
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file(name))))
    let shortened = JPEGDecoder.dcScansSize(bytes)
    switch name {
    case "incomplete.jpg", "cut.jpg":
      // libjpeg smooths an unfinished progression (its guesses move the DC): read whole.
      #expect(shortened == 0)
    case "rgb420.jpg", "rgb420-restarts.jpg":
      // The chroma is drawn 2 x 2 a block at 1/8 (three AC coefficients read): its scans stay.
      #expect(shortened > 0 && shortened < bytes.count * 7 / 10, "\(shortened) of \(bytes.count)")
    default:
      #expect(shortened > 0 && shortened < bytes.count / 2, "\(shortened) of \(bytes.count)")
    }
    for layout: Int32 in [0, 1] {
      for strict: Int32 in [0, JPEGDecoder.strictFlag] {
        let dcScans = Self.decode(bytes, scale: 8, layout: layout, flags: strict)
        let everyScan = Self.decode(
          bytes, scale: 8, layout: layout, flags: strict | JPEGDecoder.everyScanFlag)
        #expect(dcScans.status == everyScan.status, "layout \(layout), strict \(strict)")
        #expect(dcScans.width == everyScan.width && dcScans.height == everyScan.height)
        // (Compared as one value: a failure names the decode, not a million bytes.)
        let samePixels = dcScans.pixels == everyScan.pixels
        #expect(samePixels, "layout \(layout), strict \(strict)")
      }
    }
    // The cut file is an error when strict, and decoded (what libjpeg read) when not.
    if name == "cut.jpg" {
      #expect(Self.decode(bytes, scale: 8, layout: 0, flags: JPEGDecoder.strictFlag).status != 0)
    } else {
      let decoded = Self.decode(bytes, scale: 8, layout: 0, flags: JPEGDecoder.strictFlag)
      #expect(decoded.status == 0 && decoded.width == (name == "small.jpg" ? 8 : 101))
    }
  }
}
