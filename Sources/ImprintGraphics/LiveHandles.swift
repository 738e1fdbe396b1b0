// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: counts live C handles per kind so tests can assert that nothing leaks.

internal import CImprintShims
import Synchronization

/// Process-wide settings for command-line use (never called by the library itself).
public enum ProcessTuning {
  /// Keeps buffers of up to 64 MB in the heap for reuse instead of a fresh mmap (page faults and
  /// zeroing) each time: photos and pages are a few hundred kilobytes, made and freed per card.
  public static func keepLargeBuffersInHeap() {
    CImprintShims_tune_malloc(64 << 20, 128 << 20)
  }

  /// For document workers: no fastbins, whose consolidation took a third of qpdf's and
  /// poppler's time parsing long PDFs (17 % less time on a 2 415-page manual).
  public static func suitParsers() {
    CImprintShims_tune_malloc_for_parsing()
  }

  /// A pipe whose two ends close on exec, made atomically (`pipe2` with `O_CLOEXEC`), so that
  /// a worker started by another thread at the same moment never inherits it.
  ///
  /// - Returns: the read and write ends, or nil with `errno` set.
  public static func closeOnExecPipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [0, 0]
    guard CImprintShims_pipe_cloexec(&ends) == 0 else { return nil }
    return (ends[0], ends[1])
  }

  /// Closes every file descriptor from `lowest` up (in a freshly forked worker: nothing of the
  /// parent's but the standard streams).
  public static func closeDescriptors(from lowest: Int32) {
    CImprintShims_close_from(lowest)
  }

  /// In a freshly forked child: SIGKILL when the parent's forking thread ends.
  ///
  /// `PR_SET_PDEATHSIG` follows the thread that forked: fork from a thread that lives as long
  /// as the process (the main thread); a pool thread that exits when idle would take the child
  /// with it.
  ///
  /// - Returns: false when it cannot be set or `parent` has already died (then exit).
  public static func killOnParentDeath(parent: Int32) -> Bool {
    CImprintShims_kill_on_parent_death(parent) == 0
  }

  /// Starts a thread that kills this process as soon as `parent` ends (a pidfd is polled):
  /// for a worker started by `posix_spawn` from any thread.
  ///
  /// - Returns: false when `parent` is already gone or the thread cannot start.
  public static func exitWithParent(_ parent: Int32) -> Bool {
    CImprintShims_exit_with_parent(parent) == 0
  }

  /// The exit status `exitStatusOnAllocationFailure` gives.
  public static let outOfMemoryExitStatus = Int32(CImprintShims_EXIT_OUT_OF_MEMORY)

  /// Makes a crash right after a failed allocation (a trap or abort with errno ENOMEM, as the
  /// Swift runtime, libstdc++ and GLib do when memory runs out) end the process with
  /// `outOfMemoryExitStatus`, so that its parent can tell a memory limit from a crash.
  public static func exitStatusOnAllocationFailure() {
    CImprintShims_exit_status_on_allocation_failure()
  }

  /// A connected pair of Unix stream sockets that close on exec: a request channel that the
  /// writer can send on with `MSG_NOSIGNAL`, so that a peer gone away is an error, not SIGPIPE.
  ///
  /// - Returns: the two ends, or nil with `errno` set.
  public static func closeOnExecSocketPair() -> (Int32, Int32)? {
    var ends: [Int32] = [0, 0]
    guard CImprintShims_socketpair_cloexec(&ends) == 0 else { return nil }
    return (ends[0], ends[1])
  }
}

/// Counts the C objects currently owned by Imprint's wrappers, per kind (debug builds only).
///
/// Every owner type increments its kind when it takes ownership and decrements it in `deinit`;
/// tests assert that all counts are zero after a suite. Release builds count nothing.
public enum LiveHandles {
  private static let counts = Mutex<[String: Int]>([:])

  /// The number of live handles of `kind` (for example `cairo_t`), or of all kinds when nil.
  public static func count(_ kind: String? = nil) -> Int {
    counts.withLock { counts in
      if let kind { return counts[kind, default: 0] }
      return counts.values.reduce(0, +)
    }
  }

  package static func opened(_ kind: String) {
    #if DEBUG
      counts.withLock { $0[kind, default: 0] += 1 }
    #endif
  }

  package static func closed(_ kind: String) {
    #if DEBUG
      counts.withLock { $0[kind, default: 0] -= 1 }
    #endif
  }
}
