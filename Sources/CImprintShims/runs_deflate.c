// SPDX-License-Identifier: Apache-2.0
// A deflate compressor (RFC 1951) for the filtered rows of flat drawings such as ID cards: it
// looks for matches at two distances only, the pixel before (runs along a row) and the same
// byte a row above (runs down a column), takes the longer greedily, and codes every block of
// tokens with Huffman codes made for it (dynamic blocks; a stored block where that is smaller).
//
// Why our own: a 300-dpi card front is 2.3 MB of rows, most of them long runs of equal pixels.
// zlib's fast levels spend about half of a card PNG's CPU searching hash chains for matches a
// card almost always has at one of these two distances; libdeflate hashes every position of a
// run and is no faster (PNGEncoder has the figures). Debian has no deflater specialised for
// images (fpnge, fpng are not packaged). The output is ordinary deflate data: any inflater
// reads it (tests inflate it with zlib and read the PNGs back with libpng and Python's zlib).
#include "CImprintShims.h"
#include "rows.h"
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// Tokens a block holds at most before it is coded.
#define BLOCK_TOKENS 16384
/// The shortest match taken (deflate's own minimum is 3).
#define MIN_MATCH 4
#define MAX_MATCH 258
#define MAX_DISTANCE 32768
#define LITLEN_SYMBOLS 286
#define DIST_SYMBOLS 30
#define CODELEN_SYMBOLS 19

// A token: a literal byte (0-255), or a match of length 3-258 at one of the two candidate
// distances (0 the pixel before, 1 the row above): 256 + candidate * 259 + length. One index
// into a block's table of codes, which holds a match's length and distance codes and their
// extra bits together.
#define TOKEN_KINDS (256 + 2 * (MAX_MATCH + 1))
static inline uint16_t match_token(uint32_t candidate, size_t length) {
  return (uint16_t)(256 + candidate * (MAX_MATCH + 1) + length);
}

static const uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                         15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                         67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,   25,
                                       33,   49,   65,   97,   129,  193,   257,   385,   513,  769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t codelen_order[CODELEN_SYMBOLS] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                       11, 4,  12, 3, 13, 2, 14, 1, 15};

/// Length 3-258's symbol index (0-28) in length_base.
static uint8_t length_index[MAX_MATCH + 1];

static void make_length_index(void) {
  for (int code = 0; code < 29; code++) {
    int end = code == 28 ? MAX_MATCH : length_base[code + 1] - 1;
    for (int length = length_base[code]; length <= end; length++) length_index[length] = (uint8_t)code;
  }
}

/// The output: bytes written so far, and bits not yet written (LSB first, as deflate packs).
typedef struct {
  uint8_t *data;
  size_t length, capacity;
  uint64_t bits;
  int count;
} Writer;

/// Makes room for `more` bytes; 0 when memory ran out.
static int reserve(Writer *w, size_t more) {
  if (w->capacity - w->length >= more) return 1;
  size_t capacity = w->capacity * 2 > w->length + more ? w->capacity * 2 : w->length + more;
  uint8_t *data = realloc(w->data, capacity);
  if (!data) return 0;
  w->data = data;
  w->capacity = capacity;
  return 1;
}

/// Adds `n` (at most 32) bits; the caller reserved the bytes.
static inline void put_bits(Writer *w, uint32_t value, int n) {
  w->bits |= (uint64_t)value << w->count;
  w->count += n;
  while (w->count >= 8) {
    w->data[w->length++] = (uint8_t)w->bits;
    w->bits >>= 8;
    w->count -= 8;
  }
}

/// `put_bits` for a block's codes: whole bytes leave eight at a time, a word stored at once
/// (little-endian: the earliest bits in the first byte, as deflate packs them). The caller
/// reserved 8 bytes beyond the block's last: the word may reach that far.
static inline void put_bits_fast(Writer *w, uint32_t value, int n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  w->bits |= (uint64_t)value << w->count;
  w->count += n; // below 8 before (or 32, see below) plus at most 32: below 64
  if (w->count >= 32) {
    memcpy(w->data + w->length, &w->bits, 8);
    int bytes = w->count >> 3;
    w->length += (size_t)bytes;
    w->bits >>= bytes * 8;
    w->count -= bytes * 8;
  }
#else
  put_bits(w, value, n);
#endif
}

