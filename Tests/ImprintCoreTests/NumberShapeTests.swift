// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: a locale's learned number shape writes every number as Foundation does, in
// every locale Foundation has, with Latin and with native digits.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Number shapes", .liveHandlesChecked)
struct NumberShapeTests {
  /// Numbers of every length and sign, the edges of grouping, and a fixed pseudo-random spread.
  static let values: [Int] = {
    var values = [
      0, 1, -1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 99_999, 100_000,
      999_999, 1_000_000, 10_000_000, 123_456_789, Int.max, Int.min, Int.max - 1, Int.min + 1,
    ]
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    for _ in 0..<300 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let digits = Int(state >> 59) % 19 + 1
      var value = Int(truncatingIfNeeded: state >> 1) % Int(pow(10, Double(min(digits, 18))))
      if state & 1 == 1 { value = -value }
      values.append(value)
    }
    return values
  }()

  @Test("every locale Foundation has: the shape, when learned, writes what Foundation writes")
  func everyLocale() {
    var learned = 0
    var kept = 0
    let identifiers = Locale.availableIdentifiers.sorted()
    for identifier in identifiers {
      for native in [false, true] {
        let locale = LocaleData.locale(identifier, nativeDigits: native)
        guard let shape = NumberShape.of(locale) else {
          kept += 1
          continue
        }
        learned += 1
        // A sample of the values per locale keeps the test quick; the whole set for a few.
        let sample = learned % 25 == 0 ? Self.values : Array(Self.values.prefix(40))
        for value in sample {
          #expect(
            shape.count(value) == NumberShape.foundationCount(value, locale: locale),
            "\(identifier) \(native) \(value)")
          #expect(
            shape.integer(value) == NumberShape.foundationInteger(value, locale: locale),
            "\(identifier) \(native) \(value)")
          let tenths = value / 1000
          #expect(
            shape.tenths(tenths) == NumberShape.foundationTenths(tenths, locale: locale),
            "\(identifier) \(native) \(tenths)")
        }
      }
    }
    print("number shapes: \(learned) learned, \(kept) kept Foundation")
    // Nearly every locale has a shape; those without keep Foundation (never a wrong number).
    #expect(learned > 9 * (learned + kept) / 10, "\(learned) learned, \(kept) kept Foundation")
  }

  @Test("Hindi groups by two above the thousands, Spanish leaves four digits whole")
  func knownShapes() throws {
    let hindi = try #require(NumberShape.of(LocaleData.locale("hi")))
    #expect(hindi.count(1_234_567) == "12,34,567")
    let spanish = try #require(NumberShape.of(LocaleData.locale("es")))
    #expect(spanish.count(1234) == "1234" && spanish.count(12_345) == "12.345")
    let persian = try #require(NumberShape.of(LocaleData.locale("fa", nativeDigits: true)))
    let native = LocaleData.locale("fa", nativeDigits: true)
    #expect(persian.integer(-17) == NumberShape.foundationInteger(-17, locale: native))
    #expect(persian.count(2381).unicodeScalars.first == "\u{06F2}")
  }
}
