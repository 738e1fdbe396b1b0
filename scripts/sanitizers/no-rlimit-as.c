// SPDX-License-Identifier: Apache-2.0
// Preloaded by scripts/sanitize: makes setrlimit(RLIMIT_AS, ...) a no-op, passing every other
// limit on to libc.
//
// The document sandbox caps a worker's address space with RLIMIT_AS (1536 MB by default). A
// sanitized process reserves terabytes of shadow address space, so with that cap the ASan or TSan
// runtime fails its next mmap ("ThreadSanitizer failed to allocate ... (errno: 12)") and every
// worker dies: the tests of documents would only report "worker crashed". No test depends on
// the address-space cap itself; the CPU-time limit (RLIMIT_CPU) stays in force.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/resource.h>

typedef int (*setrlimit_fn)(__rlimit_resource_t, const struct rlimit *);

static int forward(const char *name, __rlimit_resource_t resource, const struct rlimit *limit) {
  setrlimit_fn next = (setrlimit_fn)dlsym(RTLD_NEXT, name);
  return next ? next(resource, limit) : -1;
}

int setrlimit(__rlimit_resource_t resource, const struct rlimit *limit) {
  if (resource == RLIMIT_AS) return 0;
  return forward("setrlimit", resource, limit);
}

int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *limit) {
  if (resource == RLIMIT_AS) return 0;
  return forward("setrlimit64", resource, (const struct rlimit *)limit);
}
