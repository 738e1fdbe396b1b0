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
  /// Option `name` as a whole number in `range`, if given.
  mutating func integer(_ name: OptionName, in range: ClosedRange<Int>) throws -> Int?
  /// Option `name` as a finite number in `range`, if given.
  mutating func number(_ name: OptionName, in range: ClosedRange<Double>) throws -> Double?
  /// Option `name` as one of `choices`, if given.
  mutating func choice(_ name: OptionName, _ choices: [String]) throws -> String?
  /// Option `name` as a colour (`#RRGGBB`), if given.
  mutating func color(_ name: OptionName) throws -> Color?
}
