# SPDX-License-Identifier: Apache-2.0
# Progressive JPEGs (Pillow, libjpeg's standard scan script) for the decoder's 1/8 path, written
# into the folder argv[1]: every subsampling, grey and CMYK, restart markers, sizes that are not
# multiples of 8; and two it must decode from every scan: one whose last scan is removed (its
# luma's low AC bits never come, so libjpeg smooths the blocks) and one cut short (no EOI).
import random
import sys
from PIL import Image

folder = sys.argv[1] + '/'


def picture(width, height, seed):
    """Gradients, hard-edged squares and noise: busy AC coefficients in every component."""
    rng = random.Random(seed)
    data = bytearray()
    for y in range(height):
        for x in range(width):
            square = 200 if (x // 23 + y // 17) % 2 else 40
            data += bytes(((x * 255 // width + rng.randrange(40)) & 255,
                           (y * 255 // height + rng.randrange(40)) & 255,
                           (square + rng.randrange(30)) & 255))
    return Image.frombytes('RGB', (width, height), bytes(data))


def scans(data):
    """The offsets where each scan (SOS segment and its data) starts and ends, in order."""
    spans, at = [], 2
    while at < len(data) and data[at + 1] != 0xD9:
        length = int.from_bytes(data[at + 2:at + 4], 'big')
        end = at + 2 + length
        if data[at + 1] == 0xDA:
            while not (data[end] == 0xFF and data[end + 1] not in (0x00, 0xFF)
                       and not 0xD0 <= data[end + 1] <= 0xD7):
                end += 1
            spans.append((at, end))
        at = end
    return spans


photo = picture(803, 397, 1)
photo.save(folder + 'rgb444.jpg', progressive=True, quality=95, subsampling=0)
photo.save(folder + 'rgb422.jpg', progressive=True, quality=75, subsampling=1)
photo.save(folder + 'rgb420.jpg', progressive=True, quality=40, subsampling=2)
photo.save(folder + 'rgb420-restarts.jpg', progressive=True, quality=80, subsampling=2,
           restart_marker_blocks=3)
photo.save(folder + 'rgb444-restart-rows.jpg', progressive=True, quality=85, subsampling=0,
           restart_marker_rows=1)
photo.convert('L').save(folder + 'grey.jpg', progressive=True, quality=85)
photo.convert('CMYK').save(folder + 'cmyk.jpg', progressive=True, quality=90)
picture(64, 9, 2).save(folder + 'small.jpg', progressive=True, quality=90, subsampling=0)

whole = open(folder + 'rgb444.jpg', 'rb').read()
start, end = scans(whole)[-1]
open(folder + 'incomplete.jpg', 'wb').write(whole[:start] + whole[end:])
open(folder + 'cut.jpg', 'wb').write(whole[:len(whole) * 2 // 3])
