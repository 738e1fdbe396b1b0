# SPDX-License-Identifier: Apache-2.0
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
