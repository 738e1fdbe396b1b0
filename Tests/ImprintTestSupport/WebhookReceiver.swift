// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a local HTTP server receiving webhook calls (python3's http.server): each
// POST's path, Content-Type and body logged as one JSON line.

import Foundation

/// A local server for webhook tests: `POST /hook` answers 204, `/flaky` 500 the first time and
/// 200 after, `/down` always 503; every POST is logged.
public final class WebhookReceiver: PythonServer {
  private let log: String

  static let handler = #"""
    import http.server, json, sys
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
    """#

  /// Starts a server logging into `folder`.
  public init(folder: TemporaryFolder) throws {
    log = folder.file("receiver.log")
    try super.init(
      handler: Self.handler, name: "receiver", arguments: [log], stderr: "/dev/null", in: folder)
  }

  /// The calls received so far: each one's path, Content-Type and body.
  public var calls: [(path: String, type: String, body: String)] {
    lines(of: log).compactMap {
      guard
        let object = (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
      else { return nil }
      return (object["path"] ?? "", object["type"] ?? "", object["body"] ?? "")
    }
  }
}
