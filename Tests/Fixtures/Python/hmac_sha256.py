# SPDX-License-Identifier: Apache-2.0
import hmac, hashlib, sys
for line in sys.stdin.read().split('\n'):
    key, message = (bytes.fromhex(part) for part in line.split(' '))
    print(hmac.new(key, message, hashlib.sha256).hexdigest())
