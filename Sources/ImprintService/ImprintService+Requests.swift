// SPDX-License-Identifier: Apache-2.0
// ImprintService: what every route reads of a request: its media type, its parts, a JSON part's
// share of the body budget, and a private folder for its files.

import Foundation
import ImprintCore
import ImprintHTTP

extension ImprintService {
  static func parts(of request: HTTPRequest, known: [String]?) throws(ServiceError)
    -> [String: FormPart]
  {
    var named: [String: FormPart] = [:]
    for part in request.parts ?? [] {
      if let known, !known.contains(part.name) {
        throw .unknownPart(path: request.path, name: part.name, expected: known)
      }
      guard named[part.name] == nil else {
        throw .duplicatePart(path: request.path, name: part.name)
      }
      named[part.name] = part
    }
    return named
  }

  /// Takes a JSON part (an order, a profile) to be decoded: at most `HTTPServer.jsonByteLimit`
  /// bytes, and the work of decoding it taken from the body budget until `release`d.
  ///
  /// - Returns: the bytes of the budget taken.
  /// - Throws: `HTTPError.jsonTooLarge` (413), `.bodiesBusy` (503) when the work does not fit
  ///   beside the bodies held.
  func takeJSON(_ part: FormPart, route: String) throws(HTTPError) -> Int {
    guard part.bytes.count <= HTTPServer.jsonByteLimit else {
      throw .jsonTooLarge(path: route, bytes: part.bytes.count, limit: HTTPServer.jsonByteLimit)
    }
    let work = part.bytes.count * HTTPServer.jsonWorkFactor
    guard server.reserve(work) else {
      throw .bodiesBusy(
        path: route, bytes: part.bytes.count, held: server.bodyBytesHeld, limit: server.bodyBudget)
    }
    return work
  }

  /// The media types of the QR formats.
  static let mediaTypes = [
    "png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf",
    "eps": "application/postscript",
  ]

  /// Refuses a body whose media type is not one of `accepted` (`image/*` accepts any image),
  /// and a JSON body declared in a charset other than UTF-8 (RFC 8259 section 8.1: JSON
  /// exchanged between systems is UTF-8).
  ///
  /// - Throws: `ServiceError.unsupportedMediaType`, `ServiceError.unsupportedCharset`.
  static func expect(_ request: HTTPRequest, _ accepted: [String]) throws(ServiceError) {
    let type = request.contentType ?? ""
    let matches = accepted.contains { pattern in
      pattern.hasSuffix("/*") ? type.hasPrefix(pattern.dropLast()) : type == pattern
    }
    guard matches else {
      throw .unsupportedMediaType(
        path: request.path, found: request.contentType, expected: accepted)
    }
    if type == "application/json", let charset = request.charset, charset != "utf-8" {
      throw .unsupportedCharset(path: request.path, found: charset)
    }
  }

  /// The 400 for a combination of QR options the settings refuse (`QRSettings.conflict`),
  /// naming the request's own keys.
}

/// A private folder for one request's files, removed with its contents when released.
final class RequestFolder {
  let path: String

  init() throws(FileError) {
    var template = Array(
      (FileManager.default.temporaryDirectory.path + "/imprint-serve-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else {
      throw .unwritable(path: FileManager.default.temporaryDirectory.path, reason: .system(errno))
    }
    path = made
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}
