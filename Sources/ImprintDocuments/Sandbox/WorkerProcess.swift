// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: one worker process and its pipes, started by posix_spawn or forked at start-up.

import Foundation
import ImprintCore
import Synchronization

/// One worker process and its three pipes.
///
/// Used by one request at a time. `@unchecked Sendable`: it moves between the pool and the
/// thread serving a request, never shared by two at once (the pool hands it out under a Mutex).
final class WorkerProcess: @unchecked Sendable {
  enum Outcome {
    case answer(Data)
    case timedOut
    /// The worker ended (told by its wait status alone).
    case died(WorkerExit)
  }

  /// The worker's memory limit in MB.
  let memoryMB: Int
  /// The worker's process ID (its temporary files carry it: `AtomicFile`).
  let pid: pid_t
  private let input: Int32
  private let output: Int32
  private let errors: Int32
  private var buffer: [UInt8] = []
  /// Whether stderr reached its end (then it is no longer polled).
  private var errorsEnded = false
  /// Whether the process was reaped (its PID may then name another): set, and the process
  /// killed or waited for, under this lock, so that `interrupt` from another thread never
  /// signals a PID the system gave to another process.
  private let reaped = Mutex(false)
  /// Whether `interrupt` killed it.
  private let interrupted = Atomic(false)

  /// Starts `executable __worker --memory-mb memoryMB --parent PID` (an executable that calls
  /// `DocumentWorker.runIfWorker()` first thing): the worker ends when this process does (it
  /// watches the PID; see `DocumentWorker.serve`).
  ///
  /// - Throws: `FileError` when the executable cannot be started.
  convenience init(executable: String, memoryMB: Int) throws(FileError) {
    try self.init(
      arguments: [
        executable, DocumentWorker.argument, "--memory-mb", "\(memoryMB)", "--parent",
        "\(getpid())",
      ], memoryMB: memoryMB)
  }

  /// Starts `arguments` (the program's path first) as a worker that reads one request line on
  /// stdin and answers one line on stdout (the office worker, `OfficeConverter`'s).
  ///
  /// - Throws: `FileError` when the program cannot be started.
  init(arguments: [String], memoryMB: Int) throws(FileError) {
    let executable = arguments[0]
    let (child, parent) = try Self.pipes()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (descriptor, target) in zip(child, [Int32(0), 1, 2]) {
      posix_spawn_file_actions_adddup2(&actions, descriptor, target)
    }
    // Nothing of this process's but the three streams, close-on-exec or not: a descriptor
    // another thread opened without it (Foundation's `Pipe` does) would stay open in the
    // long-lived worker, and whoever reads that pipe's other end would never see its end
    // (a test's `pdfinfo` output, read until EOF, hung the whole suite).
    _ = WorkerPlumbing.closeOnSpawn(&actions, from: 3)
    let arguments = arguments.map { (argument: String) in strdup(argument) }
    defer { for argument in arguments { free(argument) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, executable, &actions, nil, arguments + [nil], environ)
    for descriptor in child { close(descriptor) }
    guard status == 0 else {
      for descriptor in parent { close(descriptor) }
      if status == ENOENT { throw .notFound(path: executable) }
      throw .unreadable(path: executable, reason: .system(status))
    }
    self.pid = pid
    (input, output, errors) = (parent[0], parent[1], parent[2])
    self.memoryMB = memoryMB
  }

  /// A copy of this process that serves as a worker, made with `fork`.
  ///
  /// It starts in about a millisecond instead of loading the executable and its ~90 libraries
  /// again (some 25 ms). Only safe while the process has one thread: nil otherwise, or when
  /// fork fails.
  init?(forkingWithMemoryMB memoryMB: Int) {
    guard Self.threadCount() == 1, let (child, parent) = try? Self.pipes() else { return nil }
    let parentPID = getpid()
    let pid = fork()
    if pid == 0 {
      // Forked by the main thread, which lives as long as the process: SIGKILL when it ends
      // (and exit now if it already has).
      if !WorkerPlumbing.killOnParentDeath(parent: parentPID) { _exit(0) }
      for (descriptor, target) in zip(child, [Int32(0), 1, 2]) { dup2(descriptor, target) }
      // Nothing of the parent's but the three standard streams: other workers' pipes kept
      // open here would hide their end of input from them.
      WorkerPlumbing.closeDescriptors(from: 3)
      DocumentWorker.serve(memoryMB: memoryMB, parent: parentPID)
      _exit(0)
    }
    for descriptor in child { close(descriptor) }
    guard pid > 0 else {
      for descriptor in parent { close(descriptor) }
      return nil
    }
    self.pid = pid
    (input, output, errors) = (parent[0], parent[1], parent[2])
    self.memoryMB = memoryMB
  }

  deinit { stop() }

  /// The child's ends (stdin, stdout, stderr) and the parent's (requests, answers, stderr).
  ///
  /// All are close-on-exec (dup2 onto 0-2 clears that for the child). Requests go over a socket
  /// pair, sent with MSG_NOSIGNAL: a worker that died makes the send fail instead of raising
  /// SIGPIPE in the caller, and no process-wide signal setting is needed.
  private static func pipes() throws(FileError) -> ([Int32], [Int32]) {
    var child: [Int32] = []
    var parent: [Int32] = []
    func fail() -> FileError {
      for descriptor in child + parent { close(descriptor) }
      return .unreadable(path: "pipe", reason: .system(errno))
    }
    guard let (ours, theirs) = WorkerPlumbing.closeOnExecSocketPair() else { throw fail() }
    child.append(theirs)
    parent.append(ours)
    for _ in 0..<2 {
      guard let (read, write) = WorkerPlumbing.closeOnExecPipe() else { throw fail() }
      child.append(write)
      parent.append(read)
    }
    return (child, parent)
  }

  /// The number of threads of this process.
  private static func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
  }

