// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: a request's head as llhttp read it, and the rules of RFC 9112 and RFC 9110
// the server enforces beyond llhttp's own, in the order they are checked.

import Foundation
import ImprintCore

/// One request's head: its method, target as sent, version and header lines, and the raw bytes
/// they came in (at most the head limit).
package struct HTTPHead {
  package var method = ""
  /// The request target, as sent.
  package var target: [UInt8] = []
  package var major = 1
  package var minor = 1
  /// The header lines in order, names and values as sent (values without surrounding blanks).
  package var fields: [(name: [UInt8], value: [UInt8])] = []
  /// The head's bytes, from the request line to the blank line that ends it.
  package var raw: [UInt8] = []

  /// The most bytes a head may take (request line, header lines, blank line).
  package static let byteLimit = 32 << 10
  /// The most header lines a head may have.
  package static let fieldLimit = 100

  /// The header fields Imprint reads that a request may give once at most: a second one could
  /// be read otherwise by a proxy in front.
  package static let singletons = [
    "host", "authorization", "content-type", "content-length", "idempotency-key", "x-request-id",
    "expect",
  ]

  /// The values of header `name` (any case), in order.
  package func values(_ name: String) -> [String] {
    let wanted = Array(name.lowercased().utf8)
    return fields.filter { field in
      field.name.count == wanted.count
        && zip(field.name, wanted).allSatisfy { ($0 | 0x20) == $1 || $0 == $1 }
    }.map { String(decoding: $0.value, as: UTF8.self) }
  }

  /// The value of header `name` (any case), if given.
  package func value(_ name: String) -> String? { values(name).first }

  /// What makes the head unacceptable, in the order checked; nil when it is fine.
  ///
  /// llhttp refused already: a header name with a space or other non-token character (the
  /// space before a colon), a value with a control character (NUL included), a bare LF or CR
  /// in the head, a leading blank on the first header line, Content-Length given twice or with
  /// Transfer-Encoding, a Transfer-Encoding whose last coding is not `chunked`, an invalid
  /// Content-Length, an unknown method and a malformed version. These rules are the server's:
  package func problem() -> HeadProblem? {
    // The request line: method, one space, target, one space, version (RFC 9112, 3).
    let firstLine = raw.prefix { $0 != 0x0D }
    if firstLine.split(separator: 0x20, omittingEmptySubsequences: false).count != 3 {
      return .malformed("its request line is not 'METHOD target HTTP/1.1' with single spaces")
    }
    // Every line ends in CRLF, and none after the first begins with a blank (obs-fold, which
    // RFC 9112, 5.2 lets a server refuse; llhttp 8 reads it as a continuation).
    var index = 0
    while index < raw.count {
      let byte = raw[index]
      if byte == 0x0A && (index == 0 || raw[index - 1] != 0x0D) {
        return .malformed("a line of its head ends in a bare LF")
      }
      if byte == 0x0D && (index + 1 >= raw.count || raw[index + 1] != 0x0A) {
        return .malformed("a line of its head ends in a bare CR")
      }
      if byte == 0x0A, index + 1 < raw.count, raw[index + 1] == 0x20 || raw[index + 1] == 0x09 {
        return .malformed("a header line is folded onto the next (obs-fold)")
      }
      index += 1
    }
    if fields.contains(where: { $0.name.isEmpty }) {
      return .malformed("a header line has no name before its colon")
    }
    // A name is a token (RFC 9110, 5.1): llhttp 8 takes a space or tab before the colon of
    // names it does not know (`User-Agent : x`), which a proxy may read otherwise.
    if let field = fields.first(where: { !$0.name.allSatisfy(Self.isTokenCharacter) }) {
      let shown = field.name.map {
        Self.isTokenCharacter($0) ? String(UnicodeScalar($0)) : "%" + RequestText.hex($0)
      }
      return .malformed(
        "the header name '\(SafeText.excerpt(shown.joined(), limit: 60))' is not a token "
          + "(a space or other character before its colon)")
    }
    guard major == 1 && (minor == 0 || minor == 1) else {
      return .unsupportedVersion("HTTP/\(major).\(minor)")
    }
    for name in Self.singletons {
      let count = values(name).count
      if count > 1 {
        return .malformed("it gives the \(Self.display(name)) header \(count) times")
      }
    }
    // RFC 9112, 3.2: exactly one Host in HTTP/1.1.
    if minor == 1 && value("host") == nil {
      return .malformed("it has no Host header (HTTP/1.1 requires one)")
    }
    let codings = values("transfer-encoding")
    if !codings.isEmpty {
      // RFC 9112, 6.1: Transfer-Encoding in HTTP/1.0 is faulty framing.
      if minor == 0 {
        return .malformed("it is HTTP/1.0 and gives Transfer-Encoding")
      }
      let list = codings.flatMap { $0.split(separator: ",") }.map {
        $0.trimmingCharacters(in: .whitespaces).lowercased()
      }
      // RFC 9112, 6.3: a request whose last coding is not chunked has no length (400); any
      // other coding before it is one the server does not decode (501).
      guard let last = list.last, last == "chunked", list.filter({ $0 == "chunked" }).count == 1
      else {
        return .malformed(
          "its Transfer-Encoding ('\(SafeText.excerpt(codings.joined(separator: ", "), limit: 60))') "
            + "does not end in chunked, given once")
      }
      if let other = list.first(where: { $0 != "chunked" }) {
        return .unsupportedCoding(SafeText.excerpt(other, limit: 40))
      }
    }
    if method == "CONNECT" {
      return .malformed("CONNECT is not served: this is not a proxy")
    }
    if let expectation = value("expect"), expectation.lowercased() != "100-continue" {
      return .expectation(SafeText.excerpt(expectation, limit: 60))
    }
    return nil
  }

  /// Whether `byte` is a `tchar` (RFC 9110, 5.6.2): a letter, digit or one of
  /// `!#$%&'*+-.^_`|~`.
  package static func isTokenCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }

  /// A header's name as RFC 9110 writes it (`Content-Length`, `X-Request-Id`).
  package static func display(_ lowercased: String) -> String {
    lowercased.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }
      .joined(separator: "-")
  }

  /// The target's path and query: origin form (`/path?query`), or absolute form
  /// (`http://host/path?query`, RFC 9112, 3.2.2: the authority ignored), or `*`; nil for
  /// anything else.
  package func pathAndQuery() -> (path: [UInt8], query: [UInt8])? {
    var rest = target[...]
    if let scheme = ["http://", "https://"].first(where: { scheme in
      rest.count >= scheme.utf8.count
        && zip(rest, scheme.utf8).allSatisfy { ($0 | 0x20) == $1 || $0 == $1 }
    }) {
      rest = rest.dropFirst(scheme.utf8.count)
      rest = rest.drop { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
      if rest.first == UInt8(ascii: "?") || rest.isEmpty { rest = [UInt8(ascii: "/")] + rest }
    } else if rest == [UInt8(ascii: "*")][...] {
      return (Array(rest), [])
    }
    guard rest.first == UInt8(ascii: "/") else { return nil }
    // A fragment is never sent; one that is goes no further.
    if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
    guard let mark = rest.firstIndex(of: UInt8(ascii: "?")) else { return (Array(rest), []) }
    return (Array(rest[..<mark]), Array(rest[(mark + 1)...]))
  }
}

