// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a program run from outside and measured: exit status, output, peak memory
// of it and every child it reaped, seconds, with a hang guard that kills its whole group.

import Foundation

/// What a measured run did.
public struct MeasuredRun: Sendable {
  /// The exit status; minus the signal's number when a signal ended it; 999 when the hang guard
  /// killed it.
  public var status: Int32
  /// Standard output.
  public var stdout: String
  /// Standard error.
  public var stderr: String
  /// The peak resident memory (KiB) of the program and of every child it waited for; huge
  /// (`Int.max / 2`) when it could not be measured (the hang guard fired), so that a memory bound
  /// never passes for want of a number.
  public var peakKiB: Int
  /// Seconds from start to end.
  public var seconds: Double

  /// The peak in MiB.
  public var peakMB: Int { peakKiB / 1024 }
}

/// Runs `argv` (looked up on PATH unless it holds a slash) and measures it.
///
/// The peak is measured by a small python3 parent (getrusage RUSAGE_CHILDREN): a process
/// started straight from the test process inherits the test's high-water mark at exec, hundreds
/// of megabytes that are not the program's. The program starts with default signal handling
/// and an empty signal mask (the test runner blocks SIGTERM and ignores others, and a child
/// inherits both), in a process group of its own; after `timeout` seconds (a hang guard,
/// generous for a loaded machine) the whole group is killed with SIGKILL, its workers too.
///
/// - Parameters:
///   - argv: the program and its arguments.
///   - stdinPath: the file standard input reads; /dev/null when nil.
///   - timeout: seconds before the hang guard fires (ten times more under a sanitizer).
/// - Returns: what the run did.
/// - Throws: `POSIXError` when python3 cannot be started, `MeasuringFailed` when it could not
///   run the program or report on it.
public func runMeasured(_ argv: [String], stdinPath: String? = nil, timeout: Double = 180) throws
  -> MeasuredRun
{
  let scratch = TemporaryFolder()
  let outPath = scratch.file("stdout")
  let errPath = scratch.file("stderr")
  let peakPath = scratch.file("peak")
  let start = Date()
  let pid = try spawnInGroup(
    ["python3", "-c", peakScript, peakPath] + argv, stdin: stdinPath ?? "/dev/null",
    stdout: outPath, stderr: errPath)
  var status: Int32 = 0
  var guardFired = false
  while true {
    let done = waitpid(pid, &status, WNOHANG)
    if done == pid || (done < 0 && errno != EINTR) { break }
    if Date().timeIntervalSince(start) > Sanitizer.seconds(timeout) {
      kill(-pid, SIGKILL)
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      guardFired = true
      break
    }
    usleep(10_000)
  }
  let seconds = Date().timeIntervalSince(start)
  let read = { (path: String) in
    String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
  }
  // "STATUS PEAK" from the python3 parent, which outlives the program by a moment only.
  let measured = read(peakPath).split(separator: " ").compactMap { Int($0) }
  let parentFailed = status & 0x7F != 0 || (status >> 8) & 0xFF != 0
  guard guardFired || (!parentFailed && measured.count == 2) else {
    throw MeasuringFailed(description: "wait status \(status): \(read(errPath))")
  }
  return MeasuredRun(
    status: guardFired ? 999 : Int32(measured[0]), stdout: read(outPath), stderr: read(errPath),
    peakKiB: guardFired ? Int.max / 2 : measured[1], seconds: seconds)
}

/// The python3 parent could not run the program or report on it.
public struct MeasuringFailed: Error, CustomStringConvertible {
  /// What went wrong, with the parent's standard error.
  public var description: String
}

/// Runs its arguments with the standard streams it was given, then writes "STATUS PEAK" to the
/// file named first (status negative for a signal, peak in KiB).
private let peakScript = pythonFixture("peak_memory.py")

/// Starts `argv` in a process group of its own, with default signal handling and an empty mask.
///
/// Its standard streams are files; no other descriptor of the test runner is handed down. `posix_spawn`: Foundation's Process waits for its children on
/// a run loop, which hung here, and passes on the test runner's blocked SIGTERM.
/// Stop it with `kill(pid, SIGKILL)` (or `kill(-pid, SIGKILL)` for its children too) and reap it
/// with `waitpid`.
///
/// - Parameters:
///   - argv: the program (looked up on PATH) and its arguments.
///   - stdin: the file standard input reads.
///   - stdout: the file standard output is written to (created or truncated).
///   - stderr: the file standard error is written to (created or truncated).
/// - Returns: its process id, which is also its group's.
/// - Throws: `POSIXError` when it cannot be started.
public func spawnInGroup(_ argv: [String], stdin: String, stdout: String, stderr: String) throws
  -> pid_t
{
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  // Nothing else of the test runner's: a descriptor another test holds open for writing (a
  // printer's hook being written) would make exec of that file fail with ETXTBSY for as long
  // as this child lives, and a pipe's end kept here would hold its reader.
  guard let closeFrom = addCloseFrom(), closeFrom(&actions, 3) == 0 else {
    throw POSIXError(.ENOSYS)
  }
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var defaults = sigset_t()
  sigemptyset(&defaults)
  for signal in [SIGTERM, SIGINT, SIGPIPE, SIGXFSZ, SIGHUP, SIGQUIT] {
    sigaddset(&defaults, signal)
  }
  posix_spawnattr_setsigdefault(&attributes, &defaults)
  var none = sigset_t()
  sigemptyset(&none)
  posix_spawnattr_setsigmask(&attributes, &none)
  posix_spawnattr_setpgroup(&attributes, 0)
  posix_spawnattr_setflags(
    &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
  let cArguments = argv.map { strdup($0) } + [nil]
  defer { for argument in cArguments { free(argument) } }
  var pid: pid_t = 0
  let spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, environ)
  guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
  return pid
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module
/// leaves it out), looked up in the process: a spawn's action that closes every descriptor from
/// a number on.
private func addCloseFrom() -> (
  @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
)? {
  dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np").map {
    unsafeBitCast(
      $0,
      to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)
        .self)
  }
}