  /// The worker's process ID.
  var processID: pid_t { pid }

  /// Kills the worker (if it still runs), closes the pipes and reaps it (its CPU time is then
  /// counted in this process's children's).
  func stop() {
    let stopped = reaped.withLock { reaped in
      guard !reaped else { return false }
      reaped = true
      close(input)
      kill(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      return true
    }
    guard stopped else { return }
    close(output)
    close(errors)
  }

  /// Kills the worker while another thread waits in `exchange` for its answer.
  ///
  /// Its request was canceled: that exchange then sees it die. Nothing once it was reaped.
  func interrupt() {
    reaped.withLock { reaped in
      guard !reaped else { return }
      interrupted.store(true, ordering: .releasing)
      kill(pid, SIGKILL)
    }
  }

  /// Whether `interrupt` killed it (an answer read before may still have come).
  var wasInterrupted: Bool { interrupted.load(ordering: .acquiring) }

  /// Sends one request line and waits for one answer line, up to `timeout` seconds.
  func exchange(_ line: [UInt8], timeout: Double) -> Outcome {
    // A worker that died since its last answer makes the send fail with EPIPE.
    let sent = line.withUnsafeBytes { send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard sent == line.count else { return died() }
    let deadline = Date().addingTimeInterval(timeout)
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let answer = Data(buffer[..<newline])
        buffer.removeFirst(newline + 1)
        return .answer(answer)
      }
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 {
        stop()
        return .timedOut
      }
      // stderr is drained as it comes, so that a chatty file never blocks its worker.
      var polled = [
        pollfd(fd: output, events: Int16(POLLIN), revents: 0),
        pollfd(fd: errorsEnded ? -1 : errors, events: Int16(POLLIN), revents: 0),
      ]
      guard poll(&polled, 2, Int32(min(remaining, 1) * 1000)) > 0 else { continue }
      if polled[1].revents != 0 { errorsEnded = !drainErrors(chunk: &chunk) }
      guard polled[0].revents != 0 else { continue }
      let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
      if count <= 0 { return died() }
      buffer += chunk[0..<count]
    }
  }

  /// Reads and drops what the worker wrote to stderr (poppler's chatter, never shown nor
  /// used to tell why a worker died); false at its end.
  private func drainErrors(chunk: inout [UInt8]) -> Bool {
    let count = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
    return count > 0 || (count < 0 && errno == EAGAIN)
  }

