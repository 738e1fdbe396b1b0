// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: cards in the user's language: locales resolved, labels translated from the
// template's strings, dates and numbers from Foundation's locale data, right-to-left layout;
// read back from the PDF with poppler.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintCards

/// One locale and what harbor-lamp's card must print in it (CLDR's forms, checked by hand).
struct LocaleCase: Sendable, CustomTestStringConvertible {
  let locale: String
  /// The join month (March 2017) as the locale writes it.
  let date: String
  /// 2381 followers as the locale groups it.
  let followers: String
  var testDescription: String { locale }
}

/// The classic design's strings table for `language`, read from the file as JSON data.
func classicStrings(_ language: String) throws -> [String: String] {
  let data = try Data(contentsOf: URL(fileURLWithPath: templates + "/classic.json"))
  let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
  let strings = object?["strings"] as? [String: Any]
  return try #require(strings?[language] as? [String: String])
}

/// `text` without white space and format characters (poppler breaks lines and spaces words its
/// own way, wraps right-to-left runs in embedding marks and drops zero-width non-joiners).
func squeezed(_ text: String) -> String {
  String(
    String.UnicodeScalarView(
      text.unicodeScalars.filter {
        !$0.properties.isWhitespace && $0.properties.generalCategory != .format
      }))
}

@Suite("Cards in the user's language", .liveHandlesChecked)
struct CardLocaleTests {
  static let cases: [LocaleCase] = [
    LocaleCase(locale: "ko", date: "2017년 3월", followers: "2,381"),
    LocaleCase(locale: "ja", date: "2017年3月", followers: "2,381"),
    LocaleCase(locale: "zh-Hans", date: "2017年3月", followers: "2,381"),
    LocaleCase(locale: "zh-Hant", date: "2017年3月", followers: "2,381"),
    LocaleCase(locale: "hi", date: "मार्च 2017", followers: "2,381"),
    LocaleCase(locale: "bn", date: "মার্চ 2017", followers: "2,381"),
    LocaleCase(locale: "id", date: "Maret 2017", followers: "2.381"),
    LocaleCase(locale: "es", date: "marzo de 2017", followers: "2381"),
    LocaleCase(locale: "pt", date: "março de 2017", followers: "2.381"),
    LocaleCase(locale: "ru", date: "март 2017 г.", followers: "2\u{A0}381"),
    LocaleCase(locale: "tr", date: "Mart 2017", followers: "2.381"),
    LocaleCase(locale: "vi", date: "tháng 3 năm 2017", followers: "2.381"),
    LocaleCase(locale: "th", date: "มีนาคม 2017", followers: "2,381"),
    LocaleCase(locale: "ar", date: "مارس 2017", followers: "2,381"),
    LocaleCase(locale: "fa", date: "مارس 2017", followers: "2,381"),
  ]

