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

// A progressive JPEG decoded at an eighth of its size, from its DC scans.
//
// At 1/8 libjpeg inverse-transforms a component with an 8x8 block's 1x1 corner, which reads the
// block's DC coefficient alone, yet a progressive file's AC scans (three quarters of a photo's
// bytes, in the standard scan script) are all Huffman-decoded first. A copy of the file without
// the AC scans of those components is decoded instead: the same coefficients where they are
// read, so the same pixels, provided libjpeg's block smoothing (which guesses missing AC
// coefficients and, when none was seen, moves the DC) stays off, and would have been off for the
// whole file too: every component's first ten coefficients (the ones smoothing looks at) end at
// their last bit. A component drawn larger (the chroma of a subsampled file: 2x2 at 1/8, which
// reads three AC coefficients) keeps its scans. Anything this reading does not expect gives no
// copy: the file is decoded as it is.

/// The index in `cinfo->comp_info` of the component numbered `id`, or -1.
static int component_index(j_decompress_ptr cinfo, int id) {
  for (int ci = 0; ci < cinfo->num_components; ci++) {
    if (cinfo->comp_info[ci].component_id == id) return ci;
  }
  return -1;
}

/// Where the entropy-coded data starting at `at` ends: the offset of the next marker (an 0xFF
/// not followed by 0x00, a restart marker or another 0xFF), or `len` when there is none.
static size_t entropy_end(const uint8_t *data, size_t len, size_t at) {
  while (at + 1 < len) {
    const uint8_t *ff = memchr(data + at, 0xFF, len - 1 - at);
    if (!ff) return len;
    at = (size_t)(ff - data);
    uint8_t next = data[at + 1];
    if (next == 0x00 || (next >= 0xD0 && next <= 0xD7) || next == 0xFF) {
      at += next == 0xFF ? 1 : 2;
      continue;
    }
    return at;
  }
  return len;
}

/// A malloc'd copy of the progressive JPEG in `data` without the AC scans of the components
/// `cinfo` (its header read, its output dimensions calculated) draws 1x1, and its length; NULL
/// when there is nothing to drop or anything is unexpected.
static uint8_t *dc_scans(const uint8_t *data, size_t len, j_decompress_ptr cinfo,
                         size_t *out_len) {
  enum { SMOOTHED = 10 };  // libjpeg-turbo's SAVED_COEFS: coefficients 0-9
  int components = cinfo->num_components;
  if (components < 1 || components > 4 || len < 4 || data[0] != 0xFF || data[1] != 0xD8) {
    return NULL;
  }
  int drop_ac[4] = {0}, final_bits[4][SMOOTHED] = {{0}};
  for (int ci = 0; ci < components; ci++) {
    drop_ac[ci] = cinfo->comp_info[ci].DCT_scaled_size == 1;
  }
  uint8_t *out = malloc(len);
  if (!out) return NULL;
  size_t at = 2, kept = 2, dropped = 0;
  memcpy(out, data, 2);
  for (;;) {
    if (at + 1 >= len || data[at] != 0xFF) break;
    uint8_t marker = data[at + 1];
    if (marker == 0xFF) {  // a fill byte
      at++;
      continue;
    }
    if (marker == 0xD9) {  // EOI: the copy is whole
      int complete = dropped > 0;
      for (int ci = 0; ci < components; ci++) {
        for (int k = 0; k < SMOOTHED; k++) complete &= final_bits[ci][k];
      }
      if (!complete) break;
      out[kept++] = 0xFF;
      out[kept++] = 0xD9;
      *out_len = kept;
      return out;
    }
    // Every other marker here has a length; only progressive Huffman frames are read (SOF2),
    // and no DNL, restart or start of image between segments.
    if (marker == 0x00 || marker == 0x01 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) ||
        marker == 0xDC || (marker >= 0xC0 && marker <= 0xCF && marker != 0xC2 && marker != 0xC4) ||
        at + 4 > len) {
      break;
    }
    size_t length = ((size_t)data[at + 2] << 8) | data[at + 3];
    if (length < 2 || at + 2 + length > len) break;
    size_t end = at + 2 + length;
    int keep = 1;
    if (marker == 0xDA) {
      if (length < 6) break;  // the smallest scan header: one component
      const uint8_t *scan = data + at + 4;
      int count = scan[0];
      if (count < 1 || count > components || length != (size_t)(6 + 2 * count)) break;
      int ss = scan[1 + 2 * count], se = scan[2 + 2 * count], al = scan[3 + 2 * count] & 0x0F;
      if (ss > se || se > 63 || (ss == 0) != (se == 0)) break;
      int indexes[4], known = 1;
      for (int i = 0; i < count; i++) {
        indexes[i] = component_index(cinfo, scan[1 + 2 * i]);
        known &= indexes[i] >= 0;
      }
      if (!known || (ss > 0 && count != 1)) break;
      // As libjpeg's coef_bits: the bit a coefficient's last scan ended at.
      for (int i = 0; i < count; i++) {
        for (int k = ss; k <= se && k < SMOOTHED; k++) final_bits[indexes[i]][k] = al == 0;
      }
      keep = ss == 0 || !drop_ac[indexes[0]];
      end = entropy_end(data, len, end);
      if (end >= len) break;
      if (!keep) dropped++;
    }
    if (keep) {
      memcpy(out + kept, data + at, end - at);
      kept += end - at;
    }
    at = end;
  }
  free(out);
  return NULL;
}

