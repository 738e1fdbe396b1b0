// SPDX-License-Identifier: Apache-2.0
// CImprintShims: the C control flow Swift cannot express (libjpeg's setjmp/longjmp error
// handling), and PNG files written by our own code (png.c says why not libpng). These functions never
// call exit() and never print; every failure is returned as a non-zero status with the
// library's message copied into the caller's buffer.
#ifndef CIMPRINTSHIMS_H
#define CIMPRINTSHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// One PNG tEXt chunk (both strings are Latin-1/ASCII, NUL-terminated).
typedef struct {
  const char *key;
  const char *text;
} CImprintShims_PNGText;

/// Source layouts of CImprintShims_png_filter's pixels.
enum {
  CImprintShims_PNG_ROWS = 0,          ///< rows already in the PNG's layout (stride bytes apart)
  CImprintShims_PNG_XRGB_TO_RGB = 1,   ///< 32-bit xRGB words (cairo RGB24), written as R G B
  CImprintShims_PNG_XRGB_TO_GRAY = 2   ///< 32-bit grey xRGB words, written as their low byte
};

/// A PNG's first step: its rows as the stream deflate compresses, a filter byte before each, in
/// a malloc'd buffer (free with CImprintShims_free). color_type: 0 gray, 2 RGB, 3 palette,
/// 6 RGBA; bit_depth 1 (gray, palette) or 8. source_kind: CImprintShims_PNG_ROWS, or an xRGB
/// layout for color type 2 or 0 at 8 bits, converted as the rows are filtered. filter_type:
/// PNG's row filter for every row, 0 (none) or 2 (up). Returns 0 on success, else 1 with the
/// reason in errbuf.
int CImprintShims_png_filter(uint32_t width, uint32_t height, int color_type, int bit_depth,
                             const uint8_t *pixels, size_t stride, int source_kind,
                             int filter_type, uint8_t **out, size_t *out_len, char *errbuf,
                             size_t errbuf_len);

/// A PNG's last step: the file, in a malloc'd buffer (free with CImprintShims_free), from the
/// raw deflate data (RFC 1951, no header) of its filtered rows, which are `filtered_len` bytes
/// with Adler-32 `adler` (CImprintShims_adler32), compressed at zlib's compression_level (0-9,
/// named in the zlib header). palette: RGB triplets (color type 3). pixels_per_meter 0 writes
/// no pHYs chunk. Returns 0 on success, else 1 with the reason in errbuf.
int CImprintShims_png_frame(uint32_t width, uint32_t height, int color_type, int bit_depth,
                            const uint8_t *palette, int palette_count, uint32_t pixels_per_meter,
                            const CImprintShims_PNGText *texts, int text_count,
                            size_t filtered_len, uint32_t adler, const uint8_t *deflated,
                            size_t deflated_len, int compression_level, uint8_t **out,
                            size_t *out_len, char *errbuf, size_t errbuf_len);

/// The Adler-32 of `len` bytes at `data`, continuing from `adler` (1 to start): libdeflate's.
uint32_t CImprintShims_adler32(uint32_t adler, const uint8_t *data, size_t len);

/// Raw deflate data (RFC 1951, no header) of `data` by libdeflate at `level` (1-12), in a malloc'd
/// buffer (free with CImprintShims_free). Returns 0 on success, 1 when memory ran out.
int CImprintShims_libdeflate_raw(const uint8_t *data, size_t len, int level, uint8_t **out,
                                 size_t *out_len);

/// Raw deflate data (RFC 1951, no header) of a PNG's filtered rows (`len` bytes, rows of
/// `row_len` bytes with their filter byte, `bpp` bytes a pixel, 1 for less than a byte) by
/// runs_deflate.c, which matches only at the pixel before and the row above: fast for flat
/// drawings. In a malloc'd buffer (free with CImprintShims_free). Returns 0 on success, 1 when
/// memory ran out or bpp is not 1-8.
int CImprintShims_runs_deflate(const uint8_t *data, size_t len, size_t row_len, size_t bpp,
                               uint8_t **out, size_t *out_len);

