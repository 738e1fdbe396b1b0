// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: a command's parsed arguments as a capability's options (`OptionSource`), so that
// the library reads them by their names as it reads a request's.

import ImprintCore

/// Parsed arguments read as a capability's options: each option through the key its command's
/// spec declares under the option's `flag` name, with the kind the library reads (a spec that
/// declares it otherwise stops the program, as any undeclared key does), and refused as the
/// command line refuses a value: a `UsageError` naming the option.
struct ArgumentSource: OptionSource {
  private let arguments: ParsedArguments

  init(_ arguments: ParsedArguments) { self.arguments = arguments }

  /// The key of option `name`, of `kind`.
  private func key<Value>(_ name: OptionName, _ kind: OptionKind) -> OptionKey<Value> {
    OptionKey(spec: OptionSpec(name: name.flag, short: nil, value: nil, help: "", kind: kind))
  }

  /// Option `name`'s text: a word, a file's or a folder's path, as the command declares it
  /// (`--password-file <file>`).
  func text(_ name: OptionName) -> String? {
    let kind = [OptionKind.file, .directory].first {
      arguments.declares(key(name, $0) as OptionKey<String>)
    }
    return arguments.value(key(name, kind ?? .text))
  }

  func decimalText(_ name: OptionName) -> String? { text(name) }

  func integerText(_ name: OptionName) -> String? { text(name) }

  func flag(_ name: OptionName) -> Bool { arguments.flag(key(name, .flag)) }

  func integer(_ name: OptionName, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
    try arguments.int(key(name, .integer(range)))
  }

  func number(_ name: OptionName, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
    try arguments.double(key(name, .number(range)))
  }

  func choice(_ name: OptionName, _ choices: [String]) throws(UsageError) -> String? {
    try arguments.choice(key(name, .choice(choices)))
  }

  func color(_ name: OptionName) throws(UsageError) -> Color? {
    guard let text = text(name) else { return nil }
    guard let color = Color(parsing: text) else {
      throw UsageError(
        message: "option '--\(name.flag)' expects a colour like #1A2B3C; got '\(text)'")
    }
    return color
  }
}

extension OptionKey {
  /// The key of a capability's option as its table declares it (`PrepareOption.entry`): its
  /// command-line name, placeholder, help and kind.
  init(_ entry: OptionEntry) {
    self.init(
      spec: OptionSpec(
        name: entry.names.flag, short: nil, value: entry.placeholder, help: entry.help,
        kind: entry.type))
  }
}
