// SPDX-License-Identifier: Apache-2.0
// CImprintShims: process plumbing glibc declares only under _GNU_SOURCE.

#define _GNU_SOURCE
#include "CImprintShims.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int CImprintShims_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int CImprintShims_socketpair_cloexec(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}

void CImprintShims_close_from(int lowest) {
  if (close_range((unsigned)lowest, ~0U, 0) == 0) return;
  // Kernels before 5.9: close what /proc lists (never every possible number).
  DIR *folder = opendir("/proc/self/fd");
  if (!folder) return;
  int own = dirfd(folder);
  struct dirent *entry;
  int open_fds[1024];
  int count = 0;
  while ((entry = readdir(folder)) != NULL && count < 1024) {
    int fd = atoi(entry->d_name);
    if (fd >= lowest && fd != own) open_fds[count++] = fd;
  }
  closedir(folder);
  for (int i = 0; i < count; i++) close(open_fds[i]);
}
