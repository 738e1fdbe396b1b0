// SPDX-License-Identifier: Apache-2.0
// ImprintCore: a capability's options read from wherever a surface has them (the command line's
// arguments, a request's query or JSON body), so that each capability maps its options once and
// each surface keeps its own names and errors.

/// A capability's option as each surface names it: `chain-id` on the command line
/// (`--chain-id`), `chainId` in a request's query or JSON body.
public struct OptionName: Sendable, Hashable {
  /// The command line's long name, without dashes (`chain-id`).
  public let flag: String
  /// A request's key (`chainId`).
  public let key: String

  /// The option named `flag` on the command line and `key` in a request.
  public init(flag: String, key: String) {
    self.flag = flag
    self.key = key
  }

  /// The option named `key` in a request and `key` in kebab case on the command line
  /// (`previewSize`, `--preview-size`).
  public init(key: String) {
    var flag = ""
    for character in key {
      if character.isUppercase {
        flag += "-" + character.lowercased()
      } else {
        flag.append(character)
      }
    }
    self.init(flag: flag, key: key)
  }
}

/// What an option holds, as a capability's table declares it: how every surface checks its
/// value, and how the command line documents and completes it.
public enum OptionType: Sendable, Equatable {
  /// On or off: a command-line flag, `true` or `false` in a request or manifest.
  case flag
  /// Any text.
  case text
  /// A file's path.
  case file
  /// A folder's path.
  case directory
  /// A whole number in the range.
  case integer(ClosedRange<Int>)
  /// A finite number in the range.
  case number(ClosedRange<Double>)
  /// One of the words.
  case choice([String])
}

/// One option of a capability's table (`PrepareOption`, `QuoteOption`, `InspectOption`),
/// declared once: its names on every surface, what it holds, the command line's placeholder,
/// the unit its range is stated in, and its help.
public struct OptionEntry: Sendable, Equatable {
  /// The option's names: `--preview-size` on the command line, `previewSize` in a request,
  /// a manifest line or a configuration file.
  public let names: OptionName
  /// What it holds.
  public let type: OptionType
  /// The command line's value placeholder (`<px>`); nil for a flag.
  public let placeholder: String?
  /// The unit of a number, in words (`pixels`), for messages that state its range; nil when
  /// it has none.
  public let unit: String?
  /// One line of help (the command line's), with the default.
  public let help: String

  /// An option named `names`, holding `type`.
  public init(
    _ names: OptionName, _ type: OptionType, placeholder: String? = nil, unit: String? = nil,
    help: String
  ) {
    self.names = names
    self.type = type
    self.placeholder = placeholder
    self.unit = unit
    self.help = help
  }
}

/// Where a capability's options are read from: the command line's parsed arguments, or a
/// request's query parameters or JSON body.
///
/// A source reads each option by its name in its own terms (`OptionName.flag` or `.key`) and
/// refuses a value that is not of the option's kind, or out of its range, with its own error (a
/// usage error, a 400), so that a capability reads its options once (`QRSettings.read`,
/// `CardOptions.read`) with the same names, ranges and error codes on every surface.
public protocol OptionSource {
  /// Option `name`'s text, if given.
  mutating func text(_ name: OptionName) throws -> String?
  /// Option `name` as the text of a decimal amount (`"0.000000000000000001"`), if given, for
  /// the capability to check.
  mutating func decimalText(_ name: OptionName) throws -> String?
  /// Option `name` as the text of a whole number, if given, for the capability to check.
  mutating func integerText(_ name: OptionName) throws -> String?
  /// Whether option `name` is on (false when absent).
  mutating func flag(_ name: OptionName) throws -> Bool
  /// Option `name` as on or off, nil when not said (a manifest line's `"wait": false` is not
  /// its absence). A surface whose flags can only be turned on (the command line) answers as
  /// `flag` does, which is the default.
  mutating func toggle(_ name: OptionName) throws -> Bool?
  /// Option `name` as a whole number in `range`, if given.
  mutating func integer(_ name: OptionName, in range: ClosedRange<Int>) throws -> Int?
  /// Option `name` as a finite number in `range`, if given.
  mutating func number(_ name: OptionName, in range: ClosedRange<Double>) throws -> Double?
  /// Option `name` as one of `choices`, if given.
  mutating func choice(_ name: OptionName, _ choices: [String]) throws -> String?
  /// Option `name` as a colour (`#RRGGBB`), if given.
  mutating func color(_ name: OptionName) throws -> Color?
}

extension OptionSource {
  /// Option `name` as `flag` reads it: false when absent.
  public mutating func toggle(_ name: OptionName) throws -> Bool? { try flag(name) }
}
