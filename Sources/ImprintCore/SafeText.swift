// SPDX-License-Identifier: Apache-2.0
// Imprint: text from input made safe to echo in a message: control characters escaped, length
// bounded.

/// Text taken from input (a name, a key, a payload) made safe to echo on a terminal or in a log.
public enum SafeText {
  /// `text` with control characters (C0, DEL, C1), line and paragraph separators and the
  /// bidirectional overrides and isolates written as `\u{…}` escapes, so echoed input cannot
  /// move the cursor, recolour the terminal or reorder a line.
  public static func escaped(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      if needsEscape(scalar) {
        result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// `escaped(text)`, cut to `limit` characters with `…` when longer.
  public static func excerpt(_ text: String, limit: Int = 64) -> String {
    let safe = escaped(text)
    guard safe.count > limit else { return safe }
    return String(safe.prefix(limit)) + "…"
  }

  /// Whether `text` holds anything `escaped` would change.
  public static func needsEscape(_ text: String) -> Bool {
    text.unicodeScalars.contains(where: needsEscape)
  }

  private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F..<0xA0: true
    case 0x2028, 0x2029: true
    case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
    default: false
    }
  }
}
