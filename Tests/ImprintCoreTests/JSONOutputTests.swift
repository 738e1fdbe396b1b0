// SPDX-License-Identifier: Apache-2.0
// JSONOutput's own encoder against Foundation's JSONEncoder: the same bytes for generated values
// reaching every container call, and what it leaves to JSONEncoder still written as JSONEncoder
// writes it.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintCore

/// A value for the comparison, encoded through the container call its case names.
private indirect enum Sample: Encodable {
  case string(String)
  case double(Double)
  case float(Float)
  case int(Int)
  case int8(Int8)
  case int16(Int16)
  case int32(Int32)
  case int64(Int64)
  case uint(UInt)
  case uint8(UInt8)
  case uint16(UInt16)
  case uint32(UInt32)
  case uint64(UInt64)
  case bool(Bool)
  case null
  case optional(Sample?)
  /// Keyed: each entry through the keyed container's call for its case (a key may repeat).
  case object([(String, Sample)])
  /// Unkeyed, each item through the unkeyed container's call for its case.
  case array([Sample])
  /// A nested keyed container under a key, filled by another entry of the same key too.
  case nested(String, [(String, Sample)])
  /// A nested unkeyed container under a key.
  case nestedArray(String, [Sample])
  /// A dictionary of strings to samples, as a Swift dictionary encodes itself.
  case dictionary([String: Sample])
  /// A dictionary with Int keys (its keys become strings).
  case intKeys([Int: Sample])
  /// Foundation's own forms.
  case date(Date)
  case data(Data)
  case url(URL)
  case decimal(Decimal)
  /// A super encoder under a key, in a keyed container.
  case superKeyed(String, Sample)
  /// Generic values: an array of strings, of Ints, of Doubles (the fast paths).
  case strings([String])
  case ints([Int])
  case doubles([Double])

  struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  func encode(to encoder: any Encoder) throws {
    switch self {
    case .object(let entries):
      var container = encoder.container(keyedBy: Key.self)
      for (key, value) in entries { try value.encode(into: &container, key: Key(stringValue: key)) }
    case .array(let items):
      var container = encoder.unkeyedContainer()
      for item in items { try item.encode(into: &container) }
    case .nested(let key, let entries):
      var container = encoder.container(keyedBy: Key.self)
      var first = container.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: key))
      var second = container.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: key))
      for (index, (name, value)) in entries.enumerated() {
        if index.isMultiple(of: 2) {
          try value.encode(into: &first, key: Key(stringValue: name))
        } else {
          try value.encode(into: &second, key: Key(stringValue: name))
        }
      }
    case .nestedArray(let key, let items):
      var container = encoder.container(keyedBy: Key.self)
      var nested = container.nestedUnkeyedContainer(forKey: Key(stringValue: key))
      var inner = nested.nestedUnkeyedContainer()
      for item in items { try item.encode(into: &inner) }
      var keyed = nested.nestedContainer(keyedBy: Key.self)
      try keyed.encode(items.count, forKey: Key(stringValue: "count"))
    case .superKeyed(let key, let value):
      var container = encoder.container(keyedBy: Key.self)
      try value.encode(to: container.superEncoder(forKey: Key(stringValue: key)))
      try container.encode(true, forKey: Key(stringValue: "after"))
    default:
      var container = encoder.singleValueContainer()
      try encodeSingle(&container)
    }
  }

  private func encodeSingle(_ container: inout any SingleValueEncodingContainer) throws {
    switch self {
    case .string(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .float(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .int8(let value): try container.encode(value)
    case .int16(let value): try container.encode(value)
    case .int32(let value): try container.encode(value)
    case .int64(let value): try container.encode(value)
    case .uint(let value): try container.encode(value)
    case .uint8(let value): try container.encode(value)
    case .uint16(let value): try container.encode(value)
    case .uint32(let value): try container.encode(value)
    case .uint64(let value): try container.encode(value)
    case .bool(let value): try container.encode(value)
    case .null: try container.encodeNil()
    case .optional(let value): try container.encode(value)
    case .dictionary(let value): try container.encode(value)
    case .intKeys(let value): try container.encode(value)
    case .date(let value): try container.encode(value)
    case .data(let value): try container.encode(value)
    case .url(let value): try container.encode(value)
    case .decimal(let value): try container.encode(value)
    case .strings(let value): try container.encode(value)
    case .ints(let value): try container.encode(value)
    case .doubles(let value): try container.encode(value)
    default: try container.encode(Wrapped(sample: self))
    }
  }

  /// A sample encoded as a generic value (through `encode<T>`).
  struct Wrapped: Encodable {
    let sample: Sample
    func encode(to encoder: any Encoder) throws { try sample.encode(to: encoder) }
  }

  private func encode(into container: inout KeyedEncodingContainer<Key>, key: Key) throws {
    switch self {
    case .string(let value): try container.encode(value, forKey: key)
    case .double(let value): try container.encode(value, forKey: key)
    case .float(let value): try container.encode(value, forKey: key)
    case .int(let value): try container.encode(value, forKey: key)
    case .int8(let value): try container.encode(value, forKey: key)
    case .int16(let value): try container.encode(value, forKey: key)
    case .int32(let value): try container.encode(value, forKey: key)
    case .int64(let value): try container.encode(value, forKey: key)
    case .uint(let value): try container.encode(value, forKey: key)
    case .uint8(let value): try container.encode(value, forKey: key)
    case .uint16(let value): try container.encode(value, forKey: key)
    case .uint32(let value): try container.encode(value, forKey: key)
    case .uint64(let value): try container.encode(value, forKey: key)
    case .bool(let value): try container.encode(value, forKey: key)
    case .null: try container.encodeNil(forKey: key)
    case .optional(let value): try container.encodeIfPresent(value, forKey: key)
    default: try container.encode(self, forKey: key)
    }
  }

  private func encode(into container: inout any UnkeyedEncodingContainer) throws {
    switch self {
    case .string(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .float(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .int8(let value): try container.encode(value)
    case .int16(let value): try container.encode(value)
    case .int32(let value): try container.encode(value)
    case .int64(let value): try container.encode(value)
    case .uint(let value): try container.encode(value)
    case .uint8(let value): try container.encode(value)
    case .uint16(let value): try container.encode(value)
    case .uint32(let value): try container.encode(value)
    case .uint64(let value): try container.encode(value)
    case .bool(let value): try container.encode(value)
    case .null: try container.encodeNil()
    default: try container.encode(self)
    }
  }
}

private struct SampleMaker {
  var random: SeededGenerator

  static let strings = [
    "", "a", "A", "ab", "a/b", "\"quoted\"", "back\\slash", "tab\there", "line\nfeed", "\r",
    "\u{0}", "\u{1}", "\u{8}", "\u{b}", "\u{c}", "\u{f}", "\u{10}", "\u{1f}", "\u{7f}", "é", "Ω",
    "\u{2028}", "\u{2029}", "한글", "😀", "e\u{301}", "B10", "B9", "b", "Z", "file name.pdf",
    "</script>", "\u{feff}bom",
  ]
  static let doubles: [Double] = [
    0, -0.0, 1, -1, 0.1, 0.5, 1.5, 2.54, 25.4, 215.9, 279.4, 612, 1e15, 1e16, 1e17, 1e20, 1e21,
    1e22, 1e-5, 1e-7, 123_456_789.125, 5e-324, .leastNormalMagnitude, .greatestFiniteMagnitude,
    -.greatestFiniteMagnitude, 9_007_199_254_740_993, 4_294_967_296, 0.3333333333333333,
  ]

  mutating func pick<T>(_ pool: [T]) -> T { pool[Int.random(in: 0..<pool.count, using: &random)] }

  mutating func string() -> String {
    if Int.random(in: 0..<4, using: &random) == 0 {
      return pick(Self.strings) + pick(Self.strings)
    }
    return pick(Self.strings)
  }

  mutating func double() -> Double {
    if Bool.random(using: &random) { return pick(Self.doubles) }
    while true {
      let value = Double(bitPattern: random.next())
      if value.isFinite { return value }
    }
  }

  mutating func scalar() -> Sample {
    switch Int.random(in: 0..<16, using: &random) {
    case 0: return .string(string())
    case 1: return .double(double())
    case 2:
      let number = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
      return .float(number.isFinite ? number : 0.1)
    case 3: return .int(Int(truncatingIfNeeded: random.next()))
    case 4: return .int8(Bool.random(using: &random) ? .min : .max)
    case 5: return .int16(Int16(truncatingIfNeeded: random.next()))
    case 6: return .int32(Int32(truncatingIfNeeded: random.next()))
    case 7: return .int64(.min)
    case 8: return .uint(UInt(truncatingIfNeeded: random.next()))
    case 9: return .uint8(UInt8(truncatingIfNeeded: random.next()))
    case 10: return .uint16(.max)
    case 11: return .uint32(UInt32(truncatingIfNeeded: random.next()))
    case 12: return .uint64(.max)
    case 13: return .bool(Bool.random(using: &random))
    case 14: return .null
    default: return .optional(Bool.random(using: &random) ? nil : .string(string()))
    }
  }

  mutating func entries(_ depth: Int) -> [(String, Sample)] {
    (0..<Int.random(in: 0..<12, using: &random)).map { _ in (string(), value(depth + 1)) }
  }

  mutating func value(_ depth: Int) -> Sample {
    guard depth < 5 else { return scalar() }
    switch Int.random(in: 0..<14, using: &random) {
    case 0, 1: return .object(entries(depth))
    case 2, 3:
      return .array((0..<Int.random(in: 0..<6, using: &random)).map { _ in value(depth + 1) })
    case 4: return .nested(string(), entries(depth))
    case 5:
      return .nestedArray(
        string(), (0..<Int.random(in: 0..<4, using: &random)).map { _ in scalar() })
    case 6: return .dictionary(Dictionary(entries(depth), uniquingKeysWith: { first, _ in first }))
    case 7:
      var keyed: [Int: Sample] = [10: scalar(), 9: scalar()]
      keyed[Int.random(in: -20...20, using: &random)] = scalar()
      return .intKeys(keyed)
    case 8: return .superKeyed(string(), value(depth + 1))
    case 9: return .strings((0..<Int.random(in: 0..<5, using: &random)).map { _ in string() })
    case 10:
      return .ints(
        (0..<Int.random(in: 0..<5, using: &random)).map { _ in
          Int(truncatingIfNeeded: random.next())
        })
    case 11: return .doubles((0..<Int.random(in: 0..<5, using: &random)).map { _ in double() })
    default: return scalar()
    }
  }
}

private func foundation(_ value: some Encodable, pretty: Bool) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting =
    pretty
    ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    : [.sortedKeys, .withoutEscapingSlashes]
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}

@Suite struct JSONOutputTests {
  @Test func generatedValuesAsJSONEncoderWritesThem() throws {
    var maker = SampleMaker(random: SeededGenerator(state: 20_261_206))
    var compared = 0
    for _ in 0..<3000 {
      let sample = maker.value(0)
      for pretty in [true, false] {
        let expected = try foundation(sample, pretty: pretty)
        let mine = try OutputEncoder(pretty: pretty, userInfo: [:]).encode(sample)
        #expect(String(decoding: mine, as: UTF8.self) == expected, "\(sample)")
        compared += 1
      }
    }
    #expect(compared == 6000)
  }

  @Test func everyStringAndNumberOfThePoolsAsJSONEncoderWritesThem() throws {
    let keys = SampleMaker.strings
    let object = Sample.object(keys.map { ($0, .string($0)) } + [("B9", .int(1)), ("B9", .int(2))])
    let numbers = Sample.array(
      SampleMaker.doubles.map { .double($0) }
        + SampleMaker.doubles.map(Float.init).filter(\.isFinite).map { .float($0) })
    for sample in [object, numbers, .array([]), .object([]), .array([.array([]), .object([])])] {
      for pretty in [true, false] {
        let mine = try OutputEncoder(pretty: pretty, userInfo: [:]).encode(sample)
        #expect(String(decoding: mine, as: UTF8.self) == (try foundation(sample, pretty: pretty)))
      }
    }
    // All 32 control characters and the quote and backslash, escaped as JSONEncoder does.
    let controls = String(
      decoding: (0..<0x20).map { UInt8($0) } + [0x22, 0x5C, 0x2F, 0x7F], as: UTF8.self)
    let mine = try OutputEncoder(pretty: false, userInfo: [:]).encode([controls])
    #expect(String(decoding: mine, as: UTF8.self) == (try foundation([controls], pretty: false)))
    #expect(String(decoding: mine, as: UTF8.self).contains("\\u001f\\\"\\\\/\u{7f}"))
  }

  @Test func foundationFormsAndNonFiniteNumbersLeftToJSONEncoder() throws {
    let left: [Sample] = [
      .date(Date(timeIntervalSince1970: 1_765_000_000)), .data(Data([1, 2, 3])),
      .url(URL(string: "https://example.com/a/b")!), .decimal(Decimal(string: "12.345")!),
      .object([("when", .date(Date(timeIntervalSince1970: 0)))]), .array([.double(.nan)]),
      .array([.float(.infinity)]), .object([("x", .double(-.infinity))]),
    ]
    for sample in left {
      #expect(throws: OutputEncoder.Unsupported.self) {
        try OutputEncoder(pretty: true, userInfo: [:]).encode(sample)
      }
    }
    // Through JSONOutput: JSONEncoder's bytes.
    for sample in left.prefix(5) {
      #expect(JSONOutput.pretty(sample) == (try foundation(sample, pretty: true)) + "\n")
      #expect(JSONOutput.line(sample) == (try foundation(sample, pretty: false)))
    }
  }

  @Test func flagsReachTheValuesUserInfo() {
    struct Flagged: Encodable {
      static let flag = CodingUserInfoKey(rawValue: "test.flag")!
      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(encoder.userInfo[Self.flag] as? Bool == true ? "set" : "unset")
      }
    }
    #expect(JSONOutput.line([Flagged()], flags: [Flagged.flag]) == #"["set"]"#)
    #expect(JSONOutput.line([Flagged()]) == #"["unset"]"#)
  }
}
