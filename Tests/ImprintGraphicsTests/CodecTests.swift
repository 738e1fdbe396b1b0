// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: HEIF (each rotation and mirror), WebP (alpha, animation), TIFF (pages)
// and GIF (first frame) decoded to the pixels their pictures were made of; damaged and lying
// files refused with their own code.

import Foundation
import ImprintGraphics
import ImprintTestSupport
import Testing

/// The pixel at (x, y) as (red, green, blue, alpha), alpha premultiplied as stored.
private func rgba(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [Int] {
  let i = (y * bitmap.width + x) * 4
  return [bitmap.pixels[i + 2], bitmap.pixels[i + 1], bitmap.pixels[i], bitmap.pixels[i + 3]].map {
    Int($0)
  }
}

private func near(_ a: [Int], _ b: [Int], tolerance: Int = 30) -> Bool {
  zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
}

/// The corner whose 4 × 4 pixels are red, if exactly one is; white elsewhere.
private func redCorner(_ bitmap: Bitmap) -> CodecFixtures.Corner? {
  let w = bitmap.width
  let h = bitmap.height
  let corners: [(CodecFixtures.Corner, Int, Int)] = [
    (.topLeft, 1, 1), (.topRight, w - 3, 1), (.bottomLeft, 1, h - 3), (.bottomRight, w - 3, h - 3),
  ]
  let red = corners.filter { _, x, y in near(rgba(bitmap, x, y), [255, 0, 0, 255]) }
  let white = corners.filter { _, x, y in near(rgba(bitmap, x, y), [255, 255, 255, 255]) }
  guard red.count == 1, white.count == 3 else { return nil }
  return red[0].0
}

private func read(_ path: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

@Suite("Photos in HEIF, WebP, TIFF and GIF", .liveHandlesChecked)
struct CodecTests {
  @Test(
    "a HEIC with each rotation and mirror decodes upright, the EXIF orientation not applied again",
    arguments: 1...8)
  func heicOrientation(orientation: Int) throws {
    let path = CodecFixtures.heic(orientation: orientation)
    let bytes = try read(path)
    #expect(ImageType(sniffing: bytes) == .heif)
    let expected = CodecFixtures.markerCorner(orientation: orientation)
    let bitmap = try ImageDecoder.decode(bytes, source: "IMG_0042.HEIC")
    #expect(bitmap.width == expected.width && bitmap.height == expected.height)
    #expect(redCorner(bitmap) == expected.corner, "orientation \(orientation)")
    let header = try ImageDecoder.header(bytes, source: "IMG_0042.HEIC")
    #expect(header.width == expected.width && header.height == expected.height)
    // libheif's own tool, from Debian, agrees (it applies the same transformations).
    let folder = TemporaryFolder()
    let reference = folder.file("reference.png")
    let converted = try runTool("heif-convert", [path, reference])
    #expect(converted.status == 0, "\(converted.stderr)")
    let png = try ImageDecoder.decode(try read(reference), source: "reference.png")
    #expect(png.width == bitmap.width && png.height == bitmap.height)
    #expect(redCorner(png) == expected.corner)
  }

  @Test("a lossless WebP keeps its alpha; an animated WebP and GIF give their first frame")
  func webpAndGIF() throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let alpha = try ImageDecoder.decode(try read(folder.file("alpha.webp")), source: "a.webp")
    #expect(alpha.width == 40 && alpha.height == 20 && alpha.hasAlpha)
    #expect(rgba(alpha, 5, 10) == [255, 0, 0, 255])
    #expect(rgba(alpha, 35, 10) == [0, 0, 0, 0])
    for name in ["anim.webp", "anim.gif"] {
      let bytes = try read(folder.file(name))
      let frame = try ImageDecoder.decode(bytes, source: name)
      #expect(frame.width == 64 && frame.height == 32, "\(name)")
      #expect(redCorner(frame) == .topLeft, "\(name): the first frame, not the green second")
      #expect(!frame.hasAlpha, "\(name)")
    }
    // The files really are animations of two frames (Debian's tools say so).
    let info = try runTool("webpmux", ["-info", folder.file("anim.webp")])
    #expect(info.stdout.contains("Number of frames: 2"))
    let gif = try runTool("gifsicle", ["--info", folder.file("anim.gif")])
    #expect(gif.stdout.contains("2 images"))
  }

  @Test("a 3-page TIFF has three pages, each decoded to its own colour, and its resolution")
  func tiffPages() throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let bytes = try read(folder.file("three.tif"))
    let directories = try runTool("tiffinfo", [folder.file("three.tif")])
    #expect(directories.stdout.components(separatedBy: "TIFF Directory").count - 1 == 3)
    let pages = try ImageDecoder.pages(bytes, source: "scan.tif")
    #expect(pages.map { [$0.width, $0.height] } == Array(repeating: [83, 117], count: 3))
    #expect(pages.map(\.dpi) == [10, 10, 10])
    let colours = [[255, 0, 0, 255], [128, 128, 128, 255], [255, 255, 255, 255]]
    for (index, colour) in colours.enumerated() {
      let page = try ImageDecoder.decode(
        bytes, source: "scan.tif", page: index + 1, maximumPixels: ImageDecoder.maximumPixels)
      #expect(page.width == 83 && page.height == 117)
      #expect(rgba(page, 40, 60) == colour, "page \(index + 1)")
    }
    #expect(throws: ImageError.self) {
      _ = try ImageDecoder.decode(
        bytes, source: "scan.tif", page: 4, maximumPixels: ImageDecoder.maximumPixels)
    }
  }

  @Test(
    "truncated and lying files of each format fail with image.damaged or image.tooLarge, naming the file",
    arguments: ["heic", "webp", "tif", "gif"])
  func hostile(format: String) throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let good =
      switch format {
      case "heic": try read(CodecFixtures.heic(orientation: 1))
      case "webp": try read(folder.file("alpha.webp"))
      case "tif": try read(folder.file("three.tif"))
      default: try read(folder.file("marker.gif"))
      }
    let name = "upload.\(format)"
    func failure(_ bytes: [UInt8]) -> ImageError? {
      do {
        _ = try ImageDecoder.decode(bytes, source: name)
        return nil
      } catch {
        return error
      }
    }
    let truncated = failure(CodecFixtures.truncated(good))
    #expect(truncated?.code == "image.damaged", "\(String(describing: truncated))")
    #expect(truncated?.message.contains("'\(name)'") == true)
    // A header claiming 16 000 x 16 000 pixels (256 megapixels) over a small picture: refused
    // from the header, before anything that size is allocated.
    let lying = CodecFixtures.lying(good, width: 16_000, height: 16_000)
    let large = failure(lying)
    #expect(
      large == .tooLarge(source: name, width: 16_000, height: 16_000, maximumPixels: 50_000_000))
    #expect(throws: ImageError.self) { _ = try ImageDecoder.header(lying, source: name) }
  }

  @Test("an animated GIF cut short after its first frame still shows that frame")
  func gifCutAfterFirstFrame() throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let animation = try read(folder.file("anim.gif"))
    let cut = Array(animation.prefix(animation.count - 20))
    try Data(cut).write(to: URL(fileURLWithPath: folder.file("cut.gif")))
    // gifsicle finds the second frame (#1) short of pixels: the cut is inside it.
    let check = try runTool("gifsicle", [folder.file("cut.gif"), "-o", folder.file("out.gif")])
    #expect(check.status != 0 && check.stderr.contains("#1"), "\(check.stderr)")
    let frame = try ImageDecoder.decode(cut, source: "cut.gif")
    #expect(redCorner(frame) == .topLeft)
  }
}
