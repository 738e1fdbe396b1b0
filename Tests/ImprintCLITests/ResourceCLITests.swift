// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the built imprint finds its fonts, designs and placeholder photo in its own
// resource bundles from any working directory, and a deployment's folders still win.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Resources: found beside the executable, overridden only when named", .liveHandlesChecked)
struct ResourceCLITests {
  static let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path
  static let profile = repositoryRoot + "/assets/samples/profiles/layla-h.json"

  /// A folder laid out like Imprint's checkout, holding nothing usable.
  ///
  /// An `assets/fonts` with no font, a placeholder that is no image and a
  /// `templates/classic.json` that is no template: a program that guessed its resources from
  /// the working directory would fail on each.
  static func decoy() throws -> TemporaryFolder {
    let folder = TemporaryFolder()
    for sub in ["assets/fonts", "templates"] {
      try FileManager.default.createDirectory(
        atPath: folder.file(sub), withIntermediateDirectories: true)
    }
    try Data("not a font".utf8).write(to: URL(fileURLWithPath: folder.file("assets/fonts/x.ttf")))
    try Data("not a photo".utf8).write(
      to: URL(fileURLWithPath: folder.file("assets/placeholder-photo.png")))
    try Data("{".utf8).write(to: URL(fileURLWithPath: folder.file("templates/classic.json")))
    return folder
  }

  /// Runs the built `imprint` in `directory` with `settings` as its only IMPRINT_* variables.
  static func run(_ arguments: [String], in directory: String, settings: [String] = []) throws
    -> ToolResult
  {
    try runTool(
      "/usr/bin/env",
      ["-C", directory, "-u", "IMPRINT_ASSETS", "-u", "IMPRINT_TEMPLATES"] + settings
        + [binary] + arguments)
  }

  /// The design names `templates list` printed (each line's first word).
  static func names(_ listing: String) -> [String] {
    listing.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
  }

