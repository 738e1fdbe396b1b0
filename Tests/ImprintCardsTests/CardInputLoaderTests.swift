// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: the card input loader called as a library (no CLI): the photo given,
// cached, downloaded on request only, or the placeholder.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintNetwork
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintCards

@Suite("CardInputLoader", .liveHandlesChecked)
struct CardInputLoaderTests {
  let placeholder: (bytes: [UInt8], source: String)
  let template: CardTemplate
  let photo = samples + "/photos/harbor-lamp.jpg"
  let otherPhoto = samples + "/photos/sora-park.png"

  /// The document workers, recording what they were given to decode.
  let decoder = RecordingDecoder(DocumentSandbox(executable: imprintExecutable, workers: 1))

  init() throws {
    placeholder = try CardInput.shippedPlaceholder()
    template = try CardTemplate.load("classic", folder: templates)
  }

  /// A profile file for `account` whose profile_image is `url`.
  func profile(_ account: String, photo url: String, in folder: TemporaryFolder) throws -> String {
    let path = folder.file("\(account).json")
    let metadata = #"{\"profile\":{\"name\":\"Test\",\"profile_image\":\"\#(url)\",\"version\":2}}"#
    let json = #"{"name":"\#(account)","posting_json_metadata":"\#(metadata)"}"#
    #expect(FileManager.default.createFile(atPath: path, contents: Data(json.utf8)))
    return path
  }