/// A block's code for a token: its bits (at most 48: a length's code and extra bits, then the
/// distance's) in bits 0-55, how many in bits 56-63.
#define ENTRY_BITS(entry) ((entry) & (((uint64_t)1 << 56) - 1))
#define ENTRY_COUNT(entry) ((int)((entry) >> 56))

/// Adds a token's code: a word stored whatever the count, the bytes it completed kept. The
/// caller reserved 8 bytes beyond the block's last; fewer than 8 bits wait before and after.
static inline void put_entry(Writer *w, uint64_t entry) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  w->bits |= ENTRY_BITS(entry) << w->count;
  w->count += ENTRY_COUNT(entry); // below 8 + 48
  memcpy(w->data + w->length, &w->bits, 8);
  int bytes = w->count >> 3;
  w->length += (size_t)bytes;
  w->bits >>= bytes * 8; // at most 6 bytes: below 56 bits
  w->count &= 7;
#else
  uint64_t bits = ENTRY_BITS(entry);
  for (int n = ENTRY_COUNT(entry); n > 0; n -= 24, bits >>= 24) put_bits(w, (uint32_t)(bits & 0xFFFFFF), n < 24 ? n : 24);
#endif
}

/// Pads to a byte boundary with zero bits.
static void align_byte(Writer *w) {
  if (w->count > 0) put_bits(w, 0, 8 - w->count);
}

/// `code`'s `length` bits reversed (deflate sends Huffman codes most significant bit first).
static uint32_t reverse(uint32_t code, int length) {
  uint32_t reversed = 0;
  for (int i = 0; i < length; i++) {
    reversed = (reversed << 1) | (code & 1);
    code >>= 1;
  }
  return reversed;
}

/// Huffman code lengths (at most `limit` bits) for `n` symbols of frequencies `freq`; every
/// used symbol gets a length, unused ones 0. With fewer than two used symbols, two symbols
/// (the used one, if any) get one bit each: a complete code, which every inflater accepts.
static void build_lengths(const uint32_t *freq, int n, int limit, uint8_t *lengths) {
  int symbols[LITLEN_SYMBOLS];
  int used = 0;
  memset(lengths, 0, (size_t)n);
  for (int s = 0; s < n; s++)
    if (freq[s] > 0) symbols[used++] = s;
  if (used < 2) {
    int first = used == 1 ? symbols[0] : 0;
    lengths[first] = 1;
    lengths[first == 0 ? 1 : 0] = 1;
    return;
  }
  // Symbols by frequency ascending (then by symbol: deterministic); insertion sort, n <= 286.
  for (int i = 1; i < used; i++) {
    int s = symbols[i], j = i - 1;
    while (j >= 0 && (freq[symbols[j]] > freq[s] ||
                      (freq[symbols[j]] == freq[s] && symbols[j] > s))) {
      symbols[j + 1] = symbols[j];
      j--;
    }
    symbols[j + 1] = s;
  }
  // Huffman's tree by two queues (leaves in order, internal nodes made in order of weight):
  // nodes 0..used-1 leaves, used.. internal; parent[] links each to its parent.
  uint64_t weight[2 * LITLEN_SYMBOLS];
  int parent[2 * LITLEN_SYMBOLS];
  for (int i = 0; i < used; i++) weight[i] = freq[symbols[i]];
  int leaf = 0, inner = used, made = used;
  for (int k = 0; k < used - 1; k++) {
    int pick[2];
    for (int p = 0; p < 2; p++) {
      if (leaf < used && (inner >= made || weight[leaf] <= weight[inner])) pick[p] = leaf++;
      else pick[p] = inner++;
    }
    weight[made] = weight[pick[0]] + weight[pick[1]];
    parent[pick[0]] = made;
    parent[pick[1]] = made;
    made++;
  }
  // Depths: the root (made - 1) is 0; parents come after their children.
  int depth[2 * LITLEN_SYMBOLS];
  depth[made - 1] = 0;
  for (int node = made - 2; node >= 0; node--) depth[node] = depth[parent[node]] + 1;
  // Lengths counted, the longest folded onto `limit` and the code made complete again
  // (miniz's tdefl_huffman_enforce_max_code_size), then handed out: the rarest symbols get the
  // longest codes.
  int count[64] = {0};
  for (int i = 0; i < used; i++) count[depth[i] < 63 ? depth[i] : 63]++;
  for (int length = limit + 1; length < 64; length++) {
    count[limit] += count[length];
    count[length] = 0;
  }
  uint64_t total = 0;
  for (int length = limit; length > 0; length--) total += (uint64_t)count[length] << (limit - length);
  while (total != (uint64_t)1 << limit) {
    count[limit]--;
    for (int length = limit - 1; length > 0; length--) {
      if (count[length]) {
        count[length]--;
        count[length + 1] += 2;
        break;
      }
    }
    total--;
  }
  int next = 0;
  for (int length = limit; length > 0; length--) {
    for (int k = 0; k < count[length]; k++) lengths[symbols[next++]] = (uint8_t)length;
  }
}

