// SPDX-License-Identifier: Apache-2.0
// CImprintProcess: process plumbing for document workers (glibc declares some only under
// _GNU_SOURCE).

#define _GNU_SOURCE
#include "CImprintProcess.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

void CImprintProcess_tune_malloc_for_parsing(void) { mallopt(M_MXFAST, 0); }

int CImprintProcess_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int CImprintProcess_socketpair_cloexec(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}

void CImprintProcess_close_from(int lowest) {
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

int CImprintProcess_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
  return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int CImprintProcess_kill_on_parent_death(pid_t parent) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
  // The parent may have died between fork and prctl: then no signal will ever come.
  return getppid() == parent ? 0 : -1;
}

static pid_t watched_parent;

static void *watch_parent(void *unused) {
  (void)unused;
  int descriptor = (int)syscall(SYS_pidfd_open, watched_parent, 0);
  if (descriptor >= 0) {
    // Readable once the parent has ended (a zombie included).
    struct pollfd event = {descriptor, POLLIN, 0};
    while (poll(&event, 1, -1) < 0 && errno == EINTR) {
    }
  } else {
    // No pidfd (kernels before 5.3) or the parent is already gone: ask who the parent is.
    while (getppid() == watched_parent) usleep(250000);
  }
  kill(getpid(), SIGKILL);
  return NULL;
}

int CImprintProcess_exit_with_parent(pid_t parent) {
  if (getppid() != parent) return -1;
  watched_parent = parent;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attributes, 64 * 1024);
  pthread_t thread;
  int status = pthread_create(&thread, &attributes, watch_parent, NULL);
  pthread_attr_destroy(&attributes);
  return status == 0 ? 0 : -1;
}

static void exit_on_allocation_failure(int signal_number) {
  // errno is the failed allocation's ENOMEM when the runtime traps or aborts right after it
  // (Swift's swift_slowAlloc, libstdc++'s bad_alloc, GLib's g_malloc); otherwise the handler
  // returns and the signal, reset to its default action, ends the process as before.
  (void)signal_number;
  if (errno == ENOMEM) _exit(CImprintProcess_EXIT_OUT_OF_MEMORY);
}

void CImprintProcess_exit_status_on_allocation_failure(void) {
  struct sigaction action;
  action.sa_handler = exit_on_allocation_failure;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_NODEFER;
  int signals[] = {SIGABRT, SIGSEGV, SIGILL, SIGTRAP};
  for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    sigaction(signals[i], &action, NULL);
  }
}
