// SPDX-License-Identifier: Apache-2.0
// PNG encoding in two steps around the compressor: CImprintShims_png_filter makes the stream
// of filtered rows (converting cairo's pixels as it goes), ImprintPDF's zlib, libdeflate or
// runs_deflate.c deflates it (raw, no checksum), and CImprintShims_png_frame frames it: the
// zlib header, the deflated data and the rows' Adler-32 (libdeflate's), in PNG's chunks.
// (runs_deflate.c also deflates cairo's pixels directly, converting a window of rows at a
// time: the filtered rows are then never all made.)
//
// Why not libpng: libpng drives zlib itself, row by row, and zlib computes the stream's Adler-32
// as it reads (scalar code: a sixth of the compression's time for a 300-dpi card, where
// libdeflate's vector Adler-32 takes a tenth of that); libpng offers no way to deflate without
// it or to hand over rows it has not copied. The framing is small and fixed: signature, IHDR,
// PLTE (palette images), pHYs, tEXt, IDAT, IEND, each chunk's length, type, data and CRC-32
// (W3C PNG, sections 5 and 11; the zlib stream RFC 1950). Tests read every format we write
// back with libpng (through cairo) and with a Python decoder of their own.
#include "CImprintShims.h"
#include "rows.h"
#include <libdeflate.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/// The largest IDAT chunk written; a longer stream is split over several (PNG allows 2^31 - 1).
#define IDAT_CHUNK_MAX ((size_t)1 << 20)

static int fail(char *errbuf, size_t errbuf_len, const char *format, ...) {
  if (errbuf_len > 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(errbuf, errbuf_len, format, args);
    va_end(args);
  }
  return 1;
}

static void put32(uint8_t *at, uint32_t value) {
  at[0] = (uint8_t)(value >> 24);
  at[1] = (uint8_t)(value >> 16);
  at[2] = (uint8_t)(value >> 8);
  at[3] = (uint8_t)value;
}

/// Writes one chunk at `at` (length, type, data, CRC over type and data); returns the bytes
/// written (12 + length). The caller sized the buffer; `data` NULL: the data is already in place
/// at `at + 8`.
static size_t put_chunk(uint8_t *at, const char type[4], const uint8_t *data, size_t length) {
  put32(at, (uint32_t)length);
  memcpy(at + 4, type, 4);
  if (data != NULL && length > 0) memcpy(at + 8, data, length);
  put32(at + 8 + length, libdeflate_crc32(0, at + 4, 4 + length));
  return 12 + length;
}

/// A tEXt keyword PNG accepts (section 11.3.4.3): 1-79 bytes of Latin-1 printable characters
/// (32-126, 161-255), no leading, trailing or consecutive spaces.
static int valid_keyword(const char *key) {
  size_t length = strlen(key);
  if (length < 1 || length > 79) return 0;
  if (key[0] == ' ' || key[length - 1] == ' ') return 0;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)key[i];
    if (!((c >= 32 && c <= 126) || c >= 161)) return 0;
    if (c == ' ' && key[i + 1] == ' ') return 0;
  }
  return 1;
}

/// Writes one row's filtered bytes after its filter byte. `row` is the row in PNG's layout,
/// `above` the one before it (NULL for the first row: Up then leaves the bytes as they are).
static void filter_row(uint8_t *out, const uint8_t *row, const uint8_t *above, size_t bytes,
                       int filter_type) {
  out[0] = (uint8_t)filter_type;
  if (filter_type == 0 || above == NULL) {
    memcpy(out + 1, row, bytes);
    return;
  }
  for (size_t i = 0; i < bytes; i++) out[1 + i] = (uint8_t)(row[i] - above[i]);
}

#if defined(__x86_64__) && defined(__clang__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
typedef uint8_t bytes16 __attribute__((vector_size(16)));

/// The pixels of an xRGB row from `x` on that fill whole groups of four, as R G B, by SSSE3's
/// byte shuffle (a word's bytes in memory are B G R x); returns where it stopped. About four
/// times sooner than a pixel at a time, which the compiler leaves scalar.
__attribute__((target("ssse3"))) static uint32_t convert_rgb_ssse3(uint8_t *out,
                                                                    const uint8_t *source,
                                                                    uint32_t width) {
  uint32_t x = 0;
  for (; x + 4 <= width; x += 4) {
    bytes16 in;
    memcpy(&in, source + 4 * (size_t)x, 16);
    bytes16 rgb = __builtin_shufflevector(in, in, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 0, 0, 0, 0);
    memcpy(out + 3 * (size_t)x, &rgb, 12);
  }
  return x;
}
#endif

