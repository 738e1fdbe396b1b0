// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: the C boundary: PNG writing (libdeflate), fontconfig/Pango and cairo
// surfaces.

import Foundation
import ImprintCore
import ImprintPDF
import ImprintTestSupport
import Testing

@testable import ImprintGraphics

@Suite("PNG encoding (our own chunks around zlib)", .liveHandlesChecked)
struct PNGEncoderTests {
  @Test("writes 1-bit grey with the DPI in pHYs")
  func oneBit() throws {
    // A 16 × 16 checkerboard of 8-pixel squares is 2 bytes a row.
    var pixels: [UInt8] = []
    for y in 0..<16 { pixels += y < 8 ? [0x00, 0xFF] : [0xFF, 0x00] }
    let png = try PNGEncoder.encode(width: 16, height: 16, format: .gray1, pixels: pixels, dpi: 300)
    let header = try #require(pngHeader(png))
    #expect(header.width == 16 && header.height == 16)
    #expect(header.bitDepth == 1 && header.colorType == 0)
    #expect(header.pixelsPerMetre == 11811)  // 300 / 0.0254, rounded
  }

  @Test("stores text chunks (freedesktop thumbnail keys)")
  func textChunks() throws {
    let png = try PNGEncoder.encode(
      width: 1, height: 1, format: .gray8, pixels: [128],
      text: [("Thumb::URI", "file:///tmp/a.pdf"), ("Thumb::MTime", "1700000000")])
    let text = String(decoding: png, as: UTF8.self)
    #expect(text.contains("Thumb::URI\0file:///tmp/a.pdf"))
    #expect(text.contains("Thumb::MTime\01700000000"))
  }

  /// The filter types of a PNG's rows and its pixels, read by Python's zlib and Pillow.
  func rowFilters(_ png: [UInt8]) throws -> String {
    let script = pythonFixture("png_row_filters.py")
    let folder = TemporaryFolder()
    let path = folder.file("image.png")
    try Data(png).write(to: URL(fileURLWithPath: path))
    let result = try runTool("python3", ["-c", script, path])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout
  }

  @Test("writes every row with the filter asked for; the pixels are the same either way")
  func rowFilter() throws {
    // A 3 × 4 RGB gradient: 9 bytes a row.
    let pixels = (0..<36).map { UInt8($0 * 7) }
    func encode(_ filter: PNGRowFilter?) throws -> [UInt8] {
      try PNGEncoder.encode(width: 3, height: 4, format: .rgb8, pixels: pixels, filter: filter)
    }
    let first = "RGB [(0, 7, 14), (21, 28, 35), (42, 49, 56)]"
    #expect(try rowFilters(encode(.unfiltered)) == "[0] \(first)\n")
    // Up for every row, the first too (against a row of zeros above it).
    #expect(try rowFilters(encode(.up)) == "[2] \(first)\n")
    #expect(try encode(nil) == encode(.up))
    // 1-bit images are unfiltered unless asked otherwise.
    func bits(_ filter: PNGRowFilter?) throws -> [UInt8] {
      try PNGEncoder.encode(
        width: 16, height: 2, format: .gray1, pixels: [0, 255, 255, 0], filter: filter)
    }
    #expect(try bits(nil) == bits(.unfiltered))
    #expect(try bits(nil) != bits(.up))
  }

