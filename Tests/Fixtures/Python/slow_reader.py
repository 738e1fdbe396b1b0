# SPDX-License-Identifier: Apache-2.0
import json, os, socket, sys, time, urllib.request
port, path, big, results = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
s.settimeout(20)
s.connect(("127.0.0.1", port))
s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(16384)
head, body = got.split(b"\r\n\r\n", 1)
status = int(head.split(b" ")[1])
length = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
          if l.lower().startswith(b"content-length:")][0]
received = len(body)
while received < 2_000_000:
    chunk = s.recv(16384)
    if not chunk:
        break
    received += len(chunk)
    time.sleep(0.002)
other = urllib.request.urlopen(f"http://127.0.0.1:{port}{results}", timeout=20).read()
on_disk = open(os.path.join(os.path.dirname(big), "results.jsonl"), "rb").read()
os.truncate(big, 1_000_000)
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            ended = "closed"
            break
        received += len(chunk)
except socket.timeout:
    ended = "timeout"
except ConnectionResetError:
    ended = "reset"
print(json.dumps({"status": status, "length": length, "received": received,
                  "ended": ended, "otherSame": other == on_disk}))
