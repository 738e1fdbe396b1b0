// SPDX-License-Identifier: Apache-2.0
// ImprintQR: exact decimal amounts (ether, tokens, bitcoin, gwei), never floating point.

/// A non-negative decimal amount parsed exactly from text, as an integer count of atomic units.
///
/// `"1.5"` with 18 decimals is `"1500000000000000000"`. No exponents, signs or separators are
/// accepted: what the person typed is what is paid.
public struct DecimalAmount: Sendable, Hashable {
  /// The amount in atomic units (wei, satoshi, token base units) as decimal digits, no leading zeros.
  public let atomicUnits: String
  /// The number of decimals the amount was scaled by.
  public let decimals: Int

  /// Parses `text` with at most `decimals` fractional digits.
  ///
  /// - Parameters:
  ///   - text: digits with an optional single `.`.
  ///   - decimals: the unit's decimals (18 for ether, 8 for bitcoin, 9 for gwei).
  ///   - field: the option named in errors (by its flag or key, as `QROption.name` says).
  /// - Throws: `QRError.invalidAmount` saying what was expected.
  public init(_ text: String, decimals: Int, field: QROption) throws(QRError) {
    let expected = "a decimal number with at most \(decimals) digits after the point, like 1.5"
    guard decimals >= 0 else {
      throw .invalidAmount(field: .decimals, value: "\(decimals)", expected: "0 or more")
    }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard !text.isEmpty, parts.count <= 2,
      parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
      parts.contains(where: { !$0.isEmpty })
    else { throw .invalidAmount(field: field, value: text, expected: expected) }
    let whole = String(parts[0])
    let fraction = parts.count == 2 ? String(parts[1]) : ""
    guard fraction.count <= decimals else {
      throw .invalidAmount(field: field, value: text, expected: expected)
    }
    let padded = whole + fraction + String(repeating: "0", count: decimals - fraction.count)
    let trimmed = padded.drop { $0 == "0" }
    atomicUnits = trimmed.isEmpty ? "0" : String(trimmed)
    self.decimals = decimals
  }

  /// 2^256 − 1, the largest uint256 (EIP-681 amounts), in decimal digits.
  public static let uint256Max =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935"

  /// Whether the atomic units fit a uint256 (compared as digit strings: no arithmetic, so no
  /// digit string is too long to compare).
  public var fitsUInt256: Bool {
    atomicUnits.count < Self.uint256Max.count
      || (atomicUnits.count == Self.uint256Max.count && atomicUnits <= Self.uint256Max)
  }

  /// The largest uint256 in whole units of `decimals` decimals (`115792…039457.584007913129639935`
  /// for 18).
  public static func uint256Maximum(decimals: Int) -> String {
    guard decimals > 0 else { return uint256Max }
    let digits = String(repeating: "0", count: max(0, decimals + 1 - uint256Max.count)) + uint256Max
    return "\(digits.dropLast(decimals)).\(digits.suffix(decimals))"
  }

  /// Whether the amount is zero.
  public var isZero: Bool { atomicUnits == "0" }

  /// The amount in whole units with trailing zeros removed (`"20.3"`, `"50"`).
  public var decimalString: String {
    let digits =
      String(repeating: "0", count: max(0, decimals + 1 - atomicUnits.count)) + atomicUnits
    let whole = digits.dropLast(decimals)
    var fraction = digits.suffix(decimals)
    while fraction.last == "0" { fraction = fraction.dropLast() }
    return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
  }

  /// Compares two amounts of the same scale.
  public func exceeds(_ other: DecimalAmount) -> Bool {
    precondition(decimals == other.decimals, "amounts of different scales")
    if atomicUnits.count != other.atomicUnits.count {
      return atomicUnits.count > other.atomicUnits.count
    }
    return atomicUnits > other.atomicUnits
  }
}
