# SPDX-License-Identifier: Apache-2.0
import http.server, json, os, sys, time
LOG = sys.argv[1]
GATE = LOG + '.closed'
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
                                  'id': self.headers.get('Webhook-Id', ''),
                                  'timestamp': self.headers.get('Webhook-Timestamp', ''),
                                  'signature': self.headers.get('Webhook-Signature', ''),
                                  'received': repr(time.time()),
                                  'body': body.decode('utf-8', 'replace')}) + '\n')
        code = 204
        if self.path == '/flaky' and seen[self.path] == 1: code = 500
        if self.path == '/down': code = 503
        if self.path == '/gated' and os.path.exists(GATE):
            # Held a while before refused: a stop begun after the first call was answered
            # comes well before the last of the server's three calls is.
            time.sleep(5)
            code = 503
        if self.path.startswith('/moved-'):
            # /moved-NNN answers NNN, with a location (/hook) unless it ends in -bare.
            code = int(self.path.split('-')[1])
        self.send_response(code)
        if self.path.startswith('/moved-') and not self.path.endswith('-bare'):
            self.send_header('Location', '/hook')
        self.send_header('Content-Length', '0')
        self.end_headers()
