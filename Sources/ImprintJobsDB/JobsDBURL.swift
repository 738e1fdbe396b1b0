// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: a connection URL as messages show it, without its password, and libpq's text
// with that password taken out.

import Foundation

/// A PostgreSQL connection string as given (`postgres://` or `postgresql://` URI, or libpq's
/// `key=value` pairs), with what a message may show of it.
struct JobsDBURL: Sendable {
  /// The string as given, password included: for libpq alone.
  let text: String
  /// The string with its password replaced by `***`.
  let shown: String
  /// Its password as written and as libpq reads it (percent-decoded in a URI, unquoted and
  /// unescaped in a pair), the longest first; empty without one.
  let passwords: [String]

  /// Reads where `text` holds a password: a URI's `user:password@` and `password` query
  /// parameter, or a `password=` pair (quoted or not).
  init(_ text: String) {
    self.text = text
    let uri = text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    var spans: [Range<String.Index>] = []
    if uri, let scheme = text.range(of: "://") {
      spans = Self.uriPasswords(text, after: scheme.upperBound)
    } else {
      spans = Self.pairPasswords(text)
    }
    var shown = text
    for span in spans.reversed() { shown.replaceSubrange(span, with: "***") }
    self.shown = shown
    var passwords: [String] = []
    for span in spans {
      let raw = String(text[span])
      passwords.append(raw)
      let read = uri ? raw.removingPercentEncoding : Self.unescaped(raw)
      if let read, read != raw { passwords.append(read) }
    }
    // The longest first, so that a password inside another is not half replaced.
    self.passwords = passwords.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
  }

  /// A `key=value` pair's value as libpq reads it: its quotes removed, each backslash taken as
  /// escaping the character after it.
  private static func unescaped(_ raw: String) -> String {
    var value = Substring(raw)
    if value.count >= 2 && value.hasPrefix("'") && value.hasSuffix("'") {
      value = value.dropFirst().dropLast()
    }
    var result = ""
    var escaped = false
    for character in value {
      if character == "\\" && !escaped {
        escaped = true
        continue
      }
      escaped = false
      result.append(character)
    }
    return result
  }

  /// `message` (libpq's text, which may quote the URL) with the URL shown as `shown` and every
  /// form of its password replaced by `***`.
  func scrub(_ message: String) -> String {
    var result = message.replacingOccurrences(of: text, with: shown)
    for password in passwords {
      result = result.replacingOccurrences(of: password, with: "***")
    }
    return result
  }

  /// The spans of a URI's passwords: the authority's after `user:`, and the `password` query
  /// parameter's value.
  private static func uriPasswords(_ text: String, after start: String.Index) -> [Range<
    String.Index
  >] {
    var spans: [Range<String.Index>] = []
    let rest = text[start...]
    let authorityEnd = rest.firstIndex { "/?".contains($0) } ?? rest.endIndex
    let authority = rest[..<authorityEnd]
    if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
      spans.append(authority.index(after: colon)..<at)
    }
    if let question = rest.firstIndex(of: "?") {
      var parameter = rest.index(after: question)
      while parameter < rest.endIndex {
        let end = rest[parameter...].firstIndex(of: "&") ?? rest.endIndex
        let pair = rest[parameter..<end]
        if let equals = pair.firstIndex(of: "="), pair[..<equals] == "password" {
          spans.append(pair.index(after: equals)..<end)
        }
        parameter = end < rest.endIndex ? rest.index(after: end) : end
      }
    }
    return spans
  }

  /// The spans of the values of `password=` pairs in libpq's `key = value` form: a value is
  /// single-quoted or runs to the next space, a backslash escaping the character after it.
  private static func pairPasswords(_ text: String) -> [Range<String.Index>] {
    var spans: [Range<String.Index>] = []
    var index = text.startIndex
    func skipSpaces() {
      while index < text.endIndex && text[index].isWhitespace { index = text.index(after: index) }
    }
    while index < text.endIndex {
      skipSpaces()
      let keyStart = index
      while index < text.endIndex && text[index] != "=" && !text[index].isWhitespace {
        index = text.index(after: index)
      }
      let key = text[keyStart..<index]
      skipSpaces()
      guard index < text.endIndex, text[index] == "=" else { break }
      index = text.index(after: index)
      skipSpaces()
      let valueStart = index
      if index < text.endIndex && text[index] == "'" {
        index = text.index(after: index)
        while index < text.endIndex && text[index] != "'" {
          if text[index] == "\\" && text.index(after: index) < text.endIndex {
            index = text.index(after: index)
          }
          index = text.index(after: index)
        }
        if index < text.endIndex { index = text.index(after: index) }
      } else {
        while index < text.endIndex && !text[index].isWhitespace {
          if text[index] == "\\" && text.index(after: index) < text.endIndex {
            index = text.index(after: index)
          }
          index = text.index(after: index)
        }
      }
      if key == "password" { spans.append(valueStart..<index) }
    }
    return spans
  }
}
