// SPDX-License-Identifier: Apache-2.0
// The multipart/form-data reader: the same parts whatever the body's split into reads, the
// boundaries RFC 2046 allows, and every broken shape refused with its reason.

import Foundation
import ImprintHTTP
import Testing

@testable import ImprintService

@Suite("multipart/form-data bodies read as they arrive")
struct MultipartParserTests {
  /// A body of `parts` (name, file name, bytes) with `boundary`, as curl and browsers send it.
  static func body(
    _ parts: [(String, String?, [UInt8])], boundary: String, preamble: String = "",
    epilogue: String = ""
  ) -> [UInt8] {
    var bytes = Array(preamble.utf8)
    for (name, filename, content) in parts {
      var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
      if let filename { head += "; filename=\"\(filename)\"\r\nContent-Type: application/pdf" }
      bytes += Array((head + "\r\n\r\n").utf8) + content + Array("\r\n".utf8)
    }
    return bytes + Array("--\(boundary)--\r\n\(epilogue)".utf8)
  }

  /// Reads `body` in pieces of `size` bytes.
  static func read(_ body: [UInt8], boundary: String, size: Int, limits: MultipartLimits = .init())
    -> Result<[FormPart], HTTPError>
  {
    let parser = MultipartParser(boundary: boundary, path: "/v1/batch", limits: limits)
    var offset = 0
    while offset < body.count {
      let piece = Array(body[offset..<min(body.count, offset + size)])
      if let problem = piece.withUnsafeBytes({ parser.read($0) }) { return .failure(problem) }
      offset += size
    }
    return parser.finish()
  }

  @Test(
    "the same parts for every split of the body, with boundaries of 1 to 70 characters",
    arguments: [
      "b", "XyZ", "----WebKitFormBoundary7MA4YWxkTrZu0gW", String(repeating: "x", count: 70),
    ])
  func everySplit(boundary: String) throws {
    // Content that holds CRLF, dashes and most of the delimiter, but never all of it.
    let tricky = Array("a\r\n--\r\n-\(boundary.dropLast())\r\n\r\n--".utf8) + [0, 255, 13]
    let pdf = Array("%PDF-1.4\n".utf8) + (0..<3000).map { UInt8($0 % 251) }
    let parts: [(String, String?, [UInt8])] = [
      ("manifest", "orders.jsonl", Array("{\"kind\":\"qr\"}\n".utf8)), ("a.pdf", "a.pdf", pdf),
      ("note", nil, tricky), ("empty", nil, []),
    ]
    let body = Self.body(parts, boundary: boundary, preamble: "ignored\r\n", epilogue: "ignored")
    for size in [1, 2, 3, 7, 64, 1000, body.count] {
      let read = try Self.read(body, boundary: boundary, size: size).get()
      #expect(read.map(\.name) == ["manifest", "a.pdf", "note", "empty"], "split \(size)")
      #expect(read.map(\.bytes) == parts.map(\.2), "split \(size)")
      #expect(read.map(\.filename) == ["orders.jsonl", "a.pdf", nil, nil])
      #expect(read[1].contentType == "application/pdf")
    }
  }

  @Test("boundaries libmicrohttpd refused: one character, parameters after it, any case")
  func boundaries() {
    #expect(HTTPMessageHeaders.boundary("multipart/form-data; boundary=b") == "b")
    #expect(
      HTTPMessageHeaders.boundary("multipart/form-data; boundary=abc; charset=utf-8") == "abc")
    #expect(HTTPMessageHeaders.boundary("multipart/form-data; BOUNDARY=abc") == "abc")
    #expect(HTTPMessageHeaders.boundary("multipart/form-data; boundary=a; boundary=b") == nil)
  }

  @Test(
    "broken bodies are refused with their reason",
    arguments: [
      (
        "no closing delimiter", "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n",
        "ends before its closing boundary"
      ),
      ("no part", "--B--\r\n", "holds no part"),
      ("nothing", "", "ends before its closing boundary"),
      (
        "text after the boundary",
        "--Bx\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--B--",
        "goes on with other text"
      ),
      (
        "no Content-Disposition", "--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--",
        "a part has no name"
      ),
      (
        "not form-data", "--B\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--B--",
        "not form-data"
      ),
      (
        "a name given twice",
        "--B\r\nContent-Disposition: form-data; name=\"a\"; name=\"b\"\r\n\r\nx\r\n--B--",
        "not form-data"
      ),
      (
        "an open quote", "--B\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--B--",
        "not form-data"
      ),
      (
        "a header line without a colon", "--B\r\nContent-Disposition form-data\r\n\r\nx\r\n--B--",
        "not 'Name: value'"
      ),
      (
        "a folded header line",
        "--B\r\nContent-Disposition: form-data;\r\n name=\"a\"\r\n\r\nx\r\n--B--",
        "not 'Name: value'"
      ),
      (
        "a header given twice",
        "--B\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx\r\n--B--",
        "twice"
      ),
      (
        "an empty name", "--B\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nx\r\n--B--",
        "a part has no name"
      ),
    ])
  func broken(name: String, body: String, reason: String) {
    for size in [1, 5, body.utf8.count + 1] {
      guard case .failure(let problem) = Self.read(Array(body.utf8), boundary: "B", size: size)
      else {
        Issue.record("\(name): read")
        continue
      }
      #expect(problem.code == "http.malformedMultipart", "\(name): \(problem)")
      #expect(problem.message.contains(reason), "\(name): \(problem.message)")
    }
  }

  @Test("limits: parts, a part's bytes, its headers' bytes, a name's characters")
  func limits() {
    var limits = MultipartLimits()
    limits.maximumParts = 2
    limits.maximumPartBytes = 10
    let three = Self.body([("a", nil, [1]), ("b", nil, [2]), ("c", nil, [3])], boundary: "B")
    #expect(failure(three, limits)?.code == "http.tooManyParts")
    let large = Self.body([("a", nil, Array(repeating: 7, count: 11))], boundary: "B")
    #expect(failure(large, limits)?.code == "http.partTooLarge")
    let fits = Self.body([("a", nil, Array(repeating: 7, count: 10))], boundary: "B")
    #expect(failure(fits, limits) == nil)
    let longHeaders = Array(
      ("--B\r\nContent-Disposition: form-data; name=\"a\"\r\nX-Pad: "
        + String(repeating: "p", count: 5000) + "\r\n\r\nx\r\n--B--").utf8)
    #expect(failure(longHeaders, limits)?.message.contains("headers are longer") == true)
    let control = Self.body([("a\u{1}b", nil, [1])], boundary: "B")
    #expect(failure(control, limits)?.code == "http.invalidPartName")
  }

  private func failure(_ body: [UInt8], _ limits: MultipartLimits) -> HTTPError? {
    for size in [1, 3, body.count] {
      if case .failure(let problem) = Self.read(body, boundary: "B", size: size, limits: limits) {
        return problem
      }
    }
    return nil
  }
}
