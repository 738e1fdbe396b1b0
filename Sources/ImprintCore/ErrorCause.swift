// SPDX-License-Identifier: Apache-2.0
// Imprint: an error kept as another's cause, and the chain of causes `--verbose` prints.

/// An error kept as the cause of another, compared by code, message and hint so that the error
/// holding it stays `Equatable`.
public struct ErrorCause: Sendable, Equatable {
  /// The error itself.
  public let error: any Error

  /// Keeps `error`.
  public init(_ error: any Error) { self.error = error }

  public static func == (a: ErrorCause, b: ErrorCause) -> Bool {
    ErrorRecord(a.error, causes: true) == ErrorRecord(b.error, causes: true)
  }

  /// The causes beneath `error`, outermost first: its `underlying` error, that one's, and so
  /// on (at most 16 deep).
  public static func chain(of error: any Error) -> [any Error] {
    var causes: [any Error] = []
    var next = (error as? any ImprintError)?.underlying
    while let cause = next, causes.count < 16 {
      causes.append(cause)
      next = (cause as? any ImprintError)?.underlying
    }
    return causes
  }
}
