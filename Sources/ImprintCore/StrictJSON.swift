// SPDX-License-Identifier: Apache-2.0
// Imprint: strict JSON for every input document: duplicate keys, depth, numbers out of range,
// invalid UTF-8 and syntax errors refused with their line and column.

import Foundation

/// The one door JSON input comes in through (profiles, templates, price lists, orders,
/// manifest lines).
///
/// Foundation's `JSONSerialization` accepts a repeated key and keeps the last value
/// (`"copies": 1, "copies": 10000` prices 10000 copies), and reports every problem as "The data
/// is not in the correct format." with no place. No Debian or toolchain library validates JSON
/// strictly from Swift, so a small validator (one pass over the bytes, RFC 8259 grammar) runs
/// first and reports the place and what was expected; `JSONSerialization` then builds the
/// values, which the validator guarantees it can.
public enum StrictJSON {
  /// The deepest nesting of arrays and objects accepted.
  public static let maximumDepth = 64

  /// Validates `bytes` strictly and parses them.
  ///
  /// A UTF-8 byte-order mark at the start is skipped (editors on Windows write one).
  ///
  /// - Parameters:
  ///   - bytes: the document.
  ///   - source: the input's name for errors (a path, or `manifest.jsonl line 4`).
  /// - Returns: what `JSONSerialization` gives (dictionaries, arrays, `NSNumber`, `String`,
  ///   `NSNull`); any value is allowed at the top.
  /// - Throws: `JSONError`.
  public static func parse(_ bytes: some Collection<UInt8>, source: String) throws(JSONError)
    -> Any
  {
    let array = Array(bytes)
    let body = try validate(array, source: source)
    do {
      return try JSONSerialization.jsonObject(
        with: Data(array[body...]), options: [.fragmentsAllowed])
    } catch {
      // The validator accepted it; JSONSerialization's own limits are all that is left.
      throw .syntax(
        source: source, line: 1, column: 1, expected: "JSON Foundation can read",
        found: "a value it refused")
    }
  }

  /// Checks `bytes` against the JSON grammar and Imprint's rules without building values.
  ///
  /// - Returns: the offset where the document starts (after a byte-order mark).
  /// - Throws: `JSONError`.
  @discardableResult
  public static func validate(_ bytes: [UInt8], source: String) throws(JSONError) -> Int {
    var scanner = Scanner(bytes: bytes, source: source)
    return try scanner.document().start
  }

  /// What a repeated key in one object means.
  public enum RepeatedKeys: Sendable {
    /// `json.duplicateKey`: Imprint's rule for every input document.
    case refused
    /// The later value is kept, as a browser's `JSON.parse` does: for JSON that another program
    /// wrote inside a field (a profile's metadata), read as the web site that shows it reads it.
    case lastWins
  }

  /// Validates `bytes` strictly and builds their values in the same pass.
  ///
  /// The same grammar, limits and errors as `parse`, with typed values instead of Foundation's.
  ///
  /// - Parameters:
  ///   - bytes: the document.
  ///   - source: the input's name for errors.
  ///   - repeatedKeys: whether a repeated key is refused (the default) or the later value kept.
  /// - Returns: the document's value (any value is allowed at the top).
  /// - Throws: `JSONError`.
  public static func tree(
    _ bytes: [UInt8], source: String, repeatedKeys: RepeatedKeys = .refused
  ) throws(JSONError) -> JSONValue {
    var scanner = Scanner(bytes: bytes, source: source)
    scanner.build = true
    scanner.lastKeyWins = repeatedKeys == .lastWins
    return try scanner.document().value
  }

  private struct Scanner {
    let bytes: [UInt8]
    let source: String
    var index = 0
    /// Whether values are built (`tree`) or only checked (`validate`, `.null` returned).
    var build = false
    /// Whether a repeated key keeps the later value instead of being refused.
    var lastKeyWins = false

    init(bytes: [UInt8], source: String) {
      self.bytes = bytes
      self.source = source
    }

    /// The whole document: a byte-order mark skipped, one value, nothing after it.
    mutating func document() throws(JSONError) -> (start: Int, value: JSONValue) {
      if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
      let start = index
      skipSpace()
      guard index < bytes.count else { throw .empty(source: source) }
      let value = try value(depth: 0)
      skipSpace()
      guard index == bytes.count else { throw unexpected("the end of the document") }
      return (start, value)
    }

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipSpace() {
      while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
        index += 1
      }
    }

