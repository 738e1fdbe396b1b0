// SPDX-License-Identifier: Apache-2.0
// CImprintInflate: zlib inflation of one PDF stream into a caller-sized buffer (for ImprintPDF).

#include "CImprintInflate.h"

#include <string.h>
#include <zlib.h>

long CImprintInflate_inflate(const uint8_t *input, size_t input_len, uint8_t *output,
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
