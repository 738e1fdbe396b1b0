// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: untrusted files are read in worker processes with CPU, memory and time
// limits; a crash, hang or memory blow-up becomes an error for that file, and the caller lives.

import Foundation
import ImprintCore
import ImprintGraphics
import Synchronization

/// Limits for one file in a worker.
public struct SandboxLimits: Sendable, Codable, Equatable {
  /// CPU seconds one file may use (default 30).
  public var cpuSeconds = 30
  /// Address space of a worker, in megabytes (default 1536).
  public var memoryMB = 1536
  /// Wall-clock seconds one file may take (default 60).
  public var wallSeconds = 60.0

  /// The defaults.
  public init() {}
}

/// One request to a worker, as a JSON line.
public struct WorkerRequest: Codable, Sendable {
  /// `inspect` or `thumbnail`.
  public var operation: String
  /// The absolute path of the file to read.
  public var path: String
  /// The name used in messages.
  public var file: String
  /// The PDF password, if any.
  public var password: String?
  /// The colour rule, for `inspect` with colours.
  public var colors: ColorRule?
  /// The pages for `thumbnail`: `1`, `all` or ranges such as `1-3,5`.
  public var pages: String?
  /// Thumbnail box in pixels.
  public var size: Int?
  /// Thumbnail format.
  public var format: ThumbnailFormat?
  /// Where the thumbnail goes.
  ///
  /// With several pages, `-N` is added before the extension for page N. The worker writes each page to a temporary file beside it (`staged` in the
  /// answer) and the caller renames them all once every page has succeeded.
  public var output: String?
  /// PNG text chunks, as [key, value] pairs.
  public var text: [[String]]?
  /// CPU seconds for this file.
  public var cpuSeconds: Int
}

/// A worker's answer, as a JSON line.
public struct WorkerResponse: Codable, Sendable {
  /// The inspection, for `inspect`.
  public var info: DocumentInfo?
  /// The files written, for `thumbnail`: each page's temporary file and its final path, as
  /// [temporary, final] pairs, synced and ready to be renamed.
  public var staged: [[String]]?
  /// Why the file failed.
  public var error: DocumentError?
  /// A failure outside the document domain (I/O).
  public var otherError: ErrorRecord?
}

/// The worker side: `imprint __worker --memory-mb N` serves requests on standard input.
public enum DocumentWorker {
  /// Serves requests until standard input closes, ending with the process given as
  /// `--parent PID` on the command line (`imprint __worker --memory-mb N --parent PID`).
  public static func serve(memoryMB: Int) {
    let arguments = CommandLine.arguments
    let parent = arguments.firstIndex(of: "--parent").flatMap {
      $0 + 1 < arguments.count ? pid_t(arguments[$0 + 1]) : nil
    }
    serve(memoryMB: memoryMB, parent: parent)
  }

