// SPDX-License-Identifier: Apache-2.0
// ImprintService: the optional bearer token requests must carry (`--token-file`), read from a
// file and compared in constant time.

import Foundation
import ImprintCore
import ImprintHTTP

/// The token a request's `Authorization: Bearer <token>` must carry.
///
/// Only its SHA-256 digest is kept; a presented token is hashed and the two digests compared
/// byte by byte without an early exit, so that the time taken says nothing of how much matched
/// (nor, the digests having one length, of the token's length).
public struct BearerToken: Sendable {
  private let digest: [UInt8]

  /// The token in the file at `path`: its text without the final line break and surrounding
  /// blanks, 16 to 512 characters of RFC 6750's token alphabet (letters, digits, `-._~+/`,
  /// and `=` at the end).
  ///
  /// The file must be a regular file that others than its owner and its group may not read,
  /// nor its group change (`FileIO.readSecret`, as `--password-file`'s; its group may read it,
  /// as a Kubernetes secret mounted for the pod's `fsGroup` is read).
  ///
  /// - Throws: `FileError` when the file cannot be read (up to 4 KiB);
  ///   `ServerError.invalidToken` when others may read it or its text is not such a token.
  public init(file path: String) throws {
    let text = try FileIO.readSecretLine(path, limit: 4096, access: .groupMayRead) {
      ServerError.invalidToken(source: path, problem: "cannot be used: " + $0)
    }
    try self.init(text, source: path)
  }

  /// `token` itself (`source` names where it came from in errors).
  ///
  /// - Throws: `ServerError.invalidToken` when it is not 16 to 512 characters of RFC 6750's
  ///   token alphabet.
  public init(_ token: String, source: String) throws(ServerError) {
    let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/".utf8)
    let body = token.utf8.reversed().drop { $0 == UInt8(ascii: "=") }
    guard (16...512).contains(token.utf8.count) else {
      throw .invalidToken(
        source: source,
        problem: "holds \(token.utf8.count) characters; a token has 16 to 512")
    }
    guard body.allSatisfy(allowed.contains), !body.isEmpty else {
      throw .invalidToken(
        source: source,
        problem: "holds characters outside a bearer token's (letters, digits, -._~+/ and a final =)"
      )
    }
    digest = SHA256.hash(Array(token.utf8))
  }

  /// Whether `authorization` (an `Authorization` header's value) is `Bearer <this token>`.
  ///
  /// As RFC 7235 and 6750 read it: the scheme in any case, then one or more spaces, then the
  /// token; blanks after it are the field's optional whitespace (RFC 7230, `OWS`), not part of
  /// the token.
  func admits(_ authorization: String?) -> Bool {
    guard let authorization else { return false }
    let bytes = Array(authorization.utf8)
    let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
    guard bytes.count > 7,
      String(decoding: bytes.prefix(7), as: UTF8.self).lowercased() == "bearer "
    else { return false }
    let token = bytes.dropFirst(7).drop { $0 == UInt8(ascii: " ") }.reversed().drop(while: blank)
      .reversed()
    guard !token.isEmpty else { return false }
    let presented = SHA256.hash(Array(token))
    var difference: UInt8 = 0
    for (left, right) in zip(presented, digest) { difference |= left ^ right }
    return difference == 0
  }
}
