// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: photo formats (progressive, CMYK, EXIF, alpha) and pixel goldens of cards.

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

/// The fixtures are 60 × 40: left half red, right half blue, a green 10 × 10 square top-left.
private func image(_ name: String) throws -> Bitmap {
  let bytes = [UInt8](
    try Data(contentsOf: URL(fileURLWithPath: fixturesFolder + "/Images/" + name)))
  return try ImageDecoder.decode(bytes, source: name)
}

/// The pixel at (x, y) as (red, green, blue, alpha).
private func pixel(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> (Int, Int, Int, Int) {
  let i = (y * bitmap.width + x) * 4
  return (
    Int(bitmap.pixels[i + 2]), Int(bitmap.pixels[i + 1]), Int(bitmap.pixels[i]),
    Int(bitmap.pixels[i + 3])
  )
}

private func near(_ a: (Int, Int, Int, Int), _ b: (Int, Int, Int), tolerance: Int = 40) -> Bool {
  abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
}

@Suite("Photo formats", .liveHandlesChecked)
struct PhotoFormatTests {
  @Test(
    "progressive and CMYK JPEGs decode to the right colours",
    arguments: ["progressive.jpg", "cmyk.jpg"])
  func jpegs(name: String) throws {
    let bitmap = try image(name)
    #expect(bitmap.width == 60 && bitmap.height == 40)
    #expect(near(pixel(bitmap, 3, 3), (0, 200, 0)))
    #expect(near(pixel(bitmap, 20, 30), (255, 0, 0)))
    #expect(near(pixel(bitmap, 45, 20), (0, 0, 255)))
    // CMYK files are not passed through to PDFs (they are often stored inverted).
    #expect((bitmap.jpeg == nil) == (name == "cmyk.jpg"))
  }

  @Test("a photo replaced after decoding is the one drawn, not the cached version of the first")
  func replacedPhoto() throws {
    var input = try sampleInput()  // harbor-lamp.jpg, decoded through the shared cache
    func photoItem(_ input: CardInput) throws -> Bitmap? {
      let (layouts, _) = try CardMaker.layouts(input, options: CardOptions(), forPDF: true)
      for case .photo(let bitmap, _) in layouts[0].items { return bitmap }
      return nil
    }
    let first = try #require(try photoItem(input))
    #expect(try photoItem(input) == first)  // prepared once, then from the cache
    input.photo = try image("progressive.jpg")  // red and blue halves
    let second = try #require(try photoItem(input))
    #expect(second != first)
    let decoded = try ImageDecoder.decode(second.jpeg ?? [], source: "prepared")
    #expect(near(pixel(decoded, 2, decoded.height / 2), (255, 0, 0), tolerance: 60))
  }

  @Test("EXIF orientation 6 from a camera-style file: upright, the green square top-right")
  func rotated() throws {
    let bitmap = try image("rotated.jpg")
    #expect(bitmap.width == 40 && bitmap.height == 60)
    #expect(near(pixel(bitmap, 36, 3), (0, 200, 0)))
    #expect(bitmap.jpeg == nil)  // the stored file is sideways: never embedded as it is
  }

  @Test("PNG alpha is kept, and the photo stays transparent on the card")
  func alpha() throws {
    let bitmap = try image("alpha.png")
    #expect(bitmap.hasAlpha)
    #expect(pixel(bitmap, 55, 20).3 == 0)
    #expect(pixel(bitmap, 20, 20).3 == 255)
  }
}

/// Compares a PNG with the golden `Goldens/Pixels/<name>` by decoded pixels.
///
/// At most 0.1 % of pixels may differ, each channel by at most 2. `IMPRINT_RECORD_GOLDENS=1`
/// rewrites it and fails; a mismatch writes the actual image under `.build/test-artifacts/`.
func expectPixelGolden(_ png: [UInt8], name: String) throws {
  let path = "\(repositoryRoot)/Tests/ImprintCardsTests/Goldens/Pixels/\(name)"
  if ProcessInfo.processInfo.environment["IMPRINT_RECORD_GOLDENS"] == "1" {
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(png).write(to: URL(fileURLWithPath: path))
    Issue.record("recorded new golden \(path); re-run without IMPRINT_RECORD_GOLDENS")
    return
  }
  let golden = try ImageDecoder.decode(
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), source: path)
  let actual = try ImageDecoder.decode(png, source: "actual")
  #expect(golden.width == actual.width && golden.height == actual.height)
  var different = 0
  for i in Swift.stride(from: 0, to: min(golden.pixels.count, actual.pixels.count), by: 4) {
    for c in 0..<3 where abs(Int(golden.pixels[i + c]) - Int(actual.pixels[i + c])) > 2 {
      different += 1
      break
    }
  }
  let allowed = golden.width * golden.height / 1000
  if different > allowed {
    let artifacts = "\(repositoryRoot)/.build/test-artifacts"
    try? FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
    let artifact = "\(artifacts)/\(name)"
    try? Data(png).write(to: URL(fileURLWithPath: artifact))
    Issue.record("\(different) pixels differ (allowed \(allowed)); actual written to \(artifact)")
  }
}

@Suite("Pixel goldens", .tags(.golden), .liveHandlesChecked)
struct PixelGoldenTests {
  @Test(
    "each design's front at 100 dpi matches its golden image", arguments: ["classic", "midnight"])
  func front(design: String) throws {
    var options = CardOptions()
    options.dpi = 100
    let card = try CardMaker.png(try sampleInput(template: design), face: .front, options: options)
    try expectPixelGolden(card.bytes, name: "\(design)-front-100dpi.png")
  }

  /// Looked at when recorded: labels in the language, the date as it writes it, Arabic mirrored.
  @Test(
    "one card in five languages matches its golden share image (front and back)",
    arguments: ["ko", "hi", "ar", "es", "ja"])
  func locales(locale: String) throws {
    var options = CardOptions()
    options.locale = locale
    let input = try sampleInput()
    let label = try classicStrings(
      try CardLocale.resolve(locale, template: input.template).language)
    guard try FontLibrary.bundled().uncoveredCharacters(in: label["REPUTATION"] ?? "").isEmpty
    else {
      // Hindi waits for its fonts: until they are bundled the card fails rather than print boxes.
      #expect(throws: CardError.self) { _ = try CardMaker.share(input, options: options) }
      return
    }
    try expectPixelGolden(
      try CardMaker.share(input, options: options).bytes, name: "classic-share-\(locale).png")
  }
}
