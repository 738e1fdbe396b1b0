# SPDX-License-Identifier: Apache-2.0
import sys, zlib, struct
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "signature"
at, chunks, idat, header = 8, [], b"", None
while at < len(data):
    length, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + length]
    assert len(body) == length, "chunk cut short"
    (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
    assert crc == zlib.crc32(kind + body), "CRC of " + kind.decode()
    chunks.append(kind.decode())
    if kind == b"IHDR":
        header = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT":
        assert chunks[-2] in ("IDAT", "IHDR", "PLTE", "pHYs", "tEXt"), "IDATs apart"
        idat += body
    at += 12 + length
assert chunks[0] == "IHDR" and chunks[-1] == "IEND" and at == len(data), chunks
assert "PLTE" not in chunks or chunks.index("PLTE") < chunks.index("IDAT")
width, height, depth, color, compression, method, interlace = header
assert (compression, method, interlace) == (0, 0, 0)
channels = {0: 1, 2: 3, 3: 1, 6: 4}[color]
row_bytes = (width * channels * depth + 7) // 8
raw = zlib.decompress(idat)
assert len(raw) == height * (row_bytes + 1), "stream length"
above, out = bytes(row_bytes), []
for y in range(height):
    kind, row = raw[y * (row_bytes + 1)], raw[y * (row_bytes + 1) + 1:(y + 1) * (row_bytes + 1)]
    assert kind in (0, 2), "filter type %d" % kind
    if kind == 2:
        row = bytes((a + b) & 255 for a, b in zip(row, above))
    out.append(row.hex())
    above = row
print(" ".join(chunks))
print(width, height, depth, color)
print("\n".join(out))
