// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a printer elsewhere on the network that asks for a password over plain
// HTTP (python3's http.server on every address): it answers every request 401 with
// `WWW-Authenticate: Basic` and logs whether the request carried credentials.

import Foundation

/// An HTTP server on all of this machine's addresses that answers every request `401
/// Unauthorized` asking for Basic credentials, logging `credentials` or `none` for each.
public final class AskingPrinter {
  /// The port it listens on (every address).
  public let port: Int
  private let log: String
  private let pid: pid_t

  static let script = #"""
    import http.server, socketserver, sys
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        def log_message(self, *a): pass
        def do_POST(self):
            sys.stderr.write(('credentials' if self.headers.get('Authorization') else 'none') + '\n')
            sys.stderr.flush()
            length = int(self.headers.get('Content-Length') or 0)
            if length: self.rfile.read(length)
            self.send_response(401)
            self.send_header('WWW-Authenticate', 'Basic realm="printer"')
            self.send_header('Content-Length', '0')
            self.send_header('Connection', 'close')
            self.end_headers()
            self.close_connection = True
    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
    s = S(('0.0.0.0', 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """#

  /// Starts the server in `folder`.
  public init(folder: TemporaryFolder) throws {
    log = folder.file("asking.log")
    (pid, port) = try startPythonServer(
      Self.script, name: "asking", arguments: [], stderr: log, in: folder)
  }

  deinit {
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
  }

  /// For each request so far, whether it carried credentials.
  public var requests: [Bool] {
    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map {
      $0 == "credentials"
    }
  }
}
