// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a local HTTP server receiving webhook calls (python3's http.server): each
// POST's path, Content-Type and body logged as one JSON line.

import Foundation

/// A local server for webhook tests: `POST /hook` answers 204, `/flaky` 500 the first time and
/// 200 after, `/down` always 503; every POST is logged.
public final class WebhookReceiver {
  /// The port it listens on (127.0.0.1).
  public let port: Int
  private let log: String
  private let pid: pid_t

  static let script = #"""
    import http.server, json, socketserver, sys
    LOG = sys.argv[1]
    seen = {}
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        def log_message(self, *a): pass
        def do_POST(self):
            length = int(self.headers.get('Content-Length', '0'))
            body = self.rfile.read(length)
            seen[self.path] = seen.get(self.path, 0) + 1
            with open(LOG, 'a') as log:
                log.write(json.dumps({'path': self.path,
                                      'type': self.headers.get('Content-Type', ''),
                                      'body': body.decode('utf-8', 'replace')}) + '\n')
            code = 204
            if self.path == '/flaky' and seen[self.path] == 1: code = 500
            if self.path == '/down': code = 503
            self.send_response(code)
            self.send_header('Content-Length', '0')
            self.end_headers()
    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
    s = S(('127.0.0.1', 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """#

  /// Starts a server logging into `folder`.
  public init(folder: TemporaryFolder) throws {
    log = folder.file("receiver.log")
    (pid, port) = try startPythonServer(
      Self.script, name: "receiver", arguments: [log], stderr: "/dev/null", in: folder)
  }

  deinit {
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
  }

  /// The URL of `path` on this server.
  public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  /// The calls received so far: each one's path, Content-Type and body.
  public var calls: [(path: String, type: String, body: String)] {
    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
      guard
        let object = (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
      else { return nil }
      return (object["path"] ?? "", object["type"] ?? "", object["body"] ?? "")
    }
  }
}

/// Starts `script` (a Python server that prints its port on its first line) from `folder`, in a
/// process group of its own, and waits for the port (0 when none came).
///
/// - Parameters:
///   - script: the Python program.
///   - name: the name of its files in `folder` (`NAME.py`, `NAME.port`).
///   - arguments: its arguments.
///   - stderr: where its standard error goes.
///   - folder: the folder.
/// - Returns: its pid and port.
/// - Throws: when the script cannot be written or started.
func startPythonServer(
  _ script: String, name: String, arguments: [String], stderr: String, in folder: TemporaryFolder
) throws -> (pid: pid_t, port: Int) {
  let scriptPath = folder.file(name + ".py")
  try Data(script.utf8).write(to: URL(fileURLWithPath: scriptPath))
  let portFile = folder.file(name + ".port")
  let pid = try spawnInGroup(
    ["python3", "-u", scriptPath] + arguments, stdin: "/dev/null", stdout: portFile,
    stderr: stderr)
  var found: Int?
  for _ in 0..<500 where found == nil {
    let text = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
    if text.hasSuffix("\n") { found = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) }
    if found == nil { usleep(20_000) }
  }
  return (pid, found ?? 0)
}
