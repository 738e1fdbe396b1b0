// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: the photo cache finds and stores photos in the formats phones make.

import Foundation
import ImprintCards
import ImprintDocuments
import ImprintTestSupport
import Testing

@Suite("Photo cache entries in HEIF and other formats", .liveHandlesChecked)
struct PhotoCacheFormatTests {
  @Test("look-ups: extensions in order, links out refused, a folder made after the cache")
  func lookUps() throws {
    let folder = TemporaryFolder()
    let cache = folder.file("cache")
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    for name in ["a.png", "a.jpg", "b.png", "outside.png"] {
      try Data(name.utf8).write(to: URL(fileURLWithPath: cache + "/" + name))
    }
    try Data("secret".utf8).write(to: URL(fileURLWithPath: folder.file("secret.png")))
    try FileManager.default.createSymbolicLink(
      atPath: cache + "/d.png", withDestinationPath: folder.file("secret.png"))
    try FileManager.default.createSymbolicLink(
      atPath: cache + "/e.gif", withDestinationPath: "b.png")
    let photos = PhotoCache(folder: cache)
    func found(_ account: String) -> String {
      switch photos.lookup(account) {
      case .hit(let bytes, let path):
        "\((path as NSString).lastPathComponent)=\(String(decoding: bytes, as: UTF8.self))"
      case .miss: "miss"
      case .unusable(let path, _): "unusable \((path as NSString).lastPathComponent)"
      }
    }
    #expect(found("a") == "a.jpg=a.jpg")
    #expect(found("b") == "b.png=b.png")
    #expect(found("c") == "miss")
    #expect(found("d") == "unusable d.png")
    // A link inside the folder is followed there.
    #expect(found("e") == "e.gif=b.png")
    #expect(found("../secret") == "miss")
    // A cache made before its folder exists finds what is stored later.
    let late = PhotoCache(folder: folder.file("late"))
    #expect(try late.store(Array("\u{89}PNG".utf8), account: "f") != nil)
    guard case .hit(_, let path) = late.lookup("f") else {
      Issue.record("a photo stored in a folder made after the cache is not found")
      return
    }
    #expect(path.hasSuffix("/f.jpg") || path.hasSuffix("/f.png"), "\(path)")
  }

  @Test("an <account>.heic entry is a hit; a HEIC stored for an account is named .heic")
  func heicEntries() async throws {
    let folder = TemporaryFolder()
    let heic = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: CodecFixtures.heic(orientation: 6))))
    try FileManager.default.createDirectory(
      atPath: folder.file("cache"), withIntermediateDirectories: true)
    try Data(heic).write(to: URL(fileURLWithPath: folder.file("cache/alice.heic")))
    let cache = PhotoCache(folder: folder.file("cache"))
    guard case .hit(let bytes, let path) = cache.lookup("alice") else {
      Issue.record("alice.heic was not found")
      return
    }
    #expect(bytes == heic && path.hasSuffix("/alice.heic"))
    // A download kept for another account is named after its content, not a guess.
    let stored = try cache.store(heic, account: "bob")
    #expect(stored?.hasSuffix("/bob.heic") == true)
    #expect(FileManager.default.contents(atPath: folder.file("cache/bob.heic")) == Data(heic))
    // A damaged HEIC is read, not decoded, by the cache; the loader decodes it in a worker and
    // makes it a miss with a warning (the placeholder is drawn), never a crash.
    let cut = Array(heic.prefix(100))
    try Data(cut).write(to: URL(fileURLWithPath: folder.file("cache/carol.heic")))
    guard case .hit(let read, _) = cache.lookup("carol"), read == cut else {
      Issue.record("the entry was not read as it is")
      return
    }
    let loader = CardInputLoader(
      placeholder: try CardInput.shippedPlaceholder(), photos: PhotoOptions(cache: cache),
      decoder: DocumentSandbox(executable: imprintExecutable, workers: 1))
    let loaded = try await loader.load(
      CardRequest(profile: "carol", inlineProfile: Array(#"{"name":"carol"}"#.utf8)),
      template: try CardTemplate.load("classic", folder: templates))
    #expect(loaded.photo == .placeholder)
    #expect(loaded.warnings.count == 1)
    #expect(loaded.warnings.first?.contains("carol.heic' is not used") == true)
    #expect(loaded.warnings.first?.contains("damaged") == true, "\(loaded.warnings)")
  }
}
