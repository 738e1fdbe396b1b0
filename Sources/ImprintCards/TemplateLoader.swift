// SPDX-License-Identifier: Apache-2.0
// ImprintCards: reads and validates template JSON; every problem names the template and the key.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR

/// Core's strict object reader, throwing `CardError.invalidTemplate`.
private typealias ObjectReader = JSONObjectReader<CardError>

extension JSONObjectReader where Failure == CardError {
  /// Reads `value` as an object at `path` of the template named `template`.
  fileprivate init(_ value: Any?, template: String, path: String) throws(CardError) {
    try self.init(value, source: template, path: path, makeError: CardError.init(templateField:))
  }

  fileprivate func fail(_ name: String, _ problem: String) -> CardError {
    .invalidTemplate(template: source, key: key(name), problem: problem)
  }

  fileprivate mutating func string(_ name: String, default value: String) throws(CardError)
    -> String
  {
    try string(name) ?? value
  }

  fileprivate mutating func double(_ name: String) throws(CardError) -> Double? {
    try number(name)?.doubleValue
  }

  fileprivate mutating func number(
    _ name: String, default value: Double, in range: ClosedRange<Double>
  ) throws(CardError) -> Double {
    try within(range, name, try double(name) ?? value)
  }

  fileprivate mutating func required(_ name: String, in range: ClosedRange<Double>)
    throws(CardError) -> Double
  {
    guard let result = try double(name) else { throw fail(name, "is missing") }
    return try within(range, name, result)
  }

  private func within(_ range: ClosedRange<Double>, _ name: String, _ value: Double)
    throws(CardError) -> Double
  {
    guard range.contains(value) else {
      throw fail(
        name,
        "must be between \(Formatting.number(range.lowerBound)) and \(Formatting.number(range.upperBound))"
      )
    }
    return value
  }

  fileprivate mutating func bool(_ name: String, default value: Bool) throws(CardError) -> Bool {
    try bool(name) ?? value
  }

  fileprivate mutating func color(_ name: String) throws(CardError) -> Color? {
    guard let text = try string(name) else { return nil }
    guard let color = Color(parsing: text) else {
      throw fail(name, "must be a colour like #1A2B3C; found '\(text)'")
    }
    return color
  }

  fileprivate mutating func choice<T: RawRepresentable>(_ name: String, default value: T)
    throws(CardError) -> T where T.RawValue == String
  {
    guard let text = try string(name) else { return value }
    guard let choice = T(rawValue: text) else { throw fail(name, "cannot be '\(text)'") }
    return choice
  }
}

extension CardError {
  /// A problem `JSONObjectReader` found in a template, in the template's words
  /// (`template.invalid`: `'front.elements[0].x' must be a number`).
  init(templateField problem: JSONFieldProblem) {
    let wording =
      switch problem.kind {
      case .unknownKey: "is not a known key"
      case .wrongType(.object): "must be an object"
      case .wrongType(.array): "must be an array"
      case .wrongType(.string): "must be a string"
      case .wrongType(.bool): "must be true or false"
      case .wrongType(.wholeNumber): "must be a whole number"
      case .wrongType(.number): "must be a number"
      case .wrongType(.described(let text)): "must be \(text)"
      }
    self = .invalidTemplate(template: problem.source, key: problem.field, problem: wording)
  }
}

extension CardTemplate {
  /// The designs' names in `folder`, or in `shippedFolder` (Imprint's own) when nil.
  public static func shippedNames(folder: String?) -> [String] {
    guard let folder = folder ?? shippedFolder,
      let files = try? FileManager.default.contentsOfDirectory(atPath: folder)
    else { return [] }
    return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
  }

  /// Loads a template by name (from `folder`, or from `shippedFolder` when nil) or by file path.
  ///
  /// - Throws: `CardError.templateNotFound`, `.invalidTemplate` or `.missingAsset`;
  ///   `CardError.file` naming the missing bundle when a shipped name is asked for and the
  ///   resources were not deployed beside the executable.
  public static func load(_ nameOrPath: String, folder: String?) throws(CardError) -> CardTemplate {
    let isPath = nameOrPath.contains("/") || nameOrPath.hasSuffix(".json")
    guard isPath || folder != nil || shippedFolder != nil else {
      // The resource bundle was not deployed with the executable.
      throw .file(.notFound(path: ResourceBundle.location(module: "ImprintCards") + "/templates"))
    }
    let path =
      isPath ? nameOrPath : (folder ?? shippedFolder ?? "") + "/" + nameOrPath + ".json"
    let data: [UInt8]
    do {
      data = try FileIO.read(path, limit: FileIO.Limit.structured)
    } catch .notFound {
      throw .templateNotFound(name: nameOrPath, available: shippedNames(folder: folder))
    } catch {
      throw .file(error)
    }
    return try parse(
      data, name: (nameOrPath as NSString).lastPathComponent,
      folder: (path as NSString).deletingLastPathComponent)
  }