  /// Serves requests until standard input closes.
  ///
  /// Sets the address-space limit once and a CPU limit before each file (SIGXCPU ends the
  /// worker when a file exceeds it). With `parent`, the worker ends as soon as that process
  /// does, busy or not (and at once if it already has). A failed allocation ends it with
  /// `ProcessTuning.outOfMemoryExitStatus`. Every request line gets an answer, a malformed
  /// one included.
  public static func serve(memoryMB: Int, parent: pid_t?) {
    if let parent, !ProcessTuning.exitWithParent(parent) { return }
    ProcessTuning.exitStatusOnAllocationFailure()
    // A file-size limit (a stand-in for a full disk) makes a write fail with EFBIG, reported
    // for that file, instead of killing the worker (a forked one starts before the CLI
    // ignores SIGXFSZ).
    signal(SIGXFSZ, SIG_IGN)
    ProcessTuning.suitParsers()
    // The CPU limit works by SIGXCPU: make sure it is neither ignored nor blocked, whatever the
    // parent did (a test runner, a server that spawned the CLI, the fork of one).
    signal(SIGXCPU, SIG_DFL)
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, SIGXCPU)
    sigprocmask(SIG_UNBLOCK, &unblock, nil)
    // Limits come from the caller: clamped, never converted unchecked (a negative value would
    // trap in rlim_t, a huge one overflow).
    let bytes = rlim_t(min(max(memoryMB, 1), 1 << 30)) << 20
    var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
    setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
    guard var reader = try? LineReader(path: "-") else { return }
    func answer(_ response: WorkerResponse) {
      var bytes = Array(JSONOutput.line(response).utf8)
      bytes.append(UInt8(ascii: "\n"))
      _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
    while true {
      let line: [UInt8]
      do {
        guard let next = try reader.next() else { break }
        line = next
      } catch {
        guard case .lineTooLong = error else { break }
        // The caller waits for one answer per line: a request it cannot use gets one.
        answer(WorkerResponse(otherError: ErrorRecord(WorkerProtocolError.malformedRequest)))
        continue
      }
      guard let request = try? JSONDecoder().decode(WorkerRequest.self, from: Data(line)) else {
        answer(WorkerResponse(otherError: ErrorRecord(WorkerProtocolError.malformedRequest)))
        continue
      }
      var usage = rusage()
      getrusage(RUSAGE_SELF.rawValue, &usage)
      let used = rlim_t(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1
      let seconds = rlim_t(min(max(request.cpuSeconds, 1), 1 << 31))
      var cpu = rlimit(rlim_cur: used + seconds, rlim_max: used + seconds + 5)
      setrlimit(Int32(RLIMIT_CPU.rawValue), &cpu)
      answer(handle(request))
    }
  }

  static func handle(_ request: WorkerRequest) -> WorkerResponse {
    do {
      guard ["thumbnail", "inspect"].contains(request.operation) else {
        throw WorkerProtocolError.malformedRequest
      }
      // Mapped, not read: parsers touch the parts they need, and poppler shares the mapping.
      // Opened as every input is (FileIO): a FIFO or device put in the file's place since
      // the caller checked it is refused without blocking.
      let bytes: DocumentBytes
      do {
        bytes = try DocumentBytes(mapping: request.path)
      } catch {
        throw error.naming(request.file)
      }
      switch request.operation {
      case "thumbnail":
        return WorkerResponse(staged: try thumbnails(request, bytes))
      default:
        let info = try DocumentEngine.inspect(
          bytes, file: request.file, password: request.password, colors: request.colors)
        return WorkerResponse(info: info)
      }
    } catch let error as DocumentError {
      return WorkerResponse(error: error)
    } catch {
      return WorkerResponse(otherError: ErrorRecord(error))
    }
  }

  /// Draws the pages and writes each to a synced temporary file beside its final path.
  ///
  /// The caller renames them. When a page fails, the temporaries are removed; when the worker is
  /// killed (CPU or memory limit), the caller removes them (`AtomicFile` names them after
  /// this process, which is then gone).
  static func thumbnails(_ request: WorkerRequest, _ bytes: DocumentBytes) throws -> [[String]] {
    let output = request.output ?? "/dev/null"
    let spec = request.pages ?? "1"
    var staged: [[String]] = []
    var failure: (any Error)?
    defer { if failure != nil { for pair in staged { unlink(pair[0]) } } }
    do {
      try DocumentEngine.thumbnails(
        bytes, file: request.file, password: request.password, pages: spec,
        size: request.size ?? 256, format: request.format ?? .png,
        text: (request.text ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
      ) { page, image throws(DocumentError) in
        guard failure == nil else { return }
        let path =
          spec == "1"
          ? output
          : (output as NSString).deletingPathExtension + "-\(page)."
            + (output as NSString).pathExtension
        do {
          let temporary = try AtomicFile.temporaryPath(for: path)
          let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
          guard descriptor >= 0 else {
            throw FileError.unwritable(path: path, reason: String(cString: strerror(errno)))
          }
          staged.append([temporary, path])
          do {
            try FileIO.writeAll(image, to: descriptor, path: path)
          } catch {
            close(descriptor)
            throw error
          }
          try FileIO.syncAndClose(descriptor, path: path)
        } catch {
          failure = error
        }
      }
    } catch {
      failure = error
    }
    if let failure { throw failure }
    return staged
  }
}

/// The files a run must never write, by identity (device and inode), whatever paths name them:
/// built once from the inputs, then one `stat` per output.
public struct FileIdentities: Sendable {
  private var identities: Set<[UInt64]> = []

  /// The identities of the files at `paths` (those that exist).
  public init(_ paths: [String]) {
    for path in paths { if let identity = Self.identity(path) { identities.insert(identity) } }
  }

  /// These and the file at `path`.
  public func adding(_ path: String) -> FileIdentities {
    var copy = self
    if let identity = Self.identity(path) { copy.identities.insert(identity) }
    return copy
  }

  /// Whether `path` names one of the files.
  public func contains(_ path: String) -> Bool {
    Self.identity(path).map { identities.contains($0) } ?? false
  }

  private static func identity(_ path: String) -> [UInt64]? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    return [UInt64(status.st_dev), UInt64(status.st_ino)]
  }
}

/// A request line the worker cannot use.
enum WorkerProtocolError: ImprintError {
  case malformedRequest

