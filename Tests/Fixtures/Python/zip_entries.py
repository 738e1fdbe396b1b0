# SPDX-License-Identifier: Apache-2.0
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for name, data, stored in json.loads(sys.argv[2]):
        z.writestr(name, data, zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