  private func died() -> Outcome {
    // The worker is gone or going: reap it for its status, which alone tells why. A worker
    // whose pipes closed but which does not end (an interpreter stuck in its exit, threads of
    // a library it loaded) is killed after `exitGrace` seconds: waiting for it unbounded held
    // its caller (and a test run) for ever.
    guard let status = reapAfter(grace: Self.exitGrace) else {
      // `stop` reaped it and closed the pipes already: their numbers may be others' now.
      return .died(.signal(SIGKILL))
    }
    close(input)
    close(output)
    close(errors)
    return .died(WorkerExit(waitStatus: status))
  }

  /// How long a worker whose pipes have closed may take to end before it is killed.
  static let exitGrace = 10.0

  /// Waits up to `grace` seconds for the worker to end, then kills it; returns its wait status,
  /// or nil when it was reaped already (`stop`: its PID may be another child's now).
  ///
  /// Polls under the lock, so that `interrupt` never signals a reaped PID, and sleeps between
  /// polls without it, so that `interrupt` is never held up.
  private func reapAfter(grace: Double) -> Int32? {
    let deadline = Date().addingTimeInterval(grace)
    var pause: UInt32 = 1_000
    var killed = false
    while true {
      let status = reaped.withLock { reaped -> Int32?? in
        if reaped { return .some(nil) }
        var status: Int32 = 0
        let result = waitpid(pid, &status, killed ? 0 : WNOHANG)
        if result == 0 || (result < 0 && errno == EINTR) { return nil }
        // Ended (or, never expected, not ours to wait for: nothing more to learn then).
        reaped = true
        return .some(status)
      }
      if let status { return status }
      if killed { continue }
      if Date() >= deadline {
        reaped.withLock { reaped in
          if !reaped { kill(pid, SIGKILL) }
        }
        killed = true
      } else {
        usleep(pause)
        pause = min(pause * 2, 100_000)
      }
    }
  }
}

/// Workers forked when the process starts, before it has a second thread.
///
/// They serve the first requests of a short run (`imprint inspect`, `imprint thumb`), each
/// saving the start-up of a new process. A sandbox adopts them when it would run this same
/// executable with the same memory limit.
public enum PrestartedWorkers {
  private static let pool = Mutex<[WorkerProcess]>([])

  /// Forks `count` workers with `memoryMB` of address space each; does nothing once the
  /// process has a second thread.
  ///
  /// When the workers will read `documents` (not only photos), the document engines (poppler,
  /// qpdf) and poppler's global parameters are loaded here, once, before the fork, and each
  /// worker inherits them instead of loading them itself. A card run's workers decode photos
  /// alone and never load them.
  public static func start(count: Int, memoryMB: Int, documents: Bool = true) {
    if documents { DocumentEngines.load() }
    var started: [WorkerProcess] = []
    for _ in 0..<count {
      guard let worker = WorkerProcess(forkingWithMemoryMB: memoryMB) else { break }
      started.append(worker)
    }
    pool.withLock { $0 += started }
  }

  /// A prestarted worker, if one is left that runs `executable` (this process's own) with
  /// `memoryMB`.
  static func take(executable: String, memoryMB: Int) -> WorkerProcess? {
    pool.withLock { workers in
      guard let index = workers.firstIndex(where: { $0.memoryMB == memoryMB }),
        sameFile(executable, "/proc/self/exe")
      else { return nil }
      return workers.remove(at: index)
    }
  }

  /// Stops and reaps the prestarted workers no sandbox took.
  ///
  /// The executable that started them calls it before it exits (`imprint`'s `main`), so that
  /// none outlives it and their CPU time counts in its own. Workers a sandbox took are that
  /// sandbox's (`DocumentSandbox.stopIdleWorkers()`).
  public static func stopAll() {
    for worker in pool.withLock({ workers in
      defer { workers = [] }
      return workers
    }) {
      worker.stop()
    }
  }

  private static func sameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev
      && first.st_ino == second.st_ino
  }
}
