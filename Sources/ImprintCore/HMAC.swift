// SPDX-License-Identifier: Apache-2.0
// ImprintCore: HMAC-SHA256 (RFC 2104), on the one SHA-256 implementation.

/// HMAC with SHA-256 (RFC 2104, FIPS 198-1): the signatures of the service's webhook calls.
///
/// Built on `SHA256` for the reason that one is: Foundation on Linux has no HMAC, and one
/// signature per webhook call does not justify a cryptography library.
public enum HMAC {
  /// The 32-byte HMAC-SHA256 of `message` under `key` (a key longer than SHA-256's 64-byte
  /// block is hashed first, as RFC 2104 says).
  public static func sha256(key: some Collection<UInt8>, message: some Collection<UInt8>)
    -> [UInt8]
  {
    var block = key.count > 64 ? SHA256.hash(key) : Array(key)
    block += [UInt8](repeating: 0, count: 64 - block.count)
    var inner = SHA256()
    inner.update(block.map { $0 ^ 0x36 })
    inner.update(message)
    var outer = SHA256()
    outer.update(block.map { $0 ^ 0x5c })
    outer.update(inner.finish())
    return outer.finish()
  }
}
