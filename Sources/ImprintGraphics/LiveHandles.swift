// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: counts live C handles per kind so tests can assert that nothing leaks.

import Synchronization

/// Counts the C objects currently owned by Imprint's wrappers, per kind (debug builds only).
///
/// Every owner type increments its kind when it takes ownership and decrements it in `deinit`;
/// tests assert that all counts are zero after a suite. Release builds count nothing.
public enum LiveHandles {
  private static let counts = Mutex<[String: Int]>([:])

  /// The number of live handles of `kind` (for example `cairo_t`), or of all kinds when nil.
  public static func count(_ kind: String? = nil) -> Int {
    counts.withLock { counts in
      if let kind { return counts[kind, default: 0] }
      return counts.values.reduce(0, +)
    }
  }

  package static func opened(_ kind: String) {
    #if DEBUG
      counts.withLock { $0[kind, default: 0] += 1 }
    #endif
  }

  package static func closed(_ kind: String) {
    #if DEBUG
      counts.withLock { $0[kind, default: 0] -= 1 }
    #endif
  }
}
