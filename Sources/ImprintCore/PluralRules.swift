// SPDX-License-Identifier: Apache-2.0
// ImprintCore: a language's plural rules for whole numbers, written as CLDR writes them, so that
// a table of translations says which form a count takes in data, not code.

/// A CLDR plural category: which form of a word a number takes in a language.
public enum PluralCategory: String, Sendable, CaseIterable, Comparable {
  case zero, one, two, few, many, other

  public static func < (a: PluralCategory, b: PluralCategory) -> Bool {
    allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0
  }
}

/// The plural rules of one language for whole numbers, in CLDR's syntax (`plurals.xml`).
///
/// Each category but `other` has a condition such as `v = 0 and i % 10 = 2..4 and i % 100 !=
/// 12..14` (Russian `few`); a number takes the first category (in CLDR's order zero, one, two,
/// few, many) whose condition holds, else `other`. Korean, Japanese and Chinese have no rule: every
/// number is `other`. Only whole numbers are counted here, so the operands `n` and `i` are the
/// number and `v`, `w`, `f`, `t`, `c` and `e` are 0. The syntax read: `or`, `and`, `=`, `!=`,
/// `%`, value lists (`1,5,7..9`) and ranges (`2..4`).
public struct PluralRules: Sendable, Equatable {
  /// The conditions, in CLDR's order, `other` excluded.
  private let rules: [(category: PluralCategory, condition: [[Relation]])]

  /// The categories a number can take: those with a condition, and `other`.
  public let categories: Set<PluralCategory>

  /// No rule: every number is `other` (Korean, Japanese, Chinese).
  public static let invariable = PluralRules(rules: [])

  private init(rules: [(category: PluralCategory, condition: [[Relation]])]) {
    self.rules = rules
    categories = Set(rules.map(\.category)).union([.other])
  }

  /// Rules from CLDR conditions by category; nil when a condition is not CLDR syntax, or
  /// `other` has one (it is what no condition matches).
  public init?(_ conditions: [PluralCategory: String]) {
    var rules: [(PluralCategory, [[Relation]])] = []
    for (category, text) in conditions.sorted(by: { $0.key < $1.key }) {
      guard category != .other, let condition = Self.parse(text) else { return nil }
      rules.append((category, condition))
    }
    self.rules = rules
    categories = Set(conditions.keys).union([.other])
  }

  /// The category of the whole number `value` (its magnitude, for a negative one).
  public func category(_ value: Int) -> PluralCategory {
    let number = value.magnitude
    for rule in rules
    where rule.condition.contains(where: { $0.allSatisfy { $0.holds(for: number) } }) {
      return rule.category
    }
    return .other
  }

  public static func == (a: PluralRules, b: PluralRules) -> Bool {
    a.rules.map(\.category) == b.rules.map(\.category)
      && zip(a.rules, b.rules).allSatisfy { $0.condition == $1.condition }
  }

  /// One relation: `operand % modulus` is (or is not) in `ranges`.
  private struct Relation: Sendable, Equatable {
    /// Whether the operand is the number (`n`, `i`) rather than a fraction operand (0).
    var isNumber: Bool
    var modulus: UInt?
    var negated: Bool
    var ranges: [ClosedRange<UInt>]

    func holds(for number: UInt) -> Bool {
      var value = isNumber ? number : 0
      if let modulus { value %= modulus }
      return ranges.contains { $0.contains(value) } != negated
    }
  }

  /// The condition as alternatives (`or`) of conjunctions (`and`), or nil when it is not CLDR
  /// syntax.
  private static func parse(_ text: String) -> [[Relation]]? {
    var tokens = tokenize(text)[...]
    var alternatives: [[Relation]] = [[]]
    while true {
      guard let operand = tokens.popFirst(), let isNumber = operands[operand] else { return nil }
      var relation = Relation(isNumber: isNumber, modulus: nil, negated: false, ranges: [])
      if tokens.first == "%" {
        tokens.removeFirst()
        guard let modulus = tokens.popFirst().flatMap({ UInt($0) }), modulus > 0 else {
          return nil
        }
        relation.modulus = modulus
      }
      switch tokens.popFirst() {
      case "=": break
      case "!=": relation.negated = true
      default: return nil
      }
      repeat {
        if tokens.first == "," { tokens.removeFirst() }
        guard let low = tokens.popFirst().flatMap({ UInt($0) }) else { return nil }
        var high = low
        if tokens.first == ".." {
          tokens.removeFirst()
          guard let end = tokens.popFirst().flatMap({ UInt($0) }), end >= low else { return nil }
          high = end
        }
        relation.ranges.append(low...high)
      } while tokens.first == ","
      alternatives[alternatives.count - 1].append(relation)
      switch tokens.popFirst() {
      case nil: return alternatives
      case "and": continue
      case "or": alternatives.append([])
      default: return nil
      }
    }
  }

  /// CLDR's operands: true for the number itself, false for those that are 0 for whole numbers.
  private static let operands: [String: Bool] = [
    "n": true, "i": true, "v": false, "w": false, "f": false, "t": false, "c": false, "e": false,
  ]

  /// Words, numbers and the operators `%`, `=`, `!=`, `,` and `..`.
  private static func tokenize(_ text: String) -> [String] {
    var tokens: [String] = []
    var current = ""
    func flush() {
      if !current.isEmpty { tokens.append(current) }
      current = ""
    }
    var characters = text[...]
    while let character = characters.popFirst() {
      switch character {
      case " ", "\t", "\n": flush()
      case "%", "=", ",":
        flush()
        tokens.append(String(character))
      case "!" where characters.first == "=", "." where characters.first == ".":
        flush()
        characters.removeFirst()
        tokens.append(character == "!" ? "!=" : "..")
      default:
        if let last = current.last, last.isNumber != character.isNumber { flush() }
        current.append(character)
      }
    }
    flush()
    return tokens
  }
}
