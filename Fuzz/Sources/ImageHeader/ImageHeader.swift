// SPDX-License-Identifier: Apache-2.0
// Fuzz target: image type sniffing, the EXIF orientation reader, JPEG header reading, and the full
// decode (JPEG via libjpeg, PNG via cairo) of images whose header claims at most a megapixel (a
// bigger claim is legal but only slows the fuzzer down: it decodes grey pixels from nothing).

import FuzzSupport
import ImprintGraphics

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  let orientation = ImageDecoder.exifOrientation(input)
  precondition((1...8).contains(orientation), "EXIF orientation \(orientation)")
  switch ImageType(sniffing: input) {
  case .jpeg?:
    guard let info = try? JPEGDecoder.info(input, source: "fuzz.jpg"),
      info.width * info.height <= 1_000_000
    else { return 0 }
  case .png?:
    guard input.count >= 24 else { break }
    let width = input[16..<20].reduce(0) { $0 << 8 | Int($1) }
    let height = input[20..<24].reduce(0) { $0 << 8 | Int($1) }
    guard width <= 1_000_000, height <= 1_000_000, width * height <= 1_000_000 else { return 0 }
  case nil:
    break
  }
  _ = try? ImageDecoder.decode(input, source: "fuzz.img")
  return 0
}

@_cdecl("ImageHeader_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