  var code: String { "document.badRequest" }
  var message: String { "the document worker received a request it cannot read" }
  var hint: String? { nil }
}

/// An error a worker reported, with its code, message and hint unchanged.
struct ReportedError: ImprintError {
  let record: ErrorRecord

  var code: String { record.code }
  var message: String { record.message }
  var hint: String? { record.hint }
}

extension FileError {
  /// The same error naming `file` (the name the caller knows) instead of the path read.
  func naming(_ file: String) -> FileError {
    switch self {
    case .notFound: .notFound(path: file)
    case .isDirectory: .isDirectory(path: file)
    case .notRegularFile(_, let kind): .notRegularFile(path: file, kind: kind)
    case .tooLarge(_, let bytes, let limit): .tooLarge(path: file, bytes: bytes, limit: limit)
    case .unreadable(_, let reason): .unreadable(path: file, reason: reason)
    default: .unreadable(path: file, reason: "cannot read the file")
    }
  }
}

/// Runs document work in a pool of long-lived worker processes (one per core by default),
/// replacing a worker that crashes, hangs or exceeds its limits.
///
/// `Sendable`: all mutable state is behind a Mutex; each worker serves one request at a time.
public final class DocumentSandbox: Sendable {
  /// The `imprint` executable that serves `__worker`.
  public let executable: String
  /// Per-file limits.
  public let limits: SandboxLimits
  private let idle = Mutex<[WorkerProcess]>([])
  private let slots: Int

  /// Creates a sandbox over the `imprint` executable at `executable`.
  public init(executable: String, limits: SandboxLimits = SandboxLimits(), workers: Int = 2) {
    self.executable = executable
    self.limits = limits
    slots = max(1, workers)
    DocumentWorkers.register(self)
  }

  deinit {
    DocumentWorkers.unregister(self)
    stopIdleWorkers()
  }

  /// The wall-clock limit, 60 s when `limits` holds no positive finite number (a NaN would
  /// trap when converted to poll's milliseconds).
  private var wallSeconds: Double {
    limits.wallSeconds.isFinite && limits.wallSeconds > 0
      ? min(limits.wallSeconds, 1e6) : SandboxLimits().wallSeconds
  }

  /// Stops and reaps the idle workers (a later request starts new ones).
  func stopIdleWorkers() {
    for worker in idle.withLock({ pool in
      defer { pool = [] }
      return pool
    }) { worker.stop() }
  }

  /// Inspects the file at `path` (`file` names it in messages).
  ///
  /// - Throws: `FileError` for a missing file or a directory; `DocumentError` otherwise.
  public func inspect(path: String, file: String, password: String? = nil, colors: ColorRule? = nil)
    async throws -> DocumentInfo
  {
    let request = WorkerRequest(
      operation: "inspect", path: try absolute(path), file: file, password: password,
      colors: colors, cpuSeconds: limits.cpuSeconds)
    let response = try await exchange(request)
    guard let info = response.info else {
      throw DocumentError.workerCrashed(file: file, detail: "no answer")
    }
    return info
  }

  /// Inspects a file held in memory (an upload): the bytes are written to a private temporary
  /// file that only the worker reads, and removed afterwards.
  ///
  /// - Throws: `DocumentError`.
  public func inspect(
    bytes: [UInt8], file: String, password: String? = nil, colors: ColorRule? = nil
  )
    async throws -> DocumentInfo
  {
    let path = try temporaryCopy(bytes)
    defer { unlink(path) }
    return try await inspect(path: path, file: file, password: password, colors: colors)
  }

