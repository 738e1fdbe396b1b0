// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the fontconfig cache of the font folders, written by the first `imprint` and
// read, not rebuilt, by the next.

import Foundation
import ImprintTestSupport
import Testing

@Suite("Font cache", .liveHandlesChecked)
struct FontCacheCLITests {
  /// The system font folders of Sources/ImprintGraphics/Resources/fonts/system-fonts.txt.
  static let systemFolders = [
    "/usr/share/fonts/truetype/noto", "/usr/share/fonts/truetype/droid",
    "/usr/share/fonts-droid-fallback/truetype", "/usr/share/fonts/truetype/ancient-scripts",
  ]

  /// Fontconfig's cache file of `folder`: the MD5 of its path, `-le64.cache-8`.
  static func cacheName(_ folder: String) throws -> String {
    let digest = try runTool("md5sum", [], stdin: Array(folder.utf8)).stdout
    return String(digest.prefix(32)) + "-le64.cache-8"
  }

  /// Each cache file in `folder` with its bytes and modification time.
  static func caches(_ folder: String) throws -> [String: (Data, Date)] {
    var result: [String: (Data, Date)] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder)
    where name.hasSuffix(".cache-8") {
      let path = folder + "/" + name
      let date = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate]
      result[name] = (
        try Data(contentsOf: URL(fileURLWithPath: path)), date as? Date ?? .distantPast
      )
    }
    return result
  }

  @Test("the first card writes one cache per font folder; the second reads them unchanged")
  func cachedOnce() throws {
    let folder = TemporaryFolder()
    let profile = folder.file("p.json")
    let name = "किरण 王 བསྟན་འཛིན ශ්‍රී"
    let metadata = #"{"profile":{"name":"\#(name)","version":2}}"#
    let object: [String: Any] = ["name": "world-names", "posting_json_metadata": metadata]
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: profile))
    let cache = folder.file("cache")
    func run(_ output: String) throws -> MeasuredRun {
      try runMeasured([
        "/usr/bin/env", "XDG_CACHE_HOME=\(cache)", imprintBinary, "card", profile, "-o",
        folder.file(output), "--side", "front",
      ])
    }
    let first = try run("a.pdf")
    #expect(first.status == 0, "\(first.stderr)")
    let written = try Self.caches(cache + "/imprint/fontconfig")
    // The bundled folder's and its dejavu/ folder's, and the four system folders'.
    #expect(written.count == 6, "\(written.keys.sorted())")
    for system in Self.systemFolders {
      #expect(written[try Self.cacheName(system)] != nil, "no cache for \(system)")
    }
    let second = try run("b.pdf")
    #expect(second.status == 0, "\(second.stderr)")
    let read = try Self.caches(cache + "/imprint/fontconfig")
    #expect(Set(read.keys) == Set(written.keys))
    for (file, (bytes, date)) in written {
      #expect(read[file]?.0 == bytes && read[file]?.1 == date, "\(file) was written again")
    }
    // Same input, same bytes, whether the caches were just written or read.
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: folder.file("a.pdf")))
        == Data(contentsOf: URL(fileURLWithPath: folder.file("b.pdf"))))
  }
}
