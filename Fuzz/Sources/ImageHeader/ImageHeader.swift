// SPDX-License-Identifier: Apache-2.0
// Fuzz target: image type sniffing, the EXIF orientation reader, header reading of every type
// (JPEG, PNG, HEIF, WebP, TIFF with its directories, GIF), and the full decode (libjpeg, cairo,
// libheif, libwebp, libtiff, giflib) of every page of images whose headers claim at most a
// megapixel a page (a bigger claim is legal but only slows the fuzzer down: it decodes grey
// pixels from nothing).

import FuzzSupport
import ImprintGraphics

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  let orientation = ImageDecoder.exifOrientation(input)
  precondition((1...8).contains(orientation), "EXIF orientation \(orientation)")
  guard ImageType(sniffing: input) != nil else {
    _ = try? ImageDecoder.decode(input, source: "fuzz.img")  // refused by its kind
    return 0
  }
  guard let pages = try? ImageDecoder.pages(input, source: "fuzz.img", maximumPixels: 1_000_000)
  else { return 0 }
  precondition(!pages.isEmpty, "an image without pages")
  for page in 1...min(pages.count, 4) {
    guard
      let bitmap = try? ImageDecoder.decode(
        input, source: "fuzz.img", page: page, maximumPixels: 1_000_000)
    else { continue }
    precondition(
      bitmap.width == pages[page - 1].width && bitmap.height == pages[page - 1].height,
      "page \(page) decoded to another size than its header gives")
  }
  return 0
}

@_cdecl("ImageHeader_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
