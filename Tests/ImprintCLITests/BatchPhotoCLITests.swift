// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the photo options of `imprint batch` and `imprint batch merge` (the runs
// themselves: ImprintBatchTests' BatchPhotoTests), and --wait-timeout's need of --wait.

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint batch: photo options on the command line", .liveHandlesChecked)
struct BatchPhotoCLITests {
  /// A manifest of one QR line, `m.jsonl` in `folder`.
  static func qrManifest(in folder: TemporaryFolder) -> String {
    let manifest = folder.file("m.jsonl")
    #expect(
      FileManager.default.createFile(
        atPath: manifest, contents: Data(#"{"id":"q","kind":"qr","payload":"x"}"#.utf8)))
    return manifest
  }

  @Test("--fetch-photo needs --photo-cache (a usage error, nothing run)")
  func fetchNeedsCache() async throws {
    let folder = TemporaryFolder()
    let manifest = Self.qrManifest(in: folder)
    for command in [["batch"], ["batch", "merge"]] {
      let run = await imprint(command + [manifest, "-o", folder.file("out"), "--fetch-photo"])
      #expect(run.code == 2, "\(run.stderr)")
      #expect(run.stderr.contains("--fetch-photo in a batch needs --photo-cache"), "\(run.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out")))
    let run = await imprint([
      "batch", manifest, "-o", folder.file("out"), "--photo-cache", folder.file("cache"), "-q",
    ])
    #expect(run.code == 0, "\(run.stderr)")
  }

  @Test("--wait-timeout without --wait is a usage error, as imprint prepare's: nothing run")
  func waitTimeoutNeedsWait() async throws {
    let folder = TemporaryFolder()
    let manifest = Self.qrManifest(in: folder)
    let alone = await imprint(["batch", manifest, "-o", folder.file("out"), "--wait-timeout", "60"])
    #expect(alone.code == 2, "\(alone.stderr)")
    #expect(alone.stderr.contains("error: --wait-timeout needs --wait"), "\(alone.stderr)")
    #expect(alone.stderr.contains("usage: imprint batch"), "\(alone.stderr)")
    #expect(alone.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: folder.file("out")))
    // With --wait it is taken: the run goes on (no print job here, nothing waited for).
    let both = await imprint([
      "batch", manifest, "-o", folder.file("out"), "--wait", "--wait-timeout", "60", "-q",
    ])
    #expect(both.code == 0, "\(both.stderr)")
    #expect(FileManager.default.fileExists(atPath: folder.file("out/qr/q.png")))
  }
}
