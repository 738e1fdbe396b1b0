// SPDX-License-Identifier: Apache-2.0
// ImprintCards: Steem's reputation score, computed exactly from the raw digit string.

import Foundation

/// The reputation score shown for a raw reputation value.
///
/// `score = max(log10(|raw|) - 9, 0) × sign(raw) × 9 + 25`, and 25 for 0: the clamp makes every
/// |raw| below 10^9 score 25. It is computed from the decimal digits, so values above 2^53 lose
/// no precision. **The card shows** what steemit.com shows: the score rounded to two decimals
/// (as hivemind does), then floored to an integer (`-16.194` shows `-17`, `69.834` shows `69`).
/// `reputationPrecise` shows one decimal computed from the exact value (`-16.2`).
public enum Reputation {
  /// The exact score of a raw value given as decimal digits with an optional sign, or nil when
  /// the text is not an integer (an empty string means unknown, not 25).
  public static func score(_ raw: String) -> Double? {
    // ASCII (every raw value a Steem API gives) read as bytes: a card asks up to three times.
    var raw = raw
    if let score = raw.withUTF8({ asciiScore($0) }) { return score }
    // Spaces and tabs trimmed (Foundation's `.whitespaces`) without bridging to NSString;
    // scalar by scalar, since digits, signs and blanks are each one scalar.
    let scalars = Array(raw.unicodeScalars)
    func blank(_ scalar: Unicode.Scalar) -> Bool {
      scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }
    var start = 0
    var end = scalars.count
    while start < end, blank(scalars[start]) { start += 1 }
    while end > start, blank(scalars[end - 1]) { end -= 1 }
    var negative = false
    if start < end, scalars[start] == "-" || scalars[start] == "+" {
      negative = scalars[start] == "-"
      start += 1
    }
    guard start < end, scalars[start..<end].allSatisfy({ ("0"..."9").contains($0) }) else {
      return nil
    }
    while start < end, scalars[start] == "0" { start += 1 }
    guard start < end else { return 25 }
    let prefix = String(String.UnicodeScalarView(scalars[start..<min(end, start + 15)]))
    return score(digits: end - start, leading: Double(prefix) ?? 0, negative: negative)
  }

  /// The score of ASCII text, as `score` reads it; nil (not .some(nil)) when the text is not
  /// ASCII: then blanks other than space and tab may surround it.
  private static func asciiScore(_ bytes: UnsafeBufferPointer<UInt8>) -> Double?? {
    guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
    func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    var start = 0
    var end = bytes.count
    while start < end, blank(bytes[start]) { start += 1 }
    while end > start, blank(bytes[end - 1]) { end -= 1 }
    var negative = false
    if start < end, bytes[start] == UInt8(ascii: "-") || bytes[start] == UInt8(ascii: "+") {
      negative = bytes[start] == UInt8(ascii: "-")
      start += 1
    }
    guard start < end, bytes[start..<end].allSatisfy({ (0x30...0x39).contains($0) }) else {
      return .some(nil)
    }
    while start < end, bytes[start] == 0x30 { start += 1 }
    guard start < end else { return 25 }
    // At most 15 digits: below 2^53, so the same Double as parsing them.
    var leading = 0.0
    for byte in bytes[start..<min(end, start + 15)] { leading = leading * 10 + Double(byte - 0x30) }
    return score(digits: end - start, leading: leading, negative: negative)
  }

  /// The score of a raw value of `digits` digits (no leading zero) whose first 15 (or all) read
  /// `leading`.
  private static func score(digits count: Int, leading: Double, negative: Bool) -> Double {
    let log = Double(count - 1) + log10(leading / pow(10, Double(min(15, count) - 1)))
    return max(log - 9, 0) * (negative ? -1 : 1) * 9 + 25
  }

  /// The integer the card shows: floor of the score rounded to two decimals.
  public static func displayed(_ score: Double) -> Int {
    let rounded = (score * 100).rounded() / 100
    return Int(rounded.rounded(.down))
  }

  /// The integer the card shows, written in ASCII digits.
  public static func display(_ score: Double) -> String { String(displayed(score)) }

  /// The score in tenths, rounded from the exact value (`-16.194` is -162).
  public static func tenths(_ score: Double) -> Int { Int((score * 10).rounded()) }

  /// One decimal, from the exact value.
  public static func displayOneDecimal(_ raw: String) -> String? {
    guard let score = score(raw) else { return nil }
    let tenths = tenths(score)
    let sign = tenths < 0 ? "-" : ""
    let magnitude = tenths.magnitude
    return "\(sign)\(magnitude / 10).\(magnitude % 10)"
  }
}
