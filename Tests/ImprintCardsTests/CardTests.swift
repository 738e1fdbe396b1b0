// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: templates, layout goldens, PDF/PNG read back with poppler and zbar.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintCards

let samples = repositoryRoot + "/assets/samples"
let templates = repositoryRoot + "/templates"

func sampleInput(
  _ name: String = "harbor-lamp", template: String = "classic", photo: String? = "harbor-lamp.jpg",
  follow: Bool = true
) throws -> CardInput {
  let bytes = [UInt8](
    try Data(contentsOf: URL(fileURLWithPath: "\(samples)/profiles/\(name).json")))
  var counts: FollowCounts?
  if follow {
    let data = try Data(contentsOf: URL(fileURLWithPath: "\(samples)/profiles/\(name).follow.json"))
    counts = try Profile.parseFollowCounts([UInt8](data), source: "follow")
  }
  let profile = try Profile.parse(bytes, source: "\(name).json", follow: counts)
  let placeholderPath = repositoryRoot + "/assets/placeholder-photo.png"
  let placeholder = [UInt8](try Data(contentsOf: URL(fileURLWithPath: placeholderPath)))
  let photoBytes = try photo.map { name in
    ([UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(samples)/photos/\(name)"))), name)
  }
  return try CardInput(
    profile: profile, template: try CardTemplate.load(template, folder: templates),
    photo: photoBytes, placeholder: (placeholder, placeholderPath))
}

@Suite("Templates", .liveHandlesChecked)
struct TemplateTests {
  @Test("placeholders are filled in one pass: a value holding {name} is not expanded again")
  func fillOnce() {
    let fields = ["name": "{email}", "email": "a@b.c", "handle": "@x"]
    #expect(fill("{name} / {handle}", with: fields) == "{email} / @x")
    #expect(fill("Member {handle}!", with: fields) == "Member @x!")
    #expect(fill("no fields", with: fields) == "no fields")
    #expect(fill("{missing} here", with: fields) == nil)
    #expect(fill("{unclosed", with: fields) == "{unclosed")
  }

  @Test("the three shipped designs load", arguments: ["classic", "midnight", "moderator"])
  func shipped(name: String) throws {
    let template = try CardTemplate.load(name, folder: templates)
    #expect(template.width == 85.6 && template.height == 53.98 && template.bleed == 3.175)
    #expect(!template.description.isEmpty)
    // Every back shows the QR code.
    #expect(template.back.elements.contains { if case .qr = $0 { true } else { false } })
  }

  static func variant(_ edit: (inout [String: Any]) -> Void) throws -> [UInt8] {
    let data = try Data(contentsOf: URL(fileURLWithPath: templates + "/classic.json"))
    var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    edit(&object)
    return [UInt8](try JSONSerialization.data(withJSONObject: object))
  }

  static func editElement(
    _ index: Int, _ object: inout [String: Any], _ change: (inout [String: Any]) -> Void
  ) {
    var front = object["front"] as? [String: Any] ?? [:]
    var elements = front["elements"] as? [[String: Any]] ?? []
    change(&elements[index])
    front["elements"] = elements
    object["front"] = front
  }

  @Test(
    "invalid templates are refused naming the template and the key",
    arguments: [
      ("unknown top key", "'colour' is not a known key"),
      ("wrong type", "'front.elements[4].size' must be a number"),
      ("unknown element", "'front.elements[0].type' is 'circle'; expected text"),
      ("missing asset", "'front.elements[0].src' refers to 'logo.png', which does not exist"),
      ("outside safe zone", "'front.elements[4]' lies outside the safe zone"),
      ("unknown field", "names the unknown field 'nickname'"),
      ("schema version", "'schemaVersion' must be 1"),
    ])
  func invalid(kind: String, message: String) throws {
    let bytes = try Self.variant { object in
      switch kind {
      case "unknown top key": object["colour"] = "red"
      case "wrong type": Self.editElement(4, &object) { $0["size"] = "big" }
      case "unknown element": Self.editElement(0, &object) { $0["type"] = "circle" }
      case "missing asset":
        Self.editElement(0, &object) {
          $0 = ["type": "image", "x": 1, "y": 1, "width": 5, "height": 5, "src": "logo.png"]
        }
      case "outside safe zone": Self.editElement(4, &object) { $0["x"] = 1 }
      case "unknown field": Self.editElement(4, &object) { $0["field"] = "nickname" }
      default: object["schemaVersion"] = 2
      }
    }
    do {
      _ = try CardTemplate.parse(bytes, name: "badge.json", folder: templates)
      Issue.record("\(kind) must be refused")
    } catch {
      #expect(error.message.hasPrefix("template 'badge.json': "))
      #expect(error.message.contains(message), "\(error.message)")
    }
  }

  @Test("an unknown template name lists the shipped ones")
  func unknownName() {
    #expect(
      throws: CardError.templateNotFound(
        name: "fancy", available: ["classic", "midnight", "moderator"])
    ) {
      _ = try CardTemplate.load("fancy", folder: templates)
    }
  }
}

@Suite("Card layout and rendering", .liveHandlesChecked)
struct CardRenderTests {
  @Test("layout golden: boxes, texts and fitted sizes of the classic design", .tags(.golden))
  func layoutGolden() throws {
    let (layouts, warnings) = try CardMaker.layouts(try sampleInput(), options: CardOptions())
    #expect(warnings.isEmpty)
    let dump = JSONOutput.pretty(layouts.map(\.summary))
    let mismatch = goldenMismatch(
      dump, module: "ImprintCardsTests", name: "Layout/classic-harbor-lamp.json")
    #expect(mismatch == nil, "\(mismatch ?? "")")
  }

  @Test("long names shrink, then wrap, then are cut — never leaving their box")
  func fitting() throws {
    var input = try sampleInput()
    let pt = 72 / 25.4
    for name in [
      "Mara", "Mara Lindqvist-Konstantinopoulou", String(repeating: "Wolfeschlegel ", count: 8),
    ] {
      input.profile.displayName = name
      let (layouts, _) = try CardMaker.layouts(input, options: CardOptions())
      for case .text(let block, let box, let top, let metrics, _) in layouts[0].items
      where block.text == name || metrics.isEllipsized {
        #expect(block.style.size >= 8 && block.style.size <= 15)
        #expect(metrics.width <= box.width * pt + 0.05)
        #expect(top >= box.y && (top * pt + metrics.height) <= (box.y + box.height) * pt + 0.05)
        #expect(metrics.lineCount <= 3)
      }
    }
  }

  @Test(
    "PDF: page size trim + 2 × bleed, fonts embedded, text extractable and inside the safe zone")
  func pdfReadBack() throws {
    let folder = TemporaryFolder()
    let card = try CardMaker.pdf(try sampleInput(), options: CardOptions())
    let path = folder.file("card.pdf")
    try Data(card.bytes).write(to: URL(fileURLWithPath: path))
    let info = try pdfInfo(path)
    #expect(info["Pages"] == "2")
    #expect(info["Title"] == "@harbor-lamp")
    let size = (info["Page size"] ?? "").split(separator: " ").compactMap { Double($0) }
    #expect(abs(size[0] / 72 * 25.4 - (85.6 + 2 * 3.175)) < 0.01)
    #expect(abs(size[1] / 72 * 25.4 - (53.98 + 2 * 3.175)) < 0.01)
    let fonts = try runTool("pdffonts", [path]).stdout.split(separator: "\n").dropFirst(2)
    #expect(!fonts.isEmpty && fonts.allSatisfy { $0.contains(" yes yes ") })
    let text = try runTool("pdftotext", [path, "-"]).stdout
    for expected in ["Mara Lindqvist", "@harbor-lamp", "Joined March 2017", "2,381", "69"] {
      #expect(text.contains(expected), "\(expected)")
    }
    // Every word inside the safe zone: 3.2 mm inside the trim, which starts at the bleed.
    let k = 72 / 25.4
    let low = (3.175 + 3.2) * k - 0.5
    let right = (3.175 + 85.6 - 3.2) * k + 0.5
    let bottom = (3.175 + 53.98 - 3.2) * k + 0.5
    for page in try pdfWords(path) {
      #expect(!page.isEmpty)
      for word in page {
        #expect(
          word.xMin >= low && word.yMin >= low && word.xMax <= right && word.yMax <= bottom,
          "\(word)")
      }
    }
  }

  @Test("the same input gives the same PDF bytes")
  func deterministic() throws {
    let a = try CardMaker.pdf(try sampleInput(), options: CardOptions())
    let b = try CardMaker.pdf(try sampleInput(), options: CardOptions())
    #expect(a.bytes == b.bytes)
  }

  @Test("a one-card PDF draws its labels in place (no forms), still as text; many cards share")
  func labelsInPlace() throws {
    let folder = TemporaryFolder()
    let input = try sampleInput()
    func forms(_ bytes: [UInt8]) -> Int {
      Data(bytes).ranges(of: Data("/Subtype /Form".utf8)).count
    }
    let one = try CardMaker.pdf(input, options: CardOptions())
    #expect(forms(one.bytes) == 0)
    let path = folder.file("one.pdf")
    try Data(one.bytes).write(to: URL(fileURLWithPath: path))
    #expect(try pdfInfo(path)["Pages"] == "2")
    let text = try runTool("pdftotext", [path, "-"]).stdout
    #expect(text.contains("IDENTITY CARD") && text.contains("REPUTATION"), "\(text)")
    // A file of several cards writes what the design shows on every card (background, band,
    // labels) once a side, as a form every page refers to: no more forms for more cards.
    let card = try CardMaker.prepare(input, options: CardOptions())
    func file(of count: Int) throws -> [UInt8] {
      var writer = try CardPDFWriter(
        template: input.template, options: CardOptions(), title: "all")
      for _ in 0..<count { try writer.add(card) }
      return try writer.finish()
    }
    let many = try file(of: 3)
    #expect(forms(many) >= 2 && forms(many) <= 12)
    #expect(forms(many) == forms(try file(of: 1)))
    let manyPath = folder.file("many.pdf")
    try Data(many).write(to: URL(fileURLWithPath: manyPath))
    let manyText = try runTool("pdftotext", [manyPath, "-"]).stdout
    #expect(manyText.components(separatedBy: "IDENTITY CARD").count == 4, "\(manyText)")
  }

  @Test("300-dpi PNG: 1086 × 713 pixels with bleed, DPI stored, the QR decodes")
  func png() throws {
    let folder = TemporaryFolder()
    let back = try CardMaker.png(try sampleInput(), face: .back, options: CardOptions())
    let header = try #require(pngHeader(back.bytes))
    #expect(header.width == 1086 && header.height == 713)
    #expect(header.pixelsPerMetre == 11811)
    let path = folder.file("back.png")
    try Data(back.bytes).write(to: URL(fileURLWithPath: path))
    #expect(try zbarDecode(path) == "https://steemit.com/@harbor-lamp")
    var trim = CardOptions()
    trim.bleed = 0
    let front = try CardMaker.png(try sampleInput(), face: .front, options: trim)
    #expect(pngHeader(front.bytes)?.width == 1011 && pngHeader(front.bytes)?.height == 638)
  }

  @Test(
    "a card PNG drawn over pixels its background paints without making them white first: the same bytes"
  )
  func backgroundPaintsFirst() throws {
    // Debug builds leave those pixels magenta (RasterImage): any the card did not paint in
    // full would show. 300 dpi with the standard bleed covers the last row in part.
    for template in CardTemplate.shippedNames {
      let input = try sampleInput(template: template)
      for (dpi, bleed) in [(300.0, nil), (72, nil), (150, 0), (600, 2.5), (96, 1.1)]
        as [(Double, Double?)]
      {
        var options = CardOptions()
        options.dpi = dpi
        options.bleed = bleed
        for face in [CardFace.front, .back] {
          let drawn = try CardMaker.png(input, face: face, options: options).bytes
          let whiteFirst = try CardMaker.$whiteFirstEverywhere.withValue(true) {
            try CardMaker.png(input, face: face, options: options).bytes
          }
          let same = drawn == whiteFirst  // a Bool: a failure does not list every byte
          #expect(same, "\(template), \(face), \(dpi) dpi, bleed \(String(describing: bleed))")
        }
      }
    }
  }

  @Test("crop marks grow the page and sit outside the bleed")
  func cropMarks() throws {
    var options = CardOptions()
    options.cropMarks = true
    let size = CardMaker.pageSize(try sampleInput().template, options: options)
    #expect(
      abs(size.width / 72 * 25.4 - (85.6 + 2 * 3.175 + 2 * CardOptions.cropMarkMargin)) < 0.01)
    _ = try CardMaker.pdf(try sampleInput(), options: options)
  }

  @Test("the share image is 1200 × 630")
  func share() throws {
    let image = try CardMaker.share(try sampleInput(template: "midnight"), options: CardOptions())
    #expect(pngHeader(image.bytes)?.width == 1200 && pngHeader(image.bytes)?.height == 630)
  }

  @Test(
    "every script renders with the bundled and fallback fonts",
    arguments: ["sora-park", "layla-h", "kenji.hive"])
  func scripts(name: String) throws {
    let folder = TemporaryFolder()
    let input = try sampleInput(name, photo: nil, follow: false)
    let card = try CardMaker.pdf(input, options: CardOptions())
    let path = folder.file("c.pdf")
    try Data(card.bytes).write(to: URL(fileURLWithPath: path))
    let text = try runTool("pdftotext", [path, "-"]).stdout
    let name = input.profile.displayName.split(separator: " ").first.map(String.init) ?? ""
    #expect(text.contains(name), "\(name) in \(text)")
  }

  @Test("a character no font covers fails the card, or warns when allowed")
  func missingGlyphs() throws {
    var input = try sampleInput()
    input.profile.displayName = "ᏣᎳᎩ Mara"
    do {
      _ = try CardMaker.pdf(input, options: CardOptions())
      Issue.record("Cherokee has no font here and must be reported")
    } catch let error as CardError {
      #expect(error.code == "card.missingGlyphs")
      #expect(error.message.contains("ᏣᎳᎩ Mara"))
      #expect(error.message.contains("U+13E3 (Cherokee)"), "\(error.message)")
    }
    var allowed = CardOptions()
    allowed.allowMissingGlyphs = true
    let card = try CardMaker.pdf(input, options: allowed)
    #expect(card.warnings.contains { $0.contains("no bundled font can draw") })
  }

  @Test("a truncated or bogus photo is an error naming the file")
  func badPhoto() throws {
    let profile = try sampleInput().profile
    let template = try CardTemplate.load("classic", folder: templates)
    let jpeg = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: samples + "/photos/harbor-lamp.jpg")))
    for (bytes, name) in [
      (Array(jpeg.prefix(jpeg.count / 2)), "cut.jpg"), (Array("GIF89a".utf8), "x.gif"),
      ([], "empty.png"),
    ] {
      do {
        _ = try CardInput(
          profile: profile, template: template, photo: (bytes, name), placeholder: ([], ""))
        Issue.record("\(name) must be refused")
      } catch let error as CardError {
        #expect(error.code == "card.photo")
        #expect(error.message.contains("'\(name)'"))
      }
    }
  }

  @Test("EXIF orientation 6 turns a JPEG upright (width and height swap)")
  func exifOrientation() throws {
    let jpeg = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: samples + "/photos/harbor-lamp.jpg")))
    let plain = try ImageDecoder.decode(jpeg, source: "a.jpg")
    // APP1 "Exif\0\0" + big-endian TIFF with one IFD entry: Orientation (0x0112) = 6.
    let tiff: [UInt8] = [
      0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0,
      0,
    ]
    let payload = Array("Exif".utf8) + [0, 0] + tiff
    let segment: [UInt8] =
      [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    let rotated = Array(jpeg.prefix(2)) + segment + Array(jpeg.dropFirst(2))
    #expect(ImageDecoder.exifOrientation(rotated) == 6)
    let upright = try ImageDecoder.decode(rotated, source: "r.jpg")
    #expect(upright.width == plain.height && upright.height == plain.width)
    // The stored top-left pixel lands at the top-right after a clockwise turn.
    #expect(
      Array(upright.pixels[((upright.width - 1) * 4)..<(upright.width * 4)])
        == Array(plain.pixels[0..<4]))
  }

  @Test("many cards render concurrently, each identical to a sequential render")
  func concurrent() async throws {
    let input = try sampleInput()
    let reference = try CardMaker.pdf(input, options: CardOptions()).bytes
    try await withThrowingTaskGroup(of: [UInt8].self) { group in
      for _ in 0..<8 { group.addTask { try CardMaker.pdf(input, options: CardOptions()).bytes } }
      for try await bytes in group { #expect(bytes == reference) }
    }
  }
}

extension Tag {
  @Tag static var golden: Self
}