/// Why a head is refused.
package enum HeadProblem: Equatable {
  /// It breaks the message syntax (400, the connection closed).
  case malformed(String)
  /// A version other than HTTP/1.0 and HTTP/1.1 (505).
  case unsupportedVersion(String)
  /// A transfer coding the server does not decode (501).
  case unsupportedCoding(String)
  /// An `Expect` other than `100-continue` (417).
  case expectation(String)
}

/// A request's query parameters, decoded: `&`-separated, `name=value`, `+` a space and `%HH`
/// escapes decoded; the first parameter that is not UTF-8 text without NUL is the problem.
package struct QueryParameters {
  package var values: [String: String] = [:]
  package var repeated: [String] = []
  /// The first parameter whose name or value is not UTF-8 text without NUL, and what is wrong.
  package var problem: (name: String, problem: String)?

  package init(_ query: [UInt8]) {
    for piece in query.split(separator: UInt8(ascii: "&")) {
      let pair = piece.split(
        separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
      let name = RequestText.formDecoded(Array(pair[0]))
      let value = pair.count > 1 ? RequestText.formDecoded(Array(pair[1])) : []
      let key = String(decoding: name, as: UTF8.self)
      if problem == nil {
        if let found = RequestText.problem(name) {
          problem = (key, "has a name that \(found)")
        } else if let found = RequestText.problem(value) {
          problem = (key, found)
        }
      }
      if values[key] != nil { repeated.append(key) }
      values[key] = String(decoding: value, as: UTF8.self)
    }
  }
}

/// Checks on the text of a request's path and query parameters.
package enum RequestText {
  /// What is wrong with `bytes` as text: a NUL byte, or bytes that are not UTF-8; nil when
  /// they are fine.
  package static func problem(_ bytes: [UInt8]) -> String? {
    if let index = bytes.firstIndex(of: 0) {
      return "must be UTF-8 text without NUL; found a NUL byte (%00) at byte \(index)"
    }
    if String(validating: bytes, as: UTF8.self) == nil {
      let shown = bytes.prefix(48).map { $0 < 0x80 ? String(UnicodeScalar($0)) : "%" + hex($0) }
      return "must be UTF-8 text without NUL; found bytes that are not UTF-8 ('"
        + SafeText.excerpt(shown.joined(), limit: 120) + "')"
    }
    return nil
  }

  /// A byte as two uppercase hexadecimal digits.
  package static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }

  /// `bytes` with each `%HH` escape decoded (others kept as they are).
  package static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
        let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
      {
        out.append(high << 4 | low)
        index += 3
      } else {
        out.append(bytes[index])
        index += 1
      }
    }
    return out
  }

  /// A query's name or value decoded: `+` is a space, then `%HH` escapes.
  package static func formDecoded(_ bytes: [UInt8]) -> [UInt8] {
    percentDecoded(bytes.map { $0 == UInt8(ascii: "+") ? 0x20 : $0 })
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
