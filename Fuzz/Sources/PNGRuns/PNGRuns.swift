// SPDX-License-Identifier: Apache-2.0
// Fuzz target: our own deflater for flat drawings (CImprintShims/runs_deflate.c), which card
// PNGs use, so a hostile photo's pixels reach it. The input's first two bytes choose the pixel
// format and the width (1-256 pixels), the rest are the rows (a last partial row dropped). The
// PNG it makes, with both row filters, must decode (libpng, through cairo) to the pixels of the
// PNG zlib makes from the same rows.

import FuzzSupport
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
  return 0
}

@_cdecl("PNGRuns_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