  @Test("rows deflated by libdeflate decode to zlib's pixels at every level, checksums valid")
  func libdeflateRows() throws {
    // 200 × 120 RGB: gradients with a pattern, so that every level finds something to match.
    var pixels: [UInt8] = []
    for y in 0..<120 {
      for x in 0..<200 {
        pixels += [UInt8((x * 7 + y * 13 + x * y % 17) & 255), UInt8(x), UInt8(y * 2)]
      }
    }
    let zlib = try PNGEncoder.encode(width: 200, height: 120, format: .rgb8, pixels: pixels)
    let reference = try ImageDecoder.decode(zlib, source: "zlib.png")
    for level in [0, 1, 6, 9] {
      let other = try PNGEncoder.encode(
        width: 200, height: 120, format: .rgb8, pixels: pixels, compressionLevel: level,
        deflater: .libdeflate)
      #expect(other != zlib, "level \(level)")
      #expect(try ImageDecoder.decode(other, source: "libdeflate.png").pixels == reference.pixels)
      // Python's zlib checks the stream's Adler-32; Pillow reads the chunks' CRCs.
      #expect(try rowFilters(other) == rowFilters(zlib), "level \(level)")
    }
    // A thumbnail's PNG, the surface's own path.
    let image = try RasterImage(width: 40, height: 30)
    try image.draw { canvas in
      canvas.fill(
        Rect(x: 5, y: 5, width: 20, height: 10), color: Color(red: 200, green: 20, blue: 90))
    }
    let thumbnail = try image.png(compressionLevel: 6, deflater: .libdeflate)
    #expect(
      try ImageDecoder.decode(thumbnail, source: "t.png").pixels
        == ImageDecoder.decode(image.png(), source: "z.png").pixels)
  }

  @Test("a new image is white in every pixel, also in memory a drawn image left behind")
  func newImageWhite() throws {
    for round in 0..<3 {
      // 1086 × 713, a card's size: its buffer comes from, and goes back to, malloc's heap.
      do {
        let used = try RasterImage(width: 1086, height: 713)
        try used.draw { canvas in
          canvas.fill(
            Rect(x: 0, y: 0, width: 1086, height: 713), color: Color(red: 1, green: 2, blue: 3))
        }
      }
      let image = try RasterImage(width: 1086, height: 713)
      var white = true
      image.forEachRow { row in white = white && row.allSatisfy { $0 == 0xFFFF_FFFF } }
      #expect(white, "round \(round)")
    }
  }

  @Test("a bitmap drawn on an image: its pixels, scaled and blended, and its own bytes untouched")
  func bitmapOnImage() throws {
    // 3 × 2 opaque pixels, B G R A: red, green, blue; white, black, grey.
    let opaque: [UInt8] = [
      0, 0, 255, 255, 0, 255, 0, 255, 255, 0, 0, 255,
      255, 255, 255, 255, 0, 0, 0, 255, 128, 128, 128, 255,
    ]
    let bitmap = Bitmap(width: 3, height: 2, pixels: opaque, hasAlpha: false)
    let image = try RasterImage(width: 8, height: 6)
    try image.draw { canvas in
      // Twice the size, sharp squares, from (1, 1).
      try canvas.draw(bitmap, in: Rect(x: 1, y: 1, width: 6, height: 4), fit: .cover, smooth: false)
    }
    let rgb = image.rgbPixels()
    func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(rgb[(y * 8 + x) * 3..<(y * 8 + x) * 3 + 3]) }
    #expect(pixel(0, 0) == [255, 255, 255], "outside: white")
    #expect(pixel(1, 1) == [255, 0, 0] && pixel(2, 2) == [255, 0, 0])
    #expect(pixel(3, 1) == [0, 255, 0] && pixel(6, 2) == [0, 0, 255])
    #expect(
      pixel(1, 3) == [255, 255, 255] && pixel(4, 4) == [0, 0, 0] && pixel(6, 4) == [128, 128, 128])
    #expect(pixel(7, 5) == [255, 255, 255])
    #expect(bitmap.pixels == opaque, "the bitmap's bytes are as they were")
    // Half-transparent red (premultiplied: 128, alpha 128) over white: pink.
    let translucent = Bitmap(width: 1, height: 1, pixels: [0, 0, 128, 128], hasAlpha: true)
    let over = try RasterImage(width: 2, height: 1)
    try over.draw { canvas in
      try canvas.draw(translucent, in: Rect(x: 0, y: 0, width: 1, height: 1), fit: .cover)
    }
    let blended = over.rgbPixels()
    #expect(
      blended[0] == 255 && (126...128).contains(blended[1]) && blended[1] == blended[2],
      "\(blended)")
    #expect(Array(blended[3...]) == [255, 255, 255])
  }

  @Test("an image's PNG is grey when every pixel is, else RGB, with the pixels drawn")
  func rasterPNG() throws {
    let image = try RasterImage(width: 3, height: 2)
    try image.draw { canvas in
      canvas.fill(
        Rect(x: 1, y: 0, width: 1, height: 1), color: Color(red: 10, green: 20, blue: 30))
    }
    #expect(image.rgbPixels() == [255, 255, 255, 10, 20, 30] + [UInt8](repeating: 255, count: 12))
    #expect(image.grayPixels() == nil)
    #expect(
      try rowFilters(image.png(filter: .unfiltered))
        == "[0] RGB [(255, 255, 255), (10, 20, 30), (255, 255, 255)]\n")
    let grey = try RasterImage(width: 3, height: 2)
    try grey.draw { canvas in
      canvas.fill(
        Rect(x: 0, y: 1, width: 2, height: 1), color: Color(red: 90, green: 90, blue: 90))
    }
    #expect(grey.grayPixels() == [255, 255, 255, 90, 90, 255])
    #expect(
      try rowFilters(grey.png())
        == "[2] L [(255, 255, 255), (255, 255, 255), (255, 255, 255)]\n")
  }

  @Test("refuses what PNG cannot hold with the reason, instead of crashing")
  func error() throws {
    func reason(_ body: () throws(GraphicsError) -> [UInt8]) -> String? {
      do {
        _ = try body()
        return nil
      } catch { return error.code == "graphics.pngEncode" ? error.message : "\(error)" }
    }
    #expect(
      reason { () throws(GraphicsError) in
        try PNGEncoder.encode(width: 0, height: 1, format: .gray8, pixels: [0])
      } == "cannot encode PNG (image has no pixels)")
    #expect(
      reason { () throws(GraphicsError) in
        try PNGEncoder.encode(
          width: 1, height: 1, format: .gray8, pixels: [0], compressionLevel: 10)
      } == "cannot encode PNG (compression level 10 is not 0-9)")
    // tEXt keywords: 1-79 printable Latin-1 characters, no leading, trailing or double spaces.
    for key in ["", String(repeating: "k", count: 80), " Title", "Title ", "A  B", "tab\there"] {
      #expect(
        reason { () throws(GraphicsError) in
          try PNGEncoder.encode(
            width: 1, height: 1, format: .gray8, pixels: [0], text: [(key, "value")])
        }
          == "cannot encode PNG (text chunk 0 has no valid keyword (1-79 Latin-1 characters))",
        "key '\(key)'")
    }
    #expect(
      try PNGEncoder.encode(
        width: 1, height: 1, format: .gray8, pixels: [0],
        text: [(String(repeating: "k", count: 79), "")]
      ).count > 0)
  }

  /// Rows of `format` for a `width` × `height` image, from a fixed pseudo-random sequence (runs
  /// of repeated bytes mixed in, so that deflate finds matches as in drawn images).
  static func rows(_ format: PNGPixelFormat, width: Int, height: Int) -> [UInt8] {
    var state: UInt32 = 2_463_534_242
    var bytes: [UInt8] = []
    let count = format.rowBytes(width: width) * height
    while bytes.count < count {
      state ^= state << 13
      state ^= state >> 17
      state ^= state << 5
      let run = state % 4 == 0 ? Int(state >> 24 % 40) : 1
      bytes += [UInt8](repeating: UInt8(truncatingIfNeeded: state >> 8), count: run)
    }
    return Array(bytes.prefix(count))
  }

  /// The file read by a decoder of its own in Python (struct and zlib only).
  ///
  /// It checks the signature, each chunk's CRC-32, the chunk order PNG requires and IHDR, and
  /// unfilters the rows (types 0 and 2). Returns its report: the chunk types, then IHDR's fields, then the rows in hex.
  func independentlyDecoded(_ png: [UInt8]) throws -> [String] {
    let script = pythonFixture("png_decode.py")
    let folder = TemporaryFolder()
    let path = folder.file("image.png")
    try Data(png).write(to: URL(fileURLWithPath: path))
    let result = try runTool("python3", ["-c", script, path])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.split(separator: "\n").map(String.init)
  }

  /// What cairo's PNG reader (libpng) gives for pixel `x` of `row`: premultiplied B G R A.
  static func expectedBGRA(_ format: PNGPixelFormat, row: ArraySlice<UInt8>, x: Int) -> [UInt8] {
    let start = row.startIndex
    func bit() -> Bool { row[start + x / 8] & (0x80 >> UInt8(x % 8)) != 0 }
    switch format {
    case .gray1: return bit() ? [255, 255, 255, 255] : [0, 0, 0, 255]
    case .palette1(let zero, let one):
      let color = bit() ? one : zero
      return [color.blue, color.green, color.red, 255]
    case .gray8: return [row[start + x], row[start + x], row[start + x], 255]
    case .rgb8: return [row[start + 3 * x + 2], row[start + 3 * x + 1], row[start + 3 * x], 255]
    case .rgba8:
      // cairo's multiply_alpha: (c × a + 0x80) rounded by its own high byte.
      let alpha = Int(row[start + 4 * x + 3])
      func times(_ channel: UInt8) -> UInt8 {
        let product = Int(channel) * alpha + 0x80
        return UInt8((product + (product >> 8)) >> 8)
      }
      return [
        times(row[start + 4 * x + 2]), times(row[start + 4 * x + 1]), times(row[start + 4 * x]),
        UInt8(alpha),
      ]
    }
  }

  static let formats: [PNGPixelFormat] = [
    .gray1, .gray8, .rgb8, .rgba8,
    .palette1(Color(red: 200, green: 30, blue: 60), Color(red: 250, green: 240, blue: 10)),
  ]

  @Test(
    "every pixel format, both filters: libpng (through cairo) and a Python decoder of its own read back the rows given",
    arguments: formats, [PNGRowFilter.unfiltered, .up])
  func roundTrip(format: PNGPixelFormat, filter: PNGRowFilter) throws {
    // 13 × 7: 1-bit rows end in 3 padding bits; a pHYs and two tEXt chunks as thumbnails carry.
    let (width, height) = (13, 7)
    let pixels = Self.rows(format, width: width, height: height)
    let png = try PNGEncoder.encode(
      width: width, height: height, format: format, pixels: pixels, dpi: 300,
      text: [("Thumb::URI", "file:///tmp/a.pdf"), ("Software", "Imprint")], filter: filter)
    #expect(
      try PNGEncoder.encode(
        width: width, height: height, format: format, pixels: pixels, dpi: 300,
        text: [("Thumb::URI", "file:///tmp/a.pdf"), ("Software", "Imprint")], filter: filter)
        == png, "the same rows give the same bytes")
    let report = try independentlyDecoded(png)
    let palette = format.colorType == 3 ? ["PLTE"] : []
    let chunks = ["IHDR"] + palette + ["pHYs", "tEXt", "tEXt", "IDAT", "IEND"]
    #expect(report.first == chunks.joined(separator: " "))
    #expect(report.dropFirst().first == "13 7 \(format.bitDepth) \(format.colorType)")
    let stride = format.rowBytes(width: width)
    let rows = (0..<height).map { y in
      pixels[(y * stride)..<((y + 1) * stride)].map { String(format: "%02x", $0) }.joined()
    }
    #expect(Array(report.dropFirst(2)) == rows)
    #expect(pngHeader(png)?.pixelsPerMetre == 11811)
    let text = String(decoding: png, as: UTF8.self)
    #expect(text.contains("tEXtThumb::URI\0file:///tmp/a.pdf"))

    let bitmap = try ImageDecoder.decode(png, source: "encoded.png")
    #expect(bitmap.width == width && bitmap.height == height)
    var expected: [UInt8] = []
    for y in 0..<height {
      for x in 0..<width {
        expected += Self.expectedBGRA(format, row: pixels[(y * stride)..<((y + 1) * stride)], x: x)
      }
    }
    #expect(bitmap.pixels == expected)
  }

  /// A drawing as a card is one: a background, a band across, a framed box and a run of
  /// vertical stripes, `width` × `height` RGB.
  static func drawing(width: Int, height: Int) -> [UInt8] {
    var pixels: [UInt8] = []
    pixels.reserveCapacity(width * height * 3)
    for y in 0..<height {
      for x in 0..<width {
        let color: [UInt8] =
          y < height / 5
          ? [31, 79, 140]
          : (x > width / 10 && x < width / 3 && y > height / 3 && y < height * 3 / 4)
            ? (x == width / 10 + 1 || y == height / 3 + 1 ? [20, 20, 20] : [200, 180, 230])
            : y > height * 4 / 5 ? [UInt8(x % 7 * 30), 90, UInt8(x % 3 * 80)] : [255, 255, 255]
        pixels += color
      }
    }
    return pixels
  }

  @Test(
    "our deflater for flat drawings: every format, long runs, rows past deflate's window, noise and many blocks read back by both decoders"
  )
  func runsDeflater() throws {
    var state: UInt64 = 88_172_645_463_325_252
    func noise(_ count: Int) -> [UInt8] {
      (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 32)
      }
    }
    var cases: [(name: String, format: PNGPixelFormat, width: Int, height: Int, pixels: [UInt8])] =
      Self.formats.map { format in
        ("\(format) 13 × 7", format, 13, 7, Self.rows(format, width: 13, height: 7))
      }
    cases += [
      ("one pixel", .gray8, 1, 1, [42]),
      // Runs far longer than deflate's longest match (258), rows repeating.
      ("drawing", .rgb8, 600, 300, Self.drawing(width: 600, height: 300)),
      // 33 001 bytes a row: the row above is past deflate's 32 768-byte window.
      ("wide", .rgb8, 11_000, 6, Self.drawing(width: 11_000, height: 6)),
      ("noise", .rgb8, 256, 256, noise(256 * 256 * 3)),
      // Over 16 384 tokens: several blocks, each with its own codes.
      ("blocks", .gray8, 700, 300, Self.rows(.gray8, width: 700, height: 300)),
      ("alpha drawing", .rgba8, 90, 40, Self.drawing(width: 120, height: 40)),
    ]
    for test in cases {
      for filter in [PNGRowFilter.unfiltered, .up] {
        func encode(_ deflater: PNGDeflater) throws -> [UInt8] {
          try PNGEncoder.encode(
            width: test.width, height: test.height, format: test.format, pixels: test.pixels,
            filter: filter, deflater: deflater)
        }
        let png = try encode(.runs)
        #expect(try encode(.runs) == png, "\(test.name): the same rows give the same bytes")
        let report = try independentlyDecoded(png)
        let stride = test.format.rowBytes(width: test.width)
        let rows = (0..<test.height).map { y in
          test.pixels[(y * stride)..<((y + 1) * stride)].map { String(format: "%02x", $0) }
            .joined()
        }
        #expect(Array(report.dropFirst(2)) == rows, "\(test.name), \(filter)")
        let zlib = try ImageDecoder.decode(try encode(.zlib), source: "zlib.png")
        #expect(
          try ImageDecoder.decode(png, source: "runs.png").pixels == zlib.pixels,
          "\(test.name), \(filter)")
        if test.name == "drawing" {
          // 540 000 bytes of rows in a few kilobytes, as zlib does (measured: about 2 kB).
          #expect(png.count < 8_000, "\(png.count) bytes")
        }
        if test.name == "noise" {
          // Stored: the rows and little more (5 bytes a 65 535-byte block, the file's chunks).
          #expect(png.count < stride * test.height + test.height + 200, "\(png.count) bytes")
        }
      }
    }
  }

  @Test(
    "our deflater reading cairo's pixels a window of rows at a time gives the bytes it gives the rows made first"
  )
  func runsDeflaterFromPixels() throws {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt32 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return UInt32(truncatingIfNeeded: state >> 16)
    }
    // name, size, and the pixel at (x, y) as 0xRRGGBB (the top byte is left as it comes, as
    // cairo may: it must not count).
    let cases: [(name: String, width: Int, height: Int, pixel: (Int, Int) -> UInt32)] = [
      ("one pixel", 1, 1, { _, _ in 0x1F4F8C }),
      // Rows shorter than a match: a match spans many of them.
      ("narrow", 3, 400, { x, y in y % 50 < 30 ? 0xFFFFFF : UInt32(x * 40) }),
      ("tall line", 1, 3000, { _, y in y < 1500 ? 0 : 0x202020 }),
      // Black: a run at the pixel before goes on through each row's filter byte.
      ("black", 200, 200, { _, _ in 0 }),
      (
        "drawing", 1086, 713,
        { x, y in
          y < 170 ? 0x1F4F8C : (x / 7 + y / 5) % 23 == 0 ? UInt32(x * y) & 0xFFFFFF : 0xFFFFFF
        }
      ),
      // Noise: stored blocks, their bytes made again once the window has moved on.
      ("noise", 700, 300, { _, _ in next() & 0xFFFFFF }),
      ("noise, then flat", 500, 500, { _, y in y < 250 ? next() & 0xFFFFFF : 0xEEF1F6 }),
      // 33 001 bytes a row: the row above is past deflate's window.
      ("wide", 11_000, 5, { x, _ in x % 300 < 150 ? 0xFFFFFF : 0x00FF00 }),
      ("grey", 640, 480, { x, y in UInt32((x ^ y) & 0xFF) * 0x010101 }),
    ]
    for test in cases {
      let image = try RasterImage(width: test.width, height: test.height)
      image.withMutablePixels { pixels, stride in
        for y in 0..<test.height {
          for x in 0..<test.width {
            pixels[y * stride / 4 + x] = test.pixel(x, y) | (next() & 0xFF00_0000)
          }
        }
      }
      let png = try image.png(filter: .unfiltered, deflater: .runs)
      let gray = image.grayPixels()
      let rowsFirst = try PNGEncoder.encode(
        width: test.width, height: test.height, format: gray == nil ? .rgb8 : .gray8,
        pixels: gray ?? image.rgbPixels(), compressionLevel: 3, filter: .unfiltered,
        deflater: .runs)
      let same = png == rowsFirst  // a Bool: a failure names the sizes, not every byte
      #expect(same, "\(test.name): \(png.count) bytes, \(rowsFirst.count) made first")
      let decoded = try ImageDecoder.decode(png, source: "\(test.name).png")
      var expected: [UInt8] = []
      image.forEachRow { row in
        for pixel in row {
          expected += [
            UInt8(pixel & 0xFF), UInt8(pixel >> 8 & 0xFF), UInt8(pixel >> 16 & 0xFF), 255,
          ]
        }
      }
      #expect(decoded.pixels == expected, "\(test.name): the pixels read back")
    }
  }

  @Test("a stream longer than one IDAT chunk is split over several, read back whole")
  func manyIDATs() throws {
    // 1024 × 400 RGB of nearly incompressible bytes: about 1.2 MB deflated, over the 1 MiB a
    // chunk.
    let (width, height) = (1024, 400)
    var state: UInt64 = 88_172_645_463_325_252
    let pixels = (0..<(width * height * 3)).map { _ -> UInt8 in
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return UInt8(truncatingIfNeeded: state >> 32)
    }
    let png = try PNGEncoder.encode(
      width: width, height: height, format: .rgb8, pixels: pixels, filter: .unfiltered)
    let report = try independentlyDecoded(png)
    #expect(report.first == "IHDR IDAT IDAT IEND")
    let rows = (0..<height).map { y in
      pixels[(y * width * 3)..<((y + 1) * width * 3)].map { String(format: "%02x", $0) }.joined()
    }
    #expect(Array(report.dropFirst(2)) == rows)
    let bitmap = try ImageDecoder.decode(png, source: "noise.png")
    let (x, y) = (1000, 399)
    let at = (y * width + x) * 3
    #expect(
      Array(bitmap.pixels[((y * width + x) * 4)..<((y * width + x) * 4 + 4)])
        == [pixels[at + 2], pixels[at + 1], pixels[at], 255])
  }
}

