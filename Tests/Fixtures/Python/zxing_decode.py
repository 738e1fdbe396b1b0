# SPDX-License-Identifier: Apache-2.0
import sys, zxingcpp
from PIL import Image
found = zxingcpp.read_barcodes(Image.open(sys.argv[1]).convert("L"))
if not found: raise SystemExit(4)
extra = found[0].extra if isinstance(found[0].extra, dict) else {}
sys.stdout.write("\x00".join([found[0].text, str(found[0].ec_level), str(extra.get("Version", ""))]))