/// Sets the scale and output colour space of a decode whose header was read.
static void configure(j_decompress_ptr cinfo, int layout, int scale_denom) {
  cinfo->scale_num = 1;
  cinfo->scale_denom =
      (unsigned)(scale_denom == 2 || scale_denom == 4 || scale_denom == 8 ? scale_denom : 1);
  int cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
  if (cmyk) {
    cinfo->out_color_space = JCS_CMYK;
  } else if (layout == CImprintShims_JPEG_GRAY) {
    cinfo->out_color_space = JCS_GRAYSCALE;
  } else {
    cinfo->out_color_space = JCS_EXT_BGRX;
  }
}

size_t CImprintShims_jpeg_dc_scans_size(const uint8_t *data, size_t len) {
  struct jpeg_decompress_struct cinfo;
  ErrorManager err;
  install(&err, 0, NULL, 0);
  cinfo.err = &err.base;
  uint8_t *volatile copy = NULL;
  size_t size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    free(copy);
    return 0;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)len);
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.progressive_mode) {
    configure(&cinfo, CImprintShims_JPEG_BGRX, 8);  // as the decode at 1/8 sets it
    jpeg_calc_output_dimensions(&cinfo);
    copy = dc_scans(data, len, &cinfo, &size);
  }
  jpeg_destroy_decompress(&cinfo);
  size_t result = copy ? size : 0;
  free(copy);
  return result;
}

int CImprintShims_jpeg_decode(const uint8_t *data, size_t len, int layout, int scale_denom,
                              int flags, uint8_t *pixels, size_t stride, size_t capacity,
                              uint32_t *out_width, uint32_t *out_height,
                              char *errbuf, size_t errbuf_len) {
  struct jpeg_decompress_struct cinfo;
  ErrorManager err;
  install(&err, flags & CImprintShims_JPEG_STRICT, errbuf, errbuf_len);
  cinfo.err = &err.base;
  // volatile: read after a longjmp.
  JSAMPARRAY volatile scratch = NULL;
  uint8_t *volatile reduced = NULL;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    free(reduced);
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)len);
  jpeg_read_header(&cinfo, TRUE);
  configure(&cinfo, layout, scale_denom);
  if (cinfo.progressive_mode && cinfo.scale_denom == 8 && !(flags & CImprintShims_JPEG_EVERY_SCAN)) {
    jpeg_calc_output_dimensions(&cinfo);
    size_t reduced_len = 0;
    reduced = dc_scans(data, len, &cinfo, &reduced_len);
    if (reduced) {  // the same decode, of the copy (see dc_scans)
      jpeg_abort_decompress(&cinfo);
      jpeg_mem_src(&cinfo, reduced, (unsigned long)reduced_len);
      jpeg_read_header(&cinfo, TRUE);
      configure(&cinfo, layout, scale_denom);
      cinfo.do_block_smoothing = FALSE;
    }
  }
  int cmyk = cinfo.out_color_space == JCS_CMYK;
  int inverted = cmyk && cinfo.saw_Adobe_marker;
  jpeg_start_decompress(&cinfo);
  uint32_t w = cinfo.output_width, h = cinfo.output_height;
  size_t needed_stride = (size_t)w * (layout == CImprintShims_JPEG_GRAY ? 1 : 4);
  if (stride < needed_stride || (size_t)h * stride > capacity) {
    if (errbuf_len) snprintf(errbuf, errbuf_len, "output buffer too small for %ux%u", w, h);
    jpeg_destroy_decompress(&cinfo);
    free(reduced);
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
  free(reduced);
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
