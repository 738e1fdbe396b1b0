// SPDX-License-Identifier: Apache-2.0
// CImprintInflate: zlib's inflate for ImprintPDF, the one module that imports it (zlib's
// `inflateInit` is a macro Swift cannot call).
#ifndef CIMPRINTINFLATE_H
#define CIMPRINTINFLATE_H

#include <stddef.h>
#include <stdint.h>

/// Inflates a zlib (PDF FlateDecode) stream into `output`. Returns the bytes written, -2 when
/// they would pass `capacity`, -1 for data zlib cannot read.
long CImprintInflate_inflate(const uint8_t *input, size_t input_len, uint8_t *output,
                             size_t capacity);

#endif
