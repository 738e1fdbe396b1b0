// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: HEIF, WebP, TIFF and GIF through `imprint card --photo`, `inspect`, `thumb`
// and `quote`: a 3-page TIFF is three pages everywhere, photos are drawn upright, and damaged or
// lying files of each format fail with their own code, exit 1 and leave no file.

import Foundation
import ImprintGraphics
import ImprintTestSupport
import Testing

@Suite("Photos and uploads in HEIF, WebP, TIFF and GIF", .liveHandlesChecked)
struct CodecCLITests {
  private static func json(_ text: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
  }

  @Test("a 3-page TIFF: inspect counts 3 A4 pages, thumb writes 3 thumbnails, quote prices 3 pages")
  func threePageTIFF() async throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let tiff = folder.file("three.tif")

    let inspect = await imprint(["inspect", "--json", "--colors", tiff])
    #expect(inspect.code == 0, "\(inspect.stderr)")
    let entry = (try Self.json(inspect.stdout)["files"] as? [[String: Any]])?.first
    let file = entry?["info"] as? [String: Any] ?? [:]
    #expect(file["type"] as? String == "tiff" && file["pages"] as? Int == 3)
    let sizes = file["pageSizes"] as? [[String: Any]] ?? []
    // 83 x 117 pixels at 10 dpi: 210.8 x 297.2 mm, A4 within 2 mm.
    #expect(sizes.map { $0["paper"] as? String } == ["A4", "A4", "A4"])
    #expect(sizes.map { $0["widthMM"] as? Double } == [210.8, 210.8, 210.8])
    let colors = file["colors"] as? [[String: Any]] ?? []
    #expect(colors.map { $0["color"] as? Bool } == [true, false, false])
    #expect(colors.map { $0["blank"] as? Bool } == [false, false, true])

    let output = TemporaryFolder()
    let thumb = await imprint(["thumb", "--pages", "all", "-o", output.path, tiff])
    #expect(thumb.code == 0, "\(thumb.stderr)")
    #expect(output.contents() == ["three-1.png", "three-2.png", "three-3.png"])
    for (name, colour) in [("three-1.png", [255, 0, 0]), ("three-2.png", [128, 128, 128])] {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output.file(name))))
      let bitmap = try ImageDecoder.decode(bytes, source: name)
      #expect(bitmap.width == 83 && bitmap.height == 117, "\(name)")
      let i = (60 * bitmap.width + 40) * 4
      #expect(
        [bitmap.pixels[i + 2], bitmap.pixels[i + 1], bitmap.pixels[i]].map { Int($0) } == colour)
    }

    // Priced by hand: 3 mono A4 impressions at 10 cents, 3 sheets of A4 at 2: 36; tax 8.875 %
    // added: 3.195, rounded half-up to 3; total 39 cents.
    try Data(
      #"{"schemaVersion":1,"store":"Copy Corner","files":[{"path":"three.tif","color":"mono","paper":"A4"}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: folder.file("order.json")))
    let quote = await imprint([
      "quote", folder.file("order.json"), "--prices", repositoryRoot + "/examples/prices-usd.json",
      "--json",
    ])
    #expect(quote.code == 0, "\(quote.stderr)")
    let priced = try Self.json(quote.stdout)
    let line = (priced["files"] as? [[String: Any]])?.first ?? [:]
    #expect(line["pages"] as? Int == 3 && line["sheets"] as? Int == 3)
    #expect((priced["subtotal"] as? [String: Any])?["minor"] as? Int == 36)
    #expect((priced["total"] as? [String: Any])?["minor"] as? Int == 39)
  }

  @Test(
    "a card's photo in HEIC, WebP, TIFF or GIF is drawn; a HEIC turned by irot equals the JPEG turned by EXIF"
  )
  func cardPhotos() async throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    // The marker as a JPEG with EXIF orientation 6, made by Pillow.
    let script = pythonFixture("exif_oriented_jpeg.py")
    #expect(try runTool("python3", ["-c", script, folder.file("o6.jpg")]).status == 0)
    var cards: [String: Bitmap] = [:]
    for photo in [
      CodecFixtures.heic(orientation: 6), folder.file("o6.jpg"), folder.file("alpha.webp"),
      folder.file("three.tif"), folder.file("anim.gif"),
    ] {
      let output = folder.file("card-\(cards.count).png")
      let run = await imprint([
        "card", harbor, "--side", "front", "--dpi", "150", "--photo", photo, "-o", output,
      ])
      #expect(run.code == 0, "\(photo): \(run.stderr)")
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
      cards[(photo as NSString).lastPathComponent] = try ImageDecoder.decode(bytes, source: output)
    }
    let heic = try #require(cards["orientation-6.heic"])
    let jpeg = try #require(cards["o6.jpg"])
    #expect(heic.width == jpeg.width && heic.height == jpeg.height)
    // Lossy codecs differ by a few levels; a photo turned another way differs by whole blocks.
    var differing = 0
    for index in Swift.stride(from: 0, to: heic.pixels.count, by: 4)
    where (0..<3).contains(where: {
      abs(Int(heic.pixels[index + $0]) - Int(jpeg.pixels[index + $0])) > 48
    }) {
      differing += 1
    }
    #expect(differing < heic.pixels.count / 4 / 1000, "\(differing) pixels differ")
    // Another photo makes another card.
    #expect(cards["anim.gif"]?.pixels != heic.pixels)
  }

  @Test(
    "truncated and lying files of each format: their own code, exit 1, no file written",
    arguments: ["heic", "webp", "tif", "gif"])
  func hostile(format: String) async throws {
    let source = TemporaryFolder()
    try CodecFixtures.make(in: source)
    let good = [UInt8](
      try Data(
        contentsOf: URL(
          fileURLWithPath: format == "heic"
            ? CodecFixtures.heic(orientation: 1)
            : source.file(
              ["webp": "alpha.webp", "tif": "three.tif", "gif": "marker.gif"][format] ?? ""))))
    let cases = [
      ("truncated", CodecFixtures.truncated(good), "image.damaged"),
      ("lying", CodecFixtures.lying(good, width: 16_000, height: 16_000), "image.tooLarge"),
    ]
    for (kind, bytes, code) in cases {
      let folder = TemporaryFolder()
      let file = folder.file("\(kind).\(format)")
      try HostileDocuments.write(bytes, to: file)
      let output = TemporaryFolder()
      // inspect decodes every page, as thumb and a card do: a picture cut short is
      // image.damaged in each, a lying header image.tooLarge.
      for command in [["thumb", "--json", "-o", output.path], ["inspect", "--json"]] {
        let run = await imprint(command + [file])
        #expect(run.code == 1, "\(command) \(kind).\(format): \(run.stderr)")
        let entry = (try Self.json(run.stdout)["files"] as? [[String: Any]])?.first ?? [:]
        let error = entry["error"] as? [String: Any] ?? [:]
        #expect(error["code"] as? String == code, "\(command) \(kind).\(format)")
        #expect((error["message"] as? String)?.contains(file) == true)
      }
      #expect(output.contents().isEmpty)
      let card = folder.file("card.pdf")
      let run = await imprint(["card", harbor, "--photo", file, "-o", card, "-v"])
      #expect(run.code == 1, "card \(kind).\(format): \(run.stderr)")
      #expect(run.stderr.contains("cause: \(code)"), "\(run.stderr)")
      #expect(folder.contents() == ["\(kind).\(format)"])
    }
  }
}
