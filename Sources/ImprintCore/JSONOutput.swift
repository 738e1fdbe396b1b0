// SPDX-License-Identifier: Apache-2.0
// Imprint: the one JSON encoder every `--json` output and results file uses.

import Foundation

/// Encodes values as Imprint's JSON: sorted keys, no escaped slashes, stable bytes.
public enum JSONOutput {
  /// Encodes `value` as pretty-printed JSON with sorted keys and a final newline.
  public static func pretty(_ value: some Encodable) -> String {
    encode(value, formatting: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) + "\n"
  }

  /// Encodes `value` as one line of JSON with sorted keys (for JSON Lines files).
  public static func line(_ value: some Encodable) -> String {
    encode(value, formatting: [.sortedKeys, .withoutEscapingSlashes])
  }

  private static func encode(_ value: some Encodable, formatting: JSONEncoder.OutputFormatting)
    -> String
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = formatting
    do {
      return String(decoding: try encoder.encode(value), as: UTF8.self)
    } catch {
      preconditionFailure("Imprint's output types always encode: \(error)")
    }
  }
}

/// The `error` object of JSON outputs and batch results.
public struct ErrorRecord: Codable, Sendable, Equatable {
  /// The stable error code.
  public var code: String
  /// The message, naming the input.
  public var message: String
  /// How to fix it, when known.
  public var hint: String?

  /// Captures an error; errors that are not `ImprintError` get the code `internal`.
  public init(_ error: any Error) {
    if let error = error as? any ImprintError {
      code = error.code
      message = error.message
      hint = error.hint
    } else {
      code = "internal"
      message = String(describing: error)
      hint = nil
    }
  }
}