  /// Parses template JSON; assets resolve against `folder`.
  ///
  /// - Throws: `CardError.invalidTemplate` (naming the key) or `.missingAsset`.
  public static func parse(_ bytes: [UInt8], name: String, folder: String) throws(CardError)
    -> CardTemplate
  {
    let root: Any
    do {
      root = try StrictJSON.parse(bytes, source: name)
    } catch {
      throw .invalidTemplate(
        template: name, key: "(file)", problem: "is not valid JSON (\(error.placeText))",
        cause: error)
    }
    var top = try ObjectReader(root, template: name, path: "")
    guard let version = try top.double("schemaVersion") else {
      throw top.fail("schemaVersion", "is missing")
    }
    guard version == 1 else { throw top.fail("schemaVersion", "must be 1; found \(version)") }
    let description = try top.string("description", default: "")
    let displayName = try top.string("name", default: (name as NSString).deletingPathExtension)
    var card = try ObjectReader(
      top.has("card") ? top.object["card"] : [String: Any](), template: name, path: "card")
    let width = try card.number("width", default: 85.6, in: 20...300)
    let height = try card.number("height", default: 53.98, in: 20...300)
    let corner = try card.number("cornerRadius", default: 3.18, in: 0...20)
    let bleed = try card.number("bleed", default: 3.175, in: 0...10)
    let safe = try card.number("safeZone", default: 3.2, in: 0...20)
    try card.finish()
    let context = SideContext(
      template: name, folder: folder,
      safe: Box(x: safe, y: safe, width: width - 2 * safe, height: height - 2 * safe),
      width: width, height: height)
    guard top.has("front") else { throw top.fail("front", "is missing") }
    guard top.has("back") else { throw top.fail("back", "is missing") }
    let front = try context.side(top.object["front"], path: "front")
    let back = try context.side(top.object["back"], path: "back")
    let locale = try top.string("locale", default: "en")
    guard LocaleData.isKnown(locale) else {
      throw top.fail("locale", "names no language Imprint has data for: '\(locale)'")
    }
    let digits = try top.string("digits", default: "latin")
    guard digits == "latin" || digits == "native" else {
      throw top.fail("digits", "must be 'latin' or 'native'; found '\(digits)'")
    }
    let stringsValue = top.value("strings")
    try top.finish()
    var template = CardTemplate(
      name: displayName, description: description, width: width, height: height,
      cornerRadius: corner, bleed: bleed, safeZone: safe, front: front, back: back)
    template.locale = locale
    template.nativeDigits = digits == "native"
    if let stringsValue {
      template.strings = try context.strings(stringsValue, texts: template.translatableTexts)
    }
    return template
  }
}

private struct SideContext {
  let template: String
  let folder: String
  let safe: Box
  let width: Double
  let height: Double

  func asset(_ reader: inout ObjectReader, _ key: String) throws(CardError) -> String? {
    guard let relative = try reader.string(key) else { return nil }
    let path: String
    do {
      path = try ConfinedPath.resolve(
        relative, in: folder, what: "template '\(template)': '\(reader.key(key))' asset")
    } catch .notFound {
      throw .missingAsset(template: template, key: reader.key(key), path: relative)
    } catch {
      throw .file(error)
    }
    guard FileManager.default.fileExists(atPath: path) else {
      throw .missingAsset(template: template, key: reader.key(key), path: relative)
    }
    return path
  }

  func side(_ value: Any?, path: String) throws(CardError) -> CardSide {
    var reader = try ObjectReader(value, template: template, path: path)
    let background = try reader.color("background") ?? .white
    let image = try asset(&reader, "backgroundImage")
    var elements: [Element] = []
    for (index, item) in (try reader.array("elements") ?? []).enumerated() {
      elements.append(try element(item, path: "\(path).elements[\(index)]"))
    }
    try reader.finish()
    return CardSide(background: background, backgroundImage: image, elements: elements)
  }