    /// Line and column (in characters, from 1) of `offset`.
    func place(_ offset: Int) -> (Int, Int) {
      var line = 1
      var column = 1
      for byte in bytes[..<min(offset, bytes.count)] {
        if byte == 0x0A {
          line += 1
          column = 1
        } else if byte & 0xC0 != 0x80 {
          column += 1
        }
      }
      return (line, column)
    }

    /// What is at `index`, in words that never quote the document beyond JSON punctuation.
    func found(at offset: Int) -> String {
      guard offset < bytes.count else { return "the end of the document" }
      let byte = bytes[offset]
      switch byte {
      case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"),
        UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "\""):
        return "'\(Character(Unicode.Scalar(byte)))'"
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): return "a number"
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
        return "a word that is not true, false or null"
      case 0..<0x20, 0x7F: return "a control character"
      case 0x80...: return "a non-ASCII character"
      default: return "another character"
      }
    }

    func unexpected(_ expected: String, at offset: Int? = nil) -> JSONError {
      let offset = offset ?? index
      let (line, column) = place(offset)
      return .syntax(
        source: source, line: line, column: column, expected: expected, found: found(at: offset))
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
      guard let byte = peek else { throw unexpected("a value") }
      switch byte {
      case UInt8(ascii: "{"): return try object(depth: depth + 1)
      case UInt8(ascii: "["): return try array(depth: depth + 1)
      case UInt8(ascii: "\""):
        let text = try string(decode: build)
        return build ? .string(text) : .null
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
      case UInt8(ascii: "t"):
        try literal("true")
        return .bool(true)
      case UInt8(ascii: "f"):
        try literal("false")
        return .bool(false)
      case UInt8(ascii: "n"):
        try literal("null")
        return .null
      default: throw unexpected("a value (an object, array, string, number, true, false or null)")
      }
    }

    mutating func literal(_ word: String) throws(JSONError) {
      let start = index
      for expected in word.utf8 {
        guard peek == expected else {
          throw unexpected(
            "a value (an object, array, string, number, true, false or null)", at: start)
        }
        index += 1
      }
    }

    mutating func enter(_ depth: Int) throws(JSONError) {
      guard depth <= StrictJSON.maximumDepth else {
        let (line, column) = place(index)
        throw .tooDeep(
          source: source, line: line, column: column, limit: StrictJSON.maximumDepth)
      }
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONValue {
      try enter(depth)
      index += 1
      skipSpace()
      // Checking alone needs the keys only; building keeps them with their values.
      var keys = Set<String>()
      var members: [String: JSONValue] = [:]
      if peek == UInt8(ascii: "}") {
        index += 1
        return build ? .object(members) : .null
      }
      // Room for a record's few members at once: grown from empty, a dictionary (or set) was
      // reallocated and rehashed at its 1st, 2nd, 3rd, 5th and 9th member (half a profile's
      // parsing).
      if build { members.reserveCapacity(8) } else { keys.reserveCapacity(8) }
      while true {
        skipSpace()
        guard peek == UInt8(ascii: "\"") else { throw unexpected("a key in double quotes") }
        let keyStart = index
        let key = try string(decode: true)
        let repeated = build ? members[key] != nil : !keys.insert(key).inserted
        if repeated && !lastKeyWins {
          let (line, column) = place(keyStart)
          throw .duplicateKey(source: source, key: key, line: line, column: column)
        }
        skipSpace()
        guard peek == UInt8(ascii: ":") else { throw unexpected("':' after the key") }
        index += 1
        skipSpace()
        let member = try value(depth: depth)
        if build { members[key] = member }
        skipSpace()
        if peek == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard peek == UInt8(ascii: "}") else { throw unexpected("',' or '}'") }
        index += 1
        return build ? .object(members) : .null
      }
    }

    mutating func array(depth: Int) throws(JSONError) -> JSONValue {
      try enter(depth)
      index += 1
      skipSpace()
      var elements: [JSONValue] = []
      if peek == UInt8(ascii: "]") {
        index += 1
        return build ? .array(elements) : .null
      }
      while true {
        skipSpace()
        let element = try value(depth: depth)
        if build { elements.append(element) }
        skipSpace()
        if peek == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard peek == UInt8(ascii: "]") else { throw unexpected("',' or ']'") }
        index += 1
        return build ? .array(elements) : .null
      }
    }

    /// Reads a string at `index` (on its opening quote), decoding it when asked.
    ///
    /// Keys are decoded, and every string when building. Runs without escapes are copied as
    /// they are (the bytes were checked as UTF-8 on the way).
    mutating func string(decode: Bool) throws(JSONError) -> String {
      index += 1
      var decoded: [UInt8] = []
      var run = index
      while true {
        guard let byte = peek else { throw unexpected("'\"' to end the string") }
        switch byte {
        case UInt8(ascii: "\""):
          defer { index += 1 }
          guard decode else { return "" }
          if decoded.isEmpty { return String(decoding: bytes[run..<index], as: UTF8.self) }
          decoded.append(contentsOf: bytes[run..<index])
          return String(decoding: decoded, as: UTF8.self)
        case UInt8(ascii: "\\"):
          if decode { decoded.append(contentsOf: bytes[run..<index]) }
          let scalar = try escape()
          if decode { decoded.append(contentsOf: Array(String(scalar).utf8)) }
          run = index
        case 0..<0x20:
          throw unexpected("a character or '\"' (control characters must be escaped)")
        case 0..<0x80:
          index += 1
        default:
          _ = try utf8Scalar()
        }
      }
    }

    /// Reads one escape at `index` (on its backslash): `\n`, `\u00e9`, a surrogate pair.
    mutating func escape() throws(JSONError) -> Unicode.Scalar {
      let escapeStart = index
      index += 1
      guard let letter = peek else { throw unexpected("an escape after '\\'") }
      index += 1
      switch letter {
      case UInt8(ascii: "\""): return "\""
      case UInt8(ascii: "\\"): return "\\"
      case UInt8(ascii: "/"): return "/"
      case UInt8(ascii: "b"): return "\u{08}"
      case UInt8(ascii: "f"): return "\u{0C}"
      case UInt8(ascii: "n"): return "\n"
      case UInt8(ascii: "r"): return "\r"
      case UInt8(ascii: "t"): return "\t"
      case UInt8(ascii: "u"): break
      default:
        throw unexpected("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", at: escapeStart)
      }
      var code = try hex4(escapeStart)
      if (0xD800..<0xDC00).contains(code) {
        guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count,
          bytes[index + 1] == UInt8(ascii: "u")
        else {
          throw unexpected("a low surrogate \\uDC00-\\uDFFF after a high one", at: escapeStart)
        }
        index += 2
        let low = try hex4(escapeStart)
        guard (0xDC00..<0xE000).contains(low) else {
          throw unexpected("a low surrogate \\uDC00-\\uDFFF after a high one", at: escapeStart)
        }
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
      } else if (0xDC00..<0xE000).contains(code) {
        throw unexpected("a high surrogate before a low one", at: escapeStart)
      }
      // Every code left is a scalar: surrogates were paired or refused above.
      return Unicode.Scalar(code) ?? "\u{FFFD}"
    }

    mutating func hex4(_ escapeStart: Int) throws(JSONError) -> UInt32 {
      var code: UInt32 = 0
      for _ in 0..<4 {
        guard let byte = peek, let digit = hexValue(byte) else {
          throw unexpected("four hex digits after \\u", at: escapeStart)
        }
        code = code << 4 | digit
        index += 1
      }
      return code
    }

    func hexValue(_ byte: UInt8) -> UInt32? {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
      default: nil
      }
    }

    /// Decodes one multi-byte UTF-8 sequence at `index`, refusing overlong forms, surrogates
    /// and truncated sequences.
    mutating func utf8Scalar() throws(JSONError) -> Unicode.Scalar {
      let start = index
      let lead = bytes[index]
      let length: Int
      var value: UInt32
      switch lead {
      case 0xC2...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
      case 0xE0...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
      case 0xF0...0xF4: (length, value) = (4, UInt32(lead & 0x07))
      default: throw notUTF8(start)
      }
      guard start + length <= bytes.count else { throw notUTF8(start) }
      for offset in 1..<length {
        let byte = bytes[start + offset]
        guard byte & 0xC0 == 0x80 else { throw notUTF8(start) }
        value = value << 6 | UInt32(byte & 0x3F)
      }
      let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
      guard value >= minimum, value <= 0x10FFFF, let scalar = Unicode.Scalar(value) else {
        throw notUTF8(start)
      }
      index += length
      return scalar
    }

    func notUTF8(_ offset: Int) -> JSONError {
      let (line, column) = place(offset)
      return .notUTF8(source: source, line: line, column: column)
    }

    mutating func number() throws(JSONError) -> JSONValue {
      let start = index
      if peek == UInt8(ascii: "-") { index += 1 }
      guard let first = peek, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
        throw unexpected("a digit", at: index)
      }
      if first == UInt8(ascii: "0") {
        index += 1
      } else {
        digits()
      }
      if peek == UInt8(ascii: ".") {
        index += 1
        guard digits() > 0 else { throw unexpected("a digit after the decimal point") }
      }
      if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
        index += 1
        if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
        guard digits() > 0 else { throw unexpected("a digit in the exponent") }
      }
      if let next = peek,
        next == UInt8(ascii: "0") || (next >= UInt8(ascii: "1") && next <= UInt8(ascii: "9"))
      {
        throw unexpected("no leading zero", at: start)
      }
      let text = String(decoding: bytes[start..<index], as: UTF8.self)
      guard let value = Double(text), value.isFinite else {
        let (line, column) = place(start)
        throw .numberOutOfRange(source: source, line: line, column: column)
      }
      return build ? .number(JSONNumber(text: text, double: value)) : .null
    }

    @discardableResult
    mutating func digits() -> Int {
      var count = 0
      while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
        index += 1
        count += 1
      }
      return count
    }
  }
}

