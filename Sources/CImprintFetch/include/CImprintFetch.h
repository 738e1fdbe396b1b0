// SPDX-License-Identifier: Apache-2.0
// CImprintFetch: one HTTP(S) download (or POST: the service's webhooks) through libcurl for card photos, with the address of every
// connection checked as it is opened (no DNS rebinding between the check and the connect), a total
// deadline and a size cap counted on the decoded bytes as they arrive. Imported by ImprintNetwork
// alone (AddressPolicy.swift, Download.swift), so libcurl belongs to the module that fetches.
#ifndef CIMPRINTFETCH_H
#define CIMPRINTFETCH_H

#include <stddef.h>
#include <stdint.h>

/// How an address is treated (CImprintFetch_address_class).
enum {
  CImprintFetch_ADDRESS_PUBLIC = 0,   ///< fetched
  CImprintFetch_ADDRESS_PRIVATE = 1,  ///< loopback, RFC 1918, CGNAT, unique local: only when allowed
  CImprintFetch_ADDRESS_NEVER = 2     ///< link-local (cloud metadata), multicast, unspecified, reserved
};

/// Classifies an address: family 4 (4 bytes) or 6 (16 bytes), network byte order. `name`, when
/// not NULL, receives a static description of the range ("loopback", "link-local", ...).
int CImprintFetch_address_class(int family, const uint8_t *bytes, const char **name);

/// The outcome of CImprintFetch_fetch.
enum {
  CImprintFetch_FETCH_OK = 0,
  CImprintFetch_FETCH_UNAVAILABLE = 1,   ///< libcurl cannot be loaded
  CImprintFetch_FETCH_BAD_URL = 2,       ///< not an http(s) URL with a host
  CImprintFetch_FETCH_REFUSED = 3,       ///< an address of the host is in a refused range
  CImprintFetch_FETCH_UNRESOLVED = 4,    ///< the host name does not resolve
  CImprintFetch_FETCH_HTTP_STATUS = 5,   ///< the final answer was not 200
  CImprintFetch_FETCH_TOO_LARGE = 6,     ///< the (decoded) body passed the limit
  CImprintFetch_FETCH_TIMEOUT = 7,       ///< the deadline passed
  CImprintFetch_FETCH_REDIRECTS = 8,     ///< too many redirects
  CImprintFetch_FETCH_FAILED = 9         ///< any other transfer error (detail holds libcurl's text)
};

/// One download's settings and results.
typedef struct {
  // Settings.
  size_t limit;          ///< the most body bytes kept, after content decoding
  long timeout_ms;       ///< the whole download, every redirect and slow byte included
  int allow_private;     ///< 1: CImprintFetch_ADDRESS_PRIVATE addresses are fetched too
  int max_redirects;     ///< redirects followed (each hop checked like the first)
  const char *user_agent;
  const uint8_t *post_body;  ///< not NULL: POST these bytes (any 2xx answer is OK) instead of GET
  size_t post_len;
  const char *post_type;     ///< the POST body's Content-Type
  const char *post_headers;  ///< NULL, or more header lines of the POST ("Name: value"), each
                             ///< ended by '\n' but the last
  // Results.
  uint8_t *body;         ///< malloc'd (free with CImprintFetch_free); NULL unless OK
  size_t body_len;
  long http_status;      ///< the last HTTP status seen
  int refused_never;     ///< REFUSED: 1 when the address is never fetched, 0 when only private
  char detail[512];      ///< what was refused or what failed, for the message
} CImprintFetch_Fetch;

/// Downloads `url` (blocking; call it off any cooperative thread pool). Returns an outcome.
int CImprintFetch_fetch(const char *url, CImprintFetch_Fetch *fetch);

/// Checks `url` as CImprintFetch_fetch checks each hop before it connects (http or https, a
/// host whose every address is allowed) without connecting. Returns OK or the refusal's outcome.
int CImprintFetch_check(const char *url, CImprintFetch_Fetch *fetch);

/// Frees a body returned by CImprintFetch_fetch.
void CImprintFetch_free(void *pointer);

#endif