@Suite("Fonts, text and surfaces", .liveHandlesChecked)
struct SurfaceTests {
  @Test("the bundled font library holds only the bundled and listed families")
  func families() throws {
    let fonts = try FontLibrary.bundled()
    // The Noto files of system-fonts.txt, not the other 230 fonts in their folders.
    let scripts = [
      "Arabic", "Bengali", "Devanagari", "Ethiopic", "Gujarati", "Gurmukhi", "Kannada", "Khmer",
      "Malayalam", "Myanmar", "Oriya", "Sinhala", "Tamil", "Telugu", "Thai",
    ]
    let expected =
      ["DejaVu Sans", "DejaVu Sans Mono", "Droid Sans Fallback", "Noto Serif Tibetan", "Symbola"]
      + scripts.map { "Noto Sans \($0)" }
    #expect(fonts.families == expected.sorted())
    #expect(
      fonts.fallbackFamilies == [
        "DejaVu Sans", "Noto Sans Arabic", "Droid Sans Fallback", "Symbola",
      ])
  }

  @Test("every font is drawn with a FreeType face of its own, which cairo never closes")
  func pinnedFaces() throws {
    // cairo closes faces it opened itself past ten, racing threads that are drawing with them
    // (FontLibrary.pinFaces): the bundle has more than ten fonts, so none may be left to it.
    let fonts = try FontLibrary.bundled()
    #expect(fonts.families.count > 10)
    #expect(fonts.filesWithoutOwnFace == [])
  }

  @Test("measures text, wraps it, and counts glyphs no bundled font covers")
  func measures() throws {
    let document = try VectorDocument(format: .pdf, size: Size(width: 200, height: 100))
    try document.page(size: Size(width: 200, height: 100)) { canvas in
      let style = TextStyle(family: "DejaVu Sans Mono", size: 10)
      let one = try canvas.measure("0123456789", style: style)
      // DejaVu Sans Mono advances 0.602 em: ten characters at 10 pt are 60.2 pt.
      #expect(abs(one.width - 60.2) < 0.2)
      #expect(one.lineCount == 1 && one.unknownGlyphs == 0)
      let wrapped = try canvas.measure("0123 4567 89", style: style, width: 30)
      #expect(wrapped.lineCount == 3)
      for covered in [
        "한국어", "日本語", "中文", "مرحبا", "שלום", "😀👍🏽", "नमस्ते", "ශ්‍රී", "አበበ", "สมศักดิ์", "ٹوانے",
      ] {
        #expect(try canvas.measure(covered, style: style).unknownGlyphs == 0, "\(covered)")
      }
      // No loaded font has Cherokee: each character is counted, never silently boxed.
      #expect(try canvas.measure("ᏣᎳᎩ", style: style).unknownGlyphs == 3)
    }
    _ = try document.finish()
  }

  @Test("text shaped on another thread draws the PDF Pango draws, in every direction and script")
  func shapedElsewhere() throws {
    // A size no other test uses, so that the shared cache holds none of these blocks yet.
    func style(_ alignment: TextAlignment) -> TextStyle {
      TextStyle(family: "DejaVu Sans", weight: 700, size: 9.37, alignment: alignment)
    }
    let blocks = [
      TextBlock("Nora Scott", style: style(.left)),
      TextBlock("محمد بن عبد الله", style: style(.natural), width: 150, direction: .fromText),
      TextBlock("Ana — آنا — アナ", style: style(.right), width: 150, maxLines: 1, ellipsis: .end),
      TextBlock("张伟 (Zhāng Wěi) 김민준 🚀 ✨", style: style(.center), width: 150),
      TextBlock(
        "Evangeline Alexandra Marigold Montgomery-Whitfield-Featherstonehaugh",
        style: style(.left), width: 120, maxLines: 2, ellipsis: .end),
      TextBlock("ᏣᎳᎩ e\u{301}", style: style(.left)),
    ]
    let size = Size(width: 200, height: 300)
    func make() throws -> [UInt8] {
      let document = try VectorDocument(format: .pdf, size: size, labelForms: false)
      try document.page(size: size) { canvas in
        for (index, block) in blocks.enumerated() {
          try canvas.draw(block, x: 10.3, y: 10.7 + Double(index) * 40)
        }
      }
      return try document.finish()
    }
    let library = try FontLibrary.bundled()
    #expect(blocks.allSatisfy { ShapedTextCache.shared.text($0, library: library) == nil })
    let byPango = try make()
    let shaped = DispatchSemaphore(value: 0)
    let thread = Thread {
      if let measurer = try? TextMeasurer() {
        for block in blocks {
          _ = measurer.measure(block)
          measurer.prepareDrawing(block)
        }
      }
      shaped.signal()
    }
    thread.start()
    shaped.wait()
    // A character no font has is drawn by Pango (a box of hex digits): never shaped ahead.
    #expect(
      blocks.map { ShapedTextCache.shared.text($0, library: library) != nil }
        == [true, true, true, true, true, false])
    #expect(try make() == byPango)
  }

  @Test("the same drawing gives the same PDF bytes, with the fixed date and embedded fonts")
  func deterministicPDF() throws {
    func make() throws -> [UInt8] {
      let size = Size(width: 100, height: 50)
      let document = try VectorDocument(
        format: .pdf, size: size, metadata: DocumentMetadata(title: "@harbor-lamp"))
      try document.page(size: size) { canvas in
        canvas.fill(Rect(x: 10, y: 10, width: 20, height: 20), color: .black)
        try canvas.drawText(
          "Imprint", style: TextStyle(family: "DejaVu Sans", size: 12), x: 40, y: 10)
      }
      return try document.finish()
    }
    let first = try make()
    #expect(first == (try make()))
    let folder = TemporaryFolder()
    try Data(first).write(to: URL(fileURLWithPath: folder.file("d.pdf")))
    let info = try pdfInfo(folder.file("d.pdf"))
    #expect(info["Title"] == "@harbor-lamp")
    #expect(info["Page size"] == "100 x 50 pts")
    #expect(info["CreationDate"]?.contains("2000") == true)
    let fonts = try runTool("pdffonts", [folder.file("d.pdf")])
    #expect(fonts.stdout.contains("DejaVuSans") && fonts.stdout.contains(" yes yes "))
  }

  @Test(
    "an image and a label painted several times a page: no repeated resource keys, same pixels")
  func repeatedResources() throws {
    let size = Size(width: 200, height: 100)
    var pixels: [UInt8] = []
    for index in 0..<(20 * 20) { pixels += [UInt8(index % 256), 40, 200, 255] }
    let image = Bitmap(width: 20, height: 20, pixels: pixels, hasAlpha: false)
    let label = TextBlock("Member", style: TextStyle(family: "DejaVu Sans", size: 9))
    func make(repair: Bool) throws -> [UInt8] {
      let document = try VectorDocument(format: .pdf, size: size)
      document.repairKeys = repair
      for count in [3, 2] {
        try document.page(size: size) { canvas in
          for index in 0..<count {
            try canvas.draw(
              image, in: Rect(x: 10 + Double(index) * 30, y: 10, width: 20, height: 20),
              fit: .contain)
            try canvas.drawRepeated(label, x: 10 + Double(index) * 60, y: 60)
          }
        }
      }
      return try document.finish()
    }
    let folder = TemporaryFolder()
    let raw = try make(repair: false)
    let repaired = try make(repair: true)
    try Data(raw).write(to: URL(fileURLWithPath: folder.file("raw.pdf")))
    try Data(repaired).write(to: URL(fileURLWithPath: folder.file("repaired.pdf")))
    let check = try runTool("qpdf", ["--check", folder.file("repaired.pdf")])
    #expect(check.status == 0 && !(check.stdout + check.stderr).contains("duplicated key"))
    // The cairo of this machine repeats them (the reason for the repair).
    #expect(PDFDuplicateKeys.repaired(raw) != nil)
    #expect(
      (try runTool("qpdf", ["--check", folder.file("raw.pdf")])).stderr.contains("duplicated key"))
    #expect(PDFDuplicateKeys.repaired(repaired) == nil)  // nothing left to do
    #expect(try pdfInfo(folder.file("repaired.pdf"))["Pages"] == "2")
    for page in ["1", "2"] {
      let a = try runTool("pdftoppm", ["-r", "72", "-f", page, "-l", page, folder.file("raw.pdf")])
      let b = try runTool(
        "pdftoppm", ["-r", "72", "-f", page, "-l", page, folder.file("repaired.pdf")])
      #expect(a.status == 0 && a.stdout == b.stdout)
    }
  }

  @Test("a layer drawn on every page is one form in a PDF: shapes as drawn in place, text kept")
  func layerOnce() throws {
    let size = Size(width: 200, height: 100)
    let label = TextBlock("Member", style: TextStyle(family: "DejaVu Sans", size: 9))
    // Text recorded apart is set with the recording surface's font options (as a label form
    // is), so pixels are compared on shapes only. The bounds leave room around the drawing: an
    // edge on the form's box is antialiased twice.
    func layer(_ canvas: borrowing Canvas, text: Bool) throws {
      canvas.fill(
        Rect(x: -5, y: -5, width: 150, height: 30), color: Color(red: 30, green: 78, blue: 140))
      canvas.line(from: (0, 22), to: (140, 22), width: 0.7, color: .white)
      if text { try canvas.draw(label, x: 4, y: 6) }
    }
    func make(forms: Bool, text: Bool = false) throws -> [UInt8] {
      let document = try VectorDocument(format: .pdf, size: size, layerForms: forms)
      for page in 0..<3 {
        try document.page(size: size) { canvas in
          try canvas.drawLayer(
            key: "band", bounds: Rect(x: -8, y: -8, width: 156, height: 36), x: 10, y: 10
          ) { inner in try layer(inner, text: text) }
          try canvas.drawText(
            "card \(page)", style: TextStyle(family: "DejaVu Sans", size: 9), x: 10, y: 60)
        }
      }
      return try document.finish()
    }
    let folder = TemporaryFolder()
    let recorded = try make(forms: true)
    let inPlace = try make(forms: false)
    func forms(_ bytes: [UInt8]) -> Int {
      Data(bytes).ranges(of: Data("/Subtype /Form".utf8)).count
    }
    #expect(forms(recorded) == 1 && forms(inPlace) == 0)
    try Data(recorded).write(to: URL(fileURLWithPath: folder.file("recorded.pdf")))
    try Data(inPlace).write(to: URL(fileURLWithPath: folder.file("in-place.pdf")))
    for page in ["1", "3"] {
      let a = try runTool(
        "pdftoppm", ["-r", "150", "-f", page, "-l", page, folder.file("recorded.pdf")])
      let b = try runTool(
        "pdftoppm", ["-r", "150", "-f", page, "-l", page, folder.file("in-place.pdf")])
      #expect(a.status == 0 && a.stdout == b.stdout)
    }
    let labelled = try make(forms: true, text: true)
    #expect(forms(labelled) == 1)
    try Data(labelled).write(to: URL(fileURLWithPath: folder.file("labelled.pdf")))
    let text = try runTool("pdftotext", [folder.file("labelled.pdf"), "-"]).stdout
    #expect(text.components(separatedBy: "Member").count == 4, "\(text)")
  }

  @Test("the key repair leaves damaged copies of cairo's output alone or whole, and never crashes")
  func repairDamaged() throws {
    let size = Size(width: 50, height: 50)
    let document = try VectorDocument(format: .pdf, size: size)
    document.repairKeys = false
    let label = TextBlock("ID", style: TextStyle(family: "DejaVu Sans", size: 6))
    try document.page(size: size) { canvas in
      for index in 0..<4 { try canvas.drawRepeated(label, x: Double(index) * 10, y: 0) }
    }
    let raw = try document.finish()
    #expect(PDFDuplicateKeys.repaired(raw) != nil)
    var generator = SystemRandomNumberGenerator()
    for round in 0..<300 {
      var damaged = raw
      if round % 3 == 0 {
        damaged.removeLast(Int.random(in: 1..<raw.count, using: &generator))
      } else {
        for _ in 0..<(1 + round % 5) {
          damaged[Int.random(in: 0..<raw.count, using: &generator)] = UInt8.random(
            in: 0...255, using: &generator)
        }
      }
      // Any answer but a crash; a repaired file still ends with a table and %%EOF.
      if let repaired = PDFDuplicateKeys.repaired(damaged) {
        #expect(repaired.suffix(6) == Array("%%EOF\n".utf8))
      }
    }
  }

  @Test("raster images refuse absurd sizes before allocating, with their own code")
  func rasterLimit() {
    #expect(
      throws: GraphicsError.rasterTooLarge(
        width: 100_000, height: 100_000, maximumPixels: RasterImage.maximumPixels)
    ) {
      _ = try RasterImage(width: 100_000, height: 100_000)
    }
    // Not an input image that is too large (image.tooLarge is ImageError's alone).
    #expect(
      GraphicsError.rasterTooLarge(width: 1, height: 1, maximumPixels: 1).code
        == "graphics.rasterTooLarge")
  }
}

