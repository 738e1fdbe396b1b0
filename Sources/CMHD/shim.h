// SPDX-License-Identifier: Apache-2.0
// libmicrohttpd (the HTTP server of `imprint serve`), imported by ImprintService alone.
// microhttpd.h expects these system headers first.
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

// MHD_set_connection_option is variadic, which Swift cannot call: this fixes its one option.
// Sets the connection's idle timeout in seconds (0: none); MHD_NO when it could not be set.
static inline enum MHD_Result CMHD_set_connection_timeout(
    struct MHD_Connection *connection, unsigned int seconds) {
  return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}
