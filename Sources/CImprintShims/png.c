// SPDX-License-Identifier: Apache-2.0
// PNG encoding with libpng; errors longjmp back here and become a status code.
#include "CImprintShims.h"
#include <malloc.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t *data;
  size_t len;
  size_t cap;
  int failed;
} Buffer;

typedef struct {
  jmp_buf jump;
  char *errbuf;
  size_t errbuf_len;
} ErrorContext;

static void on_error(png_structp png, png_const_charp message) {
  ErrorContext *ctx = png_get_error_ptr(png);
  if (ctx->errbuf_len > 0) {
    strncpy(ctx->errbuf, message ? message : "unknown libpng error", ctx->errbuf_len - 1);
    ctx->errbuf[ctx->errbuf_len - 1] = 0;
  }
  longjmp(ctx->jump, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
  (void)png;
  (void)message;
}

static void on_write(png_structp png, png_bytep bytes, png_size_t count) {
  Buffer *buffer = png_get_io_ptr(png);
  if (buffer->failed) return;
  if (buffer->len + count > buffer->cap) {
    size_t cap = buffer->cap ? buffer->cap * 2 : 4096;
    while (cap < buffer->len + count) cap *= 2;
    uint8_t *grown = realloc(buffer->data, cap);
    if (!grown) {
      buffer->failed = 1;
      png_error(png, "out of memory");
      return;
    }
    buffer->data = grown;
    buffer->cap = cap;
  }
  memcpy(buffer->data + buffer->len, bytes, count);
  buffer->len += count;
}

static void on_flush(png_structp png) { (void)png; }

int CImprintShims_png_encode(uint32_t width, uint32_t height, int color_type, int bit_depth,
                             const uint8_t *pixels, size_t stride, const uint8_t *palette,
                             int palette_count, uint32_t pixels_per_meter,
                             const CImprintShims_PNGText *texts, int text_count,
                             int compression_level, int filter_type, uint8_t **out,
                             size_t *out_len, char *errbuf, size_t errbuf_len) {
  ErrorContext ctx;
  ctx.errbuf = errbuf;
  ctx.errbuf_len = errbuf_len;
  Buffer buffer = {0};
  *out = NULL;
  *out_len = 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning);
  if (!png) {
    if (errbuf_len) snprintf(errbuf, errbuf_len, "png_create_write_struct failed");
    return 1;
  }
  png_infop info = png_create_info_struct(png);
  // volatile: modified between setjmp and longjmp.
  png_bytep *volatile rows = NULL;
  if (!info || setjmp(ctx.jump)) {
    png_destroy_write_struct(&png, info ? &info : NULL);
    free(buffer.data);
    free((void *)rows);
    if (!info && errbuf_len) snprintf(errbuf, errbuf_len, "png_create_info_struct failed");
    return 1;
  }
  png_set_write_fn(png, &buffer, on_write, on_flush);
  png_set_compression_level(png, compression_level);
  // One fixed filter (PNGRowFilter, chosen by the caller), never libpng's adaptive heuristic.
  if (filter_type != 0 && filter_type != 2) png_error(png, "row filter must be 0 (none) or 2 (up)");
  png_set_filter(png, PNG_FILTER_TYPE_BASE, filter_type == 2 ? PNG_FILTER_UP : PNG_FILTER_NONE);
  png_set_IHDR(png, info, width, height, bit_depth, color_type, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_color entries[256];
    if (palette_count < 1 || palette_count > 256) png_error(png, "palette must have 1-256 entries");
    for (int i = 0; i < palette_count; i++) {
      entries[i].red = palette[3 * i];
      entries[i].green = palette[3 * i + 1];
      entries[i].blue = palette[3 * i + 2];
    }
    png_set_PLTE(png, info, entries, palette_count);
  }
  if (pixels_per_meter > 0) {
    png_set_pHYs(png, info, pixels_per_meter, pixels_per_meter, PNG_RESOLUTION_METER);
  }
  if (text_count > 0) {
    png_text chunks[16];
    if (text_count > 16) png_error(png, "at most 16 text chunks");
    memset(chunks, 0, sizeof chunks);
    for (int i = 0; i < text_count; i++) {
      chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
      chunks[i].key = (png_charp)texts[i].key;
      chunks[i].text = (png_charp)texts[i].text;
    }
    png_set_text(png, info, chunks, text_count);
  }
  rows = malloc(sizeof(png_bytep) * (height ? height : 1));
  if (!rows) png_error(png, "out of memory");
  for (uint32_t y = 0; y < height; y++) rows[y] = (png_bytep)(pixels + (size_t)y * stride);
  png_set_rows(png, info, rows);
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
  png_destroy_write_struct(&png, &info);
  free((void *)rows);
  *out = buffer.data;
  *out_len = buffer.len;
  return 0;
}

void CImprintShims_free(void *pointer) { free(pointer); }

void CImprintShims_tune_malloc(int mmap_threshold, int trim_threshold) {
  mallopt(M_MMAP_THRESHOLD, mmap_threshold);
  mallopt(M_TRIM_THRESHOLD, trim_threshold);
}
