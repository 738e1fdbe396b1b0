// SPDX-License-Identifier: Apache-2.0
// ImprintGraphicsTests: the card PDF writer's TrueType subsetter, read back table by table, and
// given damaged fonts.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintGraphics

/// A font file's tables by tag (offset, length), read from its directory.
private func tables(_ font: [UInt8]) -> [String: (offset: Int, length: Int)] {
  func u16(_ at: Int) -> Int { Int(font[at]) << 8 | Int(font[at + 1]) }
  func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }
  var found: [String: (Int, Int)] = [:]
  for index in 0..<u16(4) {
    let record = 12 + 16 * index
    found[String(decoding: font[record..<(record + 4)], as: UTF8.self)] = (
      u32(record + 8), u32(record + 12)
    )
  }
  return found
}

@Suite("TrueType subsets for card PDFs", .liveHandlesChecked)
struct TrueTypeSubsetTests {
  static let fontPath =
    repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/dejavu/DejaVuSans.ttf"

  @Test("keeps the glyphs asked for in order, glyph 0 and each component, renumbered; valid")
  func structure() throws {
    let font = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.fontPath)))
    // Every glyph of DejaVu Sans, 100 at a time: the composite ones (accented letters) bring
    // their components.
    let count =
      Int(font[tables(font)["maxp"]!.offset + 4]) << 8
      | Int(font[tables(font)["maxp"]!.offset + 5])
    var sawComponents = false
    for start in stride(from: 1, to: count, by: 100) {
      // Every other batch asked for backwards: the glyphs take 1, 2, 3... in the order asked.
      let range = (start..<min(count, start + 100)).map(UInt32.init)
      let asked = start / 100 % 2 == 0 ? range : range.reversed()
      let subset = try #require(TrueTypeSubset(fontFile: font, glyphs: asked))
      #expect(subset.mapping.dropFirst().prefix(asked.count).map(\.0) == asked)
      let bytes = subset.bytes
      let directory = tables(bytes)
      #expect(Set(directory.keys).isSuperset(of: ["glyf", "head", "hhea", "hmtx", "loca", "maxp"]))
      func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
      func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }
      let glyphs = u16(directory["maxp"]!.offset + 4)
      #expect(glyphs == subset.mapping.count)
      #expect(subset.mapping.map(\.1) == (0..<UInt32(glyphs)).map { $0 })
      #expect(Set(asked).isSubset(of: Set(subset.mapping.map(\.0))))
      #expect(subset.mapping.first?.0 == 0)
      if subset.mapping.count > asked.count + 1 { sawComponents = true }
      // Long offsets, rising, inside glyf; every composite's components renumbered below the
      // count; no instructions left.
      #expect(u16(directory["head"]!.offset + 50) == 1)
      #expect(u16(directory["hhea"]!.offset + 34) == glyphs)
      #expect(directory["hmtx"]!.length == 4 * glyphs)
      let loca = directory["loca"]!.offset
      let glyf = directory["glyf"]!
      var previous = 0
      for glyph in 0..<glyphs {
        let start = u32(loca + 4 * glyph)
        let end = u32(loca + 4 * glyph + 4)
        #expect(start >= previous && start <= end && end <= glyf.length)
        previous = start
        guard end - start >= 10 else { continue }
        let at = glyf.offset + start
        let contours = Int16(bitPattern: UInt16(u16(at)))
        if contours >= 0 {
          #expect(u16(at + 10 + 2 * Int(contours)) == 0, "instructions left in glyph \(glyph)")
        } else {
          var component = at + 10
          while true {
            let flags = u16(component)
            #expect(u16(component + 2) < glyphs)
            #expect(flags & 0x0100 == 0 || flags & 0x0020 != 0)
            guard flags & 0x0020 != 0 else { break }
            component +=
              4 + (flags & 1 != 0 ? 4 : 2)
              + (flags & 8 != 0 ? 2 : flags & 0x40 != 0 ? 4 : flags & 0x80 != 0 ? 8 : 0)
          }
        }
      }
      // The whole file's checksum is OpenType's magic number.
      var sum: UInt32 = 0
      for word in stride(from: 0, to: bytes.count, by: 4) {
        sum = sum &+ UInt32(u32(word))
      }
      #expect(sum == 0xB1B0_AFBA)
    }
    #expect(sawComponents, "DejaVu Sans has composite glyphs")
  }

  @Test("a font file's key tells files of one length and glyph count apart by head's checksum")
  func fileKeys() throws {
    let font = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.fontPath)))
    let bold = try [UInt8](
      Data(
        contentsOf: URL(
          fileURLWithPath: Self.fontPath.replacingOccurrences(
            of: "DejaVuSans.ttf", with: "DejaVuSans-Bold.ttf"))))
    let key = try #require(DirectFont.FileKey.of(fontFile: font))
    #expect(DirectFont.FileKey.of(fontFile: font) == key)
    #expect(DirectFont.FileKey.of(fontFile: bold) != key)
    // The same file but for its whole-file checksum (head's checkSumAdjustment, bytes 8-11).
    var other = font
    let head = try #require(tables(font)["head"]).offset
    other[head + 8] ^= 0x5A
    let changed = try #require(DirectFont.FileKey.of(fontFile: other))
    #expect(changed != key && changed.length == key.length && changed.glyphs == key.glyphs)
  }

  @Test("a damaged font gives no subset or a bounded one, never a crash")
  func damaged() throws {
    let font = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.fontPath)))
    let directory = tables(font)
    var generator = SystemRandomNumberGenerator()
    // Bytes changed at random in the tables the subsetter reads, and the file cut short.
    let targets = ["loca", "glyf", "hmtx", "hhea", "maxp", "head"].compactMap { directory[$0] }
    for round in 0..<300 {
      var damaged = font
      let table = targets[round % targets.count]
      for _ in 0..<8 {
        let at =
          table.offset + Int.random(in: 0..<max(1, min(table.length, 4096)), using: &generator)
        damaged[at] = UInt8.random(in: 0...255, using: &generator)
      }
      if round % 10 == 0 {
        damaged.removeLast(Int.random(in: 1..<(damaged.count / 2), using: &generator))
      }
      let asked = (0..<40).map { _ in UInt32.random(in: 0..<6000, using: &generator) }
      if let subset = TrueTypeSubset(fontFile: damaged, glyphs: asked) {
        #expect(subset.mapping.count <= 65_536)
      }
    }
    #expect(TrueTypeSubset(fontFile: [], glyphs: [1]) == nil)
    #expect(TrueTypeSubset(fontFile: Array(font.prefix(100)), glyphs: [1]) == nil)
  }
}