void CImprintShims_convert_row(uint8_t *out, const uint8_t *source, uint32_t width,
                               int source_kind) {
  const uint32_t *words = (const uint32_t *)(const void *)source;
  if (source_kind == CImprintShims_PNG_XRGB_TO_GRAY) {
    for (uint32_t x = 0; x < width; x++) out[x] = (uint8_t)words[x];
    return;
  }
  uint32_t x = 0;
#if defined(__x86_64__) && defined(__clang__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (__builtin_cpu_supports("ssse3")) x = convert_rgb_ssse3(out, source, width);
#endif
  for (; x < width; x++) {
    uint32_t pixel = words[x];
    out[3 * (size_t)x] = (uint8_t)(pixel >> 16);
    out[3 * (size_t)x + 1] = (uint8_t)(pixel >> 8);
    out[3 * (size_t)x + 2] = (uint8_t)pixel;
  }
}

/// Checks the image's size and layout; returns PNG's bytes a row, or 0 with errbuf set.
static size_t check_layout(uint32_t width, uint32_t height, int color_type, int bit_depth,
                           char *errbuf, size_t errbuf_len) {
  if (width < 1 || height < 1 || width > 0x7FFFFFFFu || height > 0x7FFFFFFFu) {
    fail(errbuf, errbuf_len, "image size %u x %u is outside PNG's 1-2147483647 a side", width,
         height);
    return 0;
  }
  int channels;
  switch (color_type) {
  case 0: channels = 1; break;
  case 2: channels = 3; break;
  case 3: channels = 1; break;
  case 6: channels = 4; break;
  default: fail(errbuf, errbuf_len, "colour type %d is not 0, 2, 3 or 6", color_type); return 0;
  }
  // The combinations PNGPixelFormat names: 8 bits a sample, or 1-bit grey and palette.
  if (!(bit_depth == 8 || (bit_depth == 1 && (color_type == 0 || color_type == 3)))) {
    fail(errbuf, errbuf_len, "bit depth %d with colour type %d", bit_depth, color_type);
    return 0;
  }
  return ((size_t)width * (size_t)channels * (size_t)bit_depth + 7) / 8;
}

int CImprintShims_png_filter(uint32_t width, uint32_t height, int color_type, int bit_depth,
                             const uint8_t *pixels, size_t stride, int source_kind,
                             int filter_type, uint8_t **out, size_t *out_len, char *errbuf,
                             size_t errbuf_len) {
  *out = NULL;
  *out_len = 0;
  size_t row_bytes = check_layout(width, height, color_type, bit_depth, errbuf, errbuf_len);
  if (row_bytes == 0) return 1;
  if (filter_type != 0 && filter_type != 2) {
    return fail(errbuf, errbuf_len, "row filter must be 0 (none) or 2 (up), not %d", filter_type);
  }
  // The source's rows: as they are, or 32-bit xRGB words.
  if (source_kind == CImprintShims_PNG_ROWS) {
    if (stride < row_bytes) return fail(errbuf, errbuf_len, "rows are shorter than the width");
  } else if (source_kind == CImprintShims_PNG_XRGB_TO_RGB ||
             source_kind == CImprintShims_PNG_XRGB_TO_GRAY) {
    int matches = source_kind == CImprintShims_PNG_XRGB_TO_RGB ? color_type == 2 : color_type == 0;
    if (!matches || bit_depth != 8 || stride < (size_t)width * 4) {
      return fail(errbuf, errbuf_len, "xRGB rows do not fit colour type %d", color_type);
    }
  } else {
    return fail(errbuf, errbuf_len, "unknown source layout %d", source_kind);
  }
  // A filter byte and row_bytes a row. 64-bit size_t: width and height below 2^31 and row_bytes
  // below 2^33 cannot overflow the product.
  size_t filtered_len = (row_bytes + 1) * (size_t)height;
  uint8_t *filtered = malloc(filtered_len);
  if (!filtered) return fail(errbuf, errbuf_len, "out of memory for %zu bytes", filtered_len);
  // Converted rows filtered Up need the row above in PNG's layout: two rows, taken in turn.
  uint8_t *converted = NULL;
  if (source_kind != CImprintShims_PNG_ROWS && filter_type != 0) {
    converted = malloc(2 * row_bytes);
    if (!converted) {
      free(filtered);
      return fail(errbuf, errbuf_len, "out of memory for %zu bytes", 2 * row_bytes);
    }
  }
  for (uint32_t y = 0; y < height; y++) {
    const uint8_t *source = pixels + (size_t)y * stride;
    uint8_t *out_row = filtered + (size_t)y * (row_bytes + 1);
    if (source_kind != CImprintShims_PNG_ROWS && filter_type == 0) {
      // Unfiltered: converted straight into the stream.
      out_row[0] = 0;
      CImprintShims_convert_row(out_row + 1, source, width, source_kind);
      continue;
    }
    const uint8_t *row = source;
    const uint8_t *above = y > 0 ? pixels + (size_t)(y - 1) * stride : NULL;
    if (converted) {
      uint8_t *current = converted + (y % 2) * row_bytes;
      CImprintShims_convert_row(current, source, width, source_kind);
      row = current;
      above = y > 0 ? converted + ((y + 1) % 2) * row_bytes : NULL;
    }
    filter_row(out_row, row, above, row_bytes, filter_type);
  }
  free(converted);
  *out = filtered;
  *out_len = filtered_len;
  return 0;
}

