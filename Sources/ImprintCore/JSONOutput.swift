// SPDX-License-Identifier: Apache-2.0
// Imprint: the one JSON encoder every `--json` output and results file uses.

import Foundation

/// Encodes values as Imprint's JSON: sorted keys, no escaped slashes, stable bytes.
public enum JSONOutput {
  /// Encodes `value` as pretty-printed JSON with sorted keys and a final newline.
  public static func pretty(_ value: some Encodable) -> String {
    encode(value, formatting: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) + "\n"
  }

  /// Encodes `value` as one line of JSON with sorted keys (for JSON Lines files); `flags`
  /// are set to `true` in the encoder's `userInfo` (a type's other form for another reader,
  /// such as `DocumentInfo.compactPageSizes`).
  public static func line(_ value: some Encodable, flags: [CodingUserInfoKey] = []) -> String {
    encode(value, formatting: [.sortedKeys, .withoutEscapingSlashes], flags: flags)
  }

  /// Writes `node` as one line of JSON, as `line` writes a value that gives it
  /// (`JSONOutputValue`): keys sorted, slashes unescaped.
  public static func line(node: OutputNode) -> String {
    var writer = OutputWriter(pretty: false)
    writer.write(node)
    return String(decoding: writer.bytes, as: UTF8.self)
  }

  private static func encode(
    _ value: some Encodable, formatting: JSONEncoder.OutputFormatting,
    flags: [CodingUserInfoKey] = []
  ) -> String {
    var userInfo: [CodingUserInfoKey: Any] = [:]
    for flag in flags { userInfo[flag] = true }
    let fast = OutputEncoder(pretty: formatting.contains(.prettyPrinted), userInfo: userInfo)
    if let bytes = try? fast.encode(value) { return String(decoding: bytes, as: UTF8.self) }
    // What OutputEncoder leaves to Foundation (dates, data, URLs, decimals; an error), and
    // whatever the value's own encode(to:) threw, asked again of JSONEncoder.
    let encoder = JSONEncoder()
    encoder.outputFormatting = formatting
    for flag in flags { encoder.userInfo[flag] = true }
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
  /// The chain of causes, outermost first (each without causes of its own), when asked for
  /// (`--verbose`); absent otherwise, so that the JSON is unchanged.
  public var causes: [ErrorRecord]?

  /// Whether records made in this task carry their error's causes (`--verbose` sets it).
  @TaskLocal public static var includesCauses = false

  /// Captures an error, with its causes when `includesCauses` is set; errors that are not
  /// `ImprintError` get the code `internal`.
  public init(_ error: any Error) {
    self.init(error, causes: ErrorRecord.includesCauses)
  }

  /// Captures an error, with its chain of causes when `causes` is true (and it has any).
  public init(_ error: any Error, causes: Bool) {
    self.init(only: error)
    if causes {
      let chain = ErrorCause.chain(of: error)
      if !chain.isEmpty { self.causes = chain.map { ErrorRecord(only: $0) } }
    }
  }

  private init(only error: any Error) {
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
  /// The record with the paths under `folders` shown relative to them: `FOLDER/` removed and
  /// `FOLDER` itself shown as `.`, in the message, the hint and the causes.
  ///
  /// A service runs work in folders of its own and reports it to clients: they read the names
  /// they sent and their outputs' names, never the server's layout. A folder inside another
  /// is taken first.
  public func showing(pathsRelativeTo folders: [String]) -> ErrorRecord {
    let ordered = folders.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    guard !ordered.isEmpty else { return self }
    func relative(_ text: String) -> String {
      var text = text
      for folder in ordered {
        text = text.replacingOccurrences(of: folder + "/", with: "")
          .replacingOccurrences(of: folder, with: ".")
      }
      return text
    }
    var record = self
    record.message = relative(message)
    record.hint = hint.map(relative)
    record.causes = causes?.map { $0.showing(pathsRelativeTo: ordered) }
    return record
  }
}
