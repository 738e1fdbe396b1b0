// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: the streams a command writes to, real or captured for tests.

import Foundation
import ImprintCore
import Synchronization

/// Where a command's output goes: bytes, and whether it is a terminal.
public protocol OutputSink: Sendable {
  /// Writes bytes.
  func write(_ bytes: [UInt8])
  /// Whether the sink is a terminal (progress, colour, and no binary data).
  var isTerminal: Bool { get }
}

extension OutputSink {
  /// Writes UTF-8 text.
  public func write(_ text: String) { write(Array(text.utf8)) }
}

/// The process's standard output or error.
public struct StandardStream: OutputSink {
  private let descriptor: Int32

  /// Standard output.
  public static let output = StandardStream(descriptor: 1)
  /// Standard error.
  public static let error = StandardStream(descriptor: 2)

  public var isTerminal: Bool { isatty(descriptor) == 1 }

  public func write(_ bytes: [UInt8]) {
    var offset = 0
    bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress else { return }
      while offset < buffer.count {
        let written = Foundation.write(descriptor, base + offset, buffer.count - offset)
        if written <= 0 {
          if written < 0 && errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
  }
}

/// A sink that keeps what is written, for tests.
public final class CapturedStream: OutputSink {
  private let storage = Mutex<[UInt8]>([])
  public let isTerminal: Bool

  /// Creates an empty capture that claims to be (or not to be) a terminal.
  public init(isTerminal: Bool = false) { self.isTerminal = isTerminal }

  public func write(_ bytes: [UInt8]) { storage.withLock { $0 += bytes } }

  /// Everything written so far, as bytes.
  public var bytes: [UInt8] { storage.withLock { $0 } }
  /// Everything written so far, as UTF-8 text.
  public var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// The streams and environment a command runs with.
public struct Console: Sendable {
  /// Standard output: data only.
  public var stdout: any OutputSink
  /// Standard error: diagnostics and progress.
  public var stderr: any OutputSink
  /// The environment (`NO_COLOR`, `IMPRINT_*`).
  public var environment: [String: String]

  /// Creates a console over the given streams.
  public init(
    stdout: any OutputSink, stderr: any OutputSink,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) {
    self.stdout = stdout
    self.stderr = stderr
    self.environment = environment
  }

  /// Whether colour may be used on `sink`: a terminal and `NO_COLOR` unset.
  public func colorAllowed(on sink: any OutputSink) -> Bool {
    sink.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty
  }

  /// Prints `error: …` and, when there is one, `hint: …` on stderr, with control characters
  /// escaped (a message may echo a name or payload from input); then, when records carry
  /// causes (`--verbose`), the causes as `reportCauses(_:)` does.
  public func report(_ error: any Error) {
    let record = ErrorRecord(error)
    stderr.write("error: \(SafeText.escaped(record.message))\n")
    if let hint = record.hint { stderr.write("hint: \(SafeText.escaped(hint))\n") }
    reportCauses(record)
  }

  /// Prints the causes a record carries (`--verbose`), outermost first, one a line.
  ///
  /// Each is `cause: CODE: MESSAGE`, indented two spaces more than the one it caused; nothing
  /// is printed for a record without causes.
  public func reportCauses(_ record: ErrorRecord) {
    for (depth, cause) in (record.causes ?? []).enumerated() {
      let indent = String(repeating: "  ", count: depth + 1)
      stderr.write(
        "\(indent)cause: \(SafeText.escaped(cause.code)): \(SafeText.escaped(cause.message))\n")
    }
  }

  /// Prints `warning: …` on stderr, with control characters escaped.
  public func warn(_ message: String) { stderr.write("warning: \(SafeText.escaped(message))\n") }
}
