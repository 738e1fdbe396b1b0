// SPDX-License-Identifier: Apache-2.0
// CImprintInflate: inflation of one PDF stream into a caller-sized buffer (libdeflate where it
// answers as zlib would, zlib otherwise), and raw deflate for PNG files (both for ImprintPDF).

#include "CImprintInflate.h"

#include <libdeflate.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>

long CImprintInflate_inflate_zlib(const uint8_t *input, size_t input_len, uint8_t *output,
                                  size_t capacity) {
  z_stream stream;
  memset(&stream, 0, sizeof stream);
  if (inflateInit(&stream) != Z_OK) return -1;
  stream.next_in = (Bytef *)input;
  stream.avail_in = (uInt)(input_len > 0xFFFFFFFFu ? 0xFFFFFFFFu : input_len);
  stream.next_out = output;
  stream.avail_out = (uInt)(capacity > 0xFFFFFFFFu ? 0xFFFFFFFFu : capacity);
  int status = inflate(&stream, Z_FINISH);
  long written = (long)stream.total_out;
  inflateEnd(&stream);
  if (status == Z_STREAM_END) return written;
  if (status == Z_BUF_ERROR && stream.avail_out == 0) return -2;
  // A stream cut short (a missing end marker) still gave its bytes; PDF writers leave those.
  if (status == Z_BUF_ERROR && written > 0) return written;
  return -1;
}

// One decompressor a thread, made at its first stream and kept (libdeflate's are not shared
// between threads; making one costs an allocation of about 10 KB).
static _Thread_local struct libdeflate_decompressor *decompressor;

long CImprintInflate_inflate(const uint8_t *input, size_t input_len, uint8_t *output,
                             size_t capacity) {
  // libdeflate answers a whole stream that fits; anything else, every error included (a stream
  // cut short, whose bytes zlib gives; one that would not fit), is zlib's to answer, so the
  // bytes and the answers are zlib's in every case (InflateTests compares the two). Both read
  // distances past a smaller window than the header declares (zlib checks only when built with
  // INFLATE_STRICT, which Debian's is not) and refuse a declared window past 32 KiB.
  if (decompressor == NULL) decompressor = libdeflate_alloc_decompressor();
  size_t written = 0;
  if (decompressor != NULL &&
      libdeflate_zlib_decompress_ex(decompressor, input, input_len, output, capacity, NULL,
                                    &written) == LIBDEFLATE_SUCCESS &&
      written <= (size_t)LONG_MAX)
    return (long)written;
  return CImprintInflate_inflate_zlib(input, input_len, output, capacity);
}

size_t CImprintInflate_deflate_bound(size_t input_len) {
  // zlib's compressBound (a zlib stream's bound: a raw stream is 6 bytes shorter), computed in
  // size_t for inputs past uLong's range on any platform.
  return input_len + (input_len >> 12) + (input_len >> 14) + (input_len >> 25) + 13;
}

long CImprintInflate_deflate_raw(const uint8_t *input, size_t input_len, int level,
                                 uint8_t *output, size_t capacity) {
  z_stream stream;
  memset(&stream, 0, sizeof stream);
  // Window 2^15 (negative: raw, without zlib's header and Adler-32), zlib's default memory.
  if (deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
  stream.next_out = output;
  int status = Z_OK;
  // zlib counts in uInt: the input and output are handed over in pieces of at most 1 GiB.
  size_t in_left = input_len, out_left = capacity;
  const size_t piece = (size_t)1 << 30;
  stream.next_in = (Bytef *)input;
  while (status == Z_OK || status == Z_BUF_ERROR) {
    if (stream.avail_in == 0 && in_left > 0) {
      stream.avail_in = (uInt)(in_left < piece ? in_left : piece);
      in_left -= stream.avail_in;
    }
    if (stream.avail_out == 0) {
      if (out_left == 0) break;
      stream.avail_out = (uInt)(out_left < piece ? out_left : piece);
      out_left -= stream.avail_out;
    }
    status = deflate(&stream, in_left == 0 ? Z_FINISH : Z_NO_FLUSH);
    if (status == Z_BUF_ERROR && stream.avail_out != 0 && stream.avail_in != 0) break;
  }
  size_t written = (size_t)(stream.next_out - output);
  deflateEnd(&stream);
  if (status == Z_STREAM_END) return (long)written;
  return stream.avail_out == 0 && out_left == 0 ? -2 : -1;
}

size_t CImprintInflate_zlib_bound(size_t input_len) {
  return libdeflate_zlib_compress_bound(NULL, input_len);
}

// One compressor a thread for each level used, kept: making one costs an allocation of several
// hundred kilobytes at the middle levels, more than compressing a page's content stream (and a
// card PDF's pages and its images and fonts take different levels, in turn).
static _Thread_local struct libdeflate_compressor *compressors[13];

long CImprintInflate_zlib_compress(const uint8_t *input, size_t input_len, int level,
                                   uint8_t *output, size_t capacity) {
  if (level < 0 || level > 12) return -1;
  struct libdeflate_compressor *compressor = compressors[level];
  if (compressor == NULL) {
    compressor = libdeflate_alloc_compressor(level);
    if (compressor == NULL) return -1;
    compressors[level] = compressor;
  }
  size_t written = libdeflate_zlib_compress(compressor, input, input_len, output, capacity);
  return written == 0 ? -2 : (long)written;
}