  /// The `strings` table, inline or from a file beside the template: every language must be
  /// known and translate each of `texts`, keeping its placeholders.
  func strings(_ value: Any, texts: Set<String>) throws(CardError) -> [String: [String: String]] {
    var table = value
    var key = "strings"
    if let relative = value as? String {
      var holder = try ObjectReader(["strings": relative], template: template, path: "")
      guard let path = try asset(&holder, "strings") else { return [:] }
      let bytes: [UInt8]
      do {
        bytes = try FileIO.read(path, limit: FileIO.Limit.structured)
        table = try StrictJSON.parse(bytes, source: relative)
      } catch let error as JSONError {
        throw .invalidTemplate(
          template: template, key: "strings",
          problem: "refers to '\(relative)', which is not valid JSON (\(error.placeText))",
          cause: error)
      } catch let error as FileError {
        throw .file(error)
      } catch {
        throw .invalidTemplate(template: template, key: "strings", problem: "cannot be read")
      }
      key = "strings ('\(relative)')"
    }
    guard let languages = table as? [String: Any] else {
      throw .invalidTemplate(
        template: template, key: key,
        problem: "must be an object of languages, or the name of a JSON file holding one")
    }
    var result: [String: [String: String]] = [:]
    for (language, entries) in languages {
      let place = "\(key).\(language)"
      guard LocaleData.isKnown(language) else {
        throw .invalidTemplate(
          template: template, key: place, problem: "names no language Imprint has data for")
      }
      guard let entries = entries as? [String: Any] else {
        throw .invalidTemplate(
          template: template, key: place, problem: "must be an object of source text → translation")
      }
      var translations: [String: String] = [:]
      for (source, translation) in entries {
        guard let translation = translation as? String, !translation.isEmpty else {
          throw .invalidTemplate(
            template: template, key: "\(place)[\"\(source)\"]",
            problem: "must be a non-empty string")
        }
        guard Set(placeholders(translation)) == Set(placeholders(source)) else {
          let expected = Set(placeholders(source)).sorted().map { "{\($0)}" }
          throw .invalidTemplate(
            template: template, key: "\(place)[\"\(source)\"]",
            problem:
              "must use the placeholders of its source text (\(expected.isEmpty ? "none" : expected.joined(separator: ", "))); found '\(translation)'"
          )
        }
        translations[source] = translation
      }
      if let missing = texts.sorted().first(where: { translations[$0] == nil }) {
        throw .invalidTemplate(
          template: template, key: place, problem: "has no translation of '\(missing)'")
      }
      result[language] = translations
    }
    return result
  }

  func box(_ reader: inout ObjectReader) throws(CardError) -> Box {
    let extent = -20.0...320.0
    return Box(
      x: try reader.required("x", in: extent), y: try reader.required("y", in: extent),
      width: try reader.required("width", in: 0.1...320),
      height: try reader.required("height", in: 0.1...320))
  }

  /// Text and codes must stay inside the safe zone, or trimming may cut them.
  func checkSafe(_ box: Box, _ reader: ObjectReader) throws(CardError) {
    let tolerance = 0.005
    guard box.x >= safe.x - tolerance, box.y >= safe.y - tolerance,
      box.x + box.width <= safe.x + safe.width + tolerance,
      box.y + box.height <= safe.y + safe.height + tolerance
    else {
      throw .invalidTemplate(
        template: template, key: reader.path,
        problem: "lies outside the safe zone (\(Formatting.number(safe.x)) mm inside the trim)")
    }
  }