int CImprintShims_png_frame(uint32_t width, uint32_t height, int color_type, int bit_depth,
                            const uint8_t *palette, int palette_count, uint32_t pixels_per_meter,
                            const CImprintShims_PNGText *texts, int text_count,
                            size_t filtered_len, uint32_t adler, const uint8_t *deflated,
                            size_t deflated_len, int compression_level, uint8_t **out,
                            size_t *out_len, char *errbuf, size_t errbuf_len) {
  *out = NULL;
  *out_len = 0;
  size_t row_bytes = check_layout(width, height, color_type, bit_depth, errbuf, errbuf_len);
  if (row_bytes == 0) return 1;
  if (filtered_len != (row_bytes + 1) * (size_t)height) {
    return fail(errbuf, errbuf_len, "%zu filtered bytes for %u rows of %zu", filtered_len, height,
                row_bytes + 1);
  }
  if (color_type == 3 && (palette_count < 1 || palette_count > 256 || palette == NULL)) {
    return fail(errbuf, errbuf_len, "palette must have 1-256 entries, not %d", palette_count);
  }
  if (text_count < 0 || (text_count > 0 && texts == NULL)) {
    return fail(errbuf, errbuf_len, "bad text chunk count %d", text_count);
  }
  size_t text_bytes = 0;
  for (int i = 0; i < text_count; i++) {
    if (!texts[i].key || !texts[i].text || !valid_keyword(texts[i].key)) {
      return fail(errbuf, errbuf_len,
                  "text chunk %d has no valid keyword (1-79 Latin-1 characters)", i);
    }
    text_bytes += 12 + strlen(texts[i].key) + 1 + strlen(texts[i].text);
  }
  // The zlib stream: 2 header bytes, the raw deflate data, the Adler-32 of the filtered rows.
  size_t stream_len = 2 + deflated_len + 4;
  size_t idat_chunks = stream_len / IDAT_CHUNK_MAX + 1;
  size_t total = 8 + 25 + (color_type == 3 ? 12 + 3 * (size_t)palette_count : 0) +
                 (pixels_per_meter > 0 ? 21 : 0) + text_bytes + 12 * idat_chunks + stream_len +
                 12;
  uint8_t *file = malloc(total);
  if (!file) return fail(errbuf, errbuf_len, "out of memory for %zu bytes", total);

  size_t at = 0;
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  memcpy(file, signature, 8);
  at += 8;
  uint8_t header[13];
  put32(header, width);
  put32(header + 4, height);
  header[8] = (uint8_t)bit_depth;
  header[9] = (uint8_t)color_type;
  header[10] = 0;  // compression: deflate
  header[11] = 0;  // filter method: adaptive (the five filter types)
  header[12] = 0;  // no interlace
  at += put_chunk(file + at, "IHDR", header, sizeof header);
  if (color_type == 3) at += put_chunk(file + at, "PLTE", palette, 3 * (size_t)palette_count);
  if (pixels_per_meter > 0) {
    uint8_t physical[9];
    put32(physical, pixels_per_meter);
    put32(physical + 4, pixels_per_meter);
    physical[8] = 1;  // unit: metre
    at += put_chunk(file + at, "pHYs", physical, sizeof physical);
  }
  for (int i = 0; i < text_count; i++) {
    size_t key_len = strlen(texts[i].key), text_len = strlen(texts[i].text);
    // keyword, NUL, text: built in place after the chunk's length and type.
    uint8_t *data = file + at + 8;
    memcpy(data, texts[i].key, key_len);
    data[key_len] = 0;
    memcpy(data + key_len + 1, texts[i].text, text_len);
    at += put_chunk(file + at, "tEXt", NULL, key_len + 1 + text_len);
  }
  // The zlib header (RFC 1950): deflate with a 32 KiB window, then FLEVEL as zlib writes it for
  // the level, and the check bits making the 16-bit value a multiple of 31.
  int flevel = compression_level < 2 ? 0 : compression_level < 6 ? 1 : compression_level == 6 ? 2 : 3;
  uint8_t zlib_header[2] = {0x78, (uint8_t)(flevel << 6)};
  zlib_header[1] |= (uint8_t)((31 - (zlib_header[0] * 256 + zlib_header[1]) % 31) % 31);
  uint8_t checksum[4];
  put32(checksum, adler);
  // The IDAT chunks: the stream's three parts, cut into pieces of at most IDAT_CHUNK_MAX.
  const uint8_t *parts[3] = {zlib_header, deflated, checksum};
  size_t lengths[3] = {2, deflated_len, 4};
  int part = 0;
  size_t part_at = 0;
  for (size_t offset = 0; offset < stream_len;) {
    size_t piece = stream_len - offset < IDAT_CHUNK_MAX ? stream_len - offset : IDAT_CHUNK_MAX;
    uint8_t *data = file + at + 8;
    for (size_t filled = 0; filled < piece;) {
      while (part_at == lengths[part]) {
        part++;
        part_at = 0;
      }
      size_t take = lengths[part] - part_at < piece - filled ? lengths[part] - part_at
                                                             : piece - filled;
      memcpy(data + filled, parts[part] + part_at, take);
      part_at += take;
      filled += take;
    }
    at += put_chunk(file + at, "IDAT", NULL, piece);
    offset += piece;
  }
  at += put_chunk(file + at, "IEND", NULL, 0);
  *out = file;
  *out_len = at;
  return 0;
}

