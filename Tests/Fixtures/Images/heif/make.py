# SPDX-License-Identifier: Apache-2.0
# Makes orientation-1.heic ... orientation-8.heic: the 64 x 32 marker picture (white, a red
# 16 x 8 block top-left) as stored pixels, with EXIF Orientation N written by pillow-heif as HEIF
# transformations (irot, imir) and kept in the EXIF block too, as iPhones do. Debian 12's
# heif-enc (libheif 1.15) writes no transformations, hence pillow-heif (PyPI), run once:
#   pip install pillow-heif && python3 make.py
# The tests check the files with Debian's heif-info and heif-convert, not with this script.
from PIL import Image
import pillow_heif

pillow_heif.register_heif_opener()
marker = Image.new("RGB", (64, 32), (255, 255, 255))
marker.paste((255, 0, 0), (0, 0, 16, 8))
for orientation in range(1, 9):
    exif = Image.Exif()
    exif[0x0112] = orientation
    marker.save(f"orientation-{orientation}.heic", quality=90, exif=exif.tobytes())

# lying-size.heic (32 430 bytes): a header that lies about the size, as an attacker writes one. A
# plain white 11 900 x 11 900 picture saved by pillow-heif (quality 10), whose `ispe` property
# (byte 318: 'ispe', version/flags, then width and height as 32-bit big-endian) was then set to
# 1000 x 1000. heif-info reports 1000 x 1000; libheif decodes the stream's 11 900 x 11 900.
