// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the process plumbing of the sandbox and its workers (the C half is
// CImprintProcess, which only this module imports).

internal import CImprintProcess
internal import CPango
import Foundation

/// Process-level calls of the sandbox (pipes, descriptors, parent death) and of its workers
/// (malloc settings, memory exhaustion told by an exit status).
enum WorkerPlumbing {
  /// For document workers: no fastbins, whose consolidation took a third of qpdf's and
  /// poppler's time parsing long PDFs (17 % less time on a 2 415-page manual).
  static func suitParsers() {
    CImprintProcess_tune_malloc_for_parsing()
  }

  /// A pipe whose two ends close on exec, made atomically (`pipe2` with `O_CLOEXEC`), so that
  /// a worker started by another thread at the same moment never inherits it.
  ///
  /// - Returns: the read and write ends, or nil with `errno` set.
  static func closeOnExecPipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [0, 0]
    guard CImprintProcess_pipe_cloexec(&ends) == 0 else { return nil }
    return (ends[0], ends[1])
  }

  /// A connected pair of Unix stream sockets that close on exec: a request channel that the
  /// writer can send on with `MSG_NOSIGNAL`, so that a peer gone away is an error, not SIGPIPE.
  ///
  /// - Returns: the two ends, or nil with `errno` set.
  static func closeOnExecSocketPair() -> (Int32, Int32)? {
    var ends: [Int32] = [0, 0]
    guard CImprintProcess_socketpair_cloexec(&ends) == 0 else { return nil }
    return (ends[0], ends[1])
  }

  /// Closes every file descriptor from `lowest` up (in a freshly forked worker: nothing of the
  /// parent's but the standard streams).
  static func closeDescriptors(from lowest: Int32) {
    CImprintProcess_close_from(lowest)
  }

  /// Has a program started with `actions` close every descriptor from `lowest` up as it
  /// starts, close-on-exec or not.
  ///
  /// - Returns: false when the action cannot be added (glibc before 2.34).
  static func closeOnSpawn(_ actions: inout posix_spawn_file_actions_t, from lowest: Int32)
    -> Bool
  {
    CImprintProcess_spawn_close_from(&actions, lowest) == 0
  }

  /// In a freshly forked child: SIGKILL when the parent's forking thread ends.
  ///
  /// `PR_SET_PDEATHSIG` follows the thread that forked: fork from a thread that lives as long
  /// as the process (the main thread); a pool thread that exits when idle would take the child
  /// with it.
  ///
  /// - Returns: false when it cannot be set or `parent` has already died (then exit).
  static func killOnParentDeath(parent: Int32) -> Bool {
    CImprintProcess_kill_on_parent_death(parent) == 0
  }

  /// Starts a thread that kills this process as soon as `parent` ends (a pidfd is polled):
  /// for a worker started by `posix_spawn` from any thread.
  ///
  /// - Returns: false when `parent` is already gone or the thread cannot start.
  static func exitWithParent(_ parent: Int32) -> Bool {
    CImprintProcess_exit_with_parent(parent) == 0
  }

  /// The exit status of a worker whose allocation failed: how its parent tells a memory limit
  /// from a crash, without reading what the worker printed.
  static let outOfMemoryExitStatus = Int32(CImprintProcess_EXIT_OUT_OF_MEMORY)

  /// Makes running out of memory end this process with `outOfMemoryExitStatus`.
  ///
  /// Two ways a library dies of a failed allocation: a trap or abort with errno ENOMEM right
  /// after it (the Swift runtime, libstdc++'s uncaught `bad_alloc`, poppler's `gmalloc`), caught
  /// by a signal handler; and GLib's `g_malloc`, which logs a fatal error first (clobbering
  /// errno before it traps), caught by a handler for GLib's fatal errors that still sees
  /// ENOMEM. Any other fatal GLib error goes on to GLib's own handler as before.
  static func exitStatusOnAllocationFailure() {
    CImprintProcess_exit_status_on_allocation_failure()
    let fatal = GLogLevelFlags(rawValue: G_LOG_LEVEL_ERROR.rawValue | G_LOG_FLAG_FATAL.rawValue)
    g_log_set_handler(
      "GLib", fatal,
      { domain, level, message, data in
        if errno == ENOMEM { _exit(Int32(CImprintProcess_EXIT_OUT_OF_MEMORY)) }
        g_log_default_handler(domain, level, message, data)
      }, nil)
  }
}
