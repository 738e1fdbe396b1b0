# SPDX-License-Identifier: Apache-2.0
import http.server, sys, time, zlib
PHOTO = open(sys.argv[1], 'rb').read()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def send(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers: self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def stream(self, headers, chunks):
        self.send_response(200)
        for k, v in headers: self.send_header(k, v)
        self.send_header('Connection', 'close')
        self.end_headers()
        try:
            for c in chunks: self.wfile.write(c)
        except Exception: pass
        self.close_connection = True
    def do_GET(self):
        p = self.path
        sys.stderr.write(p + '\n'); sys.stderr.flush()
        if p == '/photo.jpg': return self.send(200, PHOTO, [('Content-Type', 'image/jpeg')])
        if p.startswith('/redirect?'):
            return self.send(302, b'', [('Location', p.split('?', 1)[1])])
        mb = PHOTO[:8] + b'\0' * ((1 << 20) - 8)
        if p == '/big': return self.stream([], (mb for _ in range(1024)))
        if p == '/biglength':
            return self.stream([('Content-Length', str(1 << 30))], (mb for _ in range(1024)))
        if p == '/gzip':
            z = zlib.compressobj(9, zlib.DEFLATED, 31)
            def bomb():
                for _ in range(1024): yield z.compress(mb)
                yield z.flush()
            return self.stream([('Content-Encoding', 'gzip')], bomb())
        if p == '/drip':
            def drip():
                for b in PHOTO:
                    time.sleep(0.5)
                    yield bytes([b])
            return self.stream([('Content-Length', str(len(PHOTO)))], drip())
        if p == '/truncated':
            return self.stream(
                [('Content-Length', str(len(PHOTO)))], [PHOTO[:len(PHOTO) // 2]])
        return self.send(404, b'not found')