  private func temporaryCopy(_ bytes: [UInt8]) throws -> String {
    let path = FileManager.default.temporaryDirectory.path + "/imprint-upload-\(UUID().uuidString)"
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw FileError.unwritable(path: path, reason: String(cString: strerror(errno)))
    }
    defer { close(descriptor) }
    do {
      try FileIO.writeAll(bytes, to: descriptor, path: path)
    } catch {
      unlink(path)
      throw error
    }
    return path
  }

  /// Writes thumbnails of `pages` (`1`, `all`, `1-3,5`) of the file at `path`: page 1 alone
  /// goes to `output`; several pages to `output` with `-N` before the extension.
  ///
  /// With `parallel` above 1 and at least 8 pages, the pages are shared out in up to `parallel`
  /// runs of consecutive pages, drawn by as many workers at once (each opens the file).
  ///
  /// A file's thumbnails are all written or none, whatever fails (a page, a write, the CPU or
  /// memory limit, the time limit): the workers write temporary files, renamed to their final
  /// names only once every page of every run has succeeded. No thumbnail replaces `path` or
  /// any of `inputs` (the run's inputs, whatever paths name them: `file.outputIsInput`).
  /// - Returns: the files written, in page order.
  /// - Throws: `FileError` or `DocumentError`; no file is left when a page fails.
  @discardableResult
  public func thumbnails(
    path: String, file: String, password: String? = nil, pages: String = "1", size: Int,
    format: ThumbnailFormat, output: String, text: [(key: String, value: String)] = [],
    parallel: Int = 1, inputs: FileIdentities = FileIdentities([])
  ) async throws -> [String] {
    try AtomicFile.checkWritable(output)
    let protected = inputs.adding(path)
    if protected.contains(output) { throw FileError.outputIsInput(path: output) }
    let source = try absolute(path)
    func request(_ pages: String) -> WorkerRequest {
      WorkerRequest(
        operation: "thumbnail", path: source, file: file, password: password,
        pages: pages, size: size, format: format, output: output,
        text: text.map { [$0.key, $0.value] }, cpuSeconds: limits.cpuSeconds)
    }
    let runs =
      parallel > 1 && pages != "1"
      ? try await shares(of: pages, path: path, file: file, password: password, parts: parallel)
      : nil
    let requests = (runs ?? [pages]).map { request($0) }
    var staged: [Int: [[String]]] = [:]
    var failure: (any Error)?
    if requests.count == 1 {
      do { staged[0] = try await exchange(requests[0]).staged ?? [] } catch { failure = error }
    } else {
      await withTaskGroup(of: (Int, Result<[[String]], any Error>).self) { group in
        for (index, request) in requests.enumerated() {
          group.addTask {
            do { return (index, .success(try await self.exchange(request).staged ?? [])) } catch {
              return (index, .failure(error))
            }
          }
        }
        for await (index, result) in group {
          switch result {
          case .success(let files): staged[index] = files
          case .failure(let error): if failure == nil { failure = error }
          }
        }
      }
    }
    let pairs = (0..<requests.count).flatMap { staged[$0] ?? [] }
    if let failure {
      for pair in pairs { unlink(pair[0]) }
      // A worker that was killed (CPU, memory, time) could not remove its own temporaries.
      AtomicFile.removeStaleTemporaries(in: Self.folder(of: output))
      throw failure
    }
    return try Self.commit(pairs, protected: protected)
  }

  /// Renames staged thumbnails to their final names (each is synced already), then syncs
  /// the folder once; when a final name is an input or a rename fails, nothing is renamed
  /// or the ones renamed are removed with the rest.
  private static func commit(_ pairs: [[String]], protected: FileIdentities) throws(FileError)
    -> [String]
  {
    // A numbered page (`a-2.png`) can be an input: known only now that the pages are.
    if let input = pairs.first(where: { $0.count == 2 && protected.contains($0[1]) }) {
      for pair in pairs { unlink(pair[0]) }
      throw .outputIsInput(path: input[1])
    }
    var renamed: [String] = []
    for (index, pair) in pairs.enumerated() where pair.count == 2 {
      guard rename(pair[0], pair[1]) == 0 else {
        let reason = String(cString: strerror(errno))
        for path in renamed { unlink(path) }
        for rest in pairs[index...] { unlink(rest[0]) }
        throw .unwritable(path: pair[1], reason: reason)
      }
      renamed.append(pair[1])
    }
    if let first = renamed.first { FileIO.syncFolder(of: first) }
    return renamed
  }

