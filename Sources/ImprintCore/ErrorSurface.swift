// SPDX-License-Identifier: Apache-2.0
// ImprintCore: where an error is read, so that its hint names what that reader can change: a
// command's option on the command line, a request's parameter over HTTP.

/// Who reads an error's hint: someone running a command, or an HTTP client of the service.
///
/// Hints that tell how to fix an input name the knob the reader has: `--password` for the
/// command, the query parameter `password` for a request. The service sets `current` to
/// `.http` around everything whose errors reach its clients (answers, a job's results); the
/// command line keeps the default.
public enum ErrorSurface: Sendable, Equatable {
  /// `imprint` and its options.
  case commandLine
  /// `imprint serve`'s routes, their query parameters and form fields.
  case http

  /// The surface errors made in this task are read on.
  @TaskLocal public static var current: ErrorSurface = .commandLine

  /// `commandLine` when errors are read on the command line, `http` when in the service.
  public static func hint(_ commandLine: String, http: String) -> String {
    term(commandLine, http: http)
  }

  /// `commandLine` or `http`, as `current` says: an option's name in a message (`--gas-price` on
  /// the command line, the request's key `gasPrice` over HTTP), so that a message speaks of what
  /// its reader sent.
  public static func term(_ commandLine: String, http: String) -> String {
    current == .http ? http : commandLine
  }
}
