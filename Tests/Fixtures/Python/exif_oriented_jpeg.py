# SPDX-License-Identifier: Apache-2.0
import sys
from PIL import Image
m = Image.new('RGB', (64, 32), (255, 255, 255)); m.paste((255, 0, 0), (0, 0, 16, 8))
e = Image.Exif(); e[0x0112] = 6
m.save(sys.argv[1], quality=95, exif=e.tobytes())