/// Canonical codes (RFC 1951 3.2.2) for `lengths`, bit-reversed for the writer.
static void build_codes(const uint8_t *lengths, int n, uint16_t *codes) {
  int count[16] = {0};
  for (int s = 0; s < n; s++) count[lengths[s]]++;
  count[0] = 0;
  uint32_t next[16];
  uint32_t code = 0;
  for (int length = 1; length < 16; length++) {
    code = (code + (uint32_t)count[length - 1]) << 1;
    next[length] = code;
  }
  for (int s = 0; s < n; s++) {
    codes[s] = lengths[s] ? (uint16_t)reverse(next[lengths[s]]++, lengths[s]) : 0;
  }
}

/// Bytes equal from `a` and `b` on, at most `limit`: sixteen at a time by SSE2 where there is
/// (every x86-64), eight at a time elsewhere.
static inline size_t match_length(const uint8_t *a, const uint8_t *b, size_t limit) {
  size_t n = 0;
#if defined(__SSE2__)
  while (n + 16 <= limit) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + n));
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + n));
    unsigned differ = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xFFFFu;
    if (differ) return n + (size_t)__builtin_ctz(differ);
    n += 16;
  }
#endif
  while (n + 8 <= limit) {
    uint64_t x, y;
    memcpy(&x, a + n, 8);
    memcpy(&y, b + n, 8);
    uint64_t difference = x ^ y;
    if (difference) return n + ((size_t)__builtin_ctzll(difference) >> 3);
    n += 8;
  }
  while (n < limit && a[n] == b[n]) n++;
  return n;
}

/// Whether the MIN_MATCH (4) bytes at `candidate` are `first`, the bytes at the position (which
/// has `limit` bytes left); with fewer left, whether a byte comparison is worth making at all.
static inline int starts_match(uint32_t first, const uint8_t *candidate, size_t limit) {
  if (limit < MIN_MATCH) return 0;
  uint32_t bytes;
  memcpy(&bytes, candidate, 4);
  return bytes == first;
}

typedef struct {
  int symbol, extra_bits;
  uint32_t extra;
} DistanceCode;

static DistanceCode distance_code(size_t distance) {
  int code = 29;
  while (dist_base[code] > distance) code--;
  DistanceCode result = {code, dist_extra[code], (uint32_t)(distance - dist_base[code])};
  return result;
}

/// The bytes deflated: a buffer held whole, or the unfiltered PNG rows of 32-bit xRGB pixels,
/// made a window of rows at a time as the compressor reaches them. The window keeps the row
/// above the current position and at least one match beyond it; a 300-dpi card's 2.3 MB of
/// rows then never leave the cache, where writing them all first and reading them back cost
/// more than the matching (a fifth of the card's encoding).
typedef struct {
  size_t len, row_len;
  /// The bytes, when held whole (`pixels` is then NULL).
  const uint8_t *whole;
  /// The pixels: `height` rows `stride` bytes apart, `width` words each, converted as `kind`.
  const uint8_t *pixels;
  size_t stride;
  uint32_t width;
  int kind;
  /// Rows first_row ..< first_row + rows of the stream, `capacity` rows of room.
  uint8_t *window;
  size_t first_row, rows, capacity, height;
  /// One row, for the bytes of a stored block the window no longer holds.
  uint8_t *scratch;
  /// The Adler-32 of the rows made so far (each is made into the window once, in order).
  uint32_t adler;
} Stream;

