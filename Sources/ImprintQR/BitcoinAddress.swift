// SPDX-License-Identifier: Apache-2.0
// ImprintQR: Bitcoin addresses: Base58Check (P2PKH, P2SH) and segwit (Bech32, Bech32m).

import ImprintCore

/// A validated Bitcoin address.
public struct BitcoinAddress: Sendable, Hashable, CustomStringConvertible {
  /// The address kinds Imprint accepts.
  public enum Kind: String, Sendable {
    /// Pay to public key hash, Base58Check version 0x00 (mainnet `1…`) or 0x6f (testnet).
    case p2pkh
    /// Pay to script hash, Base58Check version 0x05 (mainnet `3…`) or 0xc4 (testnet).
    case p2sh
    /// Segwit version 0, Bech32 (`bc1q…`).
    case segwitV0
    /// Segwit version 1 to 16, Bech32m (`bc1p…` is taproot).
    case segwitV1Plus
  }

  /// The address as given (its case is valid by construction).
  public let text: String
  /// The kind of address.
  public let kind: Kind
  /// Whether it is a mainnet address (`1`, `3`, `bc1`); otherwise testnet or regtest.
  public let isMainnet: Bool
  /// The output script it pays to, as hex (for checking against BIP vectors).
  public let scriptPubKeyHex: String

  /// Validates `text` as a Base58Check or segwit address, checksums included.
  ///
  /// - Throws: `QRError.invalidBitcoinAddress` saying what is wrong (characters, length,
  ///   checksum, version, witness program).
  public init(_ text: String) throws(QRError) {
    self.text = text
    let lower = text.lowercased()
    if lower.hasPrefix("bc1") || lower.hasPrefix("tb1") || lower.hasPrefix("bcrt1") {
      let (kind, script) = try BitcoinAddress.segwit(text)
      self.kind = kind
      scriptPubKeyHex = script
      isMainnet = lower.hasPrefix("bc1")
      return
    }
    // Base58 decoding is quadratic in the length (a 100 000-character line took over a
    // minute): anything longer than an address can be is refused before it is decoded.
    let length = text.unicodeScalars.count
    guard length <= BitcoinAddress.maximumBase58Length else {
      throw .invalidBitcoinAddress(
        address: text,
        reason: "is \(length) characters; a Base58 address has at most "
          + "\(BitcoinAddress.maximumBase58Length)")
    }
    let bytes: [UInt8]
    switch Base58.decode(text) {
    case .failure(let failure):
      // The offset counts UTF-8 bytes; the message names the character (Unicode scalar) there
      // and its position in scalars, so a combining mark or a multi-byte letter is reported
      // where it is (indexing the Characters by a byte offset could run past their end).
      var position = 1
      var byteOffset = 0
      var shown = ""
      for scalar in text.unicodeScalars {
        if byteOffset >= failure.offset {
          shown = SafeText.escaped(String(scalar))
          break
        }
        byteOffset += UTF8.width(scalar)
        position += 1
      }
      throw .invalidBitcoinAddress(
        address: text, reason: "has '\(shown)' at position \(position), not a Base58 character",
        cause: ErrorCause(failure))
    case .success(let decoded): bytes = decoded
    }
    guard bytes.count == 25 else {
      throw .invalidBitcoinAddress(
        address: text, reason: "decodes to \(bytes.count) bytes; 25 expected for Base58Check")
    }
    let payload = Array(bytes.prefix(21))
    guard Array(SHA256.hash(SHA256.hash(payload)).prefix(4)) == Array(bytes.suffix(4)) else {
      throw .invalidBitcoinAddress(address: text, reason: "fails its Base58Check checksum")
    }
    let hash = payload.dropFirst().map { hexByte($0) }.joined()
    switch payload[0] {
    case 0x00, 0x6f:
      kind = .p2pkh
      scriptPubKeyHex = "76a914" + hash + "88ac"
    case 0x05, 0xc4:
      kind = .p2sh
      scriptPubKeyHex = "a914" + hash + "87"
    default:
      throw .invalidBitcoinAddress(
        address: text, reason: "has version byte 0x\(hexByte(payload[0])), not a Bitcoin address")
    }
    isMainnet = payload[0] == 0x00 || payload[0] == 0x05
  }

  /// The longest Base58Check address: 25 bytes are at most 35 Base58 characters.
  public static let maximumBase58Length = 35

  private static func segwit(_ text: String) throws(QRError) -> (Kind, String) {
    let decoded: Bech32.Decoded
    switch Bech32.decode(text) {
    case .failure(let failure):
      throw .invalidBitcoinAddress(
        address: text, reason: failure.reason, cause: ErrorCause(failure))
    case .success(let value): decoded = value
    }
    guard ["bc", "tb", "bcrt"].contains(decoded.hrp) else {
      throw .invalidBitcoinAddress(
        address: text, reason: "has prefix '\(decoded.hrp)'; bc, tb or bcrt expected")
    }
    guard let version = decoded.data.first, version <= 16 else {
      throw .invalidBitcoinAddress(address: text, reason: "has a witness version above 16")
    }
    guard
      let program = Bech32.convertBits(Array(decoded.data.dropFirst()), from: 5, to: 8, pad: false)
    else {
      throw .invalidBitcoinAddress(
        address: text, reason: "has invalid padding in its witness program")
    }
    guard (2...40).contains(program.count) else {
      throw .invalidBitcoinAddress(
        address: text, reason: "has a \(program.count)-byte witness program; 2 to 40 expected")
    }
    if version == 0 {
      guard program.count == 20 || program.count == 32 else {
        throw .invalidBitcoinAddress(
          address: text,
          reason: "has a \(program.count)-byte version-0 program; 20 or 32 expected")
      }
      guard decoded.variant == .bech32 else {
        throw .invalidBitcoinAddress(
          address: text, reason: "is segwit version 0 but uses a Bech32m checksum")
      }
    } else if decoded.variant != .bech32m {
      throw .invalidBitcoinAddress(
        address: text,
        reason: "is segwit version \(version) but uses a Bech32 checksum, not Bech32m")
    }
    let opcode = version == 0 ? 0 : 0x50 + Int(version)
    let script =
      hexByte(UInt8(opcode)) + hexByte(UInt8(program.count)) + program.map(hexByte).joined()
    return (version == 0 ? .segwitV0 : .segwitV1Plus, script)
  }

  public var description: String { text }
}

func hexByte(_ byte: UInt8) -> String {
  let digits = Array("0123456789abcdef")
  return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
