// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a JPEG image on a PDF page thumbnailed (`DocumentEngine.thumbnail`), the path of
// CImprintSplash's reduced decode: its reading of the JPEG's markers (JFIF, Adobe, the frame
// header), libjpeg's scaled decode, and poppler's drawing when either refuses. The input is the
// JPEG; the image dictionary says the size libjpeg reads from its header, so that
// the reduced path is taken, and the image is drawn at a tenth of the page. Besides not trapping
// (AddressSanitizer watches the C++), a thumbnail made is a PNG of the page's size.

import FuzzSupport
import ImprintCore
import ImprintDocuments
import ImprintGraphics

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let jpeg = bytes(data, size)
  // Only JPEGs whose header libjpeg reads: poppler's own DCTStream loops on some that it
  // cannot (a 20-byte one found here: pdftoppm loops too; in Imprint the worker's CPU limit
  // stops it), and this target is for the reduced path, not for poppler. A bigger claim than a
  // megapixel is legal but only slows the fuzzer down.
  guard let info = try? JPEGDecoder.info(jpeg, source: "fuzz.jpg"),
    info.width * info.height <= 1_000_000
  else { return 0 }
  let (width, height) = (info.width, info.height)
  let content = "q 20 0 0 15 10 10 cm /Im1 Do Q"
  let pdf = pdfFile(objects: [
    Array("<</Type/Catalog/Pages 2 0 R>>".utf8),
    Array("<</Type/Pages/Kids[3 0 R]/Count 1>>".utf8),
    Array(
      ("<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 150]/Resources<</XObject<</Im1 5 0 R>>>>"
        + "/Contents 4 0 R>>").utf8),
    Array("<</Length \(content.utf8.count)>>stream\n\(content)\nendstream".utf8),
    Array(
      ("<</Type/XObject/Subtype/Image/Width \(width)/Height \(height)/ColorSpace/DeviceRGB"
        + "/BitsPerComponent 8/Filter/DCTDecode/Length \(jpeg.count)>>stream\n").utf8)
      + jpeg + Array("\nendstream".utf8),
  ])
  guard
    let png = try? DocumentEngine.thumbnail(
      pdf, file: "fuzz.pdf", page: 1, size: 128, format: .png)
  else { return 0 }
  let thumbnail = try? ImageDecoder.decode(png, source: "thumbnail.png")
  precondition(
    thumbnail?.width == 128 && thumbnail?.height == 96, "a thumbnail of another size than the page")
  return 0
}

@_cdecl("ThumbnailJPEG_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