/// A JSON input that is not strict JSON, with its place.
public enum JSONError: ImprintError, Equatable {
  /// The document breaks the grammar at a place.
  case syntax(source: String, line: Int, column: Int, expected: String, found: String)
  /// An object has the same key twice.
  case duplicateKey(source: String, key: String, line: Int, column: Int)
  /// Arrays and objects nest deeper than the limit.
  case tooDeep(source: String, line: Int, column: Int, limit: Int)
  /// A number is too large for a double (`1e400`).
  case numberOutOfRange(source: String, line: Int, column: Int)
  /// Bytes that are not UTF-8.
  case notUTF8(source: String, line: Int, column: Int)
  /// Nothing but white space.
  case empty(source: String)

  public var code: String {
    switch self {
    case .syntax: "json.syntax"
    case .duplicateKey: "json.duplicateKey"
    case .tooDeep: "json.tooDeep"
    case .numberOutOfRange: "json.numberOutOfRange"
    case .notUTF8: "json.notUTF8"
    case .empty: "json.empty"
    }
  }

  public var message: String {
    switch self {
    case .syntax(let source, let line, let column, let expected, let found):
      "'\(source)' line \(line), column \(column): expected \(expected), found \(found)"
    case .duplicateKey(let source, let key, let line, let column):
      "'\(source)' line \(line), column \(column): key '\(SafeText.excerpt(key))' appears twice in one object"
    case .tooDeep(let source, let line, let column, let limit):
      "'\(source)' line \(line), column \(column): nested deeper than \(limit) levels"
    case .numberOutOfRange(let source, let line, let column):
      "'\(source)' line \(line), column \(column): number out of range (larger than a double)"
    case .notUTF8(let source, let line, let column):
      "'\(source)' line \(line), column \(column): bytes that are not UTF-8"
    case .empty(let source): "'\(source)' is empty; a JSON document was expected"
    }
  }

  public var hint: String? {
    switch self {
    case .syntax:
      "JSON needs double-quoted keys and strings, no trailing commas, no comments, no NaN"
    case .duplicateKey: "keep one of the two; Imprint does not guess which was meant"
    case .tooDeep: nil
    case .numberOutOfRange: "write the number as an ordinary decimal"
    case .notUTF8, .empty: "save the file as UTF-8 JSON"
    }
  }

  /// 400: input that is not strict JSON is malformed.
  public var status: Int {
    switch self {
    case .syntax, .duplicateKey, .tooDeep, .numberOutOfRange, .notUTF8, .empty: 400
    }
  }
}