  @Test("a card from a working directory with a decoy assets/fonts, no IMPRINT_* set")
  func decoyWorkingDirectory() async throws {
    let decoy = try Self.decoy()
    let run = try Self.run(["card", Self.profile, "-o", "card.pdf", "--quiet"], in: decoy.path)
    #expect(run.status == 0, "\(run.stderr)")
    let made = try [UInt8](Data(contentsOf: URL(fileURLWithPath: decoy.file("card.pdf"))))
    // The same bytes as the card rendered in-process, with the test runner's own bundles.
    let reference = TemporaryFolder()
    let inProcess = await imprint(["card", Self.profile, "-o", reference.file("card.pdf")])
    #expect(inProcess.code == 0, "\(inProcess.stderr)")
    let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: reference.file("card.pdf"))))
    #expect(made == expected)
    #expect(try pdfInfo(decoy.file("card.pdf"))["Pages"] == "2")
    // Designs, too, are the shipped ones, not the decoy's templates folder.
    let list = try Self.run(["templates", "list"], in: decoy.path)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(Self.names(list.stdout) == ["classic", "midnight", "moderator"], "\(list.stdout)")
  }

  @Test("an executable deployed without its resource bundles fails naming them, never crashes")
  func missingBundles() throws {
    let alone = TemporaryFolder()
    try FileManager.default.copyItem(atPath: Self.binary, toPath: alone.file("imprint"))
    let card = try runTool(
      "/usr/bin/env",
      ["-C", alone.path, "-u", "IMPRINT_ASSETS", "-u", "IMPRINT_TEMPLATES", alone.file("imprint")]
        + ["card", Self.profile, "-o", "card.pdf"])
    #expect(card.status == 1, "\(card.stderr)")
    #expect(card.stderr.contains("Imprint_ImprintCards.resources/templates"), "\(card.stderr)")
    let code = try runTool(
      "/usr/bin/env",
      ["-C", alone.path, "-u", "IMPRINT_ASSETS", alone.file("imprint")]
        + ["qr", "hello", "--caption", "hello", "-o", "qr.png"])
    #expect(code.status == 1, "\(code.stderr)")
    #expect(code.stderr.contains("Imprint_ImprintGraphics.resources"), "\(code.stderr)")
    #expect(alone.contents() == ["imprint"])
  }

  @Test("an executable installed in bin/ reads its bundles from ../lib/imprint/")
  func installedLayout() throws {
    // As the Debian package lays it out: /usr/bin/imprint, /usr/lib/imprint/Imprint_*.resources.
    let prefix = TemporaryFolder()
    let lib = prefix.file("lib/imprint")
    try FileManager.default.createDirectory(
      atPath: prefix.file("bin"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: Self.binary, toPath: prefix.file("bin/imprint"))
    let built = Bundle.main.bundleURL.path
    for name in try FileManager.default.contentsOfDirectory(atPath: built)
    where name.hasPrefix("Imprint_") && name.hasSuffix(".resources") {
      try FileManager.default.copyItem(atPath: built + "/" + name, toPath: lib + "/" + name)
    }
    let decoy = try Self.decoy()
    let card = try runTool(
      "/usr/bin/env",
      [
        "-C", decoy.path, "-u", "IMPRINT_ASSETS", "-u", "IMPRINT_TEMPLATES",
        prefix.file("bin/imprint"),
      ]
        + ["card", Self.profile, "-o", "card.pdf", "--quiet"])
    #expect(card.status == 0, "\(card.stderr)")
    #expect(try pdfInfo(decoy.file("card.pdf"))["Pages"] == "2")
    let list = try runTool(
      "/usr/bin/env",
      [
        "-C", decoy.path, "-u", "IMPRINT_TEMPLATES", prefix.file("bin/imprint"), "templates",
        "list",
      ])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(Self.names(list.stdout) == ["classic", "midnight", "moderator"], "\(list.stdout)")
  }

  @Test("IMPRINT_TEMPLATES and --templates still choose the designs, --templates first")
  func templatesOverride() throws {
    let designs = TemporaryFolder()
    let shipped = try Data(
      contentsOf: URL(fileURLWithPath: repositoryRoot + "/templates/classic.json"))
    try shipped.write(to: URL(fileURLWithPath: designs.file("house-style.json")))
    let other = TemporaryFolder()
    try shipped.write(to: URL(fileURLWithPath: other.file("other-style.json")))
    let byEnvironment = try Self.run(
      ["templates", "list"], in: other.path, settings: ["IMPRINT_TEMPLATES=" + designs.path])
    #expect(byEnvironment.status == 0, "\(byEnvironment.stderr)")
    #expect(Self.names(byEnvironment.stdout) == ["house-style"], "\(byEnvironment.stdout)")
    let byOption = try Self.run(
      ["templates", "list", "--templates", other.path], in: other.path,
      settings: ["IMPRINT_TEMPLATES=" + designs.path])
    #expect(Self.names(byOption.stdout) == ["other-style"], "\(byOption.stdout)")
    let card = try Self.run(
      ["card", Self.profile, "--template", "house-style", "-o", "c.pdf", "-q"], in: other.path,
      settings: ["IMPRINT_TEMPLATES=" + designs.path])
    #expect(card.status == 0, "\(card.stderr)")
    #expect(FileManager.default.fileExists(atPath: other.file("c.pdf")))
  }

  @Test("IMPRINT_ASSETS still chooses the fonts and the placeholder photo")
  func assetsOverride() throws {
    let decoy = try Self.decoy()
    // The decoy's fonts, named explicitly, are used (and refused: no font in them).
    let fonts = try Self.run(
      ["card", Self.profile, "-o", "card.pdf"], in: NSTemporaryDirectory(),
      settings: ["IMPRINT_ASSETS=" + decoy.file("assets")])
    #expect(fonts.status == 1)
    #expect(fonts.stderr.contains(decoy.file("assets/fonts")), "\(fonts.stderr)")
    // Real fonts but a placeholder that is no image: the placeholder named is the one read.
    let assets = TemporaryFolder()
    try FileManager.default.createSymbolicLink(
      atPath: assets.file("fonts"), withDestinationPath: repositoryRoot + "/assets/fonts")
    try Data("not a photo".utf8).write(
      to: URL(fileURLWithPath: assets.file("placeholder-photo.png")))
    let photo = try Self.run(
      ["card", Self.profile, "-o", "card.pdf"], in: assets.path,
      settings: ["IMPRINT_ASSETS=" + assets.path])
    #expect(photo.status == 1)
    #expect(photo.stderr.contains("placeholder-photo.png"), "\(photo.stderr)")
    #expect(!FileManager.default.fileExists(atPath: assets.file("card.pdf")))
  }
}
