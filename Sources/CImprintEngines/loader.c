// SPDX-License-Identifier: Apache-2.0
// CImprintEngines: finds the table of poppler's, poppler-glib's and qpdf's functions (see
// CImprintEngines.h): linked into this program, or in libImprintDocumentEngines.so.

#define _GNU_SOURCE
#include "CImprintEngines.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Defined when the program links the CImprintDocumentEngines target (tests, backends, fuzzers):
// a weak reference is NULL otherwise, and links nothing.
extern const CImprintEngines *ImprintDocumentEngines_table(void) __attribute__((weak));

static const char library_name[] = "libImprintDocumentEngines.so";
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const CImprintEngines *loaded;
static char failure[2048];
static int out_of_memory;

// Appends "path: reason" to `failure`, "; "-separated.
static void note(const char *path, const char *reason) {
  size_t used = strlen(failure);
  snprintf(failure + used, sizeof failure - used, "%s%s: %s", used ? "; " : "", path,
           reason ? reason : "unknown error");
}

static const CImprintEngines *open_table(const char *path) {
  if (access(path, F_OK) != 0) {
    note(path, "no such file");
    return NULL;
  }
  // RTLD_LAZY, as the dynamic linker binds a linked library's calls: each on its first use (the
  // table's own entries are data, bound now). RTLD_LOCAL: poppler's and qpdf's symbols stay out
  // of the program's global scope. RTLD_DEEPBIND: the library and the ones it needs look their
  // symbols up among themselves first; otherwise each of poppler's and qpdf's own lookups first
  // misses through all of the program's 55 libraries, and reading two PDFs took 0.91x the CPU
  // of a linked poppler (1.02x with it). The sanitizers' runtimes refuse it (they interpose
  // malloc and friends, which it would bypass): without it under them.
  int flags = RTLD_LAZY | RTLD_LOCAL;
  if (dlsym(RTLD_DEFAULT, "__asan_init") == NULL && dlsym(RTLD_DEFAULT, "__tsan_init") == NULL &&
      dlsym(RTLD_DEFAULT, "__msan_init") == NULL)
    flags |= RTLD_DEEPBIND;
  errno = 0;
  void *handle = dlopen(path, flags);
  if (handle == NULL) {
    int error = errno;
    const char *reason = dlerror();
    // Mapping the libraries failed for want of address space (a worker's RLIMIT_AS): the
    // memory limit, not a broken installation. glibc says "failed to map segment from shared
    // object" without the errno behind it (a file found readable fails to map for want of
    // address space, or on a noexec mount, which Imprint's folders are not).
    if (error == ENOMEM ||
        (reason != NULL && (strstr(reason, strerror(ENOMEM)) != NULL ||
                            strstr(reason, "failed to map segment") != NULL)))
      out_of_memory = 1;
    note(path, reason);
    return NULL;
  }
  const CImprintEngines *(*table)(void) =
      (const CImprintEngines *(*)(void))dlsym(handle, "ImprintDocumentEngines_table");
  if (table == NULL) {
    note(path, "no ImprintDocumentEngines_table in it");
    dlclose(handle);
    return NULL;
  }
  const CImprintEngines *engines = table();
  if (engines == NULL || engines->version != CIMPRINT_ENGINES_VERSION ||
      engines->size != sizeof(CImprintEngines)) {
    note(path, "built from other sources (its table's version differs)");
    dlclose(handle);
    return NULL;
  }
  return engines;
}

static void load(void) {
  if (ImprintDocumentEngines_table != NULL) {
    loaded = ImprintDocumentEngines_table();
    return;
  }
  // secure_getenv: a set-user-ID program ignores it. An absolute path only: dlopen would look
  // a bare name up in the system's folders, not where access() looked.
  const char *given = secure_getenv("IMPRINT_ENGINES");
  if (given != NULL && given[0] != '\0') {
    if (given[0] != '/')
      note(given, "IMPRINT_ENGINES must be an absolute path");
    else
      loaded = open_table(given);
    return;
  }
  char executable[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
  if (length <= 0) {
    note("/proc/self/exe", "unreadable");
    return;
  }
  executable[length] = '\0';
  char *slash = strrchr(executable, '/');
  if (slash == NULL) {
    note(executable, "not a path");
    return;
  }
  *slash = '\0';
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", executable, library_name);
  loaded = open_table(path);
  if (loaded != NULL) return;
  // An installed command: /usr/bin/imprint, /usr/lib/imprint/libImprintDocumentEngines.so.
  snprintf(path, sizeof path, "%s/../lib/imprint/%s", executable, library_name);
  loaded = open_table(path);
}

const CImprintEngines *CImprintEngines_get(void) {
  pthread_once(&once, load);
  return loaded;
}

const char *CImprintEngines_error(void) {
  pthread_once(&once, load);
  return loaded != NULL ? "" : failure;
}

int CImprintEngines_out_of_memory(void) {
  pthread_once(&once, load);
  return loaded == NULL && out_of_memory;
}
