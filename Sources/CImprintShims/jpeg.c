// SPDX-License-Identifier: Apache-2.0
// JPEG decoding with libjpeg-turbo. The default error manager calls exit() and prints to stderr:
// both are replaced, errors longjmp back here, messages are copied into the caller's buffer.
#include "CImprintShims.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

typedef struct {
  struct jpeg_error_mgr base;
  jmp_buf jump;
  int strict;
  char *errbuf;
  size_t errbuf_len;
} ErrorManager;

static void copy_message(j_common_ptr cinfo) {
  ErrorManager *err = (ErrorManager *)cinfo->err;
  if (err->errbuf_len == 0) return;
  char message[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, message);
  strncpy(err->errbuf, message, err->errbuf_len - 1);
  err->errbuf[err->errbuf_len - 1] = 0;
}

static void on_error_exit(j_common_ptr cinfo) {
  copy_message(cinfo);
  longjmp(((ErrorManager *)cinfo->err)->jump, 1);
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_emit_message(j_common_ptr cinfo, int level) {
  ErrorManager *err = (ErrorManager *)cinfo->err;
  if (level < 0) {  // a warning: corrupt or truncated data
    err->base.num_warnings++;
    if (err->strict) {
      copy_message(cinfo);
      longjmp(err->jump, 1);
    }
  }
}

static void install(ErrorManager *err, int strict, char *errbuf, size_t errbuf_len) {
  jpeg_std_error(&err->base);
  err->base.error_exit = on_error_exit;
  err->base.output_message = on_output_message;
  err->base.emit_message = on_emit_message;
  err->strict = strict;
  err->errbuf = errbuf;
  err->errbuf_len = errbuf_len;
  if (errbuf_len) errbuf[0] = 0;
}

int CImprintShims_jpeg_info(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height,
                            int *components, int *color_space, int *progressive,
                            char *errbuf, size_t errbuf_len) {
  struct jpeg_decompress_struct cinfo;
  ErrorManager err;
  install(&err, 0, errbuf, errbuf_len);
  cinfo.err = &err.base;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)len);
  jpeg_read_header(&cinfo, TRUE);
  *width = cinfo.image_width;
  *height = cinfo.image_height;
  *components = cinfo.num_components;
  *color_space = (int)cinfo.jpeg_color_space;
  *progressive = cinfo.progressive_mode ? 1 : 0;
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

static inline uint8_t clamp_mul(int a, int b) { return (uint8_t)((a * b + 127) / 255); }

int CImprintShims_jpeg_decode(const uint8_t *data, size_t len, int layout, int scale_denom,
                              int strict, uint8_t *pixels, size_t stride, size_t capacity,
                              uint32_t *out_width, uint32_t *out_height,
                              char *errbuf, size_t errbuf_len) {
  struct jpeg_decompress_struct cinfo;
  ErrorManager err;
  install(&err, strict, errbuf, errbuf_len);
  cinfo.err = &err.base;
  // volatile: read after a longjmp.
  JSAMPARRAY volatile scratch = NULL;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)len);
  jpeg_read_header(&cinfo, TRUE);
  cinfo.scale_num = 1;
  cinfo.scale_denom = (unsigned)(scale_denom == 2 || scale_denom == 4 || scale_denom == 8 ? scale_denom : 1);
  int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  int inverted = cmyk && cinfo.saw_Adobe_marker;
  if (cmyk) {
    cinfo.out_color_space = JCS_CMYK;
  } else if (layout == CImprintShims_JPEG_GRAY) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else {
    cinfo.out_color_space = JCS_EXT_BGRX;
  }
  jpeg_start_decompress(&cinfo);
  uint32_t w = cinfo.output_width, h = cinfo.output_height;
  size_t needed_stride = (size_t)w * (layout == CImprintShims_JPEG_GRAY ? 1 : 4);
  if (stride < needed_stride || (size_t)h * stride > capacity) {
    if (errbuf_len) snprintf(errbuf, errbuf_len, "output buffer too small for %ux%u", w, h);
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  if (cmyk) {
    scratch = (*cinfo.mem->alloc_sarray)((j_common_ptr)&cinfo, JPOOL_IMAGE, w * 4, 1);
  }
  while (cinfo.output_scanline < h) {
    uint8_t *row = pixels + (size_t)cinfo.output_scanline * stride;
    if (!cmyk) {
      JSAMPROW target = row;
      jpeg_read_scanlines(&cinfo, &target, 1);
      continue;
    }
    jpeg_read_scanlines(&cinfo, scratch, 1);
    const uint8_t *src = scratch[0];
    for (uint32_t x = 0; x < w; x++) {
      int c = src[4 * x], m = src[4 * x + 1], yy = src[4 * x + 2], k = src[4 * x + 3];
      if (!inverted) {
        c = 255 - c;
        m = 255 - m;
        yy = 255 - yy;
        k = 255 - k;
      }
      // Adobe-inverted values: 255 means no ink, so each channel is already (1 - ink).
      uint8_t r = clamp_mul(c, k), g = clamp_mul(m, k), b = clamp_mul(yy, k);
      if (layout == CImprintShims_JPEG_GRAY) {
        row[x] = (uint8_t)((r * 299 + g * 587 + b * 114 + 500) / 1000);
      } else {
        row[4 * x] = b;
        row[4 * x + 1] = g;
        row[4 * x + 2] = r;
        row[4 * x + 3] = 255;
      }
    }
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  *out_width = w;
  *out_height = h;
  return 0;
}

int CImprintShims_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height,
                              size_t stride, int quality, uint8_t **out, size_t *out_len,
                              char *errbuf, size_t errbuf_len) {
  struct jpeg_compress_struct cinfo;
  ErrorManager err;
  install(&err, 0, errbuf, errbuf_len);
  cinfo.err = &err.base;
  // volatile: read after a longjmp.
  unsigned char *volatile buffer = NULL;
  unsigned long size = 0;
  *out = NULL;
  *out_len = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    free(buffer);
    return 1;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, (unsigned char **)&buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = 4;
  cinfo.in_color_space = JCS_EXT_BGRX;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < height) {
    JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * stride);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  *out = buffer;
  *out_len = size;
  return 0;
}
