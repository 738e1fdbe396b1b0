// SPDX-License-Identifier: Apache-2.0
// CImprintInflate: zlib for ImprintPDF, the one module that imports it (zlib's `inflateInit`
// and `deflateInit2` are macros Swift cannot call): PDF streams inflated, and the raw deflate
// that ImprintGraphics' PNG files are made with (ImprintPDF's `Deflate`). Also libdeflate's
// inflater, which ImprintGraphics' CImprintShims links for PNG checksums and deflate: a
// stateless function library linked by two C targets for two jobs, no C object shared
// between modules (docs/STYLE.md's one-owner rule is about owning C objects).
#ifndef CIMPRINTINFLATE_H
#define CIMPRINTINFLATE_H

#include <stddef.h>
#include <stdint.h>

/// Inflates a zlib (PDF FlateDecode) stream into `output`. Returns the bytes written, -2 when
/// they would pass `capacity`, -1 for data zlib cannot read; a stream cut short gives the bytes
/// it has. libdeflate inflates the streams it reads exactly as zlib does (twice as fast), zlib
/// the rest: the answer is CImprintInflate_inflate_zlib's for every input.
long CImprintInflate_inflate(const uint8_t *input, size_t input_len, uint8_t *output,
                             size_t capacity);

/// CImprintInflate_inflate by zlib alone (what it answers for any input; tests compare).
long CImprintInflate_inflate_zlib(const uint8_t *input, size_t input_len, uint8_t *output,
                                  size_t capacity);

/// An upper bound of CImprintInflate_deflate_raw's output for `input_len` bytes.
size_t CImprintInflate_deflate_bound(size_t input_len);

/// Deflates `input` as one raw deflate stream (RFC 1951: no zlib header, no checksum) at zlib's
/// `level` (0-9) into `output`. Returns the bytes written, -2 when they would pass `capacity`
/// (CImprintInflate_deflate_bound is always enough), -1 when zlib cannot start (a level out of
/// range, no memory).
long CImprintInflate_deflate_raw(const uint8_t *input, size_t input_len, int level,
                                 uint8_t *output, size_t capacity);

/// An upper bound of CImprintInflate_zlib_compress's output for `input_len` bytes.
size_t CImprintInflate_zlib_bound(size_t input_len);

/// Compresses `input` as one zlib stream (RFC 1950: a PDF FlateDecode stream) with libdeflate
/// at `level` (1-12; 6 compresses about as zlib's 6 does, faster) into `output`. Returns the
/// bytes written, -2 when they would pass `capacity` (CImprintInflate_zlib_bound is always
/// enough), -1 when libdeflate cannot start (a level out of range, no memory).
long CImprintInflate_zlib_compress(const uint8_t *input, size_t input_len, int level,
                                   uint8_t *output, size_t capacity);

#endif
