// SPDX-License-Identifier: Apache-2.0
// ImprintQR: Bech32 (BIP-173) and Bech32m (BIP-350) strings and segwit addresses.

import ImprintCore

/// Bech32 and Bech32m encoding, as used by segwit addresses.
public enum Bech32 {
  /// The checksum variant.
  public enum Variant: Sendable, Equatable {
    /// BIP-173, constant 1 (segwit version 0).
    case bech32
    /// BIP-350, constant 0x2bc830a3 (segwit version 1 and above).
    case bech32m

    var constant: UInt32 { self == .bech32 ? 1 : 0x2bc8_30a3 }
  }

  /// A decoded Bech32 string.
  public struct Decoded: Sendable, Equatable {
    /// The human-readable part, lower case.
    public let hrp: String
    /// The 5-bit data values, without the checksum.
    public let data: [UInt8]
    /// Which checksum matched.
    public let variant: Variant
  }

  static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

  private static func polymod(_ values: [UInt8]) -> UInt32 {
    let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
    var checksum: UInt32 = 1
    for value in values {
      let top = checksum >> 25
      checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
      for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { checksum ^= generator[i] }
    }
    return checksum
  }

  private static func expand(_ hrp: [UInt8]) -> [UInt8] {
    hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
  }

  /// Decodes a Bech32 or Bech32m string.
  ///
  /// - Returns: the decoded parts, or a reason it is invalid (length, case, characters, checksum).
  public static func decode(_ text: String) -> Result<Decoded, Failure> {
    let bytes = Array(text.utf8)
    guard bytes.count <= 90 else {
      return .failure(.init("is \(bytes.count) characters; at most 90"))
    }
    guard bytes.allSatisfy({ $0 >= 33 && $0 <= 126 }) else {
      return .failure(.init("contains a character outside printable ASCII"))
    }
    let hasLower = bytes.contains { $0 >= 97 && $0 <= 122 }
    let hasUpper = bytes.contains { $0 >= 65 && $0 <= 90 }
    guard !(hasLower && hasUpper) else { return .failure(.init("mixes upper and lower case")) }
    let lower = bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    guard let separator = lower.lastIndex(of: UInt8(ascii: "1")) else {
      return .failure(.init("has no '1' separator"))
    }
    guard separator >= 1 else { return .failure(.init("has an empty human-readable part")) }
    guard lower.count - separator - 1 >= 6 else {
      return .failure(.init("is too short for a checksum"))
    }
    let hrp = Array(lower[..<separator])
    var data: [UInt8] = []
    for (offset, character) in lower[(separator + 1)...].enumerated() {
      guard let value = charset.firstIndex(of: character) else {
        let shown = Character(Unicode.Scalar(bytes[separator + 1 + offset]))
        return .failure(
          .init("has '\(shown)' at position \(separator + offset + 2), not a Bech32 character"))
      }
      data.append(UInt8(value))
    }
    let check = polymod(expand(hrp) + data)
    let variant: Variant
    if check == Variant.bech32.constant {
      variant = .bech32
    } else if check == Variant.bech32m.constant {
      variant = .bech32m
    } else {
      return .failure(.init("fails its Bech32 checksum"))
    }
    return .success(
      Decoded(
        hrp: String(decoding: hrp, as: UTF8.self), data: Array(data.dropLast(6)), variant: variant))
  }

  /// Encodes 5-bit values with a checksum of `variant`.
  public static func encode(hrp: String, data: [UInt8], variant: Variant) -> String {
    let hrpBytes = Array(hrp.lowercased().utf8)
    let check = polymod(expand(hrpBytes) + data + [0, 0, 0, 0, 0, 0]) ^ variant.constant
    let checksum = (0..<6).map { UInt8((check >> (5 * (5 - UInt32($0)))) & 31) }
    return hrp.lowercased() + "1"
      + String(decoding: (data + checksum).map { charset[Int($0)] }, as: UTF8.self)
  }

  /// Regroups bits (8 → 5 or 5 → 8); nil when padding is invalid.
  public static func convertBits(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
    var accumulator = 0
    var bits = 0
    var result: [UInt8] = []
    let maxValue = (1 << to) - 1
    for value in data {
      guard Int(value) >> from == 0 else { return nil }
      accumulator = (accumulator << from) | Int(value)
      bits += from
      while bits >= to {
        bits -= to
        result.append(UInt8((accumulator >> bits) & maxValue))
      }
    }
    if pad {
      if bits > 0 { result.append(UInt8((accumulator << (to - bits)) & maxValue)) }
    } else if bits >= from || (accumulator << (to - bits)) & maxValue != 0 {
      return nil
    }
    return result
  }

  /// Why a string is not valid Bech32.
  public struct Failure: ImprintError, Equatable {
    /// The reason, phrased to follow the string ("fails its Bech32 checksum").
    public let reason: String
    init(_ reason: String) { self.reason = reason }

    public var code: String { "bech32.invalid" }
    /// 422: text understood and refused.
    public var status: Int { 422 }
    public var message: String { "the Bech32 text \(reason)" }
  }
}