@Suite("JPEG decoding through the setjmp shim", .liveHandlesChecked)
struct JPEGTests {
  /// A 40 × 20 JPEG made by pdftoppm from a PDF with a red left half.
  static func sampleJPEG(_ folder: TemporaryFolder) throws -> [UInt8] {
    let size = Size(width: 40, height: 20)
    let document = try VectorDocument(format: .pdf, size: size)
    try document.page(size: size) { canvas in
      canvas.fill(
        Rect(x: 0, y: 0, width: 20, height: 20), color: Color(red: 255, green: 0, blue: 0))
    }
    try Data(try document.finish()).write(to: URL(fileURLWithPath: folder.file("s.pdf")))
    let result = try runTool(
      "pdftoppm", ["-r", "72", "-jpeg", "-singlefile", folder.file("s.pdf"), folder.file("s")])
    #expect(result.status == 0)
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file("s.jpg"))))
  }

  @Test("decodes a JPEG to BGRA pixels with the right colours")
  func decodes() throws {
    let folder = TemporaryFolder()
    let bitmap = try JPEGDecoder.decode(try Self.sampleJPEG(folder), source: "s.jpg")
    #expect(bitmap.width == 40 && bitmap.height == 20)
    let left = Array(bitmap.pixels[(10 * 40 + 5) * 4..<(10 * 40 + 5) * 4 + 4])
    let right = Array(bitmap.pixels[(10 * 40 + 35) * 4..<(10 * 40 + 35) * 4 + 4])
    #expect(left[2] > 240 && left[1] < 20 && left[0] < 20 && left[3] == 255)  // B G R A: red
    #expect(right.allSatisfy { $0 > 240 })
  }

  @Test("a truncated JPEG is an error naming the file, and the process keeps running")
  func truncated() throws {
    let folder = TemporaryFolder()
    let bytes = try Self.sampleJPEG(folder)
    do {
      _ = try JPEGDecoder.decode(Array(bytes.prefix(bytes.count - 40)), source: "photo.jpg")
      Issue.record("a truncated JPEG must fail in strict mode")
    } catch {
      // The decoder's error is the image's: one code for a damaged image, whoever decodes it.
      #expect(error.code == "image.damaged")
      #expect(error.message.contains("'photo.jpg'") && error.message.contains("libjpeg:"))
    }
    #expect(throws: ImageError.self) {
      _ = try JPEGDecoder.decode(Array("<html>not a jpeg</html>".utf8), source: "x.jpg")
    }
    // Lenient mode decodes what is there (a grey bottom) instead of failing.
    let lenient = try JPEGDecoder.decode(
      Array(bytes.prefix(bytes.count - 40)), source: "photo.jpg", strict: false)
    #expect(lenient.width == 40)
  }
}

