// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: the cards of several profiles made by CardRun called as a library (no CLI):
// one combined PDF, a file per card, PNG sides all or none, no output replacing an input.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintTestSupport
import Testing

@testable import ImprintCards

@Suite("CardRun", .liveHandlesChecked)
struct CardRunTests {
  let loader: CardInputLoader
  let template: CardTemplate
  let profiles = ["harbor-lamp", "sora-park", "layla-h"].map { samples + "/profiles/\($0).json" }

  init() throws {
    loader = CardInputLoader(
      placeholder: try CardInput.shippedPlaceholder(),
      decoder: DocumentSandbox(executable: imprintExecutable, workers: 2))
    template = try CardTemplate.load("classic", folder: templates)
  }

  /// A profile the lookup did not find (it fails when read).
  func missingProfile(in folder: TemporaryFolder) throws -> String {
    let path = folder.file("missing.json")
    try Data(#"{"user":"No account found","status":"404"}"#.utf8).write(
      to: URL(fileURLWithPath: path))
    return path
  }

  /// A profile whose `about`, printed on the back only, is Cherokee, which no font here draws:
  /// its front renders, its back fails with `card.missingGlyphs`.
  func backFailingProfile(in folder: TemporaryFolder) throws -> String {
    let path = folder.file("tsalagi.json")
    let metadata = #"{\"profile\":{\"name\":\"Ada Walker\",\"about\":\"ᏣᎳᎩ\",\"version\":2}}"#
    try Data(#"{"name":"tsalagi","posting_json_metadata":"\#(metadata)"}"#.utf8).write(
      to: URL(fileURLWithPath: path))
    return path
  }

  func bytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// The error a failed item carries, nil for a card that was made.
  func failure(_ item: CardRunItem) -> (any Error)? {
    if case .failure(let error) = item.result { error } else { nil }
  }

  @Test("several profiles go into one PDF in order, two pages a card; a bad one is left out")
  func combined() async throws {
    let folder = TemporaryFolder()
    let missing = try missingProfile(in: folder)
    let output = folder.file("all.pdf")
    let requests = [profiles[0], profiles[1], missing, profiles[2]].map { CardRequest(profile: $0) }
    var run = CardRun.combinedPDF(requests, to: output, options: CardOptions())
    run.jobs = 2
    let items = try await run.run(template: template, loader: loader)
    #expect(items.map(\.profile) == requests.map(\.profile))
    #expect(items.map(\.status) == [.ok, .ok, .failed, .ok])
    #expect(items.map(\.account) == ["harbor-lamp", "sora-park", nil, "layla-h"])
    #expect(items.map(\.outputs) == [[output], [output], [], [output]])
    #expect((failure(items[2]) as? CardError)?.code == "profile.accountNotFound")
    #expect((failure(items[2]) as? CardError)?.message.contains(missing) == true)
    // Checked by poppler: 3 cards of 2 sides, titled after the file, fronts in request order.
    let info = try pdfInfo(output)
    #expect(info["Pages"] == "6")
    #expect(info["Title"] == "all.pdf")
    for (page, account) in [(1, "harbor-lamp"), (3, "sora-park"), (5, "layla-h")] {
      let text = try runTool("pdftotext", ["-f", "\(page)", "-l", "\(page)", output, "-"]).stdout
      #expect(text.contains("@\(account)"), "page \(page): \(text)")
    }
    #expect(folder.contents() == ["all.pdf", "missing.json"])
  }

  @Test("a combined PDF none of whose cards could be made is not written, nor its temporary")
  func combinedNone() async throws {
    let folder = TemporaryFolder()
    let missing = try missingProfile(in: folder)
    let items = try await CardRun.combinedPDF(
      [CardRequest(profile: missing), CardRequest(profile: folder.file("absent.json"))],
      to: folder.file("all.pdf"), options: CardOptions()
    ).run(template: template, loader: loader)
    #expect(items.map(\.status) == [.failed, .failed])
    #expect((failure(items[1]) as? FileError) == .notFound(path: folder.file("absent.json")))
    #expect(folder.contents() == ["missing.json"])
  }

