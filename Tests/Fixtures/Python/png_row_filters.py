# SPDX-License-Identifier: Apache-2.0
import sys, zlib, struct
from PIL import Image
data = open(sys.argv[1], "rb").read()
at, idat, width, height, channels = 8, b"", 0, 0, 1
while at < len(data):
    length, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + length]
    if kind == b"IHDR":
        width, height, depth, color = struct.unpack(">IIBB", body[:10])
        channels = {0: 1, 2: 3}[color] * depth // 8
    if kind == b"IDAT":
        idat += body
    at += 12 + length
raw = zlib.decompress(idat)
stride = 1 + width * channels
filters = sorted({raw[row * stride] for row in range(height)})
image = Image.open(sys.argv[1])
print(filters, image.mode, list(image.convert("RGB").getdata())[:3])
