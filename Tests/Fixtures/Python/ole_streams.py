# SPDX-License-Identifier: Apache-2.0
import json, sys, olefile
f = olefile.OleFileIO(sys.argv[1])
print(json.dumps({'/'.join(e): f.openstream(e).read(17).decode('latin-1')
                  for e in f.listdir()}))
