// SPDX-License-Identifier: Apache-2.0
// libmicrohttpd (the HTTP server of `imprint serve`), imported by ImprintService alone.
// microhttpd.h expects these system headers first.
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>
// The kernel's epoll and eventfd, which Swift's Glibc module leaves out: the server watches the
// sockets of suspended requests (DepartureWatch.swift) beside libmicrohttpd's own epoll.
#include <sys/epoll.h>
#include <sys/eventfd.h>

// MHD_set_connection_option is variadic, which Swift cannot call: this fixes its one option.
// Sets the connection's idle timeout in seconds (0: none); MHD_NO when it could not be set.
static inline enum MHD_Result CMHD_set_connection_timeout(
    struct MHD_Connection *connection, unsigned int seconds) {
  return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

// MHD_get_connection_info is variadic too: this asks for the one thing needed, the socket.
// The connection's socket, or -1 when libmicrohttpd gives none.
static inline int CMHD_connection_socket(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info == NULL ? -1 : info->connect_fd;
}

// The kernel's TCP_INFO, for the head watch (HeadWatch.swift): milliseconds since the socket
// last received data, or -1 when the kernel gives none.
#include <netinet/in.h>
#include <netinet/tcp.h>
static inline long long CMHD_milliseconds_since_data(int socket) {
  struct tcp_info info;
  socklen_t length = sizeof info;
  if (getsockopt(socket, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
  return (long long)info.tcpi_last_data_recv;
}
