// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: a profile's `created` read as year and month, against the reading the
// parser had before it went byte by byte (split at the separators, each part read by `Int`).

import Testing

@testable import ImprintCards

@Suite("profile creation dates")
struct ProfileDateTests {
  /// The earlier reading, kept as the reference.
  static func reference(_ text: String) -> (year: Int, month: Int)? {
    let parts = text.utf8.split(whereSeparator: {
      $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: ":")
    })
    guard parts.count >= 3, let year = Int(String(Substring(parts[0]))),
      let month = Int(String(Substring(parts[1]))), (1...12).contains(month), year > 1970
    else { return nil }
    return (year, month)
  }

  static let samples: [String] = [
    "2016-03-31T12:00:00", "1970-01-01T00:00:00", "1971-12-01T00:00:00", "2016-13-01T00:00:00",
    "2016-00-01T00:00:00", "2016-1-5", "2016-01", "2016", "", "--2016--03--01", "+2016-+03-01",
    "+-2016-03-01", "2016-+-01", "++2016-03-01", "2016-03-01T", "T2016T03T01", "２０１６-03-01",
    "2016-٠٣-01", "99999999999999999999-01-01", "2016-99999999999999999999-01", "2016 -03-01",
    "2016-03-01 12:00", "0002016-003-1", "2016-03-01T00:00:00Z", "1969-12-31T23:59:59",
    "2038-11-30T00:00:00", "é-03-01", "2016-0x3-01", "2016-3.0-01", ":::", "2016:03:01",
  ]

  @Test("every sample read as the reference reads it", arguments: samples)
  func sample(_ text: String) {
    let read = parseDate(text)
    let expected = Self.reference(text)
    #expect(read?.year == expected?.year && read?.month == expected?.month, "\(text)")
  }

  @Test("random texts of digits and separators read as the reference reads them")
  func random() {
    let alphabet = Array("0123456789-T:+ x") + ["٣", "é"]
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    for _ in 0..<20_000 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      let length = Int(state % 24)
      var text = ""
      var bits = state
      for _ in 0..<length {
        bits = bits &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        text.append(alphabet[Int(bits >> 33) % alphabet.count])
      }
      let read = parseDate(text)
      let expected = Self.reference(text)
      if read?.year != expected?.year || read?.month != expected?.month {
        Issue.record(
          "'\(text)': \(String(describing: read)) against \(String(describing: expected))")
        return
      }
    }
    #expect(parseDate("2016-03-31T12:00:00").map { $0 == (2016, 3) } == true)
  }
}