  func element(_ value: Any?, path: String) throws(CardError) -> Element {
    var reader = try ObjectReader(value, template: template, path: path)
    guard let type = try reader.string("type") else { throw reader.fail("type", "is missing") }
    let result: Element
    switch type {
    case "text":
      let box = try box(&reader)
      try checkSafe(box, reader)
      let text: String
      if let field = try reader.string("field") {
        text = "{\(field)}"
      } else if let literal = try reader.string("text") {
        text = literal
      } else {
        throw reader.fail("text", "is missing (give 'text' or 'field')")
      }
      for field in placeholders(text) where !Profile.fieldNames.contains(field) {
        throw reader.fail(
          reader.object["field"] != nil ? "field" : "text",
          "names the unknown field '\(field)' (known: \(Profile.fieldNames.sorted().joined(separator: ", ")))"
        )
      }
      let when = try reader.string("when")
      if let when, !Profile.fieldNames.contains(when) {
        throw reader.fail("when", "names the unknown field '\(when)'")
      }
      let size = try reader.number("size", default: 10, in: 2...200)
      let minSize = try reader.number("minSize", default: min(size, 6), in: 2...200)
      guard minSize <= size else { throw reader.fail("minSize", "must not exceed 'size'") }
      result = .text(
        TextElement(
          box: box, text: text, font: try reader.string("font", default: "DejaVu Sans"),
          weight: Int(try reader.number("weight", default: 400, in: 100...1000)), size: size,
          minSize: minSize, maxLines: Int(try reader.number("maxLines", default: 1, in: 1...20)),
          color: try reader.color("color") ?? .black,
          align: try reader.choice("align", default: TextAlignment.natural),
          valign: try reader.choice("valign", default: VerticalAlignment.top),
          ellipsis: try reader.choice("ellipsis", default: TextEllipsis.end), when: when))
    case "photo":
      result = .photo(
        PhotoElement(
          box: try box(&reader), fit: try reader.choice("fit", default: ImageFit.cover),
          mask: try reader.choice("mask", default: PhotoMask.none),
          cornerRadius: try reader.number("cornerRadius", default: 2, in: 0...50),
          borderColor: try reader.color("borderColor"),
          borderWidth: try reader.number("borderWidth", default: 0.4, in: 0...5)))
    case "qr":
      let x = try reader.required("x", in: 0...300)
      let y = try reader.required("y", in: 0...300)
      let size = try reader.required("size", in: 8...300)
      try checkSafe(Box(x: x, y: y, width: size, height: size), reader)
      let data = try reader.string("data", default: "{profileUrl}")
      for field in placeholders(data) where !Profile.fieldNames.contains(field) {
        throw reader.fail("data", "names the unknown field '\(field)'")
      }
      let level = try reader.string("level", default: "Q")
      guard let parsedLevel = QRErrorCorrection(rawValue: level) else {
        throw reader.fail("level", "must be L, M, Q or H")
      }
      result = .qr(
        QRElement(
          x: x, y: y, size: size, data: data, level: parsedLevel,
          quietZone: Int(try reader.number("quietZone", default: 2, in: 0...8))))
    case "rect":
      result = .rect(
        RectElement(
          box: try box(&reader), fill: try reader.color("fill"), stroke: try reader.color("stroke"),
          strokeWidth: try reader.number("strokeWidth", default: 0.3, in: 0...10),
          cornerRadius: try reader.number("cornerRadius", default: 0, in: 0...50),
          bleed: try reader.bool("bleed", default: false)))
    case "line":
      let extent = -20.0...320.0
      result = .line(
        LineElement(
          x1: try reader.required("x1", in: extent), y1: try reader.required("y1", in: extent),
          x2: try reader.required("x2", in: extent), y2: try reader.required("y2", in: extent),
          color: try reader.color("color") ?? .black,
          width: try reader.number("width", default: 0.3, in: 0.01...10)))
    case "image":
      let box = try box(&reader)
      guard let path = try asset(&reader, "src") else { throw reader.fail("src", "is missing") }
      result = .image(
        ImageElement(box: box, path: path, fit: try reader.choice("fit", default: ImageFit.contain))
      )
    default:
      throw reader.fail("type", "is '\(type)'; expected text, photo, qr, rect, line or image")
    }
    try reader.finish()
    return result
  }
}

extension JSONError {
  /// The message without its leading `'source' `: the place and the problem, for errors that
  /// name the input themselves.
  var placeText: String {
    let text = message
    guard text.hasPrefix("'"), let end = text.dropFirst().firstIndex(of: "'") else { return text }
    return String(text[text.index(after: end)...]).trimmingCharacters(in: .whitespaces)
  }
}

/// The `{field}` names in a text.
func placeholders(_ text: String) -> [String] {
  var names: [String] = []
  _ = substitute(text) { name in
    names.append(name)
    return ""
  }
  return names
}

/// Replaces `{field}` placeholders in one pass (a value that itself holds `{name}` stays as it
/// is); nil when a field has no value for this account.
func fill(_ text: String, with fields: [String: String]) -> String? {
  substitute(text) { name in fields[name].flatMap { $0.isEmpty ? nil : $0 } }
}

/// `text` with each `{name}` replaced by `value(name)`, left to right; nil as soon as `value`
/// gives nil.
///
/// The braces are found among the UTF-8 bytes (an ASCII byte is never part of another
/// character's encoding), without walking the text character by character.
private func substitute(_ text: String, _ value: (String) -> String?) -> String? {
  let utf8 = text.utf8
  guard var open = utf8.firstIndex(of: UInt8(ascii: "{")) else { return text }
  var result = ""
  var copied = utf8.startIndex
  while let close = utf8[open...].firstIndex(of: UInt8(ascii: "}")) {
    guard let replacement = value(String(text[utf8.index(after: open)..<close])) else {
      return nil
    }
    result += text[copied..<open]
    result += replacement
    copied = utf8.index(after: close)
    guard let next = utf8[copied...].firstIndex(of: UInt8(ascii: "{")) else { break }
    open = next
  }
  return result + text[copied...]
}
