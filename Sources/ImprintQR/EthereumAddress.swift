// SPDX-License-Identifier: Apache-2.0
// ImprintQR: Ethereum addresses with EIP-55 mixed-case checksums.

/// A validated Ethereum address (20 bytes), shown in its EIP-55 checksummed form.
public struct EthereumAddress: Sendable, Hashable, CustomStringConvertible {
  /// The 40 lowercase hex digits, without `0x`.
  public let lowercaseHex: String
  /// Set when the input carried an EIP-1191 (RSK) checksum instead of EIP-55: the chain id.
  public let eip1191ChainID: Int?

  /// Validates `text`: `0x` and 40 hex digits; when the letters are of mixed case, they must
  /// match the EIP-55 checksum (or, reported in `eip1191ChainID`, RSK's EIP-1191 checksum).
  ///
  /// - Throws: `QRError.invalidEthereumAddress` (missing `0x`, wrong length, a non-hex character)
  ///   or `QRError.ethereumChecksumMismatch` naming the positions whose case is wrong.
  public init(_ text: String) throws(QRError) {
    guard text.hasPrefix("0x") || text.hasPrefix("0X") else {
      throw .invalidEthereumAddress(address: text, reason: "does not start with 0x")
    }
    let digits = Array(text.dropFirst(2))
    if let index = digits.firstIndex(where: { !$0.isASCII || !$0.isHexDigit }) {
      throw .invalidEthereumAddress(
        address: text,
        reason: "has '\(digits[index])' at position \(index + 3), which is not a hex digit")
    }
    guard digits.count == 40 else {
      throw .invalidEthereumAddress(
        address: text, reason: "has \(digits.count) hex digits after 0x; 40 expected")
    }
    let lower = String(digits).lowercased()
    lowercaseHex = lower
    let hasLower = digits.contains { $0.isLowercase }
    let hasUpper = digits.contains { $0.isUppercase }
    guard hasLower && hasUpper else {
      eip1191ChainID = nil
      return
    }
    let expected = Array(EthereumAddress.checksummed(lower, chainID: nil))
    if expected == digits {
      eip1191ChainID = nil
      return
    }
    for chain in [30, 31] where Array(EthereumAddress.checksummed(lower, chainID: chain)) == digits
    {
      eip1191ChainID = chain
      return
    }
    let wrong = digits.indices.filter { digits[$0] != expected[$0] }.map { $0 + 3 }
    throw .ethereumChecksumMismatch(address: text, positions: wrong)
  }

  /// `0x` + the EIP-55 checksummed hex digits.
  public var checksummed: String { "0x" + EthereumAddress.checksummed(lowercaseHex, chainID: nil) }

  public var description: String { checksummed }

  /// The EIP-55 (or, with a chain id, EIP-1191) checksummed hex digits.
  ///
  /// EIP-55: a letter is upper case when the matching nibble of Keccak-256(lowercase hex) is >= 8.
  /// With a chain id, EIP-1191: the hash is over `"<chainId>0x<lowercase hex>"`.
  static func checksummed(_ lower: String, chainID: Int?) -> String {
    let input = chainID.map { "\($0)0x\(lower)" } ?? lower
    let hash = Keccak256.hash(Array(input.utf8))
    var result = ""
    for (index, character) in lower.enumerated() {
      let byte = hash[index / 2]
      let nibble = index % 2 == 0 ? byte >> 4 : byte & 0x0F
      result.append(
        character.isLetter && nibble >= 8 ? Character(character.uppercased()) : character)
    }
    return result
  }
}
