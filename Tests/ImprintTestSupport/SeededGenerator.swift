// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a seeded random number generator, so that generated cases are the same on
// every run (docs/STYLE.md §6: seeded RNG).

/// SplitMix64: a small generator whose sequence depends on its seed alone.
public struct SeededGenerator: RandomNumberGenerator {
  /// The state, advanced by every number drawn.
  public var state: UInt64

  /// A generator starting from `state`.
  public init(state: UInt64) { self.state = state }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number from 0 up to, not including, `bound` (slightly biased: fine for test cases).
  public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
