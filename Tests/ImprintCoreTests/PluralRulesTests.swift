// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: CLDR plural rules read from their text, checked against CLDR's own examples.

import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Plural rules", .liveHandlesChecked)
struct PluralRulesTests {
  /// Russian's rules as CLDR's plurals.xml writes them.
  static let russian: [PluralCategory: String] = [
    .one: "v = 0 and i % 10 = 1 and i % 100 != 11",
    .few: "v = 0 and i % 10 = 2..4 and i % 100 != 12..14",
    .many: "v = 0 and i % 10 = 0 or v = 0 and i % 10 = 5..9 or v = 0 and i % 100 = 11..14",
  ]

  @Test("Russian: 1, 21, 101 one; 2-4, 22, 104 few; 0, 5, 11-14, 111, 112 many")
  func russian() throws {
    let rules = try #require(PluralRules(Self.russian))
    for n in [1, 21, 31, 101, 1001] { #expect(rules.category(n) == .one, "\(n)") }
    for n in [2, 3, 4, 22, 24, 104, 1002] { #expect(rules.category(n) == .few, "\(n)") }
    for n in [0, 5, 9, 10, 11, 12, 14, 19, 20, 25, 100, 111, 112] {
      #expect(rules.category(n) == .many, "\(n)")
    }
    #expect(rules.categories == [.one, .few, .many, .other])
  }

  @Test("Arabic: 0 zero, 1 one, 2 two, 3-10 and 103 few, 11-99 and 111 many, 100-102 other")
  func arabic() throws {
    let rules = try #require(
      PluralRules([
        .zero: "n = 0", .one: "n = 1", .two: "n = 2", .few: "n % 100 = 3..10",
        .many: "n % 100 = 11..99",
      ]))
    let expected: [(Int, PluralCategory)] = [
      (0, .zero), (1, .one), (2, .two), (3, .few), (10, .few), (103, .few), (11, .many),
      (99, .many), (111, .many), (100, .other), (101, .other), (102, .other), (200, .other),
    ]
    for (n, category) in expected { #expect(rules.category(n) == category, "\(n)") }
  }

  @Test("Spanish: one at 1, many at whole millions (e = 0 and v = 0), other else")
  func spanish() throws {
    let rules = try #require(
      PluralRules([
        .one: "n = 1",
        .many: "e = 0 and i != 0 and i % 1000000 = 0 and v = 0 or e != 0..5",
      ]))
    #expect(rules.category(1) == .one)
    #expect(rules.category(1_000_000) == .many && rules.category(3_000_000) == .many)
    for n in [0, 2, 999_999, 1_000_001] { #expect(rules.category(n) == .other, "\(n)") }
  }

  @Test("no rules: every number is other (Korean, Japanese, Chinese)")
  func none() throws {
    let rules = try #require(PluralRules([:]))
    #expect([0, 1, 2, 11, 1_000_000].allSatisfy { rules.category($0) == .other })
    #expect(rules.categories == [.other])
  }

  @Test(
    "text that is not CLDR syntax, and a rule for other, are refused",
    arguments: ["n = ", "n == 1", "x = 1", "n % 0 = 1", "n = 4..2", "n = 1 and", "n = 1 or or"])
  func malformed(condition: String) {
    #expect(PluralRules([.one: condition]) == nil)
    #expect(PluralRules([.other: "n = 1"]) == nil)
  }
}
