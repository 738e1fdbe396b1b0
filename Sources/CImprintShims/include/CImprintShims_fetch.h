// SPDX-License-Identifier: Apache-2.0
// CImprintShims: one HTTP(S) download through libcurl for card photos, with the address of every
// connection checked as it is opened (no DNS rebinding between the check and the connect), a total
// deadline and a size cap counted on the decoded bytes as they arrive.
#ifndef CIMPRINTSHIMS_FETCH_H
#define CIMPRINTSHIMS_FETCH_H

#include <stddef.h>
#include <stdint.h>

/// How an address is treated (CImprintShims_address_class).
enum {
  CImprintShims_ADDRESS_PUBLIC = 0,   ///< fetched
  CImprintShims_ADDRESS_PRIVATE = 1,  ///< loopback, RFC 1918, CGNAT, unique local: only when allowed
  CImprintShims_ADDRESS_NEVER = 2     ///< link-local (cloud metadata), multicast, unspecified, reserved
};

/// Classifies an address: family 4 (4 bytes) or 6 (16 bytes), network byte order. `name`, when
/// not NULL, receives a static description of the range ("loopback", "link-local", ...).
int CImprintShims_address_class(int family, const uint8_t *bytes, const char **name);

/// The outcome of CImprintShims_fetch.
enum {
  CImprintShims_FETCH_OK = 0,
  CImprintShims_FETCH_UNAVAILABLE = 1,   ///< libcurl cannot be loaded
  CImprintShims_FETCH_BAD_URL = 2,       ///< not an http(s) URL with a host
  CImprintShims_FETCH_REFUSED = 3,       ///< an address of the host is in a refused range
  CImprintShims_FETCH_UNRESOLVED = 4,    ///< the host name does not resolve
  CImprintShims_FETCH_HTTP_STATUS = 5,   ///< the final answer was not 200
  CImprintShims_FETCH_TOO_LARGE = 6,     ///< the (decoded) body passed the limit
  CImprintShims_FETCH_TIMEOUT = 7,       ///< the deadline passed
  CImprintShims_FETCH_REDIRECTS = 8,     ///< too many redirects
  CImprintShims_FETCH_FAILED = 9         ///< any other transfer error (detail holds libcurl's text)
};

/// One download's settings and results.
typedef struct {
  // Settings.
  size_t limit;          ///< the most body bytes kept, after content decoding
  long timeout_ms;       ///< the whole download, every redirect and slow byte included
  int allow_private;     ///< 1: CImprintShims_ADDRESS_PRIVATE addresses are fetched too
  int max_redirects;     ///< redirects followed (each hop checked like the first)
  const char *user_agent;
  // Results.
  uint8_t *body;         ///< malloc'd (free with CImprintShims_free); NULL unless OK
  size_t body_len;
  long http_status;      ///< the last HTTP status seen
  int refused_never;     ///< REFUSED: 1 when the address is never fetched, 0 when only private
  char detail[512];      ///< what was refused or what failed, for the message
} CImprintShims_Fetch;

/// Downloads `url` (blocking; call it off any cooperative thread pool). Returns an outcome.
int CImprintShims_fetch(const char *url, CImprintShims_Fetch *fetch);

#endif
