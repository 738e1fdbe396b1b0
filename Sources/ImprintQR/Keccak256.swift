// SPDX-License-Identifier: Apache-2.0
// ImprintQR: Keccak-256 (the original Keccak padding, as Ethereum uses; not FIPS-202 SHA3-256).

/// Keccak-256 as used by Ethereum (pad byte 0x01, not SHA3's 0x06).
///
/// Debian 12's OpenSSL 3.0 has no KECCAK-256, so it is implemented here (FIPS 202 permutation,
/// rate 1088 bits). Verified against `keccak256("")` and the EIP-55 vectors in the tests.
public enum Keccak256 {
  private static let roundConstants: [UInt64] = [
    0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
    0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
    0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
    0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
    0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
    0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
  ]
  private static let rotations: [UInt64] = [
    0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
  ]
  private static let rate = 136

  /// The 32-byte Keccak-256 digest of `bytes`.
  public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
    var state = [UInt64](repeating: 0, count: 25)
    var message = Array(bytes)
    message.append(0x01)
    while message.count % rate != 0 { message.append(0) }
    message[message.count - 1] |= 0x80
    for blockStart in stride(from: 0, to: message.count, by: rate) {
      for lane in 0..<(rate / 8) {
        var value: UInt64 = 0
        for byte in 0..<8 {
          value |= UInt64(message[blockStart + lane * 8 + byte]) << (8 * UInt64(byte))
        }
        state[lane] ^= value
      }
      permute(&state)
    }
    var digest: [UInt8] = []
    digest.reserveCapacity(32)
    for lane in 0..<4 {
      for byte in 0..<8 {
        digest.append(UInt8(truncatingIfNeeded: state[lane] >> (8 * UInt64(byte))))
      }
    }
    return digest
  }

  private static func permute(_ a: inout [UInt64]) {
    var b = [UInt64](repeating: 0, count: 25)
    var c = [UInt64](repeating: 0, count: 5)
    for round in 0..<24 {
      for x in 0..<5 { c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] }
      for x in 0..<5 {
        let d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1)
        for y in stride(from: 0, to: 25, by: 5) { a[y + x] ^= d }
      }
      for x in 0..<5 {
        for y in 0..<5 {
          let index = x + 5 * y
          b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[index], rotations[index])
        }
      }
      for y in stride(from: 0, to: 25, by: 5) {
        for x in 0..<5 { a[y + x] = b[y + x] ^ (~b[y + (x + 1) % 5] & b[y + (x + 2) % 5]) }
      }
      a[0] ^= roundConstants[round]
    }
  }

  private static func rotl(_ value: UInt64, _ amount: UInt64) -> UInt64 {
    amount == 0 ? value : (value << amount) | (value >> (64 - amount))
  }
}