  func bytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  @Test("a given photo wins over the cache; the profile's follow counts are read")
  func given() async throws {
    let folder = TemporaryFolder()
    let cache = folder.file("cache")
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: otherPhoto, toPath: cache + "/harbor-lamp.png")
    let loader = CardInputLoader(
      placeholder: placeholder, photos: PhotoOptions(cache: PhotoCache(folder: cache)),
      decoder: decoder)
    let loaded = try await loader.load(
      CardRequest(
        profile: samples + "/profiles/harbor-lamp.json", photo: photo,
        followCounts: samples + "/profiles/harbor-lamp.follow.json"),
      template: template)
    #expect(loaded.photo == .given(path: photo))
    #expect(loaded.photo.file == photo)
    #expect(loaded.warnings.isEmpty)
    #expect(loaded.input.profile.account == "harbor-lamp")
    #expect(loaded.input.profile.follow != nil)
    // Without a given photo the cached one is used.
    let cached = try await loader.load(
      CardRequest(profile: samples + "/profiles/harbor-lamp.json"), template: template)
    #expect(cached.photo == .cached(path: cache + "/harbor-lamp.png"))
    #expect(cached.input.photo.width != loaded.input.photo.width)
  }

  @Test("photo bytes held in memory (an upload) are decoded by the decoder as the file is")
  func inlinePhoto() async throws {
    let loader = CardInputLoader(placeholder: placeholder, decoder: decoder)
    let profile = samples + "/profiles/harbor-lamp.json"
    let fromFile = try await loader.load(
      CardRequest(profile: profile, photo: photo), template: template)
    // Bytes after the JPEG's end, which decoders ignore, make them new to the decoded-image
    // cache: the decoder is asked, by the upload's name.
    let upload = try bytes(photo) + Array(UUID().uuidString.utf8)
    let uploaded = try await loader.load(
      CardRequest(profile: profile, photo: "lamp.jpg", inlinePhoto: upload), template: template)
    #expect(uploaded.photo == .uploaded(name: "lamp.jpg"))
    // Not a file: no output is checked against it.
    #expect(uploaded.photo.file == nil)
    #expect(uploaded.input.photo.pixels == fromFile.input.photo.pixels)
    #expect(decoder.sources.contains("lamp.jpg"))
    // Bytes that are no image fail naming the upload.
    let error = await #expect(throws: (any Error).self) {
      try await loader.load(
        CardRequest(profile: profile, photo: "lamp.jpg", inlinePhoto: Array("no image".utf8)),
        template: template)
    }
    #expect((error as? any ImprintError)?.message.contains("lamp.jpg") == true)
  }

  @Test("without a cache or download the placeholder is used, and nothing is fetched unasked")
  func placeholderUnasked() async throws {
    let folder = TemporaryFolder()
    // The cloud metadata address: a download would fail the card with
    // card.photoAddressRefused, so loading without error proves none was tried.
    let path = try profile("alice", photo: "http://169.254.169.254/latest/a.jpg", in: folder)
    let cache = PhotoCache(folder: folder.file("cache"))
    for photos in [PhotoOptions(), PhotoOptions(cache: cache)] {
      let loaded = try await CardInputLoader(
        placeholder: placeholder, photos: photos, decoder: decoder
      ).load(
        CardRequest(profile: path), template: template)
      #expect(loaded.photo == .placeholder)
      #expect(loaded.photo.file == nil)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("cache")))
    let fetching = CardInputLoader(
      placeholder: placeholder,
      photos: PhotoOptions(cache: cache, fetch: true, allowPrivateNetwork: true), decoder: decoder)
    await #expect {
      _ = try await fetching.load(CardRequest(profile: path), template: template)
    } throws: { ($0 as? NetworkError)?.code == "card.photoAddressRefused" }
    #expect(!FileManager.default.fileExists(atPath: folder.file("cache")))
  }

  @Test("an inline profile is named by its request; a bad profile is its own error")
  func inlineAndErrors() async throws {
    let loader = CardInputLoader(placeholder: placeholder, decoder: decoder)
    let inline = try await loader.load(
      CardRequest(profile: "job 'a1'", inlineProfile: Array(#"{"name":"inline-acct"}"#.utf8)),
      template: template)
    #expect(inline.input.profile.account == "inline-acct")
    await #expect {
      _ = try await loader.load(
        CardRequest(profile: "job 'a2'", inlineProfile: Array("[1,".utf8)), template: template)
    } throws: {
      let error = $0 as? CardError
      return error?.code == "profile.notJSON" && error?.message.contains("job 'a2'") == true
    }
    await #expect {
      _ = try await loader.load(
        CardRequest(profile: "/nonexistent/p.json"), template: template)
    } throws: { ($0 as? FileError)?.code == "file.notFound" }
  }

  @Test("an unusable cache entry is a warning and a miss; a download then replaces it")
  func unusableEntry() async throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: photo)
    let cache = folder.file("cache")
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    let cut = try bytes(photo).prefix(100)
    #expect(FileManager.default.createFile(atPath: cache + "/bob.jpg", contents: Data(cut)))
    let path = try profile("bob", photo: server.url("/photo.jpg"), in: folder)
    let reading = CardInputLoader(
      placeholder: placeholder, photos: PhotoOptions(cache: PhotoCache(folder: cache)),
      decoder: decoder)
    let missed = try await reading.load(CardRequest(profile: path), template: template)
    #expect(missed.photo == .placeholder)
    #expect(missed.warnings.count == 1 && missed.warnings[0].hasPrefix("cached photo '"))
    #expect(server.requests.isEmpty)

    var fetching = reading
    fetching.photos.fetch = true
    fetching.photos.allowPrivateNetwork = true
    let fetched = try await fetching.load(CardRequest(profile: path), template: template)
    #expect(fetched.photo == .fetched(url: server.url("/photo.jpg"), cachedAt: cache + "/bob.jpg"))
    #expect(fetched.photo.file == nil)
    #expect(try bytes(cache + "/bob.jpg") == bytes(photo))
    // The next card finds it in the cache: no second download.
    let again = try await fetching.load(CardRequest(profile: path), template: template)
    #expect(again.photo == .cached(path: cache + "/bob.jpg"))
    #expect(again.warnings.isEmpty)
    #expect(server.requests == ["/photo.jpg"])
  }

  @Test("a download that cannot be cached is a warning, not the card's failure")
  func cacheUnwritable() async throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: photo)
    // The cache's path is a file: no folder can be made there.
    let cache = folder.file("cache")
    #expect(FileManager.default.createFile(atPath: cache, contents: Data("x".utf8)))
    let path = try profile("carol", photo: server.url("/photo.jpg"), in: folder)
    let loader = CardInputLoader(
      placeholder: placeholder,
      photos: PhotoOptions(
        cache: PhotoCache(folder: cache), fetch: true, allowPrivateNetwork: true), decoder: decoder
    )
    let loaded = try await loader.load(CardRequest(profile: path), template: template)
    #expect(loaded.photo == .fetched(url: server.url("/photo.jpg"), cachedAt: nil))
    #expect(loaded.warnings.count == 1)
    #expect(loaded.warnings.first?.hasPrefix("the photo of @carol was not cached") == true)
    // Without a cache the download is used and nothing is kept.
    let uncached = CardInputLoader(
      placeholder: placeholder, photos: PhotoOptions(fetch: true, allowPrivateNetwork: true),
      decoder: decoder)
    let plain = try await uncached.load(CardRequest(profile: path), template: template)
    #expect(plain.photo == .fetched(url: server.url("/photo.jpg"), cachedAt: nil))
    #expect(plain.warnings.isEmpty)
  }

  @Test("a download that is not an image fails the card and is not cached")
  func notAnImage() async throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: photo)
    let cache = folder.file("cache")
    let path = try profile("dave", photo: server.url("/missing.jpg"), in: folder)
    let loader = CardInputLoader(
      placeholder: placeholder,
      photos: PhotoOptions(
        cache: PhotoCache(folder: cache), fetch: true, allowPrivateNetwork: true), decoder: decoder
    )
    await #expect {
      _ = try await loader.load(CardRequest(profile: path), template: template)
    } throws: { ($0 as? NetworkError)?.code == "card.photoDownload" }
    #expect((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [] == [])
  }
}

/// A decoder that records the files it was asked for, then has `base` decode them.
final class RecordingDecoder: ImageDecoding {
  let base: any ImageDecoding
  private let asked = Mutex<[String]>([])

  init(_ base: any ImageDecoding) { self.base = base }

  /// The sources decoded, in order.
  var sources: [String] { asked.withLock { $0 } }

  func decodeImage(_ bytes: [UInt8], source: String) async throws -> Bitmap {
    asked.withLock { $0.append(source) }
    return try await base.decodeImage(bytes, source: source)
  }
}
