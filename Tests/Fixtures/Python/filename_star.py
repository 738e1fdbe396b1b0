# SPDX-License-Identifier: Apache-2.0
# Reads back the file name of each Content-Disposition value (a JSON list in argv[1]) from its
# filename* parameter (RFC 8187: UTF-8, percent-encoded), as an independent client would; prints
# the names as a JSON list (null where a value has no such parameter). Used by
# ClientContractTests.dispositionNames.
import json
import re
import sys
from urllib.parse import unquote

out = []
for value in json.loads(sys.argv[1]):
    encoded = re.fullmatch(r'attachment; filename="[^"\\]*"; filename\*=UTF-8\x27\x27(\S+)', value)
    out.append(unquote(encoded.group(1), errors="strict") if encoded else None)
print(json.dumps(out, ensure_ascii=False))
