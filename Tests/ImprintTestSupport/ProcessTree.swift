// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a program run under a python3 keeper that adopts every process the program
// leaves behind, so that stopping it ends and reaps them all.

import Foundation

/// A program and every process it starts, stopped together: nothing of it is left running.
///
/// The program runs under a small python3 keeper (the leader of a process group of its own,
/// started by `spawnInGroup` with default signal handling and an empty mask) that makes itself
/// a child subreaper (`PR_SET_CHILD_SUBREAPER`): whatever the program starts and leaves behind
/// (a `dbus-daemon` whose `dbus-run-session` was killed, a hook whose printer was) becomes the
/// keeper's child rather than init's. When the program ends, when the keeper gets SIGTERM, or
/// when its parent (the test runner) is gone, the keeper kills its children with SIGKILL, reaps
/// them, and does so again until it has none, then exits; a process that left the group
/// (`setsid`) is ended too, being its descendant. Should the keeper itself not end within 10 s
/// of `stop`, the whole group is killed.
public final class ProcessTree {
  /// The keeper's process id, which is also its process group's.
  public let pid: pid_t
  private var reaped = false

  /// Starts `argv` (looked up on PATH) under a keeper.
  ///
  /// - Parameters:
  ///   - argv: the program and its arguments.
  ///   - stdout: the file its standard output is written to.
  ///   - stderr: the file its standard error is written to.
  /// - Throws: `POSIXError` when python3 cannot be started.
  public init(_ argv: [String], stdout: String = "/dev/null", stderr: String = "/dev/null")
    throws
  {
    pid = try spawnInGroup(
      ["python3", "-c", Self.keeper] + argv, stdin: "/dev/null", stdout: stdout, stderr: stderr)
  }

  deinit { stop() }

  /// Whether the keeper still runs (it ends once the program and all it left behind have).
  public var isRunning: Bool {
    !reaped && !["Z", nil].contains(Self.state(of: pid))
  }

  /// Ends the program and every process it left (SIGTERM to the keeper; SIGKILL to the whole
  /// group when the keeper has not ended within 10 s, or ended without its cleanup) and reaps
  /// the keeper; nothing after the first call.
  public func stop() {
    guard !reaped else { return }
    kill(pid, SIGTERM)
    _ = waitFor(tries: 1000) { !isRunning }
    // The keeper, ended but not reaped yet, still holds its group's number: the kill cannot
    // reach another group.
    kill(-pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    reaped = true
  }

  /// The processes whose process group is `group`, zombies included (from /proc/PID/stat).
  public static func processes(inGroup group: pid_t) -> [pid_t] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return names.compactMap { pid_t($0) }.filter { statFields(of: $0)?.group == group }
  }

  /// The processes `pid` started that still run, their own children included, parents first
  /// (from /proc/PID/task/TID/children).
  public static func descendants(of pid: pid_t) -> [pid_t] {
    children(of: pid).flatMap { [$0] + descendants(of: $0) }
  }

  /// The processes `pid`'s threads started (/proc/PID/task/TID/children).
  public static func children(of pid: pid_t) -> [pid_t] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.flatMap { task in
      (procText("/proc/\(pid)/task/\(task)/children") ?? "").split(separator: " ").compactMap {
        pid_t($0)
      }
    }
  }

  /// A process's state letter (`R`, `S`, `Z`...), nil when there is no such process.
  public static func state(of pid: pid_t) -> String? {
    statFields(of: pid)?.state
  }

  /// A process's name, state, parent and process group from /proc/PID/stat (the name in
  /// parentheses may hold spaces and parentheses: the fields after it follow the last `)`).
  public static func statFields(of pid: pid_t)
    -> (name: String, state: String, parent: pid_t, group: pid_t)?
  {
    guard let text = procText("/proc/\(pid)/stat"),
      let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
    else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 3, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else {
      return nil
    }
    return (String(text[text.index(after: open)..<close]), String(fields[0]), parent, group)
  }

  /// The keeper: runs its arguments with default signals and an empty mask, waits for them to
  /// end, for SIGTERM or for its parent to go (checked each second), then kills and reaps its
  /// children until none is left; exits 0.
  private static let keeper = pythonFixture("keeper.py")
}