/// CImprintShims_runs_deflate of the unfiltered PNG rows (filter type 0) of `height` rows of
/// `width` 32-bit xRGB words, `stride` bytes apart, converted as `kind`
/// (CImprintShims_PNG_XRGB_TO_RGB or CImprintShims_PNG_XRGB_TO_GRAY) a window of rows at a
/// time, never all at once: the same bytes as CImprintShims_png_filter's rows deflated by
/// CImprintShims_runs_deflate. Sets *adler to the rows' Adler-32 (for
/// CImprintShims_png_frame). Returns 0 on success, 1 when memory ran out or the layout
/// is not one of those.
int CImprintShims_runs_deflate_xrgb(const uint8_t *pixels, size_t stride, uint32_t width,
                                    uint32_t height, int kind, uint8_t **out, size_t *out_len,
                                    uint32_t *adler);

/// Output pixel layouts of the JPEG decoder.
enum {
  CImprintShims_JPEG_BGRX = 0,  ///< 4 bytes per pixel, cairo CAIRO_FORMAT_RGB24 on little-endian
  CImprintShims_JPEG_GRAY = 1   ///< 1 byte per pixel
};

/// Reads a JPEG header: size, components and the colour space libjpeg reports. Returns 0 on success.
int CImprintShims_jpeg_info(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height,
                            int *components, int *color_space, int *progressive,
                            char *errbuf, size_t errbuf_len);

/// Flags of the JPEG decoder.
enum {
  /// libjpeg warnings (for example truncated scan data) are errors.
  CImprintShims_JPEG_STRICT = 1,
  /// A progressive file at 1/8 is decoded from all its scans, not from its DC scans alone
  /// (the same pixels, more work: for tests).
  CImprintShims_JPEG_EVERY_SCAN = 2
};

/// Decodes a JPEG held in memory into `pixels` (stride bytes per row, at least width * 4 for BGRX).
/// CMYK and YCCK images are converted to RGB (Adobe inverted CMYK is detected from the APP14 marker).
/// `flags`: CImprintShims_JPEG_STRICT, CImprintShims_JPEG_EVERY_SCAN.
/// scale_denom (1, 2, 4 or 8) decodes at reduced size; out_width/out_height report the result.
/// A progressive file at 1/8 is decoded from a copy without the AC scans its 1x1 inverse DCT
/// would not read (warnings in those scans are then not seen; the pixels are the same).
/// Returns 0 on success.
int CImprintShims_jpeg_decode(const uint8_t *data, size_t len, int layout, int scale_denom,
                              int flags, uint8_t *pixels, size_t stride, size_t capacity,
                              uint32_t *out_width, uint32_t *out_height,
                              char *errbuf, size_t errbuf_len);

/// The size of the copy of a progressive JPEG that CImprintShims_jpeg_decode reads at 1/8 (its
/// DC scans and the AC scans of components drawn larger), or 0 when it reads the file as it is.
size_t CImprintShims_jpeg_dc_scans_size(const uint8_t *data, size_t len);

/// Encodes BGRX pixels (4 bytes a pixel, cairo RGB24 layout on little-endian) as a baseline JPEG
/// into a malloc'd buffer (free with CImprintShims_free). Returns 0 on success.
int CImprintShims_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height,
                              size_t stride, int quality, uint8_t **out, size_t *out_len,
                              char *errbuf, size_t errbuf_len);

/// Keeps allocations below `mmap_threshold` bytes in the heap (glibc mallopt), for processes that
/// make and free many buffers of a few hundred kilobytes.
void CImprintShims_tune_malloc(int mmap_threshold, int trim_threshold);

/// Frees a buffer returned by this module.
void CImprintShims_free(void *pointer);

#endif
