// SPDX-License-Identifier: Apache-2.0
// ImprintQR: Base58 and Base58Check (Bitcoin's alphabet).

import ImprintCore

/// Base58 as Bitcoin uses it, and Base58Check (a 4-byte double-SHA-256 checksum).
public enum Base58 {
  static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
  private static let values: [Int8] = {
    var table = [Int8](repeating: -1, count: 128)
    for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
    return table
  }()

  /// Encodes bytes; each leading zero byte becomes a `1`.
  public static func encode(_ bytes: [UInt8]) -> String {
    let zeros = bytes.prefix { $0 == 0 }.count
    var digits: [UInt8] = []  // base-58 digits, least significant first
    for byte in bytes.dropFirst(zeros) {
      var carry = Int(byte)
      for i in digits.indices {
        carry += Int(digits[i]) << 8
        digits[i] = UInt8(carry % 58)
        carry /= 58
      }
      while carry > 0 {
        digits.append(UInt8(carry % 58))
        carry /= 58
      }
    }
    let text = String(repeating: "1", count: zeros)
    return text + String(decoding: digits.reversed().map { alphabet[Int($0)] }, as: UTF8.self)
  }

  /// Decodes text, or returns nil and the offending character's offset (0-based).
  public static func decode(_ text: String) -> Result<[UInt8], InvalidCharacter> {
    var bytes: [UInt8] = []  // base-256, least significant first
    let scalars = Array(text.utf8)
    for (offset, character) in scalars.enumerated() {
      guard character < 128, values[Int(character)] >= 0 else {
        return .failure(InvalidCharacter(offset: offset))
      }
      var carry = Int(values[Int(character)])
      for i in bytes.indices {
        carry += Int(bytes[i]) * 58
        bytes[i] = UInt8(carry & 0xFF)
        carry >>= 8
      }
      while carry > 0 {
        bytes.append(UInt8(carry & 0xFF))
        carry >>= 8
      }
    }
    let zeros = scalars.prefix { $0 == UInt8(ascii: "1") }.count
    return .success([UInt8](repeating: 0, count: zeros) + bytes.reversed())
  }

  /// The offset of a character outside the Base58 alphabet.
  public struct InvalidCharacter: ImprintError, Equatable {
    /// 0-based offset in the text, in UTF-8 bytes.
    public let offset: Int

    public var code: String { "base58.invalidCharacter" }
    /// 422: text understood and refused.
    public var status: Int { 422 }
    public var message: String {
      "the text has a character that is not Base58 at byte \(offset + 1)"
    }
  }

  /// Encodes `payload` followed by the first 4 bytes of SHA-256(SHA-256(payload)).
  public static func encodeCheck(_ payload: [UInt8]) -> String {
    encode(payload + SHA256.hash(SHA256.hash(payload)).prefix(4))
  }
}