  @Test("PNG sides are written all or none: a card whose back fails leaves no front behind")
  func pngSidesAllOrNone() async throws {
    let folder = TemporaryFolder()
    let failing = try backFailingProfile(in: folder)
    let out = folder.file("out")
    let items = try await CardRun.folder(
      [CardRequest(profile: profiles[0]), CardRequest(profile: failing)], in: out, format: .png,
      options: CardOptions()
    ).run(template: template, loader: loader)
    #expect(items.map(\.status) == [.ok, .failed])
    #expect(items[0].outputs == [out + "/harbor-lamp-front.png", out + "/harbor-lamp-back.png"])
    #expect(items[1].account == "tsalagi")
    #expect((failure(items[1]) as? CardError)?.code == "card.missingGlyphs")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: out).sorted() == [
        "harbor-lamp-back.png", "harbor-lamp-front.png",
      ])
    // The written sides are whole: 300 dpi with the template's bleed, and the back's QR code
    // decodes (zbarimg).
    for side in ["front", "back"] {
      let header = pngHeader(try bytes(out + "/harbor-lamp-\(side).png"))
      #expect(
        header?.width == 1086 && header?.height == 713, "\(side): \(String(describing: header))")
    }
    #expect(try zbarDecode(out + "/harbor-lamp-back.png") == "https://steemit.com/@harbor-lamp")
    // Its front alone renders: the failure left a front it had drawn unwritten.
    var front = CardOptions()
    front.faces = [.front]
    let alone = try await CardRun.card(
      CardRequest(profile: failing), to: folder.file("front.png"), format: .png, options: front
    ).run(template: template, loader: loader)
    #expect(alone.map(\.outputs) == [[folder.file("front.png")]])
    #expect(pngHeader(try bytes(folder.file("front.png"))) != nil)
  }

  @Test("an output that would replace an input is refused, and the input left as it was")
  func outputIsInput() async throws {
    let folder = TemporaryFolder()
    let photo = folder.file("photo.png")
    try FileManager.default.copyItem(atPath: samples + "/photos/sora-park.png", toPath: photo)
    let photoBytes = try bytes(photo)
    var front = CardOptions()
    front.faces = [.front]
    // One card written over its own photo.
    let overPhoto = try await CardRun.card(
      CardRequest(profile: profiles[0], photo: photo), to: photo, format: .png, options: front
    ).run(template: template, loader: loader)
    #expect((failure(overPhoto[0]) as? FileError) == .outputIsInput(path: photo))
    #expect(try bytes(photo) == photoBytes)

    // A combined PDF over one of its profiles: the run fails before any card.
    let profile = folder.file("cards.pdf")
    try FileManager.default.copyItem(atPath: profiles[1], toPath: profile)
    let profileBytes = try bytes(profile)
    await #expect(throws: FileError.outputIsInput(path: profile)) {
      _ = try await CardRun.combinedPDF(
        [CardRequest(profile: profiles[0]), CardRequest(profile: profile)], to: profile,
        options: CardOptions()
      ).run(template: template, loader: loader)
    }
    #expect(try bytes(profile) == profileBytes)

    // A folder holding a profile named like its card (`cards.pdf` -> `cards.pdf`), and a file
    // the caller protects (`inputs`): those cards fail, the other is made.
    let protected = folder.file("harbor-lamp.pdf")
    try Data("kept".utf8).write(to: URL(fileURLWithPath: protected))
    var run = CardRun.folder(
      [
        CardRequest(profile: profile), CardRequest(profile: profiles[0]),
        CardRequest(
          profile: profiles[2]),
      ], in: folder.path, format: .pdf, options: CardOptions())
    run.inputs = [protected]
    let items = try await run.run(template: template, loader: loader)
    #expect(items.map(\.status) == [.failed, .failed, .ok])
    #expect((failure(items[0]) as? FileError) == .outputIsInput(path: folder.path + "/cards.pdf"))
    #expect((failure(items[1]) as? FileError) == .outputIsInput(path: protected))
    #expect(try bytes(profile) == profileBytes)
    #expect(try bytes(protected) == Array("kept".utf8))
    #expect(try pdfInfo(folder.file("layla-h.pdf"))["Title"] == "@layla-h")
    #expect(folder.contents() == ["cards.pdf", "harbor-lamp.pdf", "layla-h.pdf", "photo.png"])
  }

  @Test("two profiles with one file name: the first card is written, the second refused")
  func collision() async throws {
    let folder = TemporaryFolder()
    for (sub, profile) in [("a", profiles[0]), ("b", profiles[1])] {
      try FileManager.default.createDirectory(
        atPath: folder.file(sub), withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: profile, toPath: folder.file(sub + "/alice.json"))
    }
    let out = folder.file("out")
    let items = try await CardRun.folder(
      [
        CardRequest(profile: folder.file("a/alice.json")),
        CardRequest(
          profile: folder.file("b/alice.json")),
      ], in: out, format: .pdf, options: CardOptions()
    ).run(template: template, loader: loader)
    #expect(items.map(\.status) == [.ok, .failed])
    #expect(
      (failure(items[1]) as? FileError)
        == .outputCollision(
          path: out + "/alice.pdf", first: folder.file("a/alice.json"),
          second: folder.file("b/alice.json")))
    #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["alice.pdf"])
    #expect(try pdfInfo(out + "/alice.pdf")["Title"] == "@harbor-lamp")
  }

  @Test("an unknown locale fails the run before any card or folder is made")
  func unknownLocale() async throws {
    let folder = TemporaryFolder()
    var options = CardOptions()
    options.locale = "xx"
    await #expect(throws: CardError.unknownLocale(identifier: "xx")) {
      _ = try await CardRun.folder(
        profiles.map { CardRequest(profile: $0) }, in: folder.file("out"), format: .pdf,
        options: options
      ).run(template: template, loader: loader)
    }
    #expect(folder.contents().isEmpty)
  }

  @Test(
    "a card drawn in memory is byte for byte the file a run writes",
    arguments: [
      (CardRun.Format.pdf, [CardFace.front, .back], nil),
      (.png, [.front], nil), (.png, [.back], "ko"), (.share, [.front, .back], "ar"),
    ] as [(CardRun.Format, [CardFace], String?)])
  func inMemory(format: CardRun.Format, faces: [CardFace], locale: String?) async throws {
    let folder = TemporaryFolder()
    var options = CardOptions()
    options.faces = faces
    options.locale = locale
    let output = folder.file("card.\(format == .pdf ? "pdf" : "png")")
    let request = CardRequest(profile: profiles[1])
    let items = try await CardRun.card(request, to: output, format: format, options: options)
      .run(template: template, loader: loader)
    #expect(items.map(\.status) == [.ok])
    let card = try await CardRun.render(
      request, format: format, options: options, template: template, loader: loader)
    #expect(card.bytes == (try bytes(output)))
    #expect(card.warnings == items[0].warnings)
    // The bytes are a PDF or PNG of their own, read back by poppler and Pillow.
    let copy = folder.file("copy.\(format == .pdf ? "pdf" : "png")")
    try Data(card.bytes).write(to: URL(fileURLWithPath: copy))
    if format == .pdf {
      #expect(try pdfInfo(copy)["Pages"] == "2")
    } else {
      let script = "import sys; from PIL import Image; print(*Image.open(sys.argv[1]).size)"
      let size = try runTool("python3", ["-c", script, copy])
      #expect(size.stdout == (format == .share ? "1200 630\n" : "1086 713\n"), "\(size.stderr)")
    }
  }

  @Test("a card in memory fails as a run's card does: the locale first, then the profile")
  func inMemoryFailures() async throws {
    let folder = TemporaryFolder()
    let missing = CardRequest(profile: try missingProfile(in: folder))
    var options = CardOptions()
    options.locale = "xx"
    await #expect(throws: CardError.unknownLocale(identifier: "xx")) {
      _ = try await CardRun.render(
        missing, format: .pdf, options: options, template: self.template, loader: self.loader)
    }
    let error = await #expect(throws: CardError.self) {
      _ = try await CardRun.render(
        missing, format: .pdf, options: CardOptions(), template: self.template,
        loader: self.loader)
    }
    #expect(error?.code == "profile.accountNotFound")
    #expect(error?.message.contains(missing.profile) == true)
    let item = try await CardRun.card(
      missing, to: folder.file("card.pdf"), format: .pdf, options: CardOptions()
    ).run(template: template, loader: loader)[0]
    #expect((failure(item) as? CardError)?.message == error?.message)
  }
}
