// SPDX-License-Identifier: Apache-2.0
// The floor for `imprint qr` bulk PNGs: libqrencode encode + libpng 1-bit write, nothing else.
// Usage: qr_floor ADDRESSES.txt OUTDIR  (same symbol settings as the benchmark: M, 8 px, margin 4)
#include <png.h>
#include <qrencode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_png(const char *path, QRcode *code, int scale, int margin) {
  int side = (code->width + 2 * margin) * scale, row_bytes = (side + 7) / 8;
  FILE *f = fopen(path, "wb");
  if (!f) return 1;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_IHDR(png, info, side, side, 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_pHYs(png, info, 11811, 11811, PNG_RESOLUTION_METER);
  png_write_info(png, info);
  unsigned char *row = malloc(row_bytes);
  for (int y = 0; y < side; y++) {
    memset(row, 0xFF, row_bytes);
    int my = y / scale - margin;
    if (my >= 0 && my < code->width)
      for (int x = 0; x < side; x++) {
        int mx = x / scale - margin;
        if (mx >= 0 && mx < code->width && (code->data[my * code->width + mx] & 1))
          row[x >> 3] &= ~(0x80 >> (x & 7));
      }
    png_write_row(png, row);
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  free(row);
  return fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "r");
  if (!in) return 1;
  char line[512], path[1024];
  int n = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!*line) continue;
    QRcode *a = QRcode_encodeString8bit(line, 0, QR_ECLEVEL_M);
    QRcode *b = QRcode_encodeString(line, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
    QRcode *code = (b && (!a || b->width < a->width)) ? b : a;
    snprintf(path, sizeof path, "%s/%06d.png", argv[2], ++n);
    if (!code || write_png(path, code, 8, 4)) return 1;
    QRcode_free(a);
    if (b) QRcode_free(b);
  }
  return 0;
}
