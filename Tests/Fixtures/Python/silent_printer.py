# SPDX-License-Identifier: Apache-2.0
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def handle(self):
        with open(sys.argv[1], 'a') as f:
            f.write('connected\n')
        while self.rfile.read(1):
            pass
