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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/// Tokens a block holds at most before it is coded.
#define BLOCK_TOKENS 16384
/// The shortest match taken (deflate's own minimum is 3).
#define MIN_MATCH 4
#define MAX_MATCH 258
#define MAX_DISTANCE 32768
#define LITLEN_SYMBOLS 286
#define DIST_SYMBOLS 30
#define CODELEN_SYMBOLS 19

// A token: a literal byte (bit 31 clear), or a match (bit 31 set) of length bits 0-8 at the
// candidate distance bit 9 names (0 the pixel before, 1 the row above).
#define MATCH_FLAG 0x80000000u

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

/// Bytes equal from `a` and `b` on, at most `limit`.
static inline size_t match_length(const uint8_t *a, const uint8_t *b, size_t limit) {
  size_t n = 0;
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

/// Writes the `count` bytes at `data` as stored blocks (none final).
static int put_stored(Writer *w, const uint8_t *data, size_t count) {
  do {
    size_t piece = count < 65535 ? count : 65535;
    if (!reserve(w, piece + 16)) return 0;
    put_bits(w, 0, 3); // BFINAL 0, BTYPE 00
    align_byte(w);
    put_bits(w, (uint32_t)piece, 16);
    put_bits(w, (uint32_t)piece ^ 0xFFFFu, 16);
    memcpy(w->data + w->length, data, piece);
    w->length += piece;
    data += piece;
    count -= piece;
  } while (count > 0);
  return 1;
}

/// Codes `n` tokens covering input bytes `data[0..<covered]` as one block (none final): a
/// dynamic block, or stored blocks when those are smaller.
static int put_block(Writer *w, const uint32_t *tokens, size_t n, const uint8_t *data,
                     size_t covered, const DistanceCode distances[2]) {
  uint32_t litlen_freq[LITLEN_SYMBOLS] = {0}, dist_freq[DIST_SYMBOLS] = {0};
  for (size_t i = 0; i < n; i++) {
    uint32_t token = tokens[i];
    if (token & MATCH_FLAG) {
      litlen_freq[257 + length_index[token & 0x1FF]]++;
      dist_freq[distances[(token >> 9) & 1].symbol]++;
    } else {
      litlen_freq[token]++;
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
  if (stored_bits < bits) return put_stored(w, data, covered);
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
  for (size_t i = 0; i < n; i++) {
    uint32_t token = tokens[i];
    if (token & MATCH_FLAG) {
      uint32_t length = token & 0x1FF;
      int index = length_index[length];
      put_bits_fast(w, litlen_codes[257 + index], litlen_lengths[257 + index]);
      if (length_extra[index]) put_bits_fast(w, length - length_base[index], length_extra[index]);
      const DistanceCode *d = &distances[(token >> 9) & 1];
      put_bits_fast(w, dist_codes[d->symbol], dist_lengths[d->symbol]);
      if (d->extra_bits) put_bits_fast(w, d->extra, d->extra_bits);
    } else {
      put_bits_fast(w, litlen_codes[token], litlen_lengths[token]);
    }
  }
  put_bits_fast(w, litlen_codes[256], litlen_lengths[256]);
  return 1;
}

static pthread_once_t length_index_once = PTHREAD_ONCE_INIT;

int CImprintShims_runs_deflate(const uint8_t *data, size_t len, size_t row_len, size_t bpp,
                               uint8_t **out, size_t *out_len) {
  pthread_once(&length_index_once, make_length_index);
  *out = NULL;
  *out_len = 0;
  if (bpp < 1 || bpp > 8) return 1;
  Writer w = {malloc(len / 8 + 1024), 0, len / 8 + 1024, 0, 0};
  uint32_t *tokens = malloc(BLOCK_TOKENS * sizeof *tokens);
  if (!w.data || !tokens) {
    free(w.data);
    free(tokens);
    return 1;
  }
  // The two distances; the row above only within deflate's window.
  size_t candidates[2] = {bpp, row_len};
  int use_row = row_len > bpp && row_len <= MAX_DISTANCE;
  DistanceCode distances[2] = {distance_code(bpp), distance_code(use_row ? row_len : bpp)};
  size_t at = 0, block_start = 0, n = 0;
  int ok = 1;
  while (at < len && ok) {
    size_t limit = len - at < MAX_MATCH ? len - at : MAX_MATCH;
    size_t best = 0;
    uint32_t which = 0;
    if (at >= candidates[0]) best = match_length(data + at, data + at - candidates[0], limit);
    if (use_row && at >= candidates[1] && best < limit) {
      size_t above = match_length(data + at, data + at - candidates[1], limit);
      if (above > best) {
        best = above;
        which = 1;
      }
    }
    if (best >= MIN_MATCH) {
      tokens[n++] = MATCH_FLAG | (which << 9) | (uint32_t)best;
      at += best;
    } else {
      tokens[n++] = data[at++];
    }
    if (n == BLOCK_TOKENS) {
      ok = put_block(&w, tokens, n, data + block_start, at - block_start, distances);
      block_start = at;
      n = 0;
    }
  }
  // The last block (possibly empty), then an empty final fixed block: BFINAL 1, BTYPE 01, EOB.
  if (ok && n > 0) ok = put_block(&w, tokens, n, data + block_start, at - block_start, distances);
  if (ok) ok = reserve(&w, 8);
  if (ok) {
    put_bits(&w, 1 | (1 << 1), 3);
    put_bits(&w, 0, 7); // end of block: symbol 256, the fixed code's seven zero bits
    align_byte(&w);
  }
  free(tokens);
  if (!ok) {
    free(w.data);
    return 1;
  }
  *out = w.data;
  *out_len = w.length;
  return 0;
}
