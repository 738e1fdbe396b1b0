// SPDX-License-Identifier: Apache-2.0
// ImprintPricingTests: the receipt of a quote computed by hand, in English and in other locales.

import Foundation
import ImprintPricing
import ImprintTestSupport
import Testing

/// A quote computed by hand, with every kind of line: 9 pages duplex (page 2 colour) × 3
/// copies with a staple, a volume tier, an adjustment, the minimum and tax added.
///
/// Per copy: impressions 1-8 two-sided (7 × 8 + colour 40 = 96), the odd 9th one-sided mono
/// 10: 106; × 3 = 318. Paper 5 sheets × 2 × 3 = 30; staple 25 × 3 = 75; file 423. The tier
/// (past 20 impressions, -50 %): impressions 21-27 are the third copy's 3rd to 9th, 6 × 8 + 10
/// = 58, so -29; subtotal 394. Rush +50 %: +197 = 591. Minimum 1000: +409. Tax 10 % added:
/// +100. Total 1100.
func handQuote() throws -> Quote {
  let list = try usdList([
    "tiers": [["fromImpressions": 20, "percent": -50]],
    "adjustments": [["name": "rush", "percent": 50]], "minimumOrder": 1000,
    "tax": ["percent": 10, "included": false],
  ])
  return try quote(
    list, pages: 9, colorPages: [2],
    ["duplex": "long-edge", "copies": 3, "color": "auto", "extras": ["staple"]])
}

@Suite("Receipts", .liveHandlesChecked)
struct ReceiptTests {
  @Test("the English receipt of the hand-computed quote, line by line")
  func english() throws {
    let expected = """
      Campus Print — price list 2026-fall

      doc.pdf
        9 of 9 pages, 1-up, two-sided (long-edge), A4 plain, auto
        9 impressions (1 colour, 0 blank) on 5 sheets × 3 copies
        printing                          USD 3.18
        paper                             USD 0.30
        staple                            USD 0.75
        file total                        USD 4.23
      volume (past 20 impressions: -50%) USD -0.29
      subtotal                            USD 3.94
      rush                                USD 1.97
      to the minimum order                USD 4.09
      tax                                 USD 1.00
      TOTAL                              USD 11.00

      """
    let text = try handQuote().receipt()
    #expect(text == expected, "\(text)")
  }

  @Test("one page, one impression, one sheet, one copy: the singular forms")
  func singular() throws {
    let text = try quote(try usdList(), pages: 1).receipt()
    #expect(text.contains("  1 of 1 page, 1-up, one-sided, A4 plain, mono\n"))
    #expect(text.contains("  1 impression (0 colour, 0 blank) on 1 sheet × 1 copy\n"))
  }

  @Test("names in Hangul take two columns a character: their amounts still end at column 44")
  func wideNames() throws {
    let list = try usdList([
      "extras": ["스테이플": ["per": "copy", "amount": 25]],
      "adjustments": [["name": "급행 요금", "percent": 100]],
    ])
    // 10 + paper 2 + staple 25 = 37; +100 %: +37.
    let text = try quote(list, pages: 1, ["extras": ["스테이플"]]).receipt()
    // "  스테이플": 2 + 4 × 2 = 10 columns, so 26 spaces before the 8 of "USD 0.25".
    #expect(text.contains("\n  스테이플" + String(repeating: " ", count: 26) + "USD 0.25\n"), "\(text)")
    // "급행 요금": 2 × 2 + 1 + 2 × 2 = 9 columns, so 27 spaces.
    #expect(text.contains("\n급행 요금" + String(repeating: " ", count: 27) + "USD 0.37\n"), "\(text)")
  }

