// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: resource bundles found beside the executable or installed in ../lib/imprint,
// and the demo's sample data installed in ../share/imprint.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Resource bundles: beside the executable, then installed", .liveHandlesChecked)
struct ResourceBundleTests {
  /// A prefix laid out as the Debian package installs Imprint: `bin/`, and the Graphics bundle
  /// with its fonts in `lib/imprint/`.
  static func installedPrefix() throws -> TemporaryFolder {
    let prefix = TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: prefix.file("bin"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: prefix.file("lib/imprint/Imprint_ImprintGraphics.resources/fonts"),
      withIntermediateDirectories: true)
    return prefix
  }

  @Test("../lib/imprint is read when no bundle is beside the executable, without Bundle.module")
  func installed() throws {
    let prefix = try Self.installedPrefix()
    var evaluated = false
    func module() -> Bundle {
      evaluated = true
      return Bundle.main
    }
    let fonts = ResourceBundle.path(
      of: "fonts", module: "ImprintGraphics", executableFolder: prefix.file("bin"),
      bundle: module())
    #expect(fonts == prefix.file("lib/imprint/Imprint_ImprintGraphics.resources/fonts"))
    #expect(!evaluated)
    // A resource the installed bundle lacks, or a module with no installed bundle: nil.
    #expect(
      ResourceBundle.path(
        of: "templates", module: "ImprintGraphics", executableFolder: prefix.file("bin"),
        bundle: module()) == nil)
    #expect(
      ResourceBundle.path(
        of: "templates", module: "ImprintCards", executableFolder: prefix.file("bin"),
        bundle: module()) == nil)
    #expect(!evaluated)
  }

  @Test("a bundle beside the executable wins over the installed one")
  func besideFirst() throws {
    let prefix = try Self.installedPrefix()
    let beside = prefix.file("bin/Imprint_ImprintGraphics.resources")
    try FileManager.default.createDirectory(
      atPath: beside + "/fonts", withIntermediateDirectories: true)
    let bundle = try #require(Bundle(path: beside))
    let fonts = ResourceBundle.path(
      of: "fonts", module: "ImprintGraphics", executableFolder: prefix.file("bin"),
      bundle: bundle)
    #expect(fonts.map { URL(fileURLWithPath: $0).standardizedFileURL.path } == beside + "/fonts")
  }

  @Test(
    "the installed folder is lib/imprint beside the executable's folder",
    arguments: [
      ("/usr/bin", "/usr/lib/imprint"), ("/opt/imprint/bin", "/opt/imprint/lib/imprint"),
      ("/usr/local/bin/", "/usr/local/lib/imprint"),
    ])
  func installedFolder(executableFolder: String, expected: String) {
    #expect(ResourceBundle.installedFolder(executableFolder: executableFolder) == expected)
  }

  @Test("the demo's sample data is found in ../share/imprint only when its marker is there")
  func installedSampleData() throws {
    let prefix = try Self.installedPrefix()
    let bin = prefix.file("bin")
    #expect(
      ResourceLocator.installedDirectory("assets", marker: "samples", executableFolder: bin)
        == nil)
    try FileManager.default.createDirectory(
      atPath: prefix.file("share/imprint/assets/samples"), withIntermediateDirectories: true)
    #expect(
      ResourceLocator.installedDirectory("assets", marker: "samples", executableFolder: bin)
        == prefix.file("share/imprint/assets"))
    #expect(
      ResourceLocator.installedDirectory("assets", marker: "photos", executableFolder: bin) == nil)
  }
}
