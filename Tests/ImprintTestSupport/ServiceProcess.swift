// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a running `imprint serve` on a port the system chose, for the tests whose
// subject is the process (its signals, restarts, command line); `request` (RawHTTPClient.swift)
// is its client.

import Foundation

#if canImport(Testing)
  import Testing
#endif

/// `imprint serve --listen 127.0.0.1:0` started as a child process; killed when released if it
/// is still running, with what it or its launcher started.
public final class ServiceProcess: @unchecked Sendable {
  // @unchecked: used by one test at a time; `stderrDrain` is joined in `stop`.
  /// The port the server listens on.
  public let port: Int
  /// The process id.
  public var pid: Int32 { process.processIdentifier }
  private let process: Process
  private let stderrDrain: PipeDrain
  /// Standard error's pipe, whose read end the drain reads (kept open as long as this is).
  private let errorPipe: CloseOnExecPipe
  private var firstLine: String

  /// Starts the server with `arguments` after `serve --listen 127.0.0.1:0` and waits for its
  /// `serve: listening on http://127.0.0.1:PORT` line (the JSON lines of what it found in its
  /// jobs folder, `--jobs-dir`, come before it: they are kept in `stop`'s text).
  ///
  /// - Parameters:
  ///   - arguments: more arguments of `imprint serve`.
  ///   - launcher: a program and its arguments that start the server (`strace ... --`); the
  ///     server is then the launcher's child (`childProcesses`).
  ///   - environment: the server's whole environment; nil for this process's.
  ///   - directory: its working folder; nil for this process's.
  ///   - port: the port to listen on (0: the system's choice).
  /// - Throws: `ServiceProcessError` when the server ends or prints no listening line first,
  ///   or what `Process.run` throws.
  public init(
    _ arguments: [String] = [], launcher: [String] = [], environment: [String: String]? = nil,
    directory: String? = nil, port: Int = 0
  ) throws {
    process = Process()
    let command =
      launcher + [imprintExecutable, "serve", "--listen", "127.0.0.1:\(port)"] + arguments
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let err = CloseOnExecPipe()
    process.standardError = err.fileHandleForWriting
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    err.closeWriteEnd()
    errorPipe = err
    // The first line that is not JSON, byte by byte, so that the rest stays in the pipe for the
    // drain.
    let descriptor = err.fileHandleForReading.fileDescriptor
    var line: [UInt8] = []
    var before: [UInt8] = []
    var byte: UInt8 = 0
    while line.last != UInt8(ascii: "\n") || line.first == UInt8(ascii: "{") {
      if line.last == UInt8(ascii: "\n") {
        before += line
        line = []
      }
      let count = read(descriptor, &byte, 1)
      if count < 0 && errno == EINTR { continue }
      guard count == 1 else { break }
      line.append(byte)
    }
    let listening = String(decoding: line, as: UTF8.self)
    firstLine = String(decoding: before + line, as: UTF8.self)
    stderrDrain = PipeDrain(descriptor)
    let prefix = "serve: listening on http://127.0.0.1:"
    guard listening.hasPrefix(prefix),
      let port = Int(
        listening.dropFirst(prefix.count).trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      process.terminate()
      process.waitUntilExit()
      throw ServiceProcessError(
        text: firstLine + String(decoding: stderrDrain.wait(seconds: 30) ?? Data(), as: UTF8.self))
    }
    self.port = port
  }

  deinit {
    if process.isRunning {
      // The launcher's children too: a traced server outlives a killed strace, detached. The
      // server's document workers end with it (a parent-death signal).
      let pid = process.processIdentifier
      for member in [pid] + ProcessTree.descendants(of: pid) { kill(member, SIGKILL) }
      process.waitUntilExit()
    }
  }

  /// The pids of the server's child processes (its document workers), from
  /// /proc/PID/task/TID/children.
  public var childProcesses: [Int32] { ProcessTree.children(of: pid) }

  /// `http://127.0.0.1:PORT` followed by `path`.
  public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  /// Sends SIGTERM and waits for the process to end.
  ///
  /// - Returns: its exit status and everything it wrote on standard error.
  public func stop() -> (status: Int32, stderr: String) {
    kill(process.processIdentifier, SIGTERM)
    return waitForExit()
  }

  /// Waits for the process to end (after a signal sent by someone else).
  ///
  /// Reaps it first, then reads the rest of its standard error for at most 10 s: a process that
  /// ended is never left a zombie while a descriptor another process inherited holds its
  /// pipe open (Swift Testing's exit-test monitor spins on any zombie child, and its own child's
  /// end waits behind it).
  public func waitForExit() -> (status: Int32, stderr: String) {
    process.waitUntilExit()
    guard let rest = stderrDrain.wait(seconds: 10) else {
      return (
        process.terminationStatus,
        firstLine + "(standard error still open 10 s after the exit: another process holds it)"
      )
    }
    return (process.terminationStatus, firstLine + String(decoding: rest, as: UTF8.self))
  }
}

/// The server did not start; `text` is what it wrote.
public struct ServiceProcessError: Error, CustomStringConvertible {
  /// The server's standard error.
  public let text: String
  public var description: String { "imprint serve did not start: \(text)" }
}

/// Asks `condition` every 10 ms until it holds, at most `tries` times (a wait for something
/// another process does, never a measure of time).
///
/// - Returns: whether it held.
@discardableResult
public func waitFor(tries: Int = 3000, _ condition: () throws -> Bool) rethrows -> Bool {
  for _ in 0..<tries {
    if try condition() { return true }
    usleep(10_000)
  }
  return try condition()
}
