// SPDX-License-Identifier: Apache-2.0
// CImprintShims: process plumbing glibc declares only under _GNU_SOURCE.

#define _GNU_SOURCE
#include "CImprintShims.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

int CImprintShims_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int CImprintShims_socketpair_cloexec(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}
