// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: long names fitted as templates/README.md documents, read back from the PDF:
// lines and boxes with poppler (pdftotext -bbox), sizes and the glyphs drawn with Ghostscript
// (txtwrite), widths from HarfBuzz's own hb-shape.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintCards

/// What a name must become on the classic front (53.4 × 11 mm, 15 pt down to 8 pt, 3 lines).
enum FitOutcome: String, Sendable {
  /// One line, at the size that fills the width (or the full size).
  case oneLine
  /// Two or more lines, nothing cut.
  case wraps
  /// Cut with an ellipsis at `minSize`: even every line full could not hold it.
  case ellipsis
}

/// One name and what the documented fitting must make of it.
struct FitCase: Sendable, CustomTestStringConvertible {
  let script: String
  let name: String
  let outcome: FitOutcome
  /// The name is set in DejaVu Sans Bold (so hb-shape can measure it with that file).
  var dejaVu = true
  var testDescription: String { "\(script): \(outcome.rawValue) (\(name.count) characters)" }
}

/// A run of glyphs as Ghostscript's txtwrite saw it drawn: size, baseline and characters.
struct DrawnSpan {
  let size: Double
  let x0: Double
  let x1: Double
  let baseline: Double
  let text: String
}

/// Every span of glyphs on the PDF's first page, from `gs -sDEVICE=txtwrite -dTextFormat=0`:
/// the glyphs the page draws, mapped through ToUnicode (not the ActualText a reader would show
/// in place of an ellipsis).
func drawnSpans(_ pdf: String) throws -> [DrawnSpan] {
  let result = try runTool(
    "gs", ["-q", "-dNOPAUSE", "-dBATCH", "-sDEVICE=txtwrite", "-dTextFormat=0", "-o", "-", pdf])
  var spans: [DrawnSpan] = []
  var current: (size: Double, x0: Double, x1: Double, y: Double)?
  var text = ""
  func attribute(_ name: String, _ line: Substring) -> String {
    guard let range = line.range(of: "\(name)=\"") else { return "" }
    return String(line[range.upperBound...].prefix { $0 != "\"" })
  }
  for line in result.stdout.split(separator: "\n") {
    let trimmed = line.drop { $0 == " " }
    if trimmed.hasPrefix("<span ") {
      let box = attribute("bbox", trimmed).split(separator: " ").compactMap { Double($0) }
      guard box.count == 4, let size = Double(attribute("size", trimmed)) else { continue }
      current = (size, box[0], box[2], box[1])
      text = ""
    } else if trimmed.hasPrefix("<char "), current != nil {
      text += xmlUnescaped(attribute("c", trimmed))
    } else if trimmed.hasPrefix("</span>"), let span = current {
      spans.append(
        DrawnSpan(size: span.size, x0: span.x0, x1: span.x1, baseline: span.y, text: text))
      current = nil
    }
  }
  return spans
}

/// `&#x644;`, `&amp;` and the other XML escapes txtwrite writes, decoded.
func xmlUnescaped(_ text: String) -> String {
  var result = ""
  var rest = Substring(text)
  while let amp = rest.firstIndex(of: "&"), let semi = rest[amp...].firstIndex(of: ";") {
    result += rest[..<amp]
    let entity = rest[rest.index(after: amp)..<semi]
    switch entity {
    case "amp": result += "&"
    case "lt": result += "<"
    case "gt": result += ">"
    case "quot": result += "\""
    case "apos": result += "'"
    default:
      let hex = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : nil
      let decimal = entity.hasPrefix("#") && hex == nil ? UInt32(entity.dropFirst()) : nil
      if let value = hex ?? decimal, let scalar = Unicode.Scalar(value) {
        result.unicodeScalars.append(scalar)
      } else {
        result += rest[amp...semi]
      }
    }
    rest = rest[rest.index(after: semi)...]
  }
  return result + rest
}

/// The advance of `text` in em, shaped by HarfBuzz's hb-shape with `font` (kerning included).
func shapedWidth(_ text: String, font: String) throws -> Double {
  let result = try runTool(
    "hb-shape", ["--font-size=1000", "--output-format=json", "--no-glyph-names", font, text])
  let data = Data(result.stdout.utf8)
  let glyphs = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
  return glyphs.reduce(0) { $0 + (($1["ax"] as? NSNumber)?.doubleValue ?? 0) } / 1000
}

/// The characters of `text` other than white space, compatibility-normalised (a lam-alef
/// ligature reads back as its presentation form), sorted: what must be drawn, in any order.
func inkCharacters(_ text: String) -> [String] {
  text.precomposedStringWithCompatibilityMapping.unicodeScalars
    .filter { !$0.properties.isWhitespace }.map { String($0) }.sorted()
}

