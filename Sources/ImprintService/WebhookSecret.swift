// SPDX-License-Identifier: Apache-2.0
// ImprintService: the key webhook calls are signed with (`--webhook-secret-file`), as the
// Standard Webhooks specification writes it: `whsec_` and the base64 of 24 to 64 bytes.

import Foundation
import ImprintCore
import ImprintHTTP

/// The secret a receiver checks webhook calls with: every call then carries
/// `Webhook-Timestamp` and `Webhook-Signature` (`WebhookSender.signatureHeaders`), which a
/// Standard Webhooks library, or a few lines of HMAC-SHA256, verifies.
///
/// Never shown: not in errors, not in descriptions (`description` gives its length only).
public struct WebhookSecret: Sendable, Equatable, CustomStringConvertible {
  /// The HMAC-SHA256 key: the bytes the base64 after `whsec_` stands for.
  let key: [UInt8]

  /// The secret in the file at `path`: one line, `whsec_` and the base64 of 24 to 64 bytes.
  ///
  /// Blanks and line breaks around it are ignored. The file must be a regular file that others
  /// than its owner and its group may not read, nor its group change (`FileIO.readSecret`, as
  /// `--token-file`'s).
  ///
  /// - Throws: `FileError` when the file cannot be read (up to 4 KiB);
  ///   `ServerError.invalidWebhookSecret` when others may read it or its text is not a secret.
  public init(file path: String) throws {
    let text = try FileIO.readSecretLine(path, limit: 4096, access: .groupMayRead) {
      ServerError.invalidWebhookSecret(source: path, problem: "cannot be used: " + $0)
    }
    try self.init(text, source: path)
  }

  /// `secret` itself (`source` names where it came from in errors, which never show it).
  ///
  /// - Throws: `ServerError.invalidWebhookSecret` when it is not `whsec_` and the base64 of
  ///   24 to 64 bytes.
  public init(_ secret: String, source: String) throws(ServerError) {
    guard secret.hasPrefix("whsec_") else {
      throw .invalidWebhookSecret(source: source, problem: "does not start with 'whsec_'")
    }
    guard let key = Data(base64Encoded: String(secret.dropFirst(6))) else {
      throw .invalidWebhookSecret(
        source: source, problem: "is not 'whsec_' followed by base64 (padded, one line)")
    }
    guard (24...64).contains(key.count) else {
      throw .invalidWebhookSecret(
        source: source, problem: "holds a key of \(key.count) bytes; expected 24 to 64")
    }
    self.key = Array(key)
  }

  public var description: String { "WebhookSecret(\(key.count) bytes)" }
}
