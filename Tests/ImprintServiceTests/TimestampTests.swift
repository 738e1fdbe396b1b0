// SPDX-License-Identifier: Apache-2.0
// Job times as values: every millisecond written is the one read back, in the form the access
// log and the reports have always used; other text is refused.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintHTTP
@testable import ImprintService

@Suite("Job times: whole milliseconds, ISO 8601 UTC")
struct TimestampTests {
  @Test("10 000 seeded instants round-trip through text and JSON, ordered as their texts")
  func roundTrip() throws {
    var generator = SeededGenerator(state: 1205)
    var previous: (Timestamp, String)?
    for _ in 0..<10_000 {
      // 1970 to 2200, any millisecond.
      let instant = Timestamp(
        milliseconds: Int64.random(in: 0...7_258_118_400_000, using: &generator))
      let text = instant.description
      #expect(Timestamp(text) == instant, "\(text)")
      let json = try JSONEncoder().encode([instant])
      #expect(try JSONDecoder().decode([Timestamp].self, from: json) == [instant])
      #expect(String(decoding: json, as: UTF8.self) == "[\"\(text)\"]")
      if let (before, beforeText) = previous {
        #expect((before < instant) == (beforeText < text))
      }
      previous = (instant, text)
    }
  }

  @Test("known instants by hand; Foundation's ISO 8601 parser reads the same instants")
  func knownInstants() throws {
    let cases: [(Int64, String)] = [
      (0, "1970-01-01T00:00:00.000Z"), (1, "1970-01-01T00:00:00.001Z"),
      (951_782_400_999, "2000-02-29T00:00:00.999Z"),
      (1_796_481_420_123, "2026-12-05T14:37:00.123Z"),
    ]
    for (milliseconds, text) in cases {
      #expect(Timestamp(milliseconds: milliseconds).description == text)
      #expect(Timestamp(text)?.milliseconds == milliseconds)
      // Foundation's own ISO 8601 formatter reads the text back to the same instant.
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
      let read = try #require(formatter.date(from: text))
      #expect(abs(read.timeIntervalSince1970 * 1000 - Double(milliseconds)) < 1, "\(text)")
    }
    // The access log's record holds its time as this type and writes its text.
    let record = CompletedRequest(
      time: Timestamp(milliseconds: 1_796_481_420_000), requestId: "r", method: "GET",
      path: "/", status: 200, bytesIn: 0, bytesOut: 0, durationMs: 1, errorCode: nil)
    let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(record))
    #expect((json as? [String: Any])?["time"] as? String == "2026-12-05T14:37:00.000Z")
  }

  @Test("text in any other form is no time")
  func refused() {
    for text in [
      "", "2026-12-05", "2026-12-05T14:37:00Z", "2026-12-05T14:37:00.1234Z",
      "2026-12-05 14:37:00.123Z", "2026-12-05T14:37:00.123+00:00", "2026-02-31T00:00:00.000Z",
      "2026-13-01T00:00:00.000Z", "2026-12-05T24:00:00.000Z", "2026-12-05T14:60:00.000Z",
      "2026-12-05T14:37:60.000Z", "２026-12-05T14:37:00.123Z", "-026-12-05T14:37:00.123Z",
    ] {
      #expect(Timestamp(text) == nil, "\(text)")
    }
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode([Timestamp].self, from: Data("[\"yesterday\"]".utf8))
    }
  }
}
