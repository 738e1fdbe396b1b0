// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: the card library under hostile input: strict JSON for profiles and
// templates, template assets and the photo cache kept in their folders, and a missing-glyph error
// that says which characters (the address ranges photo downloads refuse: ImprintNetworkTests).

import Foundation
import ImprintCards
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Card inputs under hostile input", .liveHandlesChecked)
struct HostileInputTests {
  @Test(
    "profiles and follow counts are strict JSON: repeated keys, 1e400, bad escapes, commas",
    arguments: [
      #"{"name":"alice","name":"mallory"}"#, #"{"name":"alice","id":1e400}"#,
      #"{"name":"al\ice"}"#, #"{"name":"alice",}"#,
    ])
  func strictProfiles(json: String) {
    #expect(throws: CardError.self) {
      _ = try Profile.parse(Array(json.utf8), source: "p.json")
    }
    do {
      _ = try Profile.parse(Array(json.utf8), source: "p.json")
    } catch {
      #expect(error.code == "profile.notJSON")
      #expect(error.message.contains("'p.json'"))
      #expect(error.message.contains("line 1"), "\(error.message)")
    }
    let follow = #"{"follower_count":1,"follower_count":2,"following_count":3}"#
    #expect(throws: CardError.self) {
      _ = try Profile.parseFollowCounts(Array(follow.utf8), source: "f.json")
    }
  }

  @Test("invalid UTF-8 in a profile is refused with its place")
  func invalidUTF8() {
    var bytes = Array(#"{"name":"al"#.utf8)
    bytes += [0xC3, 0x28]
    bytes += Array(#"ice"}"#.utf8)
    do {
      _ = try Profile.parse(bytes, source: "p.json")
      Issue.record("accepted")
    } catch {
      #expect(error.code == "profile.notJSON")
      #expect(error.message.contains("UTF-8"), "\(error.message)")
    }
  }

  @Test("a template's assets are resolved inside its folder only")
  func templateAssets() throws {
    let folder = TemporaryFolder()
    let design = folder.file("design")
    try FileManager.default.createDirectory(atPath: design, withIntermediateDirectories: true)
    let photo = fixturesFolder + "/Images/alpha.png"
    try FileManager.default.copyItem(atPath: photo, toPath: design + "/inside.png")
    try FileManager.default.copyItem(atPath: photo, toPath: folder.file("outside.png"))
    try FileManager.default.createSymbolicLink(
      atPath: design + "/link.png", withDestinationPath: folder.file("outside.png"))
    func parse(_ asset: String) throws(CardError) -> CardTemplate {
      let json = #"{"schemaVersion":1,"front":{"backgroundImage":"\#(asset)"},"back":{}}"#
      return try CardTemplate.parse(Array(json.utf8), name: "t.json", folder: design)
    }
    #expect(try parse("inside.png").front.backgroundImage == design + "/inside.png")
    for asset in ["../outside.png", folder.file("outside.png"), "link.png", "a/../../outside.png"] {
      do {
        _ = try parse(asset)
        Issue.record("\(asset) was accepted")
      } catch {
        #expect(error.code == "file.escapesFolder", "\(asset)")
        #expect(error.message.contains("template 't.json'"), "\(error.message)")
      }
    }
    #expect(throws: CardError.self) { _ = try parse("nothing.png") }
  }

  @Test("templates: repeated keys refused, special files refused, a missing file is not found")
  func templateFiles() throws {
    let folder = TemporaryFolder()
    let duplicate = #"{"schemaVersion":1,"front":{},"back":{},"front":{}}"#
    do {
      _ = try CardTemplate.parse(Array(duplicate.utf8), name: "d.json", folder: folder.path)
      Issue.record("accepted")
    } catch {
      #expect(error.code == "template.invalid")
      #expect(error.message.contains("appears twice"), "\(error.message)")
    }
    #expect(mkfifo(folder.file("fifo.json"), 0o600) == 0)
    for path in [folder.file("fifo.json"), "/dev/zero"] {
      do {
        _ = try CardTemplate.load(path, folder: nil)
        Issue.record("\(path) was read")
      } catch {
        #expect(error.code == "file.notRegular", "\(path)")
      }
    }
    #expect(throws: CardError.self) {
      _ = try CardTemplate.load(folder.file("no.json"), folder: nil)
    }
  }

  @Test("the photo cache: account names that are paths never name a file; a store replaces all")
  func photoCache() throws {
    let folder = TemporaryFolder()
    let cache = PhotoCache(folder: folder.file("cache"))
    let photo = Array(
      try Data(contentsOf: URL(fileURLWithPath: fixturesFolder + "/Images/alpha.png")))
    for account in ["../escaped", "..", ".", "a/b", "", ".hidden", "x\u{1B}y"] {
      #expect(PhotoCache.stem(for: account) == nil, "\(account)")
      #expect(try cache.store(photo, account: account) == nil)
      if case .miss = cache.lookup(account) {} else { Issue.record("\(account) was looked up") }
    }
    #expect(folder.contents() == [])
    #expect(try cache.store(photo, account: "alice") == cache.folder + "/alice.png")
    if case .hit(let bytes, _) = cache.lookup("alice") {
      #expect(bytes == photo)
    } else {
      Issue.record("alice missed")
    }
    // A cut-short entry is read as it is (the cache never decodes: the loader does, in a
    // worker, and counts it a miss), and the next store replaces it, whatever its extension.
    try Data(photo.prefix(40)).write(to: URL(fileURLWithPath: cache.folder + "/bob.jpg"))
    guard case .hit(let cut, _) = cache.lookup("bob"), cut == Array(photo.prefix(40)) else {
      Issue.record("the cut entry was not read as it is")
      return
    }
    try cache.store(photo, account: "bob")
    guard case .hit = cache.lookup("bob") else {
      Issue.record("the stored photo was not found")
      return
    }
    #expect(!FileManager.default.fileExists(atPath: cache.folder + "/bob.jpg"))
  }

  @Test("missing glyphs name the characters and their script, and never suggest bootstrap")
  func missingGlyphs() {
    let error = CardError.missingGlyphs(
      field: "{displayName}", text: "กข", count: 2,
      characters: ["U+0E01 (Thai)", "U+0E02 (Thai)"])
    #expect(error.message.contains("U+0E01 (Thai), U+0E02 (Thai)"))
    #expect(error.hint?.contains("bootstrap") == false)
    #expect(error.hint?.contains("--allow-missing-glyphs") == true)
  }
}