/// The window's first and end offsets in the stream.
static inline size_t window_start(const Stream *s) { return s->first_row * s->row_len; }
static inline size_t window_end(const Stream *s) {
  size_t end = (s->first_row + s->rows) * s->row_len;
  return end < s->len ? end : s->len;
}

/// Stream byte `at`, which the window (or the whole buffer) holds.
static inline const uint8_t *stream_at(const Stream *s, size_t at) {
  return s->whole ? s->whole + at : s->window + (at - window_start(s));
}

/// Row `y` of the stream (its filter byte, 0, then the converted pixels) at `out`.
static void make_row(const Stream *s, size_t y, uint8_t *out) {
  out[0] = 0;
  CImprintShims_convert_row(out + 1, s->pixels + y * s->stride, s->width, s->kind);
}

/// Moves the window on so that it holds the row above `at` and MAX_MATCH bytes from `at` on
/// (or the stream's end), making the rows it did not hold before.
static void slide(Stream *s, size_t at) {
  size_t row = at / s->row_len;
  size_t keep_from = row > 0 ? row - 1 : 0;
  size_t end_row = s->first_row + s->rows;
  size_t kept = end_row > keep_from ? end_row - keep_from : 0;
  if (kept > 0 && keep_from > s->first_row) {
    memmove(s->window, s->window + (keep_from - s->first_row) * s->row_len, kept * s->row_len);
  }
  if (kept == 0) end_row = keep_from;
  s->first_row = keep_from;
  s->rows = kept;
  while (s->rows < s->capacity && end_row < s->height) {
    uint8_t *out = s->window + s->rows * s->row_len;
    make_row(s, end_row, out);
    s->adler = libdeflate_adler32(s->adler, out, s->row_len);
    s->rows++;
    end_row++;
  }
}

/// Copies stream bytes `from` ..< `from + count` to `out`: from the window where it holds them,
/// else made again from the pixels.
static void stream_copy(Stream *s, size_t from, size_t count, uint8_t *out) {
  if (s->whole) {
    memcpy(out, s->whole + from, count);
    return;
  }
  while (count > 0) {
    size_t row = from / s->row_len, offset = from % s->row_len;
    size_t take = s->row_len - offset < count ? s->row_len - offset : count;
    const uint8_t *bytes;
    if (row >= s->first_row && row < s->first_row + s->rows) {
      bytes = s->window + (row - s->first_row) * s->row_len;
    } else {
      make_row(s, row, s->scratch);
      bytes = s->scratch;
    }
    memcpy(out, bytes + offset, take);
    out += take;
    from += take;
    count -= take;
  }
}

/// Writes stream bytes `from` ..< `from + count` as stored blocks (none final).
static int put_stored(Writer *w, Stream *s, size_t from, size_t count) {
  do {
    size_t piece = count < 65535 ? count : 65535;
    if (!reserve(w, piece + 16)) return 0;
    put_bits(w, 0, 3); // BFINAL 0, BTYPE 00
    align_byte(w);
    put_bits(w, (uint32_t)piece, 16);
    put_bits(w, (uint32_t)piece ^ 0xFFFFu, 16);
    stream_copy(s, from, piece, w->data + w->length);
    w->length += piece;
    from += piece;
    count -= piece;
  } while (count > 0);
  return 1;
}

