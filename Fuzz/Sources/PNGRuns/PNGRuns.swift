// SPDX-License-Identifier: Apache-2.0
// Fuzz target: our own deflater for flat drawings (CImprintShims/runs_deflate.c), which card
// PNGs use, so a hostile photo's pixels reach it. The input's first two bytes choose the pixel
// format and the width (1-256 pixels), the rest are the rows (a last partial row dropped). The
// PNG it makes, with both row filters, must decode (libpng, through cairo) to the pixels of the
// PNG zlib makes from the same rows. The same rows drawn into a cairo image (as RGB, the bytes
// taken three at a time) must give, deflated from the image's pixels a window of rows at a
// time, the very bytes they give deflated from rows made first.

import FuzzSupport
import ImprintCore
import ImprintGraphics

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  guard input.count > 2 else { return 0 }
  let formats: [PNGPixelFormat] = [.gray1, .gray8, .rgb8, .rgba8]
  let format = formats[Int(input[0]) % formats.count]
  let width = Int(input[1]) + 1
  let rows = Array(input.dropFirst(2))
  let height = rows.count / format.rowBytes(width: width)
  guard height > 0 else { return 0 }
  for filter in [PNGRowFilter.unfiltered, .up] {
    func decoded(_ deflater: PNGDeflater) -> [UInt8] {
      do {
        let png = try PNGEncoder.encode(
          width: width, height: height, format: format, pixels: rows, filter: filter,
          deflater: deflater)
        return try ImageDecoder.decode(png, source: "fuzz.png").pixels
      } catch {
        preconditionFailure("\(deflater), \(filter): \(error)")
      }
    }
    precondition(decoded(.runs) == decoded(.zlib), "the pixels differ from zlib's PNG's")
  }
  windowed(Array(input.dropFirst(2)), width: width)
  return 0
}

/// Draws `bytes` (R G B each pixel, `width` a row) into a cairo image and compares its PNG's
/// two paths through runs_deflate.c.
private func windowed(_ bytes: [UInt8], width: Int) {
  let height = bytes.count / (3 * width)
  guard height > 0 else { return }
  var pixels: [UInt8] = []
  pixels.reserveCapacity(width * height * 4)
  for at in stride(from: 0, to: width * height * 3, by: 3) {
    pixels += [bytes[at + 2], bytes[at + 1], bytes[at], 255]
  }
  do {
    let image = try RasterImage(width: width, height: height)
    try image.draw { canvas in
      try canvas.draw(
        Bitmap(width: width, height: height, pixels: pixels, hasAlpha: false),
        in: Rect(x: 0, y: 0, width: Double(width), height: Double(height)), fit: .cover,
        smooth: false)
    }
    let drawn = try image.png(filter: .unfiltered, deflater: .runs)
    let rows = try PNGEncoder.encode(
      width: width, height: height, format: .rgb8, pixels: image.rgbPixels(),
      compressionLevel: 3, filter: .unfiltered, deflater: .runs)
    // A grey image is written as grey by png(): compare the pixels then, else the bytes.
    if drawn != rows {
      let drawnPixels = try ImageDecoder.decode(drawn, source: "drawn.png").pixels
      let rowsPixels = try ImageDecoder.decode(rows, source: "rows.png").pixels
      precondition(drawnPixels == rowsPixels, "the windowed PNG's pixels differ")
      precondition(isGrey(image), "a colour image's windowed PNG differs from its rows' PNG")
    }
  } catch {
    preconditionFailure("windowed: \(error)")
  }
}

private func isGrey(_ image: borrowing RasterImage) -> Bool {
  var grey = true
  image.forEachRow { row in
    grey =
      grey
      && row.allSatisfy { ($0 >> 16 & 0xFF) == ($0 >> 8 & 0xFF) && ($0 >> 8 & 0xFF) == ($0 & 0xFF) }
  }
  return grey
}

@_cdecl("PNGRuns_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