  private static func folder(of path: String) -> String {
    let folder = (path as NSString).deletingLastPathComponent
    return folder.isEmpty ? "." : folder
  }

  /// `pages` of the file cut into up to `parts` runs of consecutive pages (as page specs such
  /// as `1-40`), or nil when there are fewer than 8 pages or the file should be left to one
  /// worker, which then reports what is wrong with it.
  private func shares(
    of pages: String, path: String, file: String, password: String?, parts: Int
  ) async throws -> [String]? {
    guard let info = try? await inspect(path: path, file: file, password: password),
      case .pages(let list) = PageRange.resolve(pages, count: info.pages), list.count >= 8
    else { return nil }
    let count = min(parts, list.count / 4)
    guard count > 1 else { return nil }
    return (0..<count).map { part in
      let share = list[(part * list.count / count)..<((part + 1) * list.count / count)]
      // Runs of consecutive pages as `a-b` (never a bare `1`, which names the unsuffixed file).
      var runs: [String] = []
      var start = share.first ?? 1
      var previous = start
      for page in share.dropFirst() + [Int.min] {
        if page == previous + 1 {
          previous = page
          continue
        }
        runs.append("\(start)-\(previous)")
        start = page
        previous = page
      }
      return runs.joined(separator: ",")
    }
  }

  /// The absolute path of `path`, refused here (as every input is, by `FileIO`) unless it is
  /// a regular file: a FIFO or device is `file.notRegular` at once, without blocking.
  private func absolute(_ path: String) throws(FileError) -> String {
    let (descriptor, _) = try FileIO.openForReading(path)
    close(descriptor)
    return path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
  }

  private func exchange(_ request: WorkerRequest) async throws -> WorkerResponse {
    let line = Array(JSONOutput.line(request).utf8) + [UInt8(ascii: "\n")]
    let worker =
      try idle.withLock { $0.popLast() }
      ?? PrestartedWorkers.take(executable: executable, memoryMB: limits.memoryMB)
      ?? WorkerProcess(executable: executable, memoryMB: limits.memoryMB)
    let outcome = await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        continuation.resume(returning: worker.exchange(line, timeout: self.wallSeconds))
      }
    }
    switch outcome {
    case .answer(let data):
      idle.withLock { pool in
        if pool.count < slots { pool.append(worker) } else { worker.stop() }
      }
      guard let response = try? JSONDecoder().decode(WorkerResponse.self, from: data) else {
        throw DocumentError.workerCrashed(file: request.file, detail: "an unreadable answer")
      }
      if let error = response.error { throw error }
      // File errors (a FIFO swapped in, a full disk) keep their own code.
      if let other = response.otherError { throw ReportedError(record: other) }
      return response
    case .timedOut:
      throw DocumentError.timeout(file: request.file, seconds: limits.wallSeconds)
    case .died(let signal, let status, let stderr):
      throw Self.deathError(
        signal: signal, status: status, stderr: stderr, file: request.file, limits: limits)
    }
  }

  /// What a worker's death means, from how it ended.
  static func deathError(
    signal: Int32, status: Int32, stderr: String, file: String, limits: SandboxLimits
  ) -> DocumentError {
    switch signal {
    case SIGXCPU: return .cpuLimit(file: file, seconds: limits.cpuSeconds)
    // A mapped file that shrank: its missing pages raise SIGBUS when touched.
    case SIGBUS: return .fileChanged(file: file)
    case 0 where status == WorkerProcess.outOfMemoryStatus:
      return .memoryLimit(file: file, megabytes: limits.memoryMB)
    default:
      // A library that reports running out of memory in its own words before it aborts
      // with errno reset.
      let lower = stderr.lowercased()
      if ["out of memory", "bad_alloc", "could not allocate", "failed to allocate"].contains(
        where: { lower.contains($0) })
      {
        return .memoryLimit(file: file, megabytes: limits.memoryMB)
      }
      return .workerCrashed(
        file: file, detail: signal > 0 ? "signal \(signal)" : "exit status \(status)")
    }
  }
}
