# SPDX-License-Identifier: Apache-2.0
import json, os, signal, socket, sys, time
pid, port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
body = open(path, "rb").read()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /v1/inspect?name=mixed.pdf HTTP/1.1\r\nHost: x\r\n"
          b"Content-Type: application/pdf\r\nExpect: 100-continue\r\n"
          b"Content-Length: %d\r\n\r\n" % len(body))
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(4096)
assert got.startswith(b"HTTP/1.1 100"), got
os.kill(pid, signal.SIGTERM)
# The server's stop began once a new connection is refused: waited for (up to a minute,
# however loaded the machine), so that the body is sent while it drains. A count of tries
# was not enough under load: the body went before the stop began, and the answer came
# without Connection: close.
refused = False
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        refused = True
        break
    except OSError:
        pass  # a connect that timed out under load: try again
    time.sleep(0.005)
s.sendall(body)
answer = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    answer += chunk
head, _, rest = answer.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
print(json.dumps({"status": int(lines[0].split()[1]), "refused": refused,
                  "connection": headers.get("connection"), "body": json.loads(rest)}))
