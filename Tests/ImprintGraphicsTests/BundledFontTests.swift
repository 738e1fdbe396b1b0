// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: the bundled DejaVu files are Debian's with the TrueType hinting taken
// out (ttfautohint --dehint): the same shapes, metrics and shaping tables, no instructions.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintGraphics

/// The tables of a TrueType file by tag (the table directory, read as the OpenType
/// specification lays it out).
private func sfntTables(_ path: String) throws -> [String: ArraySlice<UInt8>] {
  let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  func number(_ at: Int, _ count: Int) throws -> Int {
    try #require(at >= 0 && at + count <= bytes.count, "\(path): past the end at \(at)")
    return bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
  }
  var tables: [String: ArraySlice<UInt8>] = [:]
  for index in 0..<(try number(4, 2)) {
    let record = 12 + 16 * index
    let tag = String(decoding: bytes[record..<record + 4], as: UTF8.self)
    let offset = try number(record + 8, 4)
    let length = try number(record + 12, 4)
    try #require(offset + length <= bytes.count, "\(path): table '\(tag)' past the end")
    tables[tag] = bytes[offset..<offset + length]
  }
  return tables
}

@Suite("The bundled fonts", .liveHandlesChecked)
struct BundledFontTests {
  static let names = ["DejaVuSans", "DejaVuSans-Bold", "DejaVuSansMono"]
  static let bundled = repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/dejavu/"
  /// Debian's fonts-dejavu-core, which the bundled files were made from.
  static let debian = "/usr/share/fonts/truetype/dejavu/"

  @Test(
    "each is Debian's DejaVu without hinting: no instructions, the same metrics and shaping",
    arguments: names)
  func dehinted(_ name: String) throws {
    let ours = try sfntTables(Self.bundled + name + ".ttf")
    let theirs = try sfntTables(Self.debian + name + ".ttf")
    // Debian's has the TrueType instructions a card never runs (text is drawn unhinted); they
    // were a third of every font subset a card PDF embeds.
    for tag in ["fpgm", "prep", "cvt "] {
      #expect(theirs[tag] != nil, "\(name): Debian's file has '\(tag)'")
      #expect(ours[tag] == nil, "\(name): '\(tag)' is still there")
    }
    // What places and shapes the glyphs is Debian's, byte for byte.
    for tag in ["cmap", "hhea", "hmtx", "OS/2", "post", "kern", "GDEF", "GSUB", "GPOS"]
    where theirs[tag] != nil {
      #expect(ours[tag].map(Array.init) == theirs[tag].map(Array.init), "\(name): '\(tag)'")
    }
    #expect(Set(ours.keys) == Set(theirs.keys).subtracting(["fpgm", "prep", "cvt "]))
  }

  @Test("text drawn with them is pixel for pixel text drawn with Debian's files")
  func samePixels() throws {
    let folders = [TemporaryFolder(), TemporaryFolder()]
    for name in Self.names {
      try FileManager.default.copyItem(
        atPath: Self.bundled + name + ".ttf", toPath: folders[0].file(name + ".ttf"))
      try FileManager.default.copyItem(
        atPath: Self.debian + name + ".ttf", toPath: folders[1].file(name + ".ttf"))
    }
    let text = "Ünïcödé ÆØÅ ŁŻ Ωμέγα Кириллица Հայերեն ქართული 0123456789 @#%&"
    func drawn(_ folder: TemporaryFolder?) throws -> [UInt8] {
      let fonts = try folder.map { try FontLibrary(directories: [$0.path]) } ?? .bundled()
      let image = try RasterImage(width: 1400, height: 360, fonts: fonts)
      try image.draw { canvas in
        canvas.scale(300.0 / 72, 300.0 / 72)
        guard folder != nil else { return }
        for (line, (family, weight)) in [
          ("DejaVu Sans", 400), ("DejaVu Sans", 700), ("DejaVu Sans Mono", 400),
        ].enumerated() {
          let style = TextStyle(family: family, weight: weight, size: 7)
          let metrics = try canvas.draw(
            TextBlock(text, style: style, width: 330), x: 4, y: 4 + Double(line) * 26)
          #expect(metrics.width > 100, "\(family) \(weight)")
        }
      }
      return try image.png(dpi: 300)
    }
    let ours = try drawn(folders[0])
    #expect(ours == (try drawn(folders[1])))
    // Something was drawn: not the blank image.
    #expect(ours != (try drawn(nil)))
  }

  @Test("folders and files whose paths hold &, < and > load (escaped in the configuration)")
  func specialPaths() throws {
    let root = TemporaryFolder()
    let folder = root.file("fonts & <more> > less")
    let other = root.file("system & <fonts>")
    for path in [folder, other] {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    // Of the other folder, only the file named is loaded: Mono, not Bold (whose family, DejaVu
    // Sans, would show).
    try FileManager.default.copyItem(
      atPath: Self.bundled + "DejaVuSansMono.ttf", toPath: other + "/Mono & <1>.ttf")
    try FileManager.default.copyItem(
      atPath: Self.bundled + "DejaVuSans-Bold.ttf", toPath: other + "/Bold.ttf")
    let fonts = try FontLibrary(directories: [folder], files: [other + "/Mono & <1>.ttf"])
    #expect(fonts.families == ["DejaVu Sans Mono"])
    #expect(fonts.filesWithoutOwnFace.isEmpty)
  }

  @Test("the bundled lists are read line by line: trimmed, comments and blank lines left out")
  func lists() throws {
    let text =
      "# a comment\n\n  /usr/share/fonts/a.ttf  \n\t/b/ç é.ttf\r\n   # indented\nNoto Sans\n \t \n"
    #expect(
      FontLibrary.listed(Array(text.utf8)) == ["/usr/share/fonts/a.ttf", "/b/ç é.ttf", "Noto Sans"])
    #expect(FontLibrary.listed([]).isEmpty)
    // The shipped lists read as Foundation's trimming and a split by lines read them.
    let folder = repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/"
    for name in ["system-fonts.txt", "fallback.txt"] {
      let text = try String(contentsOfFile: folder + name, encoding: .utf8)
      let foundation = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
      #expect(FontLibrary.listed(Array(text.utf8)) == foundation, "\(name)")
      #expect(!foundation.isEmpty, "\(name)")
    }
  }
}
