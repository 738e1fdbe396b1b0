// SPDX-License-Identifier: Apache-2.0
// CImprintProcess: the process plumbing of ImprintDocuments' workers that glibc declares only
// under _GNU_SOURCE or that must run in a signal handler. Only ImprintDocuments imports it.
#ifndef CIMPRINTPROCESS_H
#define CIMPRINTPROCESS_H

#include <spawn.h>
#include <sys/types.h>

/// Turns glibc's fastbins off (M_MXFAST 0): parsers that free millions of small objects
/// otherwise spend a third of their time consolidating them.
void CImprintProcess_tune_malloc_for_parsing(void);

/// pipe2(fds, O_CLOEXEC): both ends close on exec, atomically (no other thread's spawn can
/// inherit them). Returns 0, or -1 with errno set.
int CImprintProcess_pipe_cloexec(int fds[2]);

/// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC): a two-way channel whose ends close on exec.
int CImprintProcess_socketpair_cloexec(int fds[2]);

/// Closes every descriptor from `lowest` up (close_range, or those /proc/self/fd lists).
void CImprintProcess_close_from(int lowest);

/// Adds to `actions` the closing of every descriptor from `lowest` up in the spawned program
/// (glibc's posix_spawn_file_actions_addclosefrom_np, 2.34 and later), close-on-exec or not.
/// Returns 0, or an error number.
int CImprintProcess_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// In a freshly forked child: SIGKILL when the parent (thread) ends (prctl PR_SET_PDEATHSIG).
/// Returns -1 when that cannot be set or `parent` has already died (the caller should exit).
int CImprintProcess_kill_on_parent_death(pid_t parent);

/// Starts a thread that kills this process when `parent` ends (a pidfd polled, or getppid
/// every 250 ms before Linux 5.3). Unlike PR_SET_PDEATHSIG it does not depend on the life of
/// the parent's thread that started this process. Returns -1 when `parent` is already gone.
int CImprintProcess_exit_with_parent(pid_t parent);

/// The exit status of a worker whose allocation failed (see the function below).
#define CImprintProcess_EXIT_OUT_OF_MEMORY 86

/// Makes SIGABRT, SIGSEGV, SIGILL and SIGTRAP raised right after a failed allocation (errno
/// ENOMEM) end the process with status `CImprintProcess_EXIT_OUT_OF_MEMORY` instead.
void CImprintProcess_exit_status_on_allocation_failure(void);

#endif