/// Codes `n` tokens covering stream bytes `from` ..< `from + covered` as one block (none
/// final): a dynamic block, or stored blocks when those are smaller.
static int put_block(Writer *w, const uint16_t *tokens, size_t n, Stream *s, size_t from,
                     size_t covered, const DistanceCode distances[2]) {
  uint32_t kinds[TOKEN_KINDS] = {0};
  for (size_t i = 0; i < n; i++) kinds[tokens[i]]++;
  uint32_t litlen_freq[LITLEN_SYMBOLS] = {0}, dist_freq[DIST_SYMBOLS] = {0};
  for (int kind = 0; kind < 256; kind++) litlen_freq[kind] = kinds[kind];
  for (uint32_t candidate = 0; candidate < 2; candidate++) {
    for (size_t length = 3; length <= MAX_MATCH; length++) {
      uint32_t count = kinds[match_token(candidate, length)];
      litlen_freq[257 + length_index[length]] += count;
      dist_freq[distances[candidate].symbol] += count;
    }
  }
  litlen_freq[256] = 1;
  uint8_t lengths[LITLEN_SYMBOLS + DIST_SYMBOLS];
  uint8_t *litlen_lengths = lengths, *dist_lengths = lengths + LITLEN_SYMBOLS;
  build_lengths(litlen_freq, LITLEN_SYMBOLS, 15, litlen_lengths);
  build_lengths(dist_freq, DIST_SYMBOLS, 15, dist_lengths);
  int hlit = LITLEN_SYMBOLS, hdist = DIST_SYMBOLS;
  while (hlit > 257 && litlen_lengths[hlit - 1] == 0) hlit--;
  while (hdist > 1 && dist_lengths[hdist - 1] == 0) hdist--;
  // The two code-length sequences, one after the other, run-length coded (symbols 16-18).
  uint8_t sequence[LITLEN_SYMBOLS + DIST_SYMBOLS];
  memcpy(sequence, litlen_lengths, (size_t)hlit);
  memcpy(sequence + hlit, dist_lengths, (size_t)hdist);
  int total = hlit + hdist;
  uint8_t rle_symbol[LITLEN_SYMBOLS + DIST_SYMBOLS], rle_extra[LITLEN_SYMBOLS + DIST_SYMBOLS];
  int rle = 0;
  uint32_t codelen_freq[CODELEN_SYMBOLS] = {0};
  for (int i = 0; i < total;) {
    uint8_t value = sequence[i];
    int run = 1;
    while (i + run < total && sequence[i + run] == value) run++;
    if (value == 0 && run >= 3) {
      int take = run > 138 ? 138 : run;
      rle_symbol[rle] = take >= 11 ? 18 : 17;
      rle_extra[rle] = (uint8_t)(take >= 11 ? take - 11 : take - 3);
      codelen_freq[rle_symbol[rle++]]++;
      i += take;
    } else if (value != 0 && run >= 4) {
      rle_symbol[rle] = value;
      rle_extra[rle] = 0;
      codelen_freq[value]++;
      rle++;
      int take = run - 1 > 6 ? 6 : run - 1;
      rle_symbol[rle] = 16;
      rle_extra[rle] = (uint8_t)(take - 3);
      codelen_freq[16]++;
      rle++;
      i += 1 + take;
    } else {
      rle_symbol[rle] = value;
      rle_extra[rle] = 0;
      codelen_freq[value]++;
      rle++;
      i++;
    }
  }
  uint8_t codelen_lengths[CODELEN_SYMBOLS];
  build_lengths(codelen_freq, CODELEN_SYMBOLS, 7, codelen_lengths);
  int hclen = CODELEN_SYMBOLS;
  while (hclen > 4 && codelen_lengths[codelen_order[hclen - 1]] == 0) hclen--;
  // The block's size in bits, against stored blocks' (a header of 5 bytes per 65 535).
  uint64_t bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)hclen;
  for (int i = 0; i < rle; i++) {
    int s = rle_symbol[i];
    bits += codelen_lengths[s] + (s == 16 ? 2 : s == 17 ? 3 : s == 18 ? 7 : 0);
  }
  for (int s = 0; s < LITLEN_SYMBOLS; s++) {
    int extra = s >= 257 ? length_extra[s - 257] : 0;
    bits += (uint64_t)litlen_freq[s] * (uint64_t)(litlen_lengths[s] + extra);
  }
  for (int s = 0; s < DIST_SYMBOLS; s++) {
    bits += (uint64_t)dist_freq[s] * (uint64_t)(dist_lengths[s] + dist_extra[s]);
  }
  uint64_t stored_bits = ((uint64_t)covered + 5 * (covered / 65535 + 1)) * 8 + 7;
  if (stored_bits < bits) return put_stored(w, s, from, covered);
  if (!reserve(w, (size_t)(bits / 8) + 16)) return 0;
  uint16_t litlen_codes[LITLEN_SYMBOLS], dist_codes[DIST_SYMBOLS], codelen_codes[CODELEN_SYMBOLS];
  build_codes(litlen_lengths, LITLEN_SYMBOLS, litlen_codes);
  build_codes(dist_lengths, DIST_SYMBOLS, dist_codes);
  build_codes(codelen_lengths, CODELEN_SYMBOLS, codelen_codes);
  put_bits(w, 0 | (2 << 1), 3); // BFINAL 0, BTYPE 10 (dynamic)
  put_bits(w, (uint32_t)(hlit - 257), 5);
  put_bits(w, (uint32_t)(hdist - 1), 5);
  put_bits(w, (uint32_t)(hclen - 4), 4);
  for (int i = 0; i < hclen; i++) put_bits(w, codelen_lengths[codelen_order[i]], 3);
  // From here to the block's end the bytes reserved above (its size + 16) hold every word
  // put_bits_fast stores.
  for (int i = 0; i < rle; i++) {
    int s = rle_symbol[i];
    put_bits_fast(w, codelen_codes[s], codelen_lengths[s]);
    if (s >= 16) put_bits_fast(w, rle_extra[i], s == 16 ? 2 : s == 17 ? 3 : 7);
  }
  // Every token's code, the used ones: a literal's, or a match's length code, extra bits,
  // distance code and extra bits in the order they are sent.
  uint64_t entries[TOKEN_KINDS];
  for (int kind = 0; kind < 256; kind++) {
    entries[kind] = (uint64_t)litlen_codes[kind] | (uint64_t)litlen_lengths[kind] << 56;
  }
  for (uint32_t candidate = 0; candidate < 2; candidate++) {
    const DistanceCode *d = &distances[candidate];
    uint64_t distance = (uint64_t)dist_codes[d->symbol] |
                        (uint64_t)d->extra << dist_lengths[d->symbol];
    int distance_bits = dist_lengths[d->symbol] + d->extra_bits;
    for (size_t length = 3; length <= MAX_MATCH; length++) {
      int index = length_index[length];
      int code_bits = litlen_lengths[257 + index], extra_bits = length_extra[index];
      uint64_t bits = (uint64_t)litlen_codes[257 + index] |
                      (uint64_t)(length - length_base[index]) << code_bits |
                      distance << (code_bits + extra_bits);
      entries[match_token(candidate, length)] =
          bits | (uint64_t)(code_bits + extra_bits + distance_bits) << 56;
    }
  }
  put_bits(w, 0, 0); // fewer than 8 bits waiting, as put_entry needs
  for (size_t i = 0; i < n; i++) put_entry(w, entries[tokens[i]]);
  put_bits_fast(w, litlen_codes[256], litlen_lengths[256]);
  return 1;
}

