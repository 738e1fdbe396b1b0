// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: a card for a name in every script of issue #13, its glyphs checked against
// HarfBuzz's own hb-shape and its PDF read back with pdffonts.

import Foundation
import ImprintCore
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintCards
@testable import ImprintGraphics

/// A name to print, and the font that must draw its script.
struct ScriptName: CustomTestStringConvertible, Sendable {
  /// The script and what the name exercises.
  let label: String
  /// An invented name.
  let name: String
  /// Part of the file name of the font the script's characters must come from.
  let font: String
  /// Part of the PostScript name that font has in the PDF (pdffonts).
  let embedded: String

  var testDescription: String { label }
}

@Suite("Cards in every script", .liveHandlesChecked)
struct WorldScriptTests {
  static let names: [ScriptName] = [
    .init(
      label: "Latin, Vietnamese", name: "Nguyễn Thị Hương", font: "DejaVuSans",
      embedded: "DejaVuSans"),
    .init(
      label: "Greek", name: "Αλεξάνδρα Παπαδοπούλου", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(label: "Cyrillic", name: "Святослав Ёлкин", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(label: "Armenian", name: "Արամ Սարգսյան", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(label: "Georgian", name: "ნინო ბერიძე", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(
      label: "Hebrew, right to left", name: "נועה כהן", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(
      label: "Arabic, joining", name: "فاطمة الزهراء", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(label: "Persian, ZWNJ", name: "پریسا ژاله‌گر", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(
      label: "Urdu, letters DejaVu lacks", name: "مہر ٹوانے", font: "NotoSansArabic",
      embedded: "NotoSansArabic"),
    .init(
      label: "Devanagari, conjuncts, reph, i-matra", name: "किरण शर्मा क्षत्रिय",
      font: "NotoSansDevanagari", embedded: "NotoSansDevanagari"),
    .init(
      label: "Bengali, two-part vowel", name: "সুস্মিতা রায়চৌধুরী", font: "NotoSansBengali",
      embedded: "NotoSansBengali"),
    .init(
      label: "Gurmukhi", name: "ਗੁਰਪ੍ਰੀਤ ਸਿੰਘ", font: "NotoSansGurmukhi",
      embedded: "NotoSansGurmukhi"),
    .init(
      label: "Gujarati", name: "પ્રિયંકા શ્રીવાસ્તવ", font: "NotoSansGujarati",
      embedded: "NotoSansGujarati"),
    .init(label: "Oriya", name: "ସୌମ୍ୟ ପ୍ରଧାନ", font: "NotoSansOriya", embedded: "NotoSansOriya"),
    .init(
      label: "Tamil, two-part vowel", name: "கொற்றவை செல்வி", font: "NotoSansTamil",
      embedded: "NotoSansTamil"),
    .init(
      label: "Telugu", name: "శ్రీనివాస్ రెడ్డి", font: "NotoSansTelugu",
      embedded: "NotoSansTelugu"),
    .init(
      label: "Kannada", name: "ಕೃಷ್ಣಪ್ರಸಾದ್ ಹೆಗ್ಡೆ", font: "NotoSansKannada",
      embedded: "NotoSansKannada"),
    .init(
      label: "Malayalam, chillu", name: "ശ്രീക്കുട്ടി നായർ", font: "NotoSansMalayalam",
      embedded: "NotoSansMalayalam"),
    .init(
      label: "Sinhala, ZWJ", name: "ශ්‍රී ලක්ෂ්මි", font: "NotoSansSinhala",
      embedded: "NotoSansSinhala"),
    .init(label: "Thai, marks", name: "สมศักดิ์ ใจดี", font: "NotoSansThai", embedded: "NotoSansThai"),
    .init(label: "Lao", name: "ສົມພອນ ແກ້ວມະນີ", font: "DejaVuSans", embedded: "DejaVuSans"),
    .init(
      label: "Khmer, coeng", name: "សុខ ស្រីពេជ្រ", font: "NotoSansKhmer", embedded: "NotoSansKhmer"),
    .init(
      label: "Myanmar, medials", name: "အောင်မြင့်ကျော်", font: "NotoSansMyanmar",
      embedded: "NotoSansMyanmar"),
    .init(
      label: "Tibetan, stacks", name: "བསྟན་འཛིན་ནོར་བུ", font: "NotoSerifTibetan",
      embedded: "NotoSerifTibetan"),
    .init(
      label: "Ethiopic", name: "አበበ ቢቂላ", font: "NotoSansEthiopic", embedded: "NotoSansEthiopic"),
    .init(
      label: "Chinese", name: "王晓明", font: "DroidSansFallback", embedded: "DroidSansFallback"),
    .init(
      label: "Japanese, kanji and kana", name: "山田 直美 さくら", font: "DroidSansFallback",
      embedded: "DroidSansFallback"),
    .init(label: "Korean", name: "김민준", font: "DroidSansFallback", embedded: "DroidSansFallback"),
    .init(label: "emoji", name: "Mina 🌸🙂", font: "Symbola", embedded: "Symbola"),
    .init(
      label: "mixed: Latin, Devanagari, Han", name: "Aarav आरव 王", font: "NotoSansDevanagari",
      embedded: "DroidSansFallback"),
    .init(
      label: "mixed: Latin and Arabic, right to left inside", name: "Dana دانا 2024",
      font: "DejaVuSans", embedded: "DejaVuSans"),
  ]

  /// The card of `name` on the classic design: its front layout and PDF.
  static func card(_ name: String) throws -> (CardLayout, [UInt8]) {
    var input = try sampleInput()
    input.profile.displayName = name
    var options = CardOptions()
    options.faces = [.front]
    let (layouts, _) = try CardMaker.layouts(input, options: options)
    let pdf = try CardMaker.pdf(input, options: options)
    return (try #require(layouts.first), pdf.bytes)
  }

  /// The block the card set `name` in.
  static func block(of name: String, in layout: CardLayout) throws -> TextBlock {
    let blocks = layout.items.compactMap { item -> TextBlock? in
      if case .text(let block, _, _, _, _) = item, block.text == name { block } else { nil }
    }
    return try #require(blocks.first, "no text element shows '\(name)'")
  }

  /// The glyph ids `hb-shape` gives for `run`'s text in `run`'s font, with Pango's context,
  /// language, direction and invisible glyph.
  static func hbShape(_ run: ShapedRun) throws -> [UInt32] {
    let result = try runTool(
      "hb-shape",
      [
        "--face-index=\(run.faceIndex)", "--no-glyph-names", "--no-positions", "--no-clusters",
        "--language=\(run.language)", "--direction=\(run.isRightToLeft ? "rtl" : "ltr")",
        "--text-before=\(run.before)", "--text-after=\(run.after)",
        "--invisible-glyph=\(0x0FFF_FFFF)", run.fontFile, run.text,
      ])
    #expect(result.status == 0, "hb-shape: \(result.stderr)")
    let list = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      .trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    return list.split(separator: "|").compactMap { UInt32($0) }
  }

  @Test("every script's card drawn on six threads at once: the same bytes on each")
  func allAtOnce() throws {
    // More fonts in use at once than cairo keeps open (ten): this crashed in FreeType before
    // FontLibrary.pinFaces, now and then (a face closed by one thread while another drew with
    // it). Threads of their own: Swift's task pool would run only as many as there are cores.
    let threads = 6
    let names = Self.names.map(\.name)
    let made = Mutex([Int: Result<[UInt8], any Error>]())
    let group = DispatchGroup()
    for thread in 0..<threads {
      group.enter()
      Thread {
        defer { group.leave() }
        // Each thread starts at another name, so different fonts meet.
        for step in 0..<names.count {
          let index = (step + thread * 5) % names.count
          let pdf = Result { try Self.card(names[index]).1 }
          made.withLock { $0[thread * names.count + index] = pdf }
        }
      }.start()
    }
    group.wait()
    let pdfs = made.withLock { $0 }
    #expect(pdfs.count == threads * names.count)
    for (index, name) in names.enumerated() {
      let first = try #require(pdfs[index]).get()
      #expect(first.starts(with: Array("%PDF-".utf8)), "\(name)")
      for thread in 1..<threads {
        #expect(try pdfs[thread * names.count + index]?.get() == first, "\(name), thread \(thread)")
      }
    }
  }

  @Test(
    "the name is drawn with the glyphs hb-shape gives, none missing, fonts embedded",
    arguments: names)
  func everyScript(_ sample: ScriptName) throws {
    let (layout, pdf) = try Self.card(sample.name)
    let block = try Self.block(of: sample.name, in: layout)
    let runs = try TextMeasurer().shapedRuns(block)
    #expect(!runs.isEmpty)
    // Runs are in visual order; in logical order they are the name.
    #expect(
      runs.sorted { $0.before.utf8.count < $1.before.utf8.count }.map(\.text).joined()
        == sample.name)
    for run in runs {
      #expect(!run.glyphs.isEmpty, "'\(run.text)' has no glyphs")
      #expect(!run.glyphs.contains(0), "'\(run.text)' has .notdef in \(run.fontFile)")
      #expect(
        !run.glyphs.contains { $0 & 0x1000_0000 != 0 }, "'\(run.text)' has a missing glyph")
      // Where a name wraps, Pango blanks the space that ends the line (PANGO_GLYPH_EMPTY, in
      // zero_line_final_space): a layout step after shaping, so that glyph is left out.
      var pango = run.glyphs
      var harfBuzz = try Self.hbShape(run)
      if run.text.last?.isWhitespace == true, pango.last == 0x0FFF_FFFF, !harfBuzz.isEmpty {
        pango.removeLast()
        harfBuzz.removeLast()
      }
      #expect(harfBuzz == pango, "'\(run.text)' in \(run.fontFile)")
    }
    let fonts = runs.filter { $0.fontFile.contains(sample.font) }
    #expect(!fonts.isEmpty, "\(sample.font) draws none of \(runs.map(\.fontFile))")

    let folder = TemporaryFolder()
    let path = folder.file("card.pdf")
    try Data(pdf).write(to: URL(fileURLWithPath: path))
    let listing = try runTool("pdffonts", [path])
    #expect(listing.status == 0)
    // name, type, encoding, then emb sub uni (yes/no) and the object: a row per font.
    let rows = listing.stdout.split(separator: "\n").dropFirst(2).map {
      $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }
    #expect(!rows.isEmpty)
    for row in rows where row.count >= 5 {
      #expect(row[row.count - 5] == "yes", "not embedded: \(row.joined(separator: " "))")
    }
    #expect(
      rows.contains { $0.first?.contains(sample.embedded) == true },
      "\(sample.embedded) not in \(listing.stdout)")
  }
}
