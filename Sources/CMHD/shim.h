// SPDX-License-Identifier: Apache-2.0
// libmicrohttpd (the HTTP server of `imprint serve`), imported by ImprintService alone.
// microhttpd.h expects these system headers first.
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>
