// SPDX-License-Identifier: Apache-2.0
// CImprintFetch: card photo downloads and webhook calls through libcurl (see CImprintFetch.h), for
// ImprintNetwork alone.
//
// libcurl is the library FoundationNetworking's URLSession drives; Imprint links no library of
// its own for it (Package.swift declares none), so its functions are looked up with dlopen/dlsym
// in the copy the Swift runtime's FoundationNetworking already depends on. URLSession could not
// do this job: it exposes neither the address it connects to (so a name that resolves to a public
// address when checked and to 127.0.0.1 when connected would pass), nor a way to stop the
// transfer while the bytes arrive (its delegate is called on a queue that the transfer thread
// does not wait for, so a fast 1 GB body or a gzip bomb filled memory before the cap fired).

#include "CImprintFetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

// MARK: - Address ranges

static int in_v4(const uint8_t *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3, int prefix) {
  uint32_t address = ((uint32_t)a[0] << 24) | ((uint32_t)a[1] << 16) | ((uint32_t)a[2] << 8) | a[3];
  uint32_t network = ((uint32_t)b0 << 24) | ((uint32_t)b1 << 16) | ((uint32_t)b2 << 8) | b3;
  uint32_t mask = prefix == 0 ? 0 : 0xFFFFFFFFu << (32 - prefix);
  return (address & mask) == (network & mask);
}

static int v4_class(const uint8_t *a, const char **name) {
  static const struct {
    uint8_t b[4];
    int prefix;
    int kind;
    const char *name;
  } ranges[] = {
      {{0, 0, 0, 0}, 8, CImprintFetch_ADDRESS_NEVER, "unspecified, 0.0.0.0/8"},
      {{10, 0, 0, 0}, 8, CImprintFetch_ADDRESS_PRIVATE, "private, 10.0.0.0/8"},
      {{100, 64, 0, 0}, 10, CImprintFetch_ADDRESS_PRIVATE, "shared CGNAT, 100.64.0.0/10"},
      {{127, 0, 0, 0}, 8, CImprintFetch_ADDRESS_PRIVATE, "loopback, 127.0.0.0/8"},
      {{169, 254, 0, 0}, 16, CImprintFetch_ADDRESS_NEVER,
       "link-local, cloud metadata, 169.254.0.0/16"},
      {{172, 16, 0, 0}, 12, CImprintFetch_ADDRESS_PRIVATE, "private, 172.16.0.0/12"},
      {{192, 0, 0, 0}, 24, CImprintFetch_ADDRESS_NEVER, "reserved, 192.0.0.0/24"},
      {{192, 0, 2, 0}, 24, CImprintFetch_ADDRESS_NEVER, "documentation, 192.0.2.0/24"},
      {{192, 88, 99, 0}, 24, CImprintFetch_ADDRESS_NEVER, "6to4 relay, 192.88.99.0/24"},
      {{192, 168, 0, 0}, 16, CImprintFetch_ADDRESS_PRIVATE, "private, 192.168.0.0/16"},
      {{198, 18, 0, 0}, 15, CImprintFetch_ADDRESS_NEVER, "benchmarking, 198.18.0.0/15"},
      {{198, 51, 100, 0}, 24, CImprintFetch_ADDRESS_NEVER, "documentation, 198.51.100.0/24"},
      {{203, 0, 113, 0}, 24, CImprintFetch_ADDRESS_NEVER, "documentation, 203.0.113.0/24"},
      {{224, 0, 0, 0}, 4, CImprintFetch_ADDRESS_NEVER, "multicast, 224.0.0.0/4"},
      {{240, 0, 0, 0}, 4, CImprintFetch_ADDRESS_NEVER, "reserved or broadcast, 240.0.0.0/4"},
  };
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    if (in_v4(a, ranges[i].b[0], ranges[i].b[1], ranges[i].b[2], ranges[i].b[3],
              ranges[i].prefix)) {
      if (name) *name = ranges[i].name;
      return ranges[i].kind;
    }
  }
  if (name) *name = "public";
  return CImprintFetch_ADDRESS_PUBLIC;
}