static pthread_once_t length_index_once = PTHREAD_ONCE_INIT;

/// Deflates the stream `s` (bpp bytes a pixel) into a malloc'd buffer; 0 when memory ran out.
static int deflate_stream(Stream *s, size_t bpp, uint8_t **out, size_t *out_len) {
  pthread_once(&length_index_once, make_length_index);
  size_t len = s->len, row_len = s->row_len;
  Writer w = {malloc(len / 8 + 1024), 0, len / 8 + 1024, 0, 0};
  uint16_t *tokens = malloc(BLOCK_TOKENS * sizeof *tokens);
  if (!w.data || !tokens) {
    free(w.data);
    free(tokens);
    return 0;
  }
  // The two distances; the row above only within deflate's window.
  size_t candidates[2] = {bpp, row_len};
  int use_row = row_len > bpp && row_len <= MAX_DISTANCE;
  DistanceCode distances[2] = {distance_code(bpp), distance_code(use_row ? row_len : bpp)};
  size_t at = 0, block_start = 0, n = 0;
  // Where the window ends, or the stream's end when it is held whole.
  size_t held = s->whole ? len : window_end(s);
  int ok = 1;
  while (at < len && ok) {
    size_t limit = len - at < MAX_MATCH ? len - at : MAX_MATCH;
    if (at + limit > held) {
      slide(s, at);
      held = window_end(s);
    }
    const uint8_t *here = stream_at(s, at);
    size_t best = 0;
    uint32_t which = 0;
    // A candidate whose first MIN_MATCH bytes differ cannot be taken: one 32-bit comparison
    // rules it out, where most of a card's literals (anti-aliased edges) spent two calls.
    uint32_t first = 0;
    if (limit >= MIN_MATCH) memcpy(&first, here, 4);
    if (at >= candidates[0] && starts_match(first, here - candidates[0], limit)) {
      best = match_length(here, here - candidates[0], limit);
    }
    if (use_row && at >= candidates[1] && best < limit &&
        starts_match(first, here - candidates[1], limit)) {
      size_t above = match_length(here, here - candidates[1], limit);
      if (above > best) {
        best = above;
        which = 1;
      }
    }
    if (best >= MIN_MATCH) {
      tokens[n++] = match_token(which, best);
      at += best;
    } else {
      tokens[n++] = here[0];
      at++;
    }
    if (n == BLOCK_TOKENS) {
      ok = put_block(&w, tokens, n, s, block_start, at - block_start, distances);
      block_start = at;
      n = 0;
    }
  }
  // The last block (possibly empty), then an empty final fixed block: BFINAL 1, BTYPE 01, EOB.
  if (ok && n > 0) ok = put_block(&w, tokens, n, s, block_start, at - block_start, distances);
  if (ok) ok = reserve(&w, 8);
  if (ok) {
    put_bits(&w, 1 | (1 << 1), 3);
    put_bits(&w, 0, 7); // end of block: symbol 256, the fixed code's seven zero bits
    align_byte(&w);
  }
  free(tokens);
  if (!ok) {
    free(w.data);
    return 0;
  }
  *out = w.data;
  *out_len = w.length;
  return 1;
}

