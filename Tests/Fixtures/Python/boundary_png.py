# SPDX-License-Identifier: Apache-2.0
# Writes to argv[1] a 64 x 64 grey PNG whose pixels, stored without compression, are every byte
# value and near-misses of the multipart boundary argv[2]: a byte changed on the way breaks the
# IDAT checksum or changes the thumbnail. Used by UploadTests.bytesUnchanged.
import struct
import sys
import zlib

path, boundary = sys.argv[1], sys.argv[2].encode()
pattern = bytes(range(256)) + b"\r\n--" + boundary[:-1] + b"\r\n--\r\n\r\n--"
data = (pattern * 20)[:64 * 64]
raw = b"".join(b"\x00" + data[row * 64:(row + 1) * 64] for row in range(64))


def chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b""))
assert b"\r\n--" + boundary[:-1] in png
open(path, "wb").write(png)
