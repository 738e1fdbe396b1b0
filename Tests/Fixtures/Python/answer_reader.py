# SPDX-License-Identifier: Apache-2.0
import json, select, socket, sys
def read_answer(s):
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    code = json.loads(body)["error"]["code"] if body.startswith(b"{") else None
    return {"status": lines[0], "code": code, "retryAfter": "Retry-After: 1" in lines}

