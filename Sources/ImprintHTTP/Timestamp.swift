// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: an instant to the millisecond, in UTC, kept as whole milliseconds and written as
// ISO 8601 ("2026-12-05T14:37:00.123Z"): the access log's times, and the service's job times
// (written in reports and job records, read back to the same instant).

import Foundation

/// An instant, to the millisecond, in UTC.
///
/// Kept as whole milliseconds since 1970 so that one read back from a record is the instant that
/// was written (a `Date` round trip through text can lose the last millisecond).
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
  /// Milliseconds since 1970-01-01T00:00:00Z.
  public let milliseconds: Int64

  public init(milliseconds: Int64) { self.milliseconds = milliseconds }

  /// The instant `date`, its fraction of a millisecond dropped.
  public init(_ date: Date) {
    milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
  }

  /// Now.
  public static var now: Timestamp { Timestamp(Date()) }

  public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

  public static func < (left: Timestamp, right: Timestamp) -> Bool {
    left.milliseconds < right.milliseconds
  }

  /// ISO 8601 in UTC with milliseconds: `2026-12-05T14:37:00.123Z`.
  public var description: String {
    var seconds = time_t(milliseconds.quotientFloor(1000))
    let millis = Int(milliseconds - Int64(seconds) * 1000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func digits(_ value: Int, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(digits(Int(parts.tm_year) + 1900, 4))-\(digits(Int(parts.tm_mon) + 1, 2))-"
      + "\(digits(Int(parts.tm_mday), 2))T\(digits(Int(parts.tm_hour), 2)):"
      + "\(digits(Int(parts.tm_min), 2)):\(digits(Int(parts.tm_sec), 2)).\(digits(millis, 3))Z"
  }

  /// The instant `text` spells in `description`'s form; nil for any other text.
  public init?(_ text: String) {
    let bytes = Array(text.utf8)
    // YYYY-MM-DDTHH:MM:SS.mmmZ
    guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54,
      bytes[13] == 0x3A, bytes[16] == 0x3A, bytes[19] == 0x2E, bytes[23] == 0x5A
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for byte in bytes[range] {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      let millis = number(20..<23), (1...12).contains(month), (1...31).contains(day),
      hour < 24, minute < 60, second < 60
    else { return nil }
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    let seconds = timegm(&parts)
    // timegm normalises 31 February to 3 March: such a date is not one.
    guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
    self.milliseconds = Int64(seconds) * 1000 + Int64(millis)
  }

  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let instant = Timestamp(text) else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: decoder.codingPath,
          debugDescription: "not a time as YYYY-MM-DDTHH:MM:SS.mmmZ"))
    }
    self = instant
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

extension Int64 {
  /// The quotient rounded toward minus infinity (times before 1970 too).
  fileprivate func quotientFloor(_ divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor < 0) ? quotient - 1 : quotient
  }
}