static int prefix_is(const uint8_t *a, const uint8_t *prefix, int bits) {
  int bytes = bits / 8;
  if (memcmp(a, prefix, (size_t)bytes) != 0) return 0;
  int rest = bits % 8;
  if (rest == 0) return 1;
  uint8_t mask = (uint8_t)(0xFF << (8 - rest));
  return (a[bytes] & mask) == (prefix[bytes] & mask);
}

/// An IPv6 address that carries an IPv4 one is judged by the IPv4 one (a private address
/// behind NAT64 stays private; a public one is public).
static int embedded(const uint8_t *v4, const char **name) { return v4_class(v4, name); }

int CImprintFetch_address_class(int family, const uint8_t *a, const char **name) {
  if (family == 4) return v4_class(a, name);
  static const uint8_t zero[16] = {0};
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0};
  static const uint8_t nat64[12] = {0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};
  static const uint8_t nat64_local[6] = {0, 0x64, 0xFF, 0x9B, 0, 1};
  static const uint8_t six_to_four[2] = {0x20, 0x02};
  static const uint8_t teredo[4] = {0x20, 0x01, 0, 0};
  static const uint8_t documentation[4] = {0x20, 0x01, 0x0D, 0xB8};
  static const uint8_t discard[8] = {0x01, 0, 0, 0, 0, 0, 0, 0};
  static const uint8_t unique_local[1] = {0xFC};
  static const uint8_t link_local[2] = {0xFE, 0x80};
  static const uint8_t site_local[2] = {0xFE, 0xC0};
  static const uint8_t multicast[1] = {0xFF};
  if (memcmp(a, zero, 15) == 0 && a[15] == 0) {
    if (name) *name = "unspecified, ::";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (memcmp(a, zero, 15) == 0 && a[15] == 1) {
    if (name) *name = "loopback, ::1";
    return CImprintFetch_ADDRESS_PRIVATE;
  }
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), ::a.b.c.d (compatible, deprecated),
  // 64:ff9b::a.b.c.d (NAT64): the IPv4 address inside decides.
  if (memcmp(a, mapped, 12) == 0 || memcmp(a, translated, 12) == 0 || memcmp(a, zero, 12) == 0 ||
      memcmp(a, nat64, 12) == 0) {
    return embedded(a + 12, name);
  }
  if (prefix_is(a, nat64_local, 48)) {
    if (name) *name = "local-use NAT64, 64:ff9b:1::/48";
    return CImprintFetch_ADDRESS_PRIVATE;
  }
  if (prefix_is(a, six_to_four, 16)) return embedded(a + 2, name);
  if (prefix_is(a, teredo, 32)) {
    if (name) *name = "Teredo tunnel, 2001::/32";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (prefix_is(a, documentation, 32)) {
    if (name) *name = "documentation, 2001:db8::/32";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (prefix_is(a, discard, 64)) {
    if (name) *name = "discard, 100::/64";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (prefix_is(a, unique_local, 7)) {
    if (name) *name = "unique local, fc00::/7";
    return CImprintFetch_ADDRESS_PRIVATE;
  }
  if (prefix_is(a, link_local, 10)) {
    if (name) *name = "link-local, fe80::/10";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (prefix_is(a, site_local, 10)) {
    if (name) *name = "site-local, fec0::/10";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (prefix_is(a, multicast, 8)) {
    if (name) *name = "multicast, ff00::/8";
    return CImprintFetch_ADDRESS_NEVER;
  }
  if (name) *name = "public";
  return CImprintFetch_ADDRESS_PUBLIC;
}

/// Whether `address` may be connected to: 1 yes; 0 no (private), -1 never; when not, `detail`
/// says why.
static int address_allowed(const struct sockaddr *address, int allow_private, char *detail,
                           size_t detail_len) {
  const uint8_t *bytes;
  int family;
  char text[INET6_ADDRSTRLEN] = "?";
  if (address->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)address;
    bytes = (const uint8_t *)&in->sin_addr;
    family = 4;
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
  } else if (address->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)address;
    bytes = (const uint8_t *)&in6->sin6_addr;
    family = 6;
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
  } else {
    snprintf(detail, detail_len, "an address of family %d", address->sa_family);
    return 0;
  }
  const char *name = "";
  int kind = CImprintFetch_address_class(family, bytes, &name);
  if (kind == CImprintFetch_ADDRESS_PUBLIC) return 1;
  if (kind == CImprintFetch_ADDRESS_PRIVATE && allow_private) return 1;
  snprintf(detail, detail_len, "%s (%s)", text, name);
  return kind == CImprintFetch_ADDRESS_NEVER ? -1 : 0;
}

// MARK: - libcurl, looked up at run time

static struct {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  CURLU *(*url)(void);
  CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
  CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
  void (*url_cleanup)(CURLU *);
  void (*free)(void *);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  int loaded;
} curl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void load_curl(void) {
  void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!library) return;
#define LOOK(field, symbol)                 \
  *(void **)(&curl.field) = dlsym(library, symbol); \
  if (!curl.field) return;
  LOOK(global_init, "curl_global_init")
  LOOK(easy_init, "curl_easy_init")
  LOOK(easy_setopt, "curl_easy_setopt")
  LOOK(easy_perform, "curl_easy_perform")
  LOOK(easy_getinfo, "curl_easy_getinfo")
  LOOK(easy_cleanup, "curl_easy_cleanup")
  LOOK(easy_strerror, "curl_easy_strerror")
  LOOK(url, "curl_url")
  LOOK(url_set, "curl_url_set")
  LOOK(url_get, "curl_url_get")
  LOOK(url_cleanup, "curl_url_cleanup")
  LOOK(free, "curl_free")
  LOOK(slist_append, "curl_slist_append")
  LOOK(slist_free_all, "curl_slist_free_all")
#undef LOOK
  if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return;
  curl.loaded = 1;
}

// MARK: - One download

typedef struct {
  CImprintFetch_Fetch *fetch;
  uint8_t *data;
  size_t length;
  size_t capacity;
  int too_large;
  int refused;
} Transfer;

static size_t receive(char *data, size_t size, size_t count, void *context) {
  Transfer *transfer = context;
  size_t n = size * count;
  if (n > transfer->fetch->limit || transfer->length > transfer->fetch->limit - n) {
    transfer->too_large = 1;
    return 0;  // CURLE_WRITE_ERROR: the transfer stops here
  }
  if (transfer->length + n > transfer->capacity) {
    size_t capacity = transfer->capacity ? transfer->capacity : 65536;
    while (capacity < transfer->length + n) capacity *= 2;
    if (capacity > transfer->fetch->limit) capacity = transfer->fetch->limit;
    uint8_t *grown = realloc(transfer->data, capacity);
    if (!grown) {
      transfer->too_large = 1;
      return 0;
    }
    transfer->data = grown;
    transfer->capacity = capacity;
  }
  memcpy(transfer->data + transfer->length, data, n);
  transfer->length += n;
  return n;
}

/// Called by libcurl for every connection it opens: the address it is about to connect to is
/// checked here, after its own name resolution, so what is checked is what is connected to.
static curl_socket_t open_socket(void *context, curlsocktype purpose,
                                 struct curl_sockaddr *address) {
  Transfer *transfer = context;
  (void)purpose;
  int allowed = address_allowed(&address->addr, transfer->fetch->allow_private,
                                transfer->fetch->detail, sizeof transfer->fetch->detail);
  if (allowed != 1) {
    transfer->refused = 1;
    transfer->fetch->refused_never = allowed < 0;
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/// Resolves `host` and refuses it when any of its addresses is refused (a name with one public
/// and one private address is not fetched, whichever libcurl would try first).
static int check_host(const char *host, CImprintFetch_Fetch *fetch) {
  char *detail = fetch->detail;
  size_t detail_len = sizeof fetch->detail;
  // [::1] arrives with its brackets from the URL parser.
  char name[256];
  size_t length = strlen(host);
  if (length >= sizeof name) return CImprintFetch_FETCH_BAD_URL;
  if (length >= 2 && host[0] == '[' && host[length - 1] == ']') {
    memcpy(name, host + 1, length - 2);
    name[length - 2] = 0;
  } else {
    memcpy(name, host, length + 1);
  }
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo *found = NULL;
  if (getaddrinfo(name, NULL, &hints, &found) != 0 || !found) {
    snprintf(detail, detail_len, "host '%s' does not resolve", name);
    return CImprintFetch_FETCH_UNRESOLVED;
  }
  int result = CImprintFetch_FETCH_OK;
  for (struct addrinfo *entry = found; entry; entry = entry->ai_next) {
    char why[400];
    int allowed = address_allowed(entry->ai_addr, fetch->allow_private, why, sizeof why);
    if (allowed != 1) {
      fetch->refused_never = allowed < 0;
      snprintf(detail, detail_len, "host '%s' resolves to %s", name, why);
      result = CImprintFetch_FETCH_REFUSED;
      break;
    }
  }
  freeaddrinfo(found);
  return result;
}

/// Checks the scheme and host of `url`.
static int check_url(const char *url, CImprintFetch_Fetch *fetch) {
  char *detail = fetch->detail;
  size_t detail_len = sizeof fetch->detail;
  CURLU *parsed = curl.url();
  if (!parsed) return CImprintFetch_FETCH_FAILED;
  int result = CImprintFetch_FETCH_OK;
  char *scheme = NULL;
  char *host = NULL;
  if (curl.url_set(parsed, CURLUPART_URL, url, 0) != CURLUE_OK ||
      curl.url_get(parsed, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl.url_get(parsed, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host || !*host) {
    snprintf(detail, detail_len, "not a URL with a host");
    result = CImprintFetch_FETCH_BAD_URL;
  } else if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
    snprintf(detail, detail_len, "only http and https URLs are downloaded");
    result = CImprintFetch_FETCH_BAD_URL;
  } else {
    result = check_host(host, fetch);
  }
  if (scheme) curl.free(scheme);
  if (host) curl.free(host);
  curl.url_cleanup(parsed);
  return result;
}

/// Resets the results of `fetch` and loads libcurl; UNAVAILABLE when it cannot be loaded.
static int begin(CImprintFetch_Fetch *fetch) {
  fetch->body = NULL;
  fetch->body_len = 0;
  fetch->http_status = 0;
  fetch->detail[0] = 0;
  fetch->refused_never = 0;
  pthread_once(&curl_once, load_curl);
  if (!curl.loaded) {
    snprintf(fetch->detail, sizeof fetch->detail, "libcurl.so.4 cannot be loaded");
    return CImprintFetch_FETCH_UNAVAILABLE;
  }
  return CImprintFetch_FETCH_OK;
}

int CImprintFetch_check(const char *url, CImprintFetch_Fetch *fetch) {
  int loaded = begin(fetch);
  return loaded != CImprintFetch_FETCH_OK ? loaded : check_url(url, fetch);
}

int CImprintFetch_fetch(const char *url, CImprintFetch_Fetch *fetch) {
  int loaded = begin(fetch);
  if (loaded != CImprintFetch_FETCH_OK) return loaded;
  long deadline = now_ms() + fetch->timeout_ms;
  CURL *easy = curl.easy_init();
  if (!easy) return CImprintFetch_FETCH_FAILED;
  Transfer transfer = {fetch, NULL, 0, 0, 0, 0};
  char error[CURL_ERROR_SIZE] = "";
  curl.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
  curl.easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl.easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  // Proxies from the environment are not used: the address checked must be the server's own.
  curl.easy_setopt(easy, CURLOPT_PROXY, "");
  curl.easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
  curl.easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)fetch->limit);
  curl.easy_setopt(easy, CURLOPT_WRITEFUNCTION, receive);
  curl.easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
  curl.easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  curl.easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &transfer);
  if (fetch->user_agent) curl.easy_setopt(easy, CURLOPT_USERAGENT, fetch->user_agent);
  struct curl_slist *headers = NULL;
  if (fetch->post_body) {
    // A POST: its body as given, its type in a header added (and post_headers, if any).
    curl.easy_setopt(easy, CURLOPT_POST, 1L);
    curl.easy_setopt(easy, CURLOPT_POSTFIELDS, (const char *)fetch->post_body);
    curl.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)fetch->post_len);
    char type[300];
    snprintf(type, sizeof type, "Content-Type: %s",
             fetch->post_type ? fetch->post_type : "application/octet-stream");
    // The lines: the type, no Expect, then post_headers cut at each '\n' (libcurl copies each).
    const char *more = fetch->post_headers;
    char line[1024];
    for (int i = 0; i < 2 || (more && *more); i++) {
      const char *text = i == 0 ? type : "Expect:";
      if (i >= 2) {
        const char *end = strchr(more, '\n');
        size_t length = end ? (size_t)(end - more) : strlen(more);
        if (length >= sizeof line) length = sizeof line - 1;
        memcpy(line, more, length);
        line[length] = 0;
        more = end ? end + 1 : more + strlen(more);
        text = line;
      }
      struct curl_slist *longer = curl.slist_append(headers, text);
      if (!longer) {
        // libcurl keeps the list it could not lengthen: freed here.
        if (headers) curl.slist_free_all(headers);
        curl.easy_cleanup(easy);
        return CImprintFetch_FETCH_FAILED;
      }
      headers = longer;
    }
    curl.easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  }
  char *current = strdup(url);
  int result = CImprintFetch_FETCH_FAILED;
  for (int hop = 0; current; hop++) {
    result = check_url(current, fetch);
    if (result != CImprintFetch_FETCH_OK) break;
    long remaining = deadline - now_ms();
    if (remaining <= 0) {
      result = CImprintFetch_FETCH_TIMEOUT;
      break;
    }
    transfer.length = 0;
    curl.easy_setopt(easy, CURLOPT_URL, current);
    curl.easy_setopt(easy, CURLOPT_TIMEOUT_MS, remaining);
    curl.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, remaining);
    CURLcode code = curl.easy_perform(easy);
    long status = 0;
    curl.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    fetch->http_status = status;
    if (transfer.refused) {
      result = CImprintFetch_FETCH_REFUSED;
      break;
    }
    if (transfer.too_large || code == CURLE_FILESIZE_EXCEEDED) {
      result = CImprintFetch_FETCH_TOO_LARGE;
      break;
    }
    if (code == CURLE_OPERATION_TIMEDOUT) {
      result = CImprintFetch_FETCH_TIMEOUT;
      break;
    }
    if (code != CURLE_OK) {
      snprintf(fetch->detail, sizeof fetch->detail, "%s",
               error[0] ? error : curl.easy_strerror(code));
      result = CImprintFetch_FETCH_FAILED;
      break;
    }
    if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
      // Counted before the location is read: a call that follows none (a POST) stops here,
      // whether the answer names a location or not.
      if (hop >= fetch->max_redirects) {
        if (fetch->max_redirects == 0)
          snprintf(fetch->detail, sizeof fetch->detail, "HTTP %ld, a redirect", status);
        else
          snprintf(fetch->detail, sizeof fetch->detail, "more than %d redirects",
                   fetch->max_redirects);
        result = CImprintFetch_FETCH_REDIRECTS;
        break;
      }
      char *location = NULL;
      curl.easy_getinfo(easy, CURLINFO_REDIRECT_URL, &location);
      free(current);
      current = location ? strdup(location) : NULL;
      if (!current) {
        snprintf(fetch->detail, sizeof fetch->detail, "a redirect without a location");
        result = CImprintFetch_FETCH_FAILED;
      }
      continue;
    }
    // A download wants 200; a POST is taken by any 2xx.
    if (fetch->post_body ? (status < 200 || status > 299) : status != 200) {
      result = CImprintFetch_FETCH_HTTP_STATUS;
      break;
    }
    result = CImprintFetch_FETCH_OK;
    break;
  }
  free(current);
  curl.easy_cleanup(easy);
  if (headers) curl.slist_free_all(headers);
  if (result == CImprintFetch_FETCH_OK) {
    fetch->body = transfer.data;
    fetch->body_len = transfer.length;
  } else {
    free(transfer.data);
  }
  return result;
}

void CImprintFetch_free(void *pointer) { free(pointer); }
