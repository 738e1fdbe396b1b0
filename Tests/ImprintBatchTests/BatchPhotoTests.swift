// SPDX-License-Identifier: Apache-2.0
// ImprintBatchTests: batch card jobs find their photos as `imprint card` does (the one
// CardInputLoader): a photo cache, downloads only when asked, and resuming that follows the
// cache entry a card was made from. Called as a library (no CLI).

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintTestSupport
import Testing

@testable import ImprintBatch

@Suite("imprint batch: photo cache and downloads", .liveHandlesChecked)
struct BatchPhotoTests {
  let samplesFolder = repositoryRoot + "/assets/samples"
  var photo: String { samplesFolder + "/photos/harbor-lamp.jpg" }

  /// A folder with `manifest.jsonl` holding one card job `a` for a profile of `account` whose
  /// profile_image is `url`.
  func manifest(account: String, url: String, in folder: TemporaryFolder) -> String {
    let metadata = #"{\"profile\":{\"name\":\"Test\",\"profile_image\":\"\#(url)\",\"version\":2}}"#
    let profile = #"{"name":"\#(account)","posting_json_metadata":"\#(metadata)"}"#
    #expect(
      FileManager.default.createFile(atPath: folder.file("p.json"), contents: Data(profile.utf8)))
    let path = folder.file("manifest.jsonl")
    let line = #"{"id":"a","kind":"card","profile":"p.json"}"# + "\n"
    #expect(FileManager.default.createFile(atPath: path, contents: Data(line.utf8)))
    return path
  }

  func options(_ folder: TemporaryFolder, _ photos: PhotoOptions) throws -> BatchOptions {
    var options = BatchOptions(
      outputFolder: folder.file("out"), placeholder: try CardInput.shippedPlaceholder())
    options.jobs = 1
    options.photos = photos
    options.sandbox = DocumentSandbox(executable: imprintExecutable, workers: 1)
    return options
  }

  func results(_ options: BatchOptions) throws -> [ItemResult] {
    try String(contentsOfFile: options.resultsFile, encoding: .utf8).split(separator: "\n").map {
      try JSONDecoder().decode(ItemResult.self, from: Data($0.utf8))
    }
  }

  func card(_ folder: TemporaryFolder) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: folder.file("out/cards/a.pdf")))
  }

  @Test("a card job uses the cached photo; a photo put into the cache makes the card again")
  func cache() async throws {
    let folder = TemporaryFolder()
    let manifest = manifest(account: "alice", url: "http://169.254.169.254/a.jpg", in: folder)
    let cache = folder.file("cache")
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    let options = try options(folder, PhotoOptions(cache: PhotoCache(folder: cache)))
    #expect(try await BatchRunner.run(manifest: manifest, options: options).ok == 1)
    let placeholderCard = try card(folder)
    #expect(try await BatchRunner.run(manifest: manifest, options: options).skipped == 1)
    try FileManager.default.copyItem(atPath: photo, toPath: cache + "/alice.jpg")
    let remade = try await BatchRunner.run(manifest: manifest, options: options)
    #expect(remade.ok == 1 && remade.skipped == 0)
    let photoCard = try card(folder)
    #expect(photoCard != placeholderCard)
    #expect(try await BatchRunner.run(manifest: manifest, options: options).skipped == 1)
    // Another photo under the same name makes it again too.
    try FileManager.default.removeItem(atPath: cache + "/alice.jpg")
    try FileManager.default.copyItem(
      atPath: samplesFolder + "/photos/sora-park.png", toPath: cache + "/alice.png")
    #expect(try await BatchRunner.run(manifest: manifest, options: options).ok == 1)
    #expect(try card(folder) != photoCard)
  }

  @Test("no download unless asked; asked, an address the card would refuse fails the job")
  func fetchOnlyWhenAsked() async throws {
    let folder = TemporaryFolder()
    let manifest = manifest(account: "bob", url: "http://169.254.169.254/a.jpg", in: folder)
    let cache = PhotoCache(folder: folder.file("cache"))
    for photos in [PhotoOptions(), PhotoOptions(cache: cache)] {
      let options = try options(folder, photos)
      let summary = try await BatchRunner.run(manifest: manifest, options: options)
      #expect(summary.ok + summary.skipped == 1)
    }
    let options = try options(
      folder, PhotoOptions(cache: cache, fetch: true, allowPrivateNetwork: true))
    #expect(try await BatchRunner.run(manifest: manifest, options: options).failed == 1)
    #expect(try results(options).first?.error?.code == "card.photoAddressRefused")
    #expect(!FileManager.default.fileExists(atPath: folder.file("cache")))
  }

  @Test("a photo is downloaded once into the cache: reruns and the layout use the cached one")
  func downloadOnce() async throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: photo)
    let manifest = manifest(account: "carol", url: server.url("/photo.jpg"), in: folder)
    let cache = folder.file("cache")
    var options = try options(
      folder,
      PhotoOptions(cache: PhotoCache(folder: cache), fetch: true, allowPrivateNetwork: true))
    #expect(try await BatchRunner.run(manifest: manifest, options: options).ok == 1)
    #expect(server.requests == ["/photo.jpg"])
    let made = try card(folder)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: cache + "/carol.jpg"))
        == Data(contentsOf: URL(fileURLWithPath: photo)))
    // The record names the entry the download left: the rerun skips the job.
    #expect(try await BatchRunner.run(manifest: manifest, options: options).skipped == 1)
    // A layout lays skipped cards out again: from the cache, with no download.
    options.layout = .cardPrinter
    options.cardFiles = true
    let laid = try await BatchRunner.run(manifest: manifest, options: options)
    #expect(laid.skipped == 1 && laid.imposed != nil)
    #expect(server.requests == ["/photo.jpg"])
    #expect(try card(folder) == made)
    // `batch merge` lays cards out with the same loader.
    let prepared = try await BatchRunner.preparer(options: options)(
      "a", CardItem(profile: .file(folder.file("p.json"))))
    #expect(prepared.layouts.count == 2)
    #expect(server.requests == ["/photo.jpg"])
  }
}
