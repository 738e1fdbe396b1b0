// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: the declarative command specs that drive both parsing and help.

import ImprintCore

/// How an option's value (or a positional argument) is read, checked and completed: what the
/// capabilities' tables declare an option holds (`OptionType`, ImprintCore).
typealias OptionKind = OptionType

/// One option of a command.
struct OptionSpec: Sendable, Equatable {
  /// The long name without dashes (`level` for `--level`).
  let name: String
  /// The one-letter short form, if any (only `o q v h j`).
  let short: Character?
  /// The value placeholder (`<file>`), or nil for a flag.
  let value: String?
  /// One line of help.
  let help: String
  /// What the value is: how it is checked, documented and completed.
  let kind: OptionKind
}

/// Marks an `OptionKey` whose value is one of a list of words.
enum Choice {}

/// Something that declares an option of a command spec (an `OptionKey`, whatever its value).
protocol OptionDeclaration: Sendable {
  /// The option it declares.
  var spec: OptionSpec { get }
}

/// A typed key for one option: declared once, listed in a command's spec and used to read the
/// parsed value, so that no command looks an option up by a string.
///
/// `Value` says how it is read: `Bool` (a flag), `String`, `Int` and `Double` (in the key's
/// range), or `Choice` (one of the key's words). Reading a key its command's spec does not
/// declare is a programmer error (a precondition in `ParsedArguments`).
struct OptionKey<Value>: OptionDeclaration {
  let spec: OptionSpec

  /// The long name without dashes.
  var name: String { spec.name }
}

extension OptionKey where Value == Bool {
  /// A flag (`--json`).
  static func flag(_ name: String, short: Character? = nil, _ help: String) -> Self {
    Self(spec: OptionSpec(name: name, short: short, value: nil, help: help, kind: .flag))
  }
}

extension OptionKey where Value == String {
  /// An option taking any text (`--label <text>`).
  static func text(_ name: String, short: Character? = nil, _ value: String, _ help: String)
    -> Self
  {
    Self(spec: OptionSpec(name: name, short: short, value: value, help: help, kind: .text))
  }

  /// An option taking a file's path (`--prices <file>`).
  static func file(_ name: String, short: Character? = nil, _ value: String, _ help: String)
    -> Self
  {
    Self(spec: OptionSpec(name: name, short: short, value: value, help: help, kind: .file))
  }

  /// An option taking a folder's path (`--output-dir <dir>`).
  static func directory(_ name: String, short: Character? = nil, _ value: String, _ help: String)
    -> Self
  {
    Self(spec: OptionSpec(name: name, short: short, value: value, help: help, kind: .directory))
  }
}

extension OptionKey where Value == Int {
  /// An option taking a whole number in `range` (`--module <px>`).
  static func integer(
    _ name: String, short: Character? = nil, _ value: String, in range: ClosedRange<Int>,
    _ help: String
  ) -> Self {
    Self(
      spec: OptionSpec(name: name, short: short, value: value, help: help, kind: .integer(range)))
  }
}

extension OptionKey where Value == Double {
  /// An option taking a finite number in `range` (`--size <mm>`).
  static func number(_ name: String, _ value: String, in range: ClosedRange<Double>, _ help: String)
    -> Self
  {
    Self(spec: OptionSpec(name: name, short: nil, value: value, help: help, kind: .number(range)))
  }
}

extension OptionKey where Value == Choice {
  /// An option taking one of `choices` (`--level <L|M|Q|H>`).
  static func choice(_ name: String, _ value: String, _ choices: [String], _ help: String) -> Self {
    Self(spec: OptionSpec(name: name, short: nil, value: value, help: help, kind: .choice(choices)))
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
  /// What it is (a file, a folder, a word of a list, text), for documentation and completion.
  let kind: OptionKind

  init(
    _ name: String, _ help: String, optional: Bool = false, variadic: Bool = false,
    kind: OptionKind = .text
  ) {
    self.name = name
    self.help = help
    self.optional = optional
    self.variadic = variadic
    self.kind = kind
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
    options: [any OptionDeclaration] = [], subcommands: [CommandSpec] = [],
    run: @escaping @Sendable (ParsedArguments, Console) async throws -> Int32
  ) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
    self.arguments = arguments
    self.options = options.map(\.spec) + CommandSpec.commonOptions.map(\.spec)
    self.subcommands = subcommands
    self.run = run
  }
}

extension CommandSpec {
  /// `--verbose`: after an error, its causes.
  static let verbose = OptionKey<Bool>.flag(
    "verbose", short: "v",
    "After an error, print its causes, one a line (with --json, as \"causes\").")
  /// `--help`.
  static let help = OptionKey<Bool>.flag("help", short: "h", "Show help for this command.")
  /// The options every command takes: `--verbose` (an error's causes) and `--help`.
  static let commonOptions: [OptionKey<Bool>] = [verbose, help]