@Suite("The shared image cache", .liveHandlesChecked)
struct ImageCacheTests {
  static func image(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixturesFolder + "/Images/\(name)")))
  }

  @Test("the same bytes decode once; other bytes are another entry")
  func decodesOnce() throws {
    let cache = ImageCache(capacity: 16 << 20)
    let bytes = try Self.image("alpha.png")
    let first = try cache.decode(bytes, source: "a.png")
    let second = try cache.decode(bytes, source: "copy-of-a.png")
    #expect(first.id != nil && first.id == second.id)
    #expect(first.bitmap == (try ImageDecoder.decode(bytes, source: "a.png")))
    let other = try cache.decode(try Self.image("progressive.jpg"), source: "p.jpg")
    #expect(other.id != nil && other.id != first.id)
    #expect(cache.statistics.hits == 1 && cache.statistics.misses == 2)
  }

  @Test("prepared versions equal the uncached ones, JPEG data included")
  func preparedMatches() throws {
    let cache = ImageCache(capacity: 16 << 20)
    let decoded = try cache.decode(try Self.image("progressive.jpg"), source: "p.jpg")
    let direct = try decoded.bitmap.prepared(forWidth: 50, height: 30, fit: .cover).withJPEG()
    let cached = try cache.prepared(
      decoded.bitmap, id: decoded.id, width: 50, height: 30, fit: .cover, jpeg: true)
    let again = try cache.prepared(
      decoded.bitmap, id: decoded.id, width: 50, height: 30, fit: .cover, jpeg: true)
    #expect(cached == direct && again == direct && cached.jpeg != nil)
    let contained = try cache.prepared(
      decoded.bitmap, id: decoded.id, width: 50, height: 30, fit: .contain, jpeg: false)
    #expect(contained == decoded.bitmap.prepared(forWidth: 50, height: 30, fit: .contain))
  }

  @Test("memory stays within the capacity; failures and oversized images are not kept")
  func bounded() throws {
    let bytes = try Self.image("alpha.png")
    let size = try ImageDecoder.decode(bytes, source: "a.png").pixels.count + bytes.count
    let small = ImageCache(capacity: size * 4 + 64)
    #expect(try small.decode(bytes, source: "a.png").id != nil)
    let tiny = ImageCache(capacity: size)
    #expect(try tiny.decode(bytes, source: "a.png").id == nil)
    // Many distinct images through a cache that holds about two: each decode is still right.
    var distinct = bytes
    for index in 0..<6 {
      distinct = bytes + [UInt8(index)]  // trailing bytes after IEND: another key, same image
      let entry = try small.decode(distinct, source: "a\(index).png")
      #expect(entry.bitmap.width > 0 && entry.id != nil)
      #expect(small.statistics.bytes <= size * 4 + 64)
    }
    #expect(small.statistics.misses == 7)
    #expect(throws: ImageError.self) { _ = try small.decode([1, 2, 3], source: "junk") }
    #expect(throws: ImageError.self) { _ = try small.decode([1, 2, 3], source: "junk") }
  }
}
