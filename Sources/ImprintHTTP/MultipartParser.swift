// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: a `multipart/form-data` body read as it arrives (RFC 7578 over RFC 2046's
// multipart syntax), its parts handed to a `MultipartCollector`.
//
// Written here rather than taken from a library: libmicrohttpd's post processor went with
// libmicrohttpd (HTTPServer.swift says why), and Debian's MIME libraries (GMime) parse whole
// messages into GLib objects, not a stream under byte limits. The syntax read is small: a
// delimiter line, a part's header lines, its bytes up to the next delimiter.

import Foundation
import ImprintCore

/// A streaming reader of one multipart body: `read` takes its bytes as they arrive, `finish`
/// says whether it ended at its closing delimiter.
///
/// Bytes before the first delimiter (the preamble) and after the closing one (the epilogue) are
/// ignored, as RFC 2046 says. A part's headers are at most `headerLimit` bytes; a line that
/// begins with the delimiter but goes on with other text than `--` or blanks is refused (no
/// client makes one: its boundary would be in its content).
package final class MultipartParser {
  private enum State {
    /// Looking for the first delimiter.
    case preamble
    /// Just after a delimiter: `--` (the end), or blanks and CRLF (a part follows).
    case afterDelimiter
    /// Reading a part's header lines, up to the blank line.
    case headers
    /// Reading a part's bytes, up to the next delimiter.
    case body
    /// After the closing delimiter.
    case epilogue
  }

  private let collector: MultipartCollector
  /// CRLF, `--` and the boundary: what ends a part's bytes.
  private let delimiter: [UInt8]
  /// The most bytes a part's header section may take.
  private let headerLimit: Int
  private var state = State.preamble
  /// Bytes read and not yet taken (at most a delimiter's length, or a header section).
  private var held: [UInt8]
  /// The route, for messages.
  package var path: String { collector.path }

  /// A reader for a body whose `Content-Type` gave `boundary` (`HTTPMessageHeaders.boundary`).
  package init(boundary: String, path: String, limits: MultipartLimits) {
    collector = MultipartCollector(path: path, limits: limits)
    delimiter = Array("\r\n--\(boundary)".utf8)
    headerLimit = 4096 + 2 * limits.maximumNameBytes
    // The first delimiter may open the body, without the CRLF before it.
    held = [0x0D, 0x0A]
  }

  /// Takes the next bytes of the body.
  ///
  /// - Returns: the problem, once the body broke a rule or a limit (later bytes are ignored).
  package func read(_ bytes: UnsafeRawBufferPointer) -> HTTPError? {
    if let failure = collector.failure { return failure }
    guard state != .epilogue else { return nil }
    held.append(contentsOf: bytes)
    var start = 0
    defer { held.removeFirst(start) }
    while true {
      switch state {
      case .preamble, .body:
        guard let found = find(delimiter, in: held, from: start) else {
          // Keep what may be the beginning of a delimiter.
          let keep = max(start, held.count - (delimiter.count - 1))
          if state == .body, keep > start, !collector.append(held[start..<keep]) {
            return collector.failure
          }
          start = keep
          return nil
        }
        if state == .body, !collector.append(held[start..<found]) { return collector.failure }
        start = found + delimiter.count
        state = .afterDelimiter
      case .afterDelimiter:
        let rest = held[start...]
        if rest.count < 2 { return nil }
        if rest.starts(with: [0x2D, 0x2D]) {
          state = .epilogue
          return nil
        }
        let blanks = rest.prefix { $0 == 0x20 || $0 == 0x09 }
        let after = rest.dropFirst(blanks.count)
        if after.count < 2 {
          guard after.allSatisfy({ $0 == 0x0D }) else { return misplacedDelimiter() }
          return nil
        }
        guard after.starts(with: [0x0D, 0x0A]) else { return misplacedDelimiter() }
        start += blanks.count + 2
        state = .headers
      case .headers:
        guard let end = find([0x0D, 0x0A, 0x0D, 0x0A], in: held, from: start - 2) else {
          guard held.count - start <= headerLimit else {
            return fail("a part's headers are longer than \(headerLimit) bytes")
          }
          return nil
        }
        // `start - 2`: a part without headers has its blank line at once.
        let section = end < start ? [] : Array(held[start..<end])
        guard section.count <= headerLimit else {
          return fail("a part's headers are longer than \(headerLimit) bytes")
        }
        if let problem = beginPart(section) { return problem }
        start = max(start, end + 4)
        state = .body
      case .epilogue:
        return nil
      }
    }
  }

  /// Ends the body.
  ///
  /// - Returns: the parts, or the problem.
  package func finish() -> Result<[FormPart], HTTPError> {
    if let failure = collector.failure { return .failure(failure) }
    guard state == .epilogue else {
      return .failure(
        .malformedMultipart(path: path, problem: "it ends before its closing boundary"))
    }
    guard !collector.parts.isEmpty else {
      return .failure(.malformedMultipart(path: path, problem: "it holds no part"))
    }
    return .success(collector.parts)
  }

  private func misplacedDelimiter() -> HTTPError? {
    fail("a line begins with the boundary and goes on with other text")
  }

  private func fail(_ problem: String) -> HTTPError? {
    collector.refuse(.malformedMultipart(path: path, problem: problem))
    return collector.failure
  }

  /// Reads a part's header section (lines without their final CRLF) and begins the part.
  private func beginPart(_ section: [UInt8]) -> HTTPError? {
    var headers: [String: String] = [:]
    for line in section.isEmpty ? [] : split(section, on: [0x0D, 0x0A]) {
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
        line.first != 0x20, line.first != 0x09,
        !line.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A })
      else {
        return fail("a part's header line is not 'Name: value'")
      }
      let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
      guard ["content-disposition", "content-type", "content-transfer-encoding"].contains(name)
      else { continue }
      guard headers[name] == nil else { return fail("a part gives its \(name) header twice") }
      headers[name] = String(decoding: line[(colon + 1)...], as: UTF8.self)
        .trimmingCharacters(in: .whitespaces)
    }
    guard let disposition = headers["content-disposition"] else {
      return fail("a part has no name (Content-Disposition: form-data; name=\"...\")")
    }
    guard let parameters = Self.formData(disposition) else {
      return fail("a part's Content-Disposition is not form-data with its parameters")
    }
    guard
      collector.begin(
        name: parameters["name"], filename: parameters["filename"],
        contentType: headers["content-type"], transferEncoding: headers["content-transfer-encoding"]
      )
    else { return collector.failure }
    return nil
  }

  /// The parameters of a `Content-Disposition: form-data; ...` value; nil when it is not
  /// form-data or its parameters cannot be read (`HTTPMessageHeaders.parameters`).
  package static func formData(_ value: String) -> [String: String]? {
    guard let read = HTTPMessageHeaders.parameters(value), read.value == "form-data" else {
      return nil
    }
    return read.parameters
  }
}

/// Where `needle` first occurs in `haystack` at or after `from` (clamped to 0).
private func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
  let count = haystack.count - needle.count
  var index = max(0, from)
  guard let first = needle.first else { return nil }
  return haystack.withUnsafeBufferPointer { bytes in
    while index <= count {
      guard let at = bytes[index...count].firstIndex(of: first) else { return nil }
      if needle.indices.allSatisfy({ bytes[at + $0] == needle[$0] }) { return at }
      index = at + 1
    }
    return nil
  }
}

/// `bytes` split at each occurrence of `separator`.
private func split(_ bytes: [UInt8], on separator: [UInt8]) -> [ArraySlice<UInt8>] {
  var pieces: [ArraySlice<UInt8>] = []
  var start = 0
  while let at = find(separator, in: bytes, from: start) {
    pieces.append(bytes[start..<at])
    start = at + separator.count
  }
  pieces.append(bytes[start...])
  return pieces
}