@Suite("Text fitting of long names", .liveHandlesChecked)
struct TextFittingTests {
  static let boldFont =
    repositoryRoot + "/Sources/ImprintGraphics/Resources/fonts/dejavu/DejaVuSans-Bold.ttf"

  static let cases: [FitCase] = [
    FitCase(script: "Latin", name: "Mara Lindqvist", outcome: .oneLine),
    // Two lines could be at most 13.4 pt (the box's height), under 10 % more than one line.
    FitCase(script: "Latin", name: "Evangeline Alexandra", outcome: .oneLine),
    FitCase(script: "Latin", name: "Alexandra Konstantinopoulou", outcome: .wraps),
    FitCase(script: "Latin hyphenated", name: "Mara Lindqvist-Konstantinopoulou", outcome: .wraps),
    FitCase(
      script: "Latin, 67 characters",
      name: "Evangeline Alexandra Konstantinopoulou-Featherstonehaugh de la Cruz", outcome: .wraps),
    FitCase(
      script: "Latin single word", name: "Wolfeschlegelsteinhausenbergerdorff", outcome: .wraps),
    FitCase(
      script: "Latin, too long",
      name: String(repeating: "Konstantinopoulou Featherstonehaugh ", count: 4) + "Cruz",
      outcome: .ellipsis),
    FitCase(
      script: "Cyrillic", name: "Александра Константинопольская-Вольфшлегель", outcome: .wraps),
    FitCase(
      script: "Cyrillic single word", name: "Константинопольскаявольфшлегельштейн", outcome: .wraps),
    FitCase(script: "Arabic", name: "ليلى عبد الرحمن بن سلطان آل مكتوم الهاشمية", outcome: .wraps),
    FitCase(
      script: "CJK, no spaces", name: "山田太郎左衛門之助藤原朝臣長谷川義経三郎兵衛", outcome: .wraps,
      dejaVu: false),
    // 90 ideographs are 90 em: 720 pt at 8 pt, against 3 lines of 151.4 pt.
    FitCase(
      script: "CJK, too long", name: String(repeating: "山田太郎左衛門之助藤原朝臣長谷川義", count: 6),
      outcome: .ellipsis, dejaVu: false),
    FitCase(
      script: "Korean, no spaces", name: "박서준김민지이하늘최수아정우성한가람", outcome: .wraps,
      dejaVu: false),
    FitCase(
      script: "Korean", name: "황보 서준 민지 하늘 수아 가람 우성 다온 이든", outcome: .wraps, dejaVu: false),
  ]

  @Test(
    "long names shrink, wrap between words, and are cut only when nothing fits", arguments: cases)
  func fitted(_ fit: FitCase) throws {
    var input = try sampleInput()
    input.profile.displayName = fit.name
    var options = CardOptions()
    options.faces = [.front]
    let card = try CardMaker.pdf(input, options: options)
    #expect(card.warnings.contains { $0.contains("ellipsis") } == (fit.outcome == .ellipsis))
    let folder = TemporaryFolder()
    let path = folder.file("front.pdf")
    try Data(card.bytes).write(to: URL(fileURLWithPath: path))

    // The name element of the classic front, in page points (the page starts at the bleed).
    let element = try #require(
      input.template.front.elements.lazy.compactMap { element -> TextElement? in
        if case .text(let text) = element, text.text == "{displayName}" { text } else { nil }
      }.first)
    let k = 72 / 25.4
    let bleed = input.template.bleed
    let (left, top) = ((element.box.x + bleed) * k, (element.box.y + bleed) * k)
    let (right, bottom) = (left + element.box.width * k, top + element.box.height * k)
    let width = element.box.width * k
    let height = element.box.height * k

