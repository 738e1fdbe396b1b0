// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the photo options of `imprint batch` and `imprint batch merge` (the runs
// themselves: ImprintBatchTests' BatchPhotoTests).

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint batch: photo options on the command line", .liveHandlesChecked)
struct BatchPhotoCLITests {
  @Test("--fetch-photo needs --photo-cache (a usage error, nothing run)")
  func fetchNeedsCache() async throws {
    let folder = TemporaryFolder()
    let manifest = folder.file("m.jsonl")
    #expect(
      FileManager.default.createFile(
        atPath: manifest, contents: Data(#"{"id":"q","kind":"qr","payload":"x"}"#.utf8)))
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
}
