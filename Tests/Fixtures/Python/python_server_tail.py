# SPDX-License-Identifier: Apache-2.0
import http.server, socketserver
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(('HOST', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
