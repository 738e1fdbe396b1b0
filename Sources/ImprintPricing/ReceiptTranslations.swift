// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: the receipt's translations, read from this module's resources
// (`Resources/receipt-translations.json`) or from a deployment's own file, checked whole.

import Foundation
import ImprintCore

/// The receipt's words in the languages of one table of translations.
///
/// The table is JSON: `{"schemaVersion": 1, "about": "...", "languages": {"ko": {"plurals":
/// {...}, "words": {...}}, ...}}`. A language's `plurals` are its CLDR plural rules for whole numbers (`{"one":
/// "i = 1 and v = 0"}`; none for Korean, Japanese, Chinese); its `words` give every
/// `ReceiptWord` by name, a string, or an object with a form for each category its rules can
/// give and `other` (`{"one": "{n} страница", "few": ..., "many": ..., "other": ...}`). Each form
/// uses only the English phrase's placeholders, and all of them but the count `{n}`. Adding a
/// language is adding its entry: no code.
public struct ReceiptTranslations: Sendable, Equatable {
  /// The languages by their key in the table (`ko`, `zh-Hant`, `pt`).
  public let languages: [String: ReceiptLanguage]

  /// The translations shipped with Imprint, read once from this module's resource bundle.
  ///
  /// - Throws: `PricingError.file` (`file.notFound`) when the bundle is not deployed beside the
  ///   executable.
  public static func shipped() throws(PricingError) -> ReceiptTranslations {
    try shippedResult.get()
  }

  private static let shippedResult = Result { () throws(PricingError) -> ReceiptTranslations in
    let name = "receipt-translations.json"
    guard let path = ResourceBundle.path(of: name, module: "ImprintPricing", bundle: .module)
    else {
      throw .file(.notFound(path: ResourceBundle.location(module: "ImprintPricing") + "/" + name))
    }
    return try load(path)
  }

  /// Reads a table of translations from `path` (a deployment's own, or the shipped one).
  ///
  /// - Throws: `PricingError.file` when it cannot be read; `.invalidJSON`, `.invalidField` or
  ///   `.unknownKey` naming the language and phrase that is wrong.
  public static func load(_ path: String) throws(PricingError) -> ReceiptTranslations {
    let bytes: [UInt8]
    do {
      bytes = try FileIO.read(path, limit: FileIO.Limit.structured)
    } catch {
      throw .file(error)
    }
    return try parse(bytes, source: path)
  }

  /// Parses a table of translations.
  ///
  /// - Throws: `PricingError.invalidJSON`, `.invalidField` (a missing phrase or form, a form for
  ///   a category the rules cannot give, an unknown or missing placeholder, a rule that is not
  ///   CLDR syntax) or `.unknownKey`, naming the language and phrase.
  public static func parse(_ bytes: [UInt8], source: String) throws(PricingError)
    -> ReceiptTranslations
  {
    var top = try JSONReader.parse(bytes, source: source)
    guard try top.integer("schemaVersion") == 1 else {
      throw .invalidField(
        source: source, field: "schemaVersion", value: describe(top.object["schemaVersion"]),
        expected: "1")
    }
    _ = try top.string("about")
    guard var table = try top.child("languages") else {
      throw .invalidField(
        source: source, field: "languages", value: "missing",
        expected: "an object of languages, each with its plurals and words")
    }
    var languages: [String: ReceiptLanguage] = [:]
    for identifier in table.object.keys.sorted() {
      guard var entry = try table.child(identifier) else { continue }
      languages[identifier] = try language(identifier, &entry)
      try entry.finish()
    }
    try table.finish()
    try top.finish()
    return ReceiptTranslations(languages: languages)
  }

  /// One language's entry, checked against English's phrases and placeholders.
  private static func language(_ identifier: String, _ entry: inout JSONReader) throws(PricingError)
    -> ReceiptLanguage
  {
    let source = entry.source
    var conditions: [PluralCategory: String] = [:]
    if var plurals = try entry.child("plurals") {
      for name in plurals.object.keys.sorted() {
        guard let category = PluralCategory(rawValue: name), category != .other else {
          throw .invalidField(
            source: source, field: plurals.key(name), value: "a rule",
            expected: "rules for zero, one, two, few or many (other is what none matches)")
        }
        conditions[category] = try plurals.string(name)
      }
      try plurals.finish()
    }
    guard let rules = PluralRules(conditions) else {
      throw .invalidField(
        source: source, field: entry.key("plurals"), value: "not CLDR syntax",
        expected: "CLDR plural conditions such as 'v = 0 and i % 10 = 1 and i % 100 != 11'")
    }
    guard var table = try entry.child("words") else {
      throw .invalidField(
        source: source, field: entry.key("words"), value: "missing",
        expected: "every phrase of the receipt")
    }
    var words: [ReceiptWord: [PluralCategory: String]] = [:]
    for word in ReceiptWord.allCases {
      let field = table.key(word.rawValue)
      let forms: [PluralCategory: String]
      switch table.value(word.rawValue) {
      case let text as String:
        forms = [.other: text]
      case let object as [String: Any]:
        let expected = rules.categories.map(\.rawValue).sorted().joined(separator: ", ")
        var reader = try JSONReader(object, source: source, path: field)
        var found: [PluralCategory: String] = [:]
        for category in rules.categories {
          guard let text = try reader.string(category.rawValue) else {
            throw .invalidField(
              source: source, field: reader.key(category.rawValue), value: "missing",
              expected: "a form for each of \(expected)")
          }
          found[category] = text
        }
        try reader.finish()
        forms = found
      case nil:
        throw .invalidField(
          source: source, field: field, value: "missing", expected: "the phrase's translation")
      case let other:
        throw .invalidField(
          source: source, field: field, value: describe(other),
          expected: "a string, or an object with a form per plural category")
      }
      let allowed = word.placeholders
      for (category, text) in forms {
        let used = Set(ReceiptLanguage.placeholders(in: text))
        let form = forms.count == 1 ? field : "\(field).\(category.rawValue)"
        if let unknown = used.subtracting(allowed).sorted().first {
          throw .invalidField(
            source: source, field: form, value: quoted("{\(unknown)}"),
            expected: "only the English phrase's placeholders: \(listed(allowed))")
        }
        if let missing = allowed.subtracting(used).subtracting(["n"]).sorted().first {
          throw .invalidField(
            source: source, field: form, value: "without {\(missing)}",
            expected: "every placeholder of the English phrase: \(listed(allowed))")
        }
      }
      words[word] = forms
    }
    try table.finish()
    return ReceiptLanguage(identifier: identifier, plurals: rules, words: words)
  }

  /// The language whose words a receipt for `identifier` uses: the most specific key of
  /// `LocaleData.lookupKeys` in the table (`zh-TW` → `zh-Hant`, `pt-BR` → `pt`), English for
  /// `en`, and English for a language the table does not have.
  public func language(for identifier: String) -> ReceiptLanguage {
    for key in LocaleData.lookupKeys(identifier).map({ $0.lowercased() }) {
      if key == "en" { return .english }
      if let found = languages.first(where: { $0.key.lowercased() == key }) { return found.value }
    }
    return .english
  }
}

/// Placeholders as a message lists them: `{n}, {pages}`.
private func listed(_ names: Set<String>) -> String {
  names.sorted().map { "{\($0)}" }.joined(separator: ", ")
}
