# SPDX-License-Identifier: Apache-2.0
import base64, hashlib, hmac, json, sys, time
key = base64.b64decode(sys.argv[1][len('whsec_'):])
for line in sys.stdin.read().split('\n'):
    id, stamp, signature, body = json.loads(line)
    signed = (id + '.' + stamp + '.').encode() + body.encode()
    mac = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    print('ok' if signature == 'v1,' + mac and abs(time.time() - int(stamp)) < 300
          else 'bad ' + signature)
