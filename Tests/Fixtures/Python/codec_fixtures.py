# SPDX-License-Identifier: Apache-2.0
import sys
from PIL import Image
d = sys.argv[1] + '/'
m = Image.new('RGB', (64, 32), (255, 255, 255)); m.paste((255, 0, 0), (0, 0, 16, 8))
m.save(d + 'marker.png'); m.convert('P').save(d + 'marker.gif')
g = Image.new('RGB', (64, 32), (0, 200, 0)); g.save(d + 'frame2.png')
g.convert('P').save(d + 'frame2.gif')
a = Image.new('RGBA', (40, 20), (0, 0, 0, 0)); a.paste((255, 0, 0, 255), (0, 0, 20, 20))
a.save(d + 'alpha.png')
for i, c in enumerate([(255, 0, 0), (128, 128, 128), (255, 255, 255)]):
    Image.new('RGB', (83, 117), c).save(d + 't%d.tif' % (i + 1), dpi=(10, 10))
