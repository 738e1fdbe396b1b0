// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: the scaffold the tests' Python HTTP servers share (python3's http.server):
// a threading server on a port the system chose, started in a process group of its own, killed and
// reaped when stopped or released.

import Foundation

/// A test's HTTP server written in Python: the subclass gives the request handler, this class
/// serves it on a port the system chose and owns the process.
///
/// The handler is Python code that defines the class `H` (a `BaseHTTPRequestHandler`); it is
/// served by a `ThreadingMixIn` `HTTPServer` whose threads are daemons, so a slow client never
/// holds another. The server prints its port on its first line, which `init` waits for.
public class PythonServer {
  /// The port it listens on.
  public let port: Int
  /// The server's process id (the leader of its process group).
  public let pid: pid_t
  /// The address it listens on.
  public let host: String
  private var stopped = false

  /// The lines every server ends with: the threading server, its port, its loop.
  ///
  /// `HOST` is replaced by the address.
  private static let tail = pythonFixture("python_server_tail.py")

  /// Starts `handler` from `folder` and waits for the port it listens on.
  ///
  /// - Parameters:
  ///   - handler: Python code defining the request handler class `H`, with its imports.
  ///   - name: the name of its files in `folder` (`NAME.py`, `NAME.port`).
  ///   - host: the address to listen on (`127.0.0.1`, or `0.0.0.0` for every address).
  ///   - arguments: the script's arguments (`sys.argv[1...]`).
  ///   - stderr: where its standard error goes.
  ///   - folder: the folder.
  /// - Throws: `PythonServerError` when the script cannot be written or started, or ends or
  ///   stays silent instead of giving its port.
  public init(
    handler: String, name: String, host: String = "127.0.0.1", arguments: [String] = [],
    stderr: String, in folder: TemporaryFolder
  ) throws {
    let scriptPath = folder.file(name + ".py")
    let script = handler + "\n" + Self.tail.replacingOccurrences(of: "HOST", with: host) + "\n"
    try Data(script.utf8).write(to: URL(fileURLWithPath: scriptPath))
    let portFile = folder.file(name + ".port")
    let pid = try spawnInGroup(
      ["python3", "-u", scriptPath] + arguments, stdin: "/dev/null", stdout: portFile,
      stderr: stderr)
    // A wait for the child's first line, bounded (a minute, for a loaded machine), never timed.
    var port: Int?
    var ended = false
    for _ in 0..<3000 where port == nil && !ended {
      let text = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
      if text.hasSuffix("\n") { port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) }
      var status: Int32 = 0
      if port == nil {
        ended = waitpid(pid, &status, WNOHANG) == pid
        if !ended { usleep(20_000) }
      }
    }
    guard let port, port > 0 else {
      if !ended {
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
      }
      let log = stderr == "/dev/null" ? "" : (try? String(contentsOfFile: stderr, encoding: .utf8))
      throw PythonServerError(name: name, ended: ended, stderr: log ?? "")
    }
    self.port = port
    self.pid = pid
    self.host = host
  }

  deinit { stop() }

  /// Kills the server's process group and reaps the server; nothing after the first call.
  public func stop() {
    guard !stopped else { return }
    stopped = true
    kill(-pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  }

  /// The URL of `path` on this server, by its loopback address.
  public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  /// The lines `file` holds so far (none when it does not exist yet).
  public func lines(of file: String) -> [String] {
    ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(
      String.init)
  }
}

/// A Python server that did not give its port.
public struct PythonServerError: Error, CustomStringConvertible {
  /// The server's name (its script is `NAME.py`).
  public let name: String
  /// Whether the process ended (else it stayed silent for a minute and was killed).
  public let ended: Bool
  /// What it wrote on standard error, when that went to a file.
  public let stderr: String
  public var description: String {
    "python server '\(name)' "
      + (ended ? "ended before giving its port" : "gave no port within a minute")
      + (stderr.isEmpty ? "" : ": \(stderr)")
  }
}