int CImprintShims_runs_deflate(const uint8_t *data, size_t len, size_t row_len, size_t bpp,
                               uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (bpp < 1 || bpp > 8) return 1;
  Stream s = {.len = len, .row_len = row_len, .whole = data};
  return deflate_stream(&s, bpp, out, out_len) ? 0 : 1;
}

/// The window's rows: about 128 KiB (a 300-dpi card's 40 rows), and never fewer than two
/// matches' worth beyond the two rows it keeps. scripts/fuzz makes it 4 KiB, so that the small
/// images a fuzzer makes move it on too.
#ifndef RUNS_WINDOW_BYTES
#define RUNS_WINDOW_BYTES ((size_t)128 << 10)
#endif

int CImprintShims_runs_deflate_xrgb(const uint8_t *pixels, size_t stride, uint32_t width,
                                    uint32_t height, int kind, uint8_t **out, size_t *out_len,
                                    uint32_t *adler) {
  *out = NULL;
  *out_len = 0;
  *adler = 1;
  if (width < 1 || height < 1 || stride < (size_t)width * 4) return 1;
  if (kind != CImprintShims_PNG_XRGB_TO_RGB && kind != CImprintShims_PNG_XRGB_TO_GRAY) return 1;
  size_t bpp = kind == CImprintShims_PNG_XRGB_TO_RGB ? 3 : 1;
  size_t row_len = (size_t)width * bpp + 1;
  size_t capacity = (size_t)RUNS_WINDOW_BYTES / row_len;
  size_t least = 2 * (MAX_MATCH / row_len) + 8;
  if (capacity < least) capacity = least;
  if (capacity > height) capacity = height;
  Stream s = {.len = row_len * (size_t)height, .row_len = row_len, .pixels = pixels,
              .stride = stride, .width = width, .kind = kind, .height = height,
              .capacity = capacity, .adler = 1};
  s.window = malloc(capacity * row_len);
  s.scratch = malloc(row_len);
  int ok = s.window && s.scratch;
  if (ok) {
    slide(&s, 0);
    ok = deflate_stream(&s, bpp, out, out_len);
  }
  free(s.window);
  free(s.scratch);
  if (!ok) return 1;
  *adler = s.adler;
  return 0;
}
