// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a running `imprint serve` on a port the system chose, and curl as its
// client.

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
  /// - Throws: `ServiceProcessError` when the server ends or prints no listening line first,
  ///   or what `Process.run` throws.
  public init(
    _ arguments: [String] = [], launcher: [String] = [], environment: [String: String]? = nil,
    directory: String? = nil
  ) throws {
    process = Process()
    let command = launcher + [imprintExecutable, "serve", "--listen", "127.0.0.1:0"] + arguments
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let err = Pipe()
    process.standardError = err
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
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
        text: firstLine + String(decoding: stderrDrain.wait(), as: UTF8.self))
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
  public func waitForExit() -> (status: Int32, stderr: String) {
    let rest = String(decoding: stderrDrain.wait(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, firstLine + rest)
  }
}

/// The server did not start; `text` is what it wrote.
public struct ServiceProcessError: Error, CustomStringConvertible {
  /// The server's standard error.
  public let text: String
  public var description: String { "imprint serve did not start: \(text)" }
}

/// One curl exchange: status, content type, body and the response's headers.
public struct HTTPExchange: Sendable {
  /// The HTTP status (0 when curl got no response).
  public let status: Int
  /// The `Content-Type` header.
  public let contentType: String
  /// The body.
  public let body: [UInt8]
  /// The response headers, names lowercased (the last of each).
  public let headers: [String: String]
  /// The body as text.
  public var text: String { String(decoding: body, as: UTF8.self) }

  /// The body as a JSON object (nil when it is not one).
  public var json: [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
  }

  /// The `error` object's `code`, for an error document.
  public var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
}

/// Sends one request with curl.
///
/// - Parameters:
///   - method: `GET`, `POST`, ...
///   - url: the URL.
///   - body: a file whose bytes are the body (`--data-binary @file`).
///   - data: text sent as the body.
///   - form: multipart parts, each as curl's `-F` takes it (`photo=@face.jpg`).
///   - headers: request headers (`Content-Type: application/json`).
///   - folder: where curl's output files go.
/// - Returns: what came back (status 0 when nothing did).
/// - Throws: when curl cannot be started.
public func curlRequest(
  _ method: String, _ url: String, body: String? = nil, data: String? = nil,
  form: [String] = [], headers: [String] = [], in folder: TemporaryFolder
) throws -> HTTPExchange {
  let name = UUID().uuidString
  let bodyFile = folder.file(name + ".body")
  let headerFile = folder.file(name + ".headers")
  var arguments = ["-s", "-X", method, "-o", bodyFile, "-D", headerFile, "-w", "%{http_code}"]
  for header in headers { arguments += ["-H", header] }
  if let body { arguments += ["--data-binary", "@" + body] }
  if let data { arguments += ["--data-binary", data] }
  for part in form { arguments += ["-F", part] }
  let result = try runTool("curl", arguments + [url])
  let exchange = HTTPExchange(
    curlStatus: result.stdout, headerFile: headerFile, bodyFile: bodyFile)
  #if canImport(Testing)
    // Every error answer of every route a test sends is held to it, new routes included.
    expectClientView(exchange)
  #endif
  return exchange
}

extension HTTPExchange {
  /// What of the server's private layout an error answer (status 400 or more) shows its
  /// client: the server's temporary folders (`imprint-serve-…`) and each of `hidden` (a configured printer's URI, say); empty when it shows
  /// none, or for an answer that is not an error.
  public func privateText(hidden: [String] = []) -> [String] {
    guard status >= 400 else { return [] }
    return (["imprint-serve-"] + hidden).filter { !$0.isEmpty && text.contains($0) }
  }
}

#if canImport(Testing)
  /// Records an issue when `exchange` is an error answer naming the server's private folders
  /// or any of `hidden` (a printer's URI): a client reads its own names (its parts, its
  /// order's files, a printer's configured name), never the server's.
  public func expectClientView(
    _ exchange: HTTPExchange, hiding hidden: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let shown = exchange.privateText(hidden: hidden)
    #expect(
      shown.isEmpty, "the \(exchange.status) answer shows \(shown): \(exchange.text)",
      sourceLocation: sourceLocation)
  }
#endif

extension HTTPExchange {
  /// What curl received: the status it printed (`-w %{http_code}`), the headers it wrote
  /// (`-D FILE`) and the body (`-o FILE`); status 0 when it got no response.
  public init(curlStatus: String, headerFile: String, bodyFile: String) {
    let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))).map { [UInt8]($0) } ?? []
    let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
    var fields: [String: String] = [:]
    for line in headerText.split(separator: "\r\n") {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    self.init(
      status: Int(curlStatus) ?? 0, contentType: fields["content-type"] ?? "", body: body,
      headers: fields)
  }
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