void CImprintShims_free(void *pointer) { free(pointer); }

uint32_t CImprintShims_adler32(uint32_t adler, const uint8_t *data, size_t len) {
  return libdeflate_adler32(adler, data, len);
}

void CImprintShims_tune_malloc(int mmap_threshold, int trim_threshold) {
  mallopt(M_MMAP_THRESHOLD, mmap_threshold);
  mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

// One libdeflate compressor per level and thread, kept: allocating one (hundreds of KiB of match
// tables, mapped and faulted in anew) for each thumbnail of a long document cost as much as
// the deflate saved. Freed when the thread ends.
typedef struct {
  struct libdeflate_compressor *by_level[13];
} Compressors;

static pthread_key_t compressors_key;
static pthread_once_t compressors_once = PTHREAD_ONCE_INIT;

static void free_compressors(void *value) {
  Compressors *compressors = value;
  for (int level = 0; level < 13; level++) {
    if (compressors->by_level[level]) libdeflate_free_compressor(compressors->by_level[level]);
  }
  free(compressors);
}

static void make_compressors_key(void) { pthread_key_create(&compressors_key, free_compressors); }

static struct libdeflate_compressor *compressor_for(int level) {
  if (level < 0 || level > 12) return NULL;
  pthread_once(&compressors_once, make_compressors_key);
  Compressors *compressors = pthread_getspecific(compressors_key);
  if (!compressors) {
    compressors = calloc(1, sizeof *compressors);
    if (!compressors) return NULL;
    if (pthread_setspecific(compressors_key, compressors) != 0) {
      free(compressors);
      return NULL;
    }
  }
  if (!compressors->by_level[level]) {
    compressors->by_level[level] = libdeflate_alloc_compressor(level);
  }
  return compressors->by_level[level];
}

int CImprintShims_libdeflate_raw(const uint8_t *data, size_t len, int level, uint8_t **out,
                                 size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  struct libdeflate_compressor *compressor = compressor_for(level);
  if (!compressor) return 1;
  size_t bound = libdeflate_deflate_compress_bound(compressor, len);
  uint8_t *buffer = malloc(bound > 0 ? bound : 1);
  if (!buffer) return 1;
  // The bound always suffices, so 0 (no room) cannot come back for a non-empty input.
  size_t written = libdeflate_deflate_compress(compressor, data, len, buffer, bound);
  if (written == 0 && len > 0) {
    free(buffer);
    return 1;
  }
  *out = buffer;
  *out_len = written;
  return 0;
}
