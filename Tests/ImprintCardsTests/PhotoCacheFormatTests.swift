// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: the photo cache finds and stores photos in the formats phones make.

import Foundation
import ImprintCards
import ImprintTestSupport
import Testing

@Suite("Photo cache entries in HEIF and other formats", .liveHandlesChecked)
struct PhotoCacheFormatTests {
  @Test("an <account>.heic entry is a hit; a HEIC stored for an account is named .heic")
  func heicEntries() throws {
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
    // A damaged HEIC is an unusable entry (a warning), never a crash.
    try Data(heic.prefix(100)).write(to: URL(fileURLWithPath: folder.file("cache/carol.heic")))
    guard case .unusable(_, let reason) = cache.lookup("carol") else {
      Issue.record("a damaged entry must be unusable")
      return
    }
    #expect(reason.contains("damaged"), "\(reason)")
  }
}