  @Test(
    "the receipt in Korean, Japanese, Chinese (Taiwan), Spanish, Russian and Arabic: the words by hand, every number as Foundation writes it, amounts ending at column 44",
    arguments: ["ko", "ja", "zh-TW", "es", "ru", "ar"])
  func localized(identifier: String) throws {
    // Receipts/README.md describes the files.
    let path = repositoryRoot + "/Tests/ImprintPricingTests/Receipts/\(identifier).txt"
    var lines = try String(contentsOfFile: path, encoding: .utf8).split(
      separator: "\n", omittingEmptySubsequences: false
    ).dropLast()
    let heading = lines.removeFirst().split(separator: " ")
    #expect(heading.count >= 3 && heading[1] == identifier)
    let locale = Locale(identifier: String(heading[2]))
    let posix = Locale(identifier: "en_US_POSIX")
    let percent = try #require(Decimal(string: "-0.5", locale: posix)).formatted(
      .percent.locale(locale))
    /// Columns of Foundation's text: every scalar but bidi marks (it holds no wide character).
    func columns(_ text: String) -> Int {
      text.unicodeScalars.filter { $0.properties.generalCategory != .format }.count
    }
    /// `{9}` as Foundation writes the count, `{%}` as it writes -50 %.
    func filled(_ line: Substring) -> String {
      var text = String(line).replacingOccurrences(of: "{%}", with: percent)
      while let range = text.range(of: #"\{[0-9]+\}"#, options: .regularExpression) {
        let count = Int(text[range].dropFirst().dropLast()) ?? -1
        text.replaceSubrange(range, with: count.formatted(.number.locale(locale)))
      }
      return text
    }
    var expected = ""
    for line in lines {
      var text = filled(line)
      let row = line.split(separator: "|", omittingEmptySubsequences: false)
      if row.count == 3, let labelColumns = Int(row[1]) {
        let amount = try #require(Decimal(string: String(row[2]), locale: posix)).formatted(
          .currency(code: "USD").locale(locale))
        let width = labelColumns + (row[0].contains("{%}") ? columns(percent) : 0)
        text =
          filled(row[0]) + String(repeating: " ", count: max(1, 44 - width - columns(amount)))
          + amount
      }
      expected += (text.isEmpty || heading.count < 4 ? "" : "\u{200E}") + text + "\n"
    }
    let text = try handQuote().receipt(locale: identifier)
    #expect(text == expected, "\(text)")
    #expect(!text.contains("USD"))
  }

  @Test(
    "each count takes its language's plural form: Russian one, few, many; Arabic one, two, few, many, other",
    arguments: [
      ("ru", 1, "× 1 экземпляр\n"), ("ru", 2, "× 2 экземпляра\n"), ("ru", 5, "× 5 экземпляров\n"),
      ("ru", 11, "× 11 экземпляров\n"), ("ru", 21, "× 21 экземпляр\n"),
      ("ru", 22, "× 22 экземпляра\n"),
      ("ar", 1, "× نسخة واحدة\n"), ("ar", 2, "× نسختان\n"), ("ar", 3, "× 3 نسخ\n"),
      ("ar", 11, "× 11 نسخة\n"), ("ar", 100, "× 100 نسخة\n"), ("ar", 103, "× 103 نسخ\n"),
      ("es", 1, "× 1 copia\n"), ("es", 2, "× 2 copias\n"), ("hi", 1, "× 1 प्रति\n"),
      ("hi", 2, "× 2 प्रतियाँ\n"), ("ko", 1, "× 1부\n"), ("ko", 2, "× 2부\n"),
    ])
  func plurals(language: String, copies: Int, ending: String) throws {
    let text = try quote(try usdList(), pages: 2, ["copies": copies]).receipt(locale: language)
    #expect(text.contains(ending), "\(text)")
  }

  @Test("a two-page document in Arabic is the dual, after 'of' in its genitive form")
  func arabicDual() throws {
    let text = try quote(try usdList(), pages: 2).receipt(locale: "ar")
    #expect(text.contains("  2 من صفحتين، "), "\(text)")
    #expect(text.contains("طبعتان (ملونة: 0، فارغة: 0) على ورقتين × نسخة واحدة"), "\(text)")
  }

  @Test(
    "identifiers find their language's words; a language without translations keeps the English words with its own numbers",
    arguments: [
      ("zh-CN", "价目表"), ("zh-Hans", "价目表"), ("zh-HK", "價目表"), ("pt-BR", "tabela de preços"),
      ("pt_PT", "tabela de preços"), ("es-MX", "lista de precios"), ("ko-KR", "가격표"),
      ("en-GB", "price list"), ("de", "price list"),
    ])
  func lookup(identifier: String, header: String) throws {
    let text = try handQuote().receipt(locale: identifier)
    #expect(text.hasPrefix("Campus Print — \(header) "), "\(text)")
  }

  @Test("German numbers with English words: 11,00 $ as Foundation writes it")
  func untranslated() throws {
    let text = try handQuote().receipt(locale: "de")
    let total = try #require(Decimal(string: "11.00", locale: Locale(identifier: "en_US_POSIX")))
      .formatted(.currency(code: "USD").locale(Locale(identifier: "de")))
    #expect(text.contains("\nTOTAL ") && text.hasSuffix(" \(total)\n"), "\(text)")
  }

  @Test("names holding braces are printed as they are, never read as placeholders")
  func braces() throws {
    let list = try usdList(["store": "{version} {n}"])
    var quote = try quote(list, pages: 1)
    quote.message = "{message} {store}"
    for locale in [nil, "ko", "ru"] {
      let text = try quote.receipt(locale: locale)
      #expect(text.hasPrefix("{version} {n} — "), "\(text)")
      #expect(text.hasSuffix(": {message} {store}\n"), "\(text)")
    }
  }

  @Test("the shipped translations: every language cards are printed in, every phrase, read whole")
  func shipped() throws {
    let table = try ReceiptTranslations.shipped()
    #expect(
      Set(table.languages.keys) == [
        "ar", "bn", "es", "fa", "hi", "id", "ja", "ko", "pt", "ru", "th", "tr", "vi", "zh-Hans",
        "zh-Hant",
      ])
    // Each language's receipt differs from the English one in every word line.
    let english = try handQuote().receipt().split(separator: "\n")
    for language in table.languages.keys {
      let lines = try handQuote().receipt(locale: language).split(separator: "\n")
      #expect(lines.count == english.count)
      for index in [0, 3, 4] { #expect(lines[index] != english[index], "\(language)") }
    }
  }

  static let validLanguage = #"""
    {"plurals": {"one": "n = 1"}, "words": {"header": "{store} {version}",
    "selection": "{selected} {pages} {nUp} {sides} {paper} {paperType} {colorMode}",
    "pages": {"one": "{n} p", "other": "{n} pp"}, "nUp": "{n}", "oneSided": "1", "twoSided": "2 {edge}",
    "longEdge": "l", "shortEdge": "s", "color": "c", "mono": "m", "auto": "a",
    "printed": "{impressions} {colorImpressions} {blankImpressions} {sheets} {copies}",
    "impressions": "{n}", "colorImpressions": "{n}", "blankImpressions": "{n}", "sheets": "{n}",
    "copies": "{n}", "printing": "p", "paper": "p", "fileTotal": "f", "cards": "c", "volume": "v {tier}",
    "tier": "{n} {percent}", "subtotal": "s", "minimum": "m", "taxIncluded": "t", "tax": "t",
    "total": "T", "message": "{message}"}}
    """#

  @Test(
    "a table of translations with a mistake is refused, naming the language and phrase",
    arguments: [
      (
        #""header": "{store} {version}","#, #""header": "{store}","#,
        "'languages.xx.words.header' is without {version}"
      ),
      (#""nUp": "{n}","#, #""nUp": "{n} {pages}","#, "'languages.xx.words.nUp' is '{pages}'"),
      (
        #""pages": {"one": "{n} p", "other": "{n} pp"},"#, #""pages": {"other": "{n} pp"},"#,
        "'languages.xx.words.pages.one' is missing"
      ),
      (
        #""pages": {"one": "{n} p", "other": "{n} pp"},"#,
        #""pages": {"one": "p", "two": "x", "other": "{n} pp"},"#,
        "'languages.xx.words.pages.two' is not a known key"
      ),
      (#""tax": "t","#, "", "'languages.xx.words.tax' is missing"),
      (
        #""tax": "t","#, #""tax": "t", "taxes": "t","#,
        "'languages.xx.words.taxes' is not a known key"
      ),
      (#""one": "n = 1""#, #""one": "n == 1""#, "'languages.xx.plurals' is not CLDR syntax"),
      (#""one": "n = 1""#, #""other": "n = 1""#, "'languages.xx.plurals.other' is a rule"),
    ])
  func invalid(find: String, replace: String, message: String) throws {
    let language = Self.validLanguage.replacingOccurrences(of: find, with: replace)
    let good = #"{"schemaVersion": 1, "languages": {"xx": \#(Self.validLanguage)}}"#
    let bad = #"{"schemaVersion": 1, "languages": {"xx": \#(language)}}"#
    #expect(language != Self.validLanguage)
    let table = try ReceiptTranslations.parse(Array(good.utf8), source: "words.json")
    #expect(table.languages["xx"]?.identifier == "xx")
    do {
      _ = try ReceiptTranslations.parse(Array(bad.utf8), source: "words.json")
      Issue.record("accepted: \(language)")
    } catch {
      #expect(error.message.hasPrefix("'words.json': \(message)"), "\(error.message)")
    }
  }

  @Test("a table that cannot be read is the file error, naming the path")
  func missingTable() {
    #expect(throws: PricingError.file(.notFound(path: "/nonexistent/words.json"))) {
      try ReceiptTranslations.load("/nonexistent/words.json")
    }
  }

  @Test("an identifier with no locale data is pricing.unknownLocale")
  func unknownLocale() throws {
    #expect(throws: PricingError.unknownLocale(identifier: "xx")) {
      try handQuote().receipt(locale: "xx")
    }
  }
}
