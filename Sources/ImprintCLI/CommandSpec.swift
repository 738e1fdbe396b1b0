// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: the declarative command specs that drive both parsing and help.

import ImprintCore

/// One option of a command.
struct OptionSpec: Sendable {
  /// The long name without dashes (`level` for `--level`).
  let name: String
  /// The one-letter short form, if any (only `o q v h j`).
  let short: Character?
  /// The value placeholder (`<file>`), or nil for a flag.
  let value: String?
  /// One line of help.
  let help: String

  static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
    OptionSpec(name: name, short: short, value: nil, help: help)
  }

  static func value(_ name: String, short: Character? = nil, _ value: String, _ help: String)
    -> OptionSpec
  {
    OptionSpec(name: name, short: short, value: value, help: help)
  }
}

/// One positional argument of a command.
struct ArgumentSpec: Sendable {
  /// The placeholder (`payload`).
  let name: String
  /// One line of help.
  let help: String
  /// Whether it may be left out.
  let optional: Bool
  /// Whether it takes all remaining arguments.
  let variadic: Bool

  init(_ name: String, _ help: String, optional: Bool = false, variadic: Bool = false) {
    self.name = name
    self.help = help
    self.optional = optional
    self.variadic = variadic
  }
}

/// A command: its help text, arguments, options, subcommands and what it runs.
struct CommandSpec: Sendable {
  /// The command name (`qr`).
  let name: String
  /// One line: what it does.
  let abstract: String
  /// Longer help, shown by `--help`.
  let discussion: String
  /// Positional arguments.
  let arguments: [ArgumentSpec]
  /// Options; `--verbose` and `--help` are added to every command.
  let options: [OptionSpec]
  /// Subcommands (`templates list`).
  let subcommands: [CommandSpec]
  /// Runs the command with parsed arguments; returns the exit code.
  let run: @Sendable (ParsedArguments, Console) async throws -> Int32

  init(
    name: String, abstract: String, discussion: String = "", arguments: [ArgumentSpec] = [],
    options: [OptionSpec] = [], subcommands: [CommandSpec] = [],
    run: @escaping @Sendable (ParsedArguments, Console) async throws -> Int32
  ) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
    self.arguments = arguments
    self.options = options + CommandSpec.commonOptions
    self.subcommands = subcommands
    self.run = run
  }
}

extension CommandSpec {
  /// The options every command takes: `--verbose` (an error's causes) and `--help`.
  static let commonOptions: [OptionSpec] = [
    .flag(
      "verbose", short: "v",
      "After an error, print its causes, one a line (with --json, as \"causes\")."),
    .flag("help", short: "h", "Show help for this command."),
  ]
}

/// A usage error: exit code 2, with the command's usage line.
struct UsageError: Error, Sendable, Equatable {
  let message: String
}

/// Arguments parsed against a `CommandSpec`.
struct ParsedArguments: Sendable {
  /// The command path (`["templates", "list"]`).
  var path: [String]
  /// Option values in order given, by long name.
  var values: [String: [String]] = [:]
  /// Flags given, by long name.
  var flags: Set<String> = []
  /// Positional arguments.
  var positionals: [String] = []

  /// Whether a flag was given.
  func flag(_ name: String) -> Bool { flags.contains(name) }

  /// The last value of an option, if given.
  func value(_ name: String) -> String? { values[name]?.last }

  /// The last value of an option as an integer in `range`.
  ///
  /// - Throws: `UsageError` naming the option when it is not such an integer.
  func int(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
    guard let text = value(name) else { return nil }
    guard let number = Int(text), range.contains(number) else {
      throw UsageError(
        message:
          "option '--\(name)' expects an integer from \(range.lowerBound) to \(range.upperBound); "
          + "got '\(text)'")
    }
    return number
  }

  /// The last value of an option as a number in `range`.
  ///
  /// - Throws: `UsageError` naming the option when it is not such a number.
  func double(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
    guard let text = value(name) else { return nil }
    guard let number = Double(text), number.isFinite, range.contains(number) else {
      throw UsageError(
        message:
          "option '--\(name)' expects a number from \(Formatting.number(range.lowerBound)) to "
          + "\(Formatting.number(range.upperBound)); got '\(text)'")
    }
    return number
  }

  /// The last value of an option, which must be one of `choices`.
  ///
  /// - Throws: `UsageError` listing the choices.
  func choice(_ name: String, _ choices: [String]) throws(UsageError) -> String? {
    guard let text = value(name) else { return nil }
    guard choices.contains(text) else {
      var message =
        "option '--\(name)' expects one of \(choices.joined(separator: ", ")); got '\(text)'"
      if let suggestion = closest(to: text, in: choices) {
        message += ". Did you mean '\(suggestion)'?"
      }
      throw UsageError(message: message)
    }
    return text
  }
}

/// The candidate closest to `word` by edit distance, when it is close enough to be a typo.
func closest(to word: String, in candidates: [String]) -> String? {
  let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
  guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
  let limit = max(2, word.count / 3)
  return best.1 <= limit ? best.0 : nil
}

/// Levenshtein distance.
func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a)
  let b = Array(b)
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    }
    swap(&previous, &current)
  }
  return previous[b.count]
}
