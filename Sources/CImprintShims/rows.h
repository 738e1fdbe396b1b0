// SPDX-License-Identifier: Apache-2.0
// CImprintShims' own: what png.c and runs_deflate.c share, not part of the module's interface.
#ifndef CIMPRINTSHIMS_ROWS_H
#define CIMPRINTSHIMS_ROWS_H

#include <stddef.h>
#include <stdint.h>

/// Converts one row of `width` 32-bit xRGB words (cairo's RGB24, native order) to PNG's layout:
/// R G B for CImprintShims_PNG_XRGB_TO_RGB, the low byte for CImprintShims_PNG_XRGB_TO_GRAY.
void CImprintShims_convert_row(uint8_t *out, const uint8_t *source, uint32_t width,
                               int source_kind);

#endif
