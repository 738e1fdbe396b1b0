// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a printer elsewhere on the network that asks for a password over plain
// HTTP (python3's http.server on every address): it answers every request 401 with
// `WWW-Authenticate: Basic` and logs whether the request carried credentials.

import Foundation

/// An HTTP server on all of this machine's addresses that answers every request `401
/// Unauthorized` asking for Basic credentials, logging `credentials` or `none` for each.
public final class AskingPrinter: PythonServer {
  private let log: String

  static let handler = #"""
    import http.server, sys
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
    """#

  /// Starts the server in `folder`.
  public init(folder: TemporaryFolder) throws {
    log = folder.file("asking.log")
    try super.init(handler: Self.handler, name: "asking", host: "0.0.0.0", stderr: log, in: folder)
  }

  /// For each request so far, whether it carried credentials.
  public var requests: [Bool] {
    lines(of: log).map { $0 == "credentials" }
  }
}