    // Poppler: every word touching the box lies inside it.
    let words = try #require(try pdfWords(path).first).filter { word in
      word.xMax > left && word.xMin < right && word.yMax > top && word.yMin < bottom
    }
    #expect(!words.isEmpty)
    for word in words {
      #expect(
        word.xMin >= left - 0.3 && word.xMax <= right + 0.3 && word.yMin >= top - 0.3
          && word.yMax <= bottom + 0.3, "\(word) outside \(left) \(top) \(right) \(bottom)")
    }
    let popplerLines = Set(words.map { ($0.yMax * 2).rounded() / 2 }).count

    // Ghostscript: the glyphs drawn in the box, their size and their lines.
    let spans = try drawnSpans(path).filter { span in
      span.baseline > top && span.baseline < bottom && span.x0 >= left - 1 && span.x0 < right
    }
    let sizes = Set(spans.map(\.size))
    #expect(sizes.count == 1, "one size for the whole name: \(sizes)")
    let size = try #require(sizes.first)
    #expect(size >= element.minSize && size <= element.size)
    let baselines = Set(spans.map(\.baseline)).sorted()
    #expect(baselines.count == popplerLines, "gs and poppler see the same lines")
    #expect(baselines.count <= element.maxLines)
    let drawn = spans.map(\.text).joined()
    // Pango cuts with U+2026, or U+22EF (midline) in Chinese and Japanese text.
    let cut = drawn.contains("…") || drawn.contains("⋯")
    #expect(cut == (fit.outcome == .ellipsis), "\(drawn)")
    // The line height the PDF declares (ascent + descent), from the tallest word.
    let lineHeight = (words.map { $0.yMax - $0.yMin }.max() ?? 0) / size
    #expect(Double(baselines.count) * lineHeight * size <= height + 0.5)

    switch fit.outcome {
    case .oneLine:
      #expect(baselines.count == 1)
      #expect(inkCharacters(drawn) == inkCharacters(fit.name))
      // The size that fills the width, from HarfBuzz's advances, on the quarter-point grid.
      let em = try shapedWidth(fit.name, font: Self.boldFont)
      let expected = min(element.size, ((width / em) * 4).rounded(.down) / 4)
      #expect(abs(size - expected) <= 0.25, "\(size) against \(expected)")
      // Two lines could not have been 10 % larger: their height alone allows no more.
      #expect(height / (2 * lineHeight) < size * CardLayoutEngine.wrapGain)
    case .wraps:
      #expect(baselines.count >= 2)
      // The whole name is drawn; a word broken inside gets a hyphen (U+2010) at the break.
      let breaks = fit.script.hasSuffix("single word") ? baselines.count - 1 : 0
      #expect(
        inkCharacters(drawn)
          == inkCharacters(fit.name + String(repeating: "\u{2010}", count: breaks)))
      if fit.dejaVu {
        // Wrapping was worth it: one line would have been more than 10 % smaller.
        let em = try shapedWidth(fit.name, font: Self.boldFont)
        #expect(width / em * CardLayoutEngine.wrapGain <= size + 0.25)
      }
    case .ellipsis:
      #expect(size == element.minSize)
      // As many lines as the box holds.
      #expect(
        baselines.count == element.maxLines
          || Double(baselines.count + 1) * lineHeight * size > height)
      if fit.dejaVu {
        // Independently of where lines break, the name is wider than all lines together.
        let em = try shapedWidth(fit.name, font: Self.boldFont)
        #expect(em * element.minSize > Double(element.maxLines) * width)
      } else {
        // Ideographs are one em each.
        #expect(Double(fit.name.count) * element.minSize > Double(element.maxLines) * width)
      }
    }
    if fit.script.hasPrefix("Latin hyphenated") {
      // The line breaks after the hyphen, which stays at the end of the first line.
      #expect(words.contains { $0.word == "Lindqvist-" })
    }
    if fit.script.hasSuffix("single word") {
      // No break opportunity: the word is broken inside, since it is wider than a line at 8 pt.
      #expect(try shapedWidth(fit.name, font: Self.boldFont) * element.minSize > width)
    }
    if fit.script == "Arabic" {
      // Right-to-left: natural alignment puts every line against the box's right edge.
      for baseline in baselines {
        let end = spans.filter { $0.baseline == baseline }.map(\.x1).max() ?? 0
        #expect(abs(end - right) <= 1.5, "line at \(baseline) ends at \(end), box at \(right)")
      }
    }
  }

  @Test("the same long name gives the same bytes, and a name that fits is set at full size")
  func deterministic() throws {
    var input = try sampleInput()
    input.profile.displayName =
      "Evangeline Alexandra Konstantinopoulou-Featherstonehaugh de la Cruz"
    let a = try CardMaker.pdf(input, options: CardOptions())
    let b = try CardMaker.pdf(input, options: CardOptions())
    #expect(a.bytes == b.bytes)
    input.profile.displayName = "Mara"
    let (layouts, _) = try CardMaker.layouts(input, options: CardOptions())
    let sizes = layouts[0].items.compactMap { item -> Double? in
      if case .text(let block, _, _, _, _) = item, block.text == "Mara" {
        block.style.size
      } else {
        nil
      }
    }
    #expect(sizes == [15])
  }
}