  @Test("identifiers resolve to the template's strings by language, script and region")
  func resolution() throws {
    let template = try CardTemplate.load("classic", folder: templates)
    let expected = [
      "ko": "ko", "ko-KR": "ko", "zh-TW": "zh-Hant", "zh-HK": "zh-Hant", "zh-CN": "zh-Hans",
      "zh": "zh-Hans", "pt-BR": "pt", "pt_PT": "pt", "en-GB": "en", "es-MX": "es", "fa-IR": "fa",
    ]
    for (identifier, language) in expected {
      #expect(try CardLocale.resolve(identifier, template: template).language == language)
    }
    #expect(try CardLocale.resolve(nil, template: template).language == "en")
    for identifier in ["ar", "fa", "ar-EG", "ko", "hi", "en"] {
      let locale = try CardLocale.resolve(identifier, template: template)
      #expect(locale.isRightToLeft == ["ar", "fa", "ar-EG"].contains(identifier), "\(identifier)")
    }
    for unknown in ["xx", "english", "", "ko!", "12"] {
      #expect(resolveError(unknown, template) == CardError.unknownLocale(identifier: unknown))
    }
    let swahili = try #require(resolveError("sw", template))
    #expect(swahili.code == "card.untranslatedLocale")
    #expect(swahili.message.hasPrefix("template 'classic' has no strings for locale 'sw'; it has "))
    #expect(
      swahili.message.hasSuffix(
        "ar, bn, en, es, fa, hi, id, ja, ko, pt, ru, th, tr, vi, zh-Hans, zh-Hant"),
      "\(swahili.message)")
  }

  /// The error resolving `identifier` for `template` throws, or nil when it resolves.
  func resolveError(_ identifier: String, _ template: CardTemplate) -> CardError? {
    do {
      _ = try CardLocale.resolve(identifier, template: template)
      return nil
    } catch {
      return error
    }
  }

  @Test("fields: dates and grouping from the locale, Latin digits unless the template asks")
  func fields() throws {
    var template = try CardTemplate.load("classic", folder: templates)
    var profile = try sampleInput().profile
    profile.follow = FollowCounts(followers: 1_234_567, following: 417)
    let english = profile.fields(in: try CardLocale.resolve("en", template: template))
    #expect(english["joined"] == "Joined March 2017" && english["followers"] == "1,234,567")
    #expect(english == profile.fields, "English is what the fields always were")
    let hindi = profile.fields(in: try CardLocale.resolve("hi", template: template))
    #expect(hindi["followers"] == "12,34,567")  // Indian grouping: lakh and crore
    #expect(hindi["joined"] == "मार्च 2017 में जुड़े")
    let russian = profile.fields(in: try CardLocale.resolve("ru", template: template))
    #expect(russian["followers"] == "1\u{A0}234\u{A0}567")
    #expect(
      russian["reputationPrecise"]
        == english["reputationPrecise"]?.replacingOccurrences(of: ".", with: ","))
    let persian = profile.fields(in: try CardLocale.resolve("fa", template: template))
    #expect(persian["joinedDate"] == "مارس 2017" && persian["accountId"] == "#1284467")
    template.nativeDigits = true
    let native = profile.fields(in: try CardLocale.resolve("fa", template: template))
    #expect(native["joinedDate"] == "مارس ۲۰۱۷")
    #expect(native["followers"] == "۱٬۲۳۴٬۵۶۷")
    #expect(native["accountId"] == "#1284467", "ids stay Latin")
    // The reputation in Persian digits, with its decimal separator (U+066B), from the same
    // score the English card shows, however the kept answers were filled before.
    let persianDigits = Array("۰۱۲۳۴۵۶۷۸۹")
    func persianWritten(_ text: String) -> String {
      String(
        text.map { $0 == "." ? "\u{066B}" : $0.wholeNumberValue.map { persianDigits[$0] } ?? $0 })
    }
    let shown = try #require(english["reputation"])
    let precise = try #require(english["reputationPrecise"])
    #expect(native["reputation"] == persianWritten(shown))
    #expect(native["reputationPrecise"] == persianWritten(precise))
    #expect(persian["reputation"] == shown && persian["reputationPrecise"] == precise)
    #expect(
      profile.fields(in: try CardLocale.resolve("en", template: template)) == english,
      "asked again: the same")
  }

  @Test("the PDF reads back the translated labels and the formatted date", arguments: cases)
  func labels(_ fit: LocaleCase) throws {
    var options = CardOptions()
    options.locale = fit.locale
    let input = try sampleInput()
    let strings = try classicStrings(
      try CardLocale.resolve(fit.locale, template: input.template).language)
    let sample = try #require(strings["REPUTATION"])
    let library = try FontLibrary.bundled()
    guard library.uncoveredCharacters(in: sample).isEmpty else {
      // The script's font is not bundled yet: the card fails loudly rather than print boxes.
      #expect(throws: CardError.self) { _ = try CardMaker.pdf(input, options: options) }
      return
    }
    let card = try CardMaker.pdf(input, options: options)
    let folder = TemporaryFolder()
    let path = folder.file("card.pdf")
    try Data(card.bytes).write(to: URL(fileURLWithPath: path))
    let text = squeezed(try runTool("pdftotext", [path, "-"]).stdout)
    let filled: [String: String] = [
      "{platform} MEMBER": "Steem", "Account {accountId}": "#1284467",
      "Joined {joinedDate}": fit.date,
    ]
    for (source, translation) in strings {
      var expected = translation
      if let value = filled[source] {
        for name in ["{platform}", "{accountId}", "{joinedDate}"] {
          expected = expected.replacingOccurrences(of: name, with: value)
        }
      }
      if fit.locale == "ar" || fit.locale == "fa" {
        // Poppler gives right-to-left lines in visual order: each word, wherever it stands.
        for word in expected.split(separator: " ") {
          #expect(text.contains(squeezed(String(word))), "\(word) of \(expected) in \(text)")
        }
      } else {
        #expect(text.contains(squeezed(expected)), "\(source) → \(expected) in \(text)")
      }
    }
    #expect(text.contains(squeezed(fit.followers)), "\(fit.followers)")
    #expect(!text.contains("REPUTATION") && !text.contains("Joined"))
  }

  @Test("right-to-left cards are mirrored: photo on the right, name and labels set from the right")
  func mirrored() throws {
    var options = CardOptions()
    options.locale = "ar"
    let input = try sampleInput()
    let card = try CardMaker.pdf(input, options: options)
    let folder = TemporaryFolder()
    let path = folder.file("card.pdf")
    try Data(card.bytes).write(to: URL(fileURLWithPath: path))
    let pages = try pdfWords(path)
    let k = 72 / 25.4
    let bleed = input.template.bleed
    // Front: the name's box (x 29-82.4 mm) mirrored to 3.2-56.6 mm, its text against the right.
    let name = pages[0].filter { $0.word == "Mara" || $0.word == "Lindqvist" }
    #expect(name.count == 2)
    let nameRight = name.map(\.xMax).max() ?? 0
    #expect(abs(nameRight - (56.6 + bleed) * k) < 1, "\(nameRight)")
    #expect((name.map(\.xMin).min() ?? 0) >= (3.2 + bleed) * k - 0.5)
    // The handle, Latin in an Arabic card, keeps its order and sits on the right too.
    let handle = try #require(pages[0].first { $0.word == "@harbor-lamp" })
    #expect(abs(handle.xMax - (56.6 + bleed) * k) < 1)
    // Back: the reputation label (x 4.5-28.5 mm) mirrored to 57.1-81.1 mm, set from the right.
    let label = try #require(try classicStrings("ar")["REPUTATION"])
    // pdftotext -bbox lists a right-to-left word's letters as they sit on the page, from the
    // left (its plain text is in reading order).
    let labelWords = pages[1].filter { found in
      [found.word, String(found.word.reversed())].contains {
        label.contains($0) || $0.contains(label)
      }
    }
    #expect(!labelWords.isEmpty)
    #expect(abs((labelWords.map(\.xMax).max() ?? 0) - (81.1 + bleed) * k) < 1)
    // The URL, left of the QR code in English, is now right of it.
    var back = CardOptions()
    back.locale = "ar"
    back.faces = [.back]
    let png = try CardMaker.png(input, face: .back, options: back)
    try Data(png.bytes).write(to: URL(fileURLWithPath: folder.file("back.png")))
    #expect(try zbarDecode(folder.file("back.png")) == "https://steemit.com/@harbor-lamp")
    // The code's pure black modules: all in the left third of the card, none in the right.
    let bitmap = try ImageDecoder.decode(png.bytes, source: "back.png")
    var black = (left: 0, right: 0)
    for y in 0..<bitmap.height {
      for x in 0..<bitmap.width {
        let i = (y * bitmap.width + x) * 4
        guard bitmap.pixels[i] == 0 && bitmap.pixels[i + 1] == 0 && bitmap.pixels[i + 2] == 0
        else { continue }
        if x < bitmap.width / 3 {
          black.left += 1
        } else if x > bitmap.width * 2 / 3 {
          black.right += 1
        }
      }
    }
    #expect(black.left > 1000 && black.right == 0, "\(black)")
    let url = try #require(pages[1].first { $0.word.contains("steemit.com/@harbor-lamp") })
    #expect(url.xMin > (28.5 + bleed) * k, "the URL line mirrored to the right half: \(url)")
  }

  @Test("a template's strings are checked: every text translated, placeholders kept")
  func invalidStrings() throws {
    func parse(_ edit: (inout [String: Any]) -> Void) throws -> CardTemplate {
      let bytes = try TemplateTests.variant(edit)
      return try CardTemplate.parse(bytes, name: "house.json", folder: templates)
    }
    let cases: [(String, (inout [String: Any]) -> Void)] = [
      (
        "'strings.ko' has no translation of 'IDENTITY CARD'",
        { object in
          var strings = object["strings"] as? [String: Any] ?? [:]
          var korean = strings["ko"] as? [String: Any] ?? [:]
          korean["IDENTITY CARD"] = nil
          strings["ko"] = korean
          object["strings"] = strings
        }
      ),
      (
        "must use the placeholders of its source text ({platform}); found '회원'",
        { object in
          var strings = object["strings"] as? [String: Any] ?? [:]
          var korean = strings["ko"] as? [String: Any] ?? [:]
          korean["{platform} MEMBER"] = "회원"
          strings["ko"] = korean
          object["strings"] = strings
        }
      ),
      (
        "'strings.klingon' names no language Imprint has data for",
        { object in
          var strings = object["strings"] as? [String: Any] ?? [:]
          strings["klingon"] = strings["ko"]
          object["strings"] = strings
        }
      ),
      ("'locale' names no language Imprint has data for: 'xx'", { $0["locale"] = "xx" }),
      ("'digits' must be 'latin' or 'native'; found 'roman'", { $0["digits"] = "roman" }),
    ]
    for (message, edit) in cases {
      do {
        _ = try parse(edit)
        Issue.record("must be refused: \(message)")
      } catch let error as CardError {
        #expect(error.code == "template.invalid")
        #expect(error.message.hasPrefix("template 'house.json': "))
        #expect(error.message.contains(message), "\(error.message)")
      }
    }
    // A language added by strings alone: no code, and the card prints it.
    let swahili = try parse { object in
      var strings = object["strings"] as? [String: Any] ?? [:]
      var table = strings["id"] as? [String: String] ?? [:]
      table["REPUTATION"] = "SIFA"
      strings["sw"] = table
      object["strings"] = strings
    }
    var input = try sampleInput()
    input.template = swahili
    var options = CardOptions()
    options.locale = "sw"
    options.faces = [.back]
    let (layouts, _) = try CardMaker.layouts(input, options: options)
    let texts = layouts[0].items.compactMap { item -> String? in
      if case .text(let block, _, _, _, _) = item { block.text } else { nil }
    }
    #expect(texts.contains("SIFA") && texts.contains("Bergabung Machi 2017"))
  }
}
