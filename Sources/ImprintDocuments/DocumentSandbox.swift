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
  /// Where the worker writes the thumbnail (atomically); with several pages, `-N` is added
  /// before the extension for page N.
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
  /// The files written, for `thumbnail`.
  public var written: [String]?
  /// Why the file failed.
  public var error: DocumentError?
  /// A failure outside the document domain (I/O).
  public var otherError: ErrorRecord?
}

/// The worker side: `imprint __worker --memory-mb N` serves requests on standard input.
public enum DocumentWorker {
  /// Serves requests until standard input closes.
  ///
  /// Sets the address-space limit once and a CPU limit before each file (SIGXCPU ends the
  /// worker when a file exceeds it).
  public static func serve(memoryMB: Int) {
    ProcessTuning.suitParsers()
    // The CPU limit works by SIGXCPU: make sure it is neither ignored nor blocked, whatever the
    // parent did (a test runner, a server that spawned the CLI, the fork of one).
    signal(SIGXCPU, SIG_DFL)
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, SIGXCPU)
    sigprocmask(SIG_UNBLOCK, &unblock, nil)
    var limit = rlimit(rlim_cur: rlim_t(memoryMB) << 20, rlim_max: rlim_t(memoryMB) << 20)
    setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
    guard var reader = try? LineReader(path: "-") else { return }
    while true {
      let line: [UInt8]
      do {
        guard let next = try reader.next() else { break }
        line = next
      } catch {
        if case .lineTooLong = error { continue }
        break
      }
      guard let request = try? JSONDecoder().decode(WorkerRequest.self, from: Data(line)) else {
        continue
      }
      var usage = rusage()
      getrusage(RUSAGE_SELF.rawValue, &usage)
      let used = rlim_t(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1
      var cpu = rlimit(
        rlim_cur: used + rlim_t(request.cpuSeconds), rlim_max: used + rlim_t(request.cpuSeconds) + 5
      )
      setrlimit(Int32(RLIMIT_CPU.rawValue), &cpu)
      let response = handle(request)
      var bytes = Array(JSONOutput.line(response).utf8)
      bytes.append(UInt8(ascii: "\n"))
      _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
  }

  static func handle(_ request: WorkerRequest) -> WorkerResponse {
    do {
      // Mapped, not read: parsers touch the parts they need, and poppler shares the mapping.
      let bytes: DocumentBytes
      do {
        bytes = try DocumentBytes(mapping: request.path)
      } catch {
        throw FileError.unreadable(path: request.file, reason: "cannot read the file")
      }
      switch request.operation {
      case "thumbnail":
        let output = request.output ?? "/dev/null"
        let spec = request.pages ?? "1"
        var written: [String] = []
        var failure: (any Error)?
        // All of a file's thumbnails or none: a page that fails takes the earlier ones with it.
        defer { if failure != nil { for path in written { unlink(path) } } }
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
              try AtomicFile.write(image, to: path)
              written.append(path)
            } catch {
              failure = error
            }
          }
        } catch {
          failure = error
        }
        if let failure { throw failure }
        return WorkerResponse(written: written)
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
  }

  deinit {
    for worker in idle.withLock({ $0 }) { worker.stop() }
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
  /// A file's thumbnails are all written or none: when a page fails, the pages already written
  /// (by any run) are removed.
  /// - Returns: the files written (atomically, by the workers), in page order.
  /// - Throws: `FileError` or `DocumentError`; no file is left when a page fails.
  @discardableResult
  public func thumbnails(
    path: String, file: String, password: String? = nil, pages: String = "1", size: Int,
    format: ThumbnailFormat, output: String, text: [(key: String, value: String)] = [],
    parallel: Int = 1
  ) async throws -> [String] {
    try AtomicFile.checkWritable(output)
    func request(_ pages: String) throws -> WorkerRequest {
      WorkerRequest(
        operation: "thumbnail", path: try absolute(path), file: file, password: password,
        pages: pages, size: size, format: format, output: output,
        text: text.map { [$0.key, $0.value] }, cpuSeconds: limits.cpuSeconds)
    }
    let runs =
      parallel > 1 && pages != "1"
      ? try await shares(of: pages, path: path, file: file, password: password, parts: parallel)
      : nil
    guard let runs else { return try await exchange(try request(pages)).written ?? [] }
    let requests = try runs.map { try request($0) }
    var written: [Int: [String]] = [:]
    var failure: (any Error)?
    await withTaskGroup(of: (Int, Result<[String], any Error>).self) { group in
      for (index, request) in requests.enumerated() {
        group.addTask {
          do { return (index, .success(try await self.exchange(request).written ?? [])) } catch {
            return (index, .failure(error))
          }
        }
      }
      for await (index, result) in group {
        switch result {
        case .success(let files): written[index] = files
        case .failure(let error): if failure == nil { failure = error }
        }
      }
    }
    if let failure {
      for files in written.values { for file in files { unlink(file) } }
      throw failure
    }
    return (0..<requests.count).flatMap { written[$0] ?? [] }
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

  private func absolute(_ path: String) throws(FileError) -> String {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .notFound(path: path)
    }
    if isDirectory.boolValue { throw .isDirectory(path: path) }
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
        continuation.resume(returning: worker.exchange(line, timeout: self.limits.wallSeconds))
      }
    }
    switch outcome {
    case .answer(let data):
      idle.withLock { pool in
        if pool.count < slots { pool.append(worker) } else { worker.stop() }
      }
      let response = try JSONDecoder().decode(WorkerResponse.self, from: data)
      if let error = response.error { throw error }
      if let other = response.otherError {
        throw DocumentError.workerCrashed(file: request.file, detail: other.message)
      }
      return response
    case .timedOut:
      throw DocumentError.timeout(file: request.file, seconds: limits.wallSeconds)
    case .died(let signal, let stderr):
      if signal == SIGXCPU {
        throw DocumentError.cpuLimit(file: request.file, seconds: limits.cpuSeconds)
      }
      let lower = stderr.lowercased()
      if lower.contains("alloc") || lower.contains("memory") {
        throw DocumentError.memoryLimit(file: request.file, megabytes: limits.memoryMB)
      }
      throw DocumentError.workerCrashed(
        file: request.file, detail: signal > 0 ? "signal \(signal)" : "exited")
    }
  }
}
