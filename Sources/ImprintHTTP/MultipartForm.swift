// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: the parts of a `multipart/form-data` body (RFC 7578, RFC 2046 section 5.1),
// read as the body arrives (`MultipartParser`) under the service's limits.

import Foundation
import ImprintCore

/// One part of a `multipart/form-data` body.
package struct FormPart: Sendable {
  /// The part's name (`Content-Disposition: form-data; name="..."`).
  package var name: String
  /// The file name the client gave, for a file part.
  package var filename: String?
  /// The part's `Content-Type`, lowercased, without parameters.
  package var contentType: String?
  /// The part's bytes, exactly as sent.
  package var bytes: [UInt8]
}

/// How much of a multipart body the service takes.
public struct MultipartLimits: Sendable, Equatable {
  /// Parts at most (default 64).
  public var maximumParts = 64
  /// Bytes of one part at most (default 16 MiB).
  public var maximumPartBytes = 16 << 20
  /// Bytes of a part's name or file name at most (default 255).
  public var maximumNameBytes = 255

  /// The defaults above.
  public init() {}

  /// Whether `text` may name a part or a file.
  ///
  /// At most `maximumNameBytes` bytes, without control characters (C0 and DEL). A query
  /// parameter that names an upload (`name`) is held to the same rule.
  package func acceptsName(_ text: String) -> Bool {
    text.utf8.count <= maximumNameBytes
      && !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
  }
}

/// The parts of one multipart body, as `MultipartParser` reads them: each part begun with its
/// headers, then its bytes as they arrive, under the service's limits.
package final class MultipartCollector {
  /// The route the body was sent to, for messages.
  package let path: String
  package let limits: MultipartLimits
  /// The parts read so far.
  private(set) var parts: [FormPart] = []
  /// Why reading stopped, once it did.
  private(set) var failure: HTTPError?

  package init(path: String, limits: MultipartLimits) {
    self.path = path
    self.limits = limits
  }

  /// Begins a part with its headers' name, file name, type and transfer encoding.
  ///
  /// - Returns: false when the part breaks a limit or a rule (`failure` says which).
  package func begin(
    name: String?, filename: String?, contentType: String?, transferEncoding: String?
  )
    -> Bool
  {
    guard failure == nil else { return false }
    if let problem = check(name: name, filename: filename, encoding: transferEncoding) {
      failure = problem
      return false
    }
    guard parts.count < limits.maximumParts else {
      failure = .tooManyParts(path: path, limit: limits.maximumParts)
      return false
    }
    parts.append(
      FormPart(
        name: name ?? "", filename: filename,
        contentType: contentType.map(HTTPMessageHeaders.mediaType), bytes: []))
    return true
  }

  /// Stops reading with `problem` (the body's syntax is broken), unless reading stopped already.
  package func refuse(_ problem: HTTPError) {
    if failure == nil { failure = problem }
  }

  /// Adds `bytes` to the part begun last.
  ///
  /// - Returns: false when the part outgrows its limit (`failure` says so).
  package func append(_ bytes: ArraySlice<UInt8>) -> Bool {
    guard failure == nil, let index = parts.indices.last else { return false }
    guard parts[index].bytes.count <= limits.maximumPartBytes - bytes.count else {
      failure = .partTooLarge(path: path, part: parts[index].name, limit: limits.maximumPartBytes)
      return false
    }
    parts[index].bytes.append(contentsOf: bytes)
    return true
  }

  /// The problem with a part's name, file name or transfer encoding, if any.
  private func check(name: String?, filename: String?, encoding: String?) -> HTTPError? {
    guard let name, !name.isEmpty else {
      return .malformedMultipart(
        path: path, problem: "a part has no name (Content-Disposition: form-data; name=\"...\")")
    }
    for (label, text) in [("name", name), ("file name", filename ?? "")] {
      if !limits.acceptsName(text) {
        return .invalidPartName(
          path: path, name: text, what: label, limit: limits.maximumNameBytes)
      }
    }
    if let encoding,
      !["binary", "8bit", "7bit"].contains(
        encoding.trimmingCharacters(in: .whitespaces).lowercased())
    {
      return .unsupportedPartEncoding(path: path, part: name, encoding: encoding)
    }
    return nil
  }
}

/// Header values as the service reads them.
package enum HTTPMessageHeaders {
  /// A `Content-Type` value's media type: lowercased, without parameters or spaces.
  package static func mediaType(_ value: String) -> String {
    String(value.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased()
  }

  /// A `Content-Type` value's `boundary` parameter when RFC 2046 allows it, else nil.
  ///
  /// The parameter's name is read in any case, its value as a token or a quoted string (RFC
  /// 2045); a boundary is 1 to 70 of `bchars` (letters, digits and `'()+_,-./:=?` and space),
  /// not ending in a space. Nil for none, a parameter given twice, a quoted string left open,
  /// text between parameters, or a boundary outside those rules.
  package static func boundary(_ value: String) -> String? {
    let bchars = Set("0123456789'()+_,-./:=? ".utf8)
    guard let found = parameters(value)?.parameters["boundary"],
      (1...70).contains(found.utf8.count), found.last != " ",
      found.utf8.allSatisfy({ bchars.contains($0) || (0x41...0x5A).contains($0 & 0xDF) })
    else { return nil }
    return found
  }

  /// A header value's first item and its parameters (`form-data; name="a"; filename="b"`).
  ///
  /// The item lowercased and trimmed; parameter names lowercased, values as tokens or quoted
  /// strings (a backslash escapes the next character). Nil when a parameter is given twice, a
  /// quoted string is left open, or text lies between parameters.
  package static func parameters(_ value: String) -> (value: String, parameters: [String: String])?
  {
    var rest = Substring(value)
    let first = rest.prefix { $0 != ";" }
    rest = rest.dropFirst(first.count)
    var parameters: [String: String] = [:]
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    while rest.first == ";" {
      rest = rest.dropFirst().drop(while: blank)
      if rest.isEmpty { break }
      let name = rest.prefix { $0 != "=" && $0 != ";" }
      rest = rest.dropFirst(name.count)
      var text = ""
      if rest.first == "=" {
        rest = rest.dropFirst().drop(while: blank)
        if rest.first == "\"" {
          rest = rest.dropFirst()
          var closed = false
          while let character = rest.popFirst() {
            if character == "\\", let escaped = rest.popFirst() {
              text.append(escaped)
            } else if character == "\"" {
              closed = true
              break
            } else {
              text.append(character)
            }
          }
          guard closed else { return nil }
          rest = rest.drop(while: blank)
        } else {
          let token = rest.prefix { $0 != ";" }
          rest = rest.dropFirst(token.count)
          text = token.trimmingCharacters(in: .whitespaces)
        }
      }
      let key = name.trimmingCharacters(in: .whitespaces).lowercased()
      guard parameters[key] == nil else { return nil }
      parameters[key] = text
    }
    guard rest.isEmpty else { return nil }
    return (first.trimmingCharacters(in: .whitespaces).lowercased(), parameters)
  }

  /// A `Content-Type` value's `charset` parameter (RFC 9110, 8.3.2), lowercased and without
  /// its quotes; nil when it has none.
  package static func charset(_ value: String) -> String? {
    for parameter in value.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2,
        pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset"
      else { continue }
      var text = pair[1].trimmingCharacters(in: .whitespaces)
      if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
        text = String(text.dropFirst().dropLast())
      }
      return text.lowercased()
    }
    return nil
  }
}
