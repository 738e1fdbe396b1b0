# SPDX-License-Identifier: Apache-2.0
import sys, json
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
px = im.load()
boxes = {"red": None, "blue": None}
inked = 0
for y in range(h):
    for x in range(w):
        r, g, b = px[x, y]
        if (r, g, b) != (255, 255, 255):
            inked += 1
        name = "red" if r > 200 and g < 80 and b < 80 else "blue" if b > 200 and r < 80 and g < 80 else None
        if name:
            old = boxes[name] or [x, y, x + 1, y + 1]
            boxes[name] = [min(old[0], x), min(old[1], y), max(old[2], x + 1), max(old[3], y + 1)]
print(json.dumps({"size": [w, h], "red": boxes["red"], "blue": boxes["blue"], "inked": inked}))