  /// This command and its subcommands, depth first, each with its path (`["batch", "merge"]`);
  /// the root's own path is empty.
  func allCommands(path: [String] = []) -> [(path: [String], spec: CommandSpec)] {
    [(path, self)] + subcommands.flatMap { $0.allCommands(path: path + [$0.name]) }
  }
}

/// A usage error: exit code 2, with the command's usage line.
struct UsageError: Error, Sendable, Equatable {
  let message: String
}

/// Arguments parsed against a `CommandSpec`, read through the spec's `OptionKey`s.
///
/// The values are private: nothing reads them by a string, only through a key the spec declares.
struct ParsedArguments: Sendable {
  /// The command path (`["templates", "list"]`).
  let path: [String]
  /// The options the command's spec declares: name to kind.
  private let declared: [String: OptionKind]
  /// Option values in order given, by long name.
  private var values: [String: [String]] = [:]
  /// Flags given, by long name.
  private var flags: Set<String> = []
  /// Positional arguments.
  var positionals: [String] = []

  /// No options given yet, for a command at `path` whose spec declares `options`.
  init(path: [String], options: [OptionSpec]) {
    self.path = path
    declared = Dictionary(options.map { ($0.name, $0.kind) }) { first, _ in first }
  }

  /// Records a flag given (by the parser).
  mutating func record(flag option: OptionSpec) {
    check(option)
    flags.insert(option.name)
  }

  /// Records a value given to an option (by the parser).
  mutating func record(_ value: String, for option: OptionSpec) {
    check(option)
    values[option.name, default: []].append(value)
  }

  /// Whether the command's spec declares `key` (for code shared by commands that do and do not).
  func declares<Value>(_ key: OptionKey<Value>) -> Bool {
    declared[key.name] == key.spec.kind
  }

  /// Stops the program when `key` is not an option of the command: reading it would silently
  /// find nothing.
  private func check<Value>(_ key: OptionKey<Value>) { check(key.spec) }

  /// Stops the program when `option` is not declared, under its name and kind, by the command.
  private func check(_ option: OptionSpec) {
    precondition(
      declared[option.name] == option.kind,
      "option '--\(option.name)' is not declared by 'imprint \(path.joined(separator: " "))'")
  }

  /// Whether a flag was given.
  func flag(_ key: OptionKey<Bool>) -> Bool {
    check(key)
    return flags.contains(key.name)
  }

  /// Whether an option was given a value (of whatever kind).
  func isGiven<Value>(_ key: OptionKey<Value>) -> Bool {
    check(key)
    return values[key.name] != nil
  }

  /// The last value given to an option.
  private func text<Value>(_ key: OptionKey<Value>) -> String? {
    check(key)
    return values[key.name]?.last
  }

  /// The last value of an option, if given.
  func value(_ key: OptionKey<String>) -> String? { text(key) }

  /// The last value of an option as an integer in the key's range.
  ///
  /// - Throws: `UsageError` naming the option when it is not such an integer.
  func int(_ key: OptionKey<Int>) throws(UsageError) -> Int? {
    guard let text = text(key) else { return nil }
    guard case .integer(let range) = key.spec.kind else {
      preconditionFailure("option '--\(key.name)' is not an integer")
    }
    guard let number = Int(text), range.contains(number) else {
      throw UsageError(
        message:
          "option '--\(key.name)' expects an integer from \(range.lowerBound) to "
          + "\(range.upperBound); got '\(text)'")
    }
    return number
  }

  /// The last value of an option as a number in the key's range.
  ///
  /// - Throws: `UsageError` naming the option when it is not such a number.
  func double(_ key: OptionKey<Double>) throws(UsageError) -> Double? {
    guard let text = text(key) else { return nil }
    guard case .number(let range) = key.spec.kind else {
      preconditionFailure("option '--\(key.name)' is not a number")
    }
    guard let number = Double(text), number.isFinite, range.contains(number) else {
      throw UsageError(
        message:
          "option '--\(key.name)' expects a number from \(Formatting.number(range.lowerBound)) to "
          + "\(Formatting.number(range.upperBound)); got '\(text)'")
    }
    return number
  }

  /// The last value of an option, which must be one of the key's words.
  ///
  /// - Throws: `UsageError` listing the choices.
  func choice(_ key: OptionKey<Choice>) throws(UsageError) -> String? {
    guard let text = text(key) else { return nil }
    guard case .choice(let choices) = key.spec.kind else {
      preconditionFailure("option '--\(key.name)' is not a choice")
    }
    guard choices.contains(text) else {
      var message =
        "option '--\(key.name)' expects one of \(choices.joined(separator: ", ")); got '\(text)'"
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
