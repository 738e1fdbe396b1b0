// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: untrusted files are read in worker processes with CPU, memory and time
// limits; a crash, hang or memory blow-up becomes an error for that file, and the caller lives.

import Foundation
import ImprintCore
import ImprintGraphics
import Synchronization

/// Limits for one file in a worker.
public struct SandboxLimits: Sendable, Codable, Equatable {
  /// The default address space of a worker, in megabytes: 1536, room for poppler and qpdf on
  /// the largest pages and images the documents module accepts (`imprint --memory-limit`, a
  /// worker started without `--memory-mb`).
  public static let defaultMemoryMB = 1536

  /// CPU seconds one file may use (default 30).
  public var cpuSeconds = 30
  /// Address space of a worker, in megabytes (default `defaultMemoryMB`).
  public var memoryMB = defaultMemoryMB
  /// Wall-clock seconds one file may take (default 60).
  public var wallSeconds = 60.0

  /// The defaults.
  public init() {}
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

/// Runs document work in a pool of long-lived worker processes (one per core by default),
/// replacing a worker that crashes, hangs or exceeds its limits.
///
/// At most `workers` files are read at once, whoever asks: further requests wait, in order,
/// for a worker to be free.
///
/// The workers run an executable that calls `DocumentWorker.runIfWorker()` first thing: the
/// `imprint` CLI, or a backend's own server (then pass `DocumentSandbox.currentExecutable`).
///
/// `Sendable`: all mutable state is behind a Mutex; each worker serves one request at a time.
public final class DocumentSandbox: ImageDecoding {
  /// The default number of workers kept: one per core the process may use.
  public static var defaultWorkers: Int { activeProcessorCount }

  /// This process's own executable (`/proc/self/exe` resolved), for a program that hosts its
  /// own workers.
  public static var currentExecutable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
  }

  /// The executable that serves `__worker` (see `DocumentWorker`).
  public let executable: String
  /// Per-file limits.
  public let limits: SandboxLimits
  /// Office uploads: converted to PDF by LibreOffice, then read as that PDF.
  public let office: OfficeReader
  private let idle = Mutex<[WorkerProcess]>([])
  private let replaced = Atomic(0)
  private let canceled = Atomic(0)
  /// Workers alive now (idle or at work) and alive at most at once: counted up in `checkOut`
  /// and down in `retire`, the one place a worker leaves.
  private let lives = Mutex((alive: 0, most: 0))
  /// Workers at work or idle at most, and the files a bulk run handles at once by default.
  let slots: Int
  /// One permit a worker: a request beyond `slots` waits for a worker to come back rather than
  /// start one that would be stopped after one file (a server's requests each reading several
  /// files would otherwise start, and stop, a process for most files).
  let permits: AsyncPermits

  /// Creates a sandbox whose workers run `executable` (one that calls
  /// `DocumentWorker.runIfWorker()` first thing), running up to `workers` of them at once.
  public init(
    executable: String, limits: SandboxLimits = SandboxLimits(),
    workers: Int = DocumentSandbox.defaultWorkers, office: OfficeReader = .standard()
  ) {
    self.executable = executable
    self.limits = limits
    self.office = office
    slots = max(1, workers)
    permits = AsyncPermits(slots)
  }

  deinit { stopIdleWorkers() }

  /// The wall-clock limit, 60 s when `limits` holds no positive finite number (a NaN would
  /// trap when converted to poll's milliseconds).
  private var wallSeconds: Double {
    limits.wallSeconds.isFinite && limits.wallSeconds > 0
      ? min(limits.wallSeconds, 1e6) : SandboxLimits().wallSeconds
  }

  /// Workers lost so far (timed out, crashed, killed by a limit) and so replaced by the next
  /// request's: a long-running server reports it as its worker restarts.
  public var workersReplaced: Int { replaced.load(ordering: .relaxed) }

  /// Workers killed because the task waiting for their answer was cancelled (a server's request
  /// whose client left or that its stop cut short, a job canceled or past its limits); the next
  /// request starts another, as after a crash.
  public var workersCanceled: Int { canceled.load(ordering: .relaxed) }

  /// Workers alive now, idle or at work: at most `workers`.
  public var workersAlive: Int { lives.withLock { $0.alive } }

  /// The most workers this sandbox had alive at once: at most `workers`, however many
  /// requests come at once.
  public var mostWorkersAtOnce: Int { lives.withLock { $0.most } }

  /// Stops and reaps this sandbox's idle workers (a later request starts new ones); those of
  /// other sandboxes are left alone.
  ///
  /// The sandbox's owner calls it when its work is over, while it still holds the sandbox, so
  /// that every worker is reaped on its own path before it goes on: the CLI at the end of each
  /// command, a server when it stops. (Releasing the sandbox stops them too, but wherever its
  /// last reference drops: on another thread, perhaps after the process has moved on.)
  public func stopIdleWorkers() {
    for worker in idle.withLock({ pool in
      defer { pool = [] }
      return pool
    }) {
      retire(worker)
    }
    // The office workers too (LibreOffice with them): a later Office upload starts them again.
    office.stop()
  }

  /// An idle worker, or a new one (a prestarted one if any is left): counted alive.
  private func checkOut() throws -> WorkerProcess {
    if let kept = idle.withLock({ $0.popLast() }) { return kept }
    let worker =
      try PrestartedWorkers.take(executable: executable, memoryMB: limits.memoryMB)
      ?? WorkerProcess(executable: executable, memoryMB: limits.memoryMB)
    lives.withLock {
      $0.alive += 1
      $0.most = max($0.most, $0.alive)
    }
    return worker
  }

  /// Keeps `worker` idle for the next request when `reusable` and the pool has room; else
  /// retires it.
  private func checkIn(_ worker: WorkerProcess, reusable: Bool) {
    let kept =
      reusable
      && idle.withLock { pool in
        guard pool.count < slots else { return false }
        pool.append(worker)
        return true
      }
    if !kept { retire(worker) }
  }

  /// Stops and reaps `worker` (nothing more when it died or was stopped already) and counts it
  /// gone.
  private func retire(_ worker: WorkerProcess) {
    worker.stop()
    lives.withLock { $0.alive -= 1 }
  }

  /// `retire`s a worker killed during a request that stages files beside `staging`, and
  /// removes the temporaries it made there: it could not remove them itself.
  /// (`removeStaleTemporaries` tells a dead writer by its process ID, which a loaded machine
  /// may have given to another process already; here the writer is known.)
  private func retire(_ worker: WorkerProcess, staging: String?) {
    retire(worker)
    if let staging {
      AtomicFile.removeTemporaries(in: Self.folder(of: staging), madeBy: worker.pid)
    }
  }

  /// Inspects the file at `path` (`file` names it in messages).
  ///
  /// - Throws: `FileError` for a missing file or a directory; `DocumentError` otherwise.
  public func inspect(path: String, file: String, password: String? = nil, colors: ColorRule? = nil)
    async throws -> DocumentInfo
  {
    if let converted = try await office.convert(path: path, file: file, password: password) {
      defer { converted.release() }
      var info = try await inspect(pdf: converted.pdf, file: file, colors: colors)
      info.type = converted.type
      info.conversion = converted.conversion
      return info
    }
    return try await inspect(pdf: path, file: file, password: password, colors: colors)
  }

  /// Inspects the file at `path` as it is (no Office conversion).
  private func inspect(
    pdf path: String, file: String, password: String? = nil, colors: ColorRule?
  ) async throws -> DocumentInfo {
    let request = WorkerRequest.inspect(
      .init(input: try input(absolute(path), file: file), password: password, colors: colors))
    guard case .inspected(let info) = try await exchange(request) else {
      throw DocumentError.workerCrashed(file: file, detail: "an answer to another request")
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

  /// Decodes an image file held in memory (a card photo from a stranger) in a worker, under
  /// the sandbox's limits, as `ImageDecoder.decode(_:source:)` would: upright, at most
  /// `ImageDecoder.maximumPixels`.
  ///
  /// The bytes go to a private temporary file that only the worker reads; the worker writes
  /// the pixels to another, which this reads and removes. A file whose header lies about its
  /// size costs the worker, not this process.
  ///
  /// - Throws: `ImageError` for a file that is not a usable image (the worker's own error,
  ///   unchanged); `DocumentError` for the sandbox's limits (`document.memoryLimit`,
  ///   `.cpuLimit`, `.timeout`) or a worker that crashed; `FileError` when the temporary files
  ///   cannot be written or read (a full disk).
  public func decodeImage(_ bytes: [UInt8], source: String) async throws -> Bitmap {
    let input = try temporaryCopy(bytes)
    let output = Self.temporaryPath("imprint-pixels")
    defer {
      unlink(input)
      unlink(output)
    }
    let request = WorkerRequest.decodeImage(
      .init(input: self.input(input, file: source), output: output))
    let response: WorkerResponse
    do {
      response = try await exchange(request)
    } catch DocumentError.image(let error) {
      throw error
    }
    guard case .decodedImage(let width, let height, let hasAlpha, let embedsFile) = response,
      (1...65_535).contains(width), (1...65_535).contains(height),
      width * height <= ImageDecoder.maximumPixels
    else {
      throw DocumentError.workerCrashed(file: source, detail: "an answer to another request")
    }
    let pixels = try FileIO.read(output, limit: width * height * 4)
    guard pixels.count == width * height * 4 else {
      throw DocumentError.workerCrashed(
        file: source, detail: "\(pixels.count) bytes of pixels for a \(width) x \(height) image")
    }
    return Bitmap(
      width: width, height: height, pixels: pixels, hasAlpha: hasAlpha,
      jpeg: embedsFile ? bytes : nil)
  }

  /// A new name in the temporary folder (`TMPDIR`), unique to this call.
  private static func temporaryPath(_ prefix: String) -> String {
    FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UUID().uuidString)"
  }

  private func temporaryCopy(_ bytes: [UInt8]) throws -> String {
    let path = Self.temporaryPath("imprint-upload")
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw FileError.unwritable(path: path, reason: .system(errno))
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
    let converted = try await office.convert(path: path, file: file, password: password)
    defer { converted?.release() }
    let source = try absolute(converted?.pdf ?? path)
    let password = converted == nil ? password : nil
    let path = converted?.pdf ?? path
    func request(_ pages: String) -> WorkerRequest {
      .thumbnail(
        .init(
          input: input(source, file: file), password: password, pages: pages, size: size,
          format: format, output: output, text: text))
    }
    let runs =
      parallel > 1 && pages != "1"
      ? try await shares(of: pages, path: path, file: file, password: password, parts: parallel)
      : nil
    let requests = (runs ?? [pages]).map { request($0) }
    var staged: [Int: [StagedThumbnail]] = [:]
    var failure: (any Error)?
    if requests.count == 1 {
      do { staged[0] = try await stage(requests[0]) } catch { failure = error }
    } else {
      await withTaskGroup(of: (Int, Result<[StagedThumbnail], any Error>).self) { group in
        for (index, request) in requests.enumerated() {
          group.addTask {
            do { return (index, .success(try await self.stage(request))) } catch {
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
    let pages = (0..<requests.count).flatMap { staged[$0] ?? [] }
    if let failure {
      for page in pages { unlink(page.temporary) }
      // A worker that was killed (CPU, memory, time) could not remove its own temporaries.
      AtomicFile.removeStaleTemporaries(in: Self.folder(of: output))
      throw failure
    }
    return try Self.commit(pages, protected: protected)
  }

  /// The print-ready PDF of the file at `path`, placed on sheets by `layout` in a worker and
  /// written to a synced temporary file beside `output` (rename it with `commit`).
  ///
  /// - Returns: the staged file and its sheet sides.
  /// - Throws: `FileError` or `DocumentError`; no temporary is left when it fails.
  package func prepare(
    path: String, file: String, password: String? = nil, layout: SheetLayout, output: String
  ) async throws -> (document: StagedThumbnail, sheetSides: Int) {
    try AtomicFile.checkWritable(output)
    let converted = try await office.convert(path: path, file: file, password: password)
    defer { converted?.release() }
    let request = WorkerRequest.prepare(
      .init(
        input: try input(absolute(converted?.pdf ?? path), file: file),
        password: converted == nil ? password : nil, layout: layout, output: output))
    do {
      guard case .prepared(let staged, let sides) = try await exchange(request) else {
        throw DocumentError.workerCrashed(file: file, detail: "an answer to another request")
      }
      return (staged, sides)
    } catch {
      // A worker that was killed (CPU, memory, time) could not remove its own temporary.
      AtomicFile.removeStaleTemporaries(in: Self.folder(of: output))
      throw error
    }
  }

  /// Previews of the `pages` pages of the print-ready PDF at `path` (a staged file of ours whose
  /// pages came from uploads, so drawn in workers): one PNG a page fitting a `size` × `size`
  /// box, written to synced temporary files beside `output` with `-N` before its extension
  /// (rename them with `commit`).
  ///
  /// The pages go to workers in runs of at most `previewRun`, one after another, so that each
  /// request stays within the CPU and time limits however long the file.
  ///
  /// - Returns: the staged previews, in page order.
  /// - Throws: `FileError` or `DocumentError` naming `file`; no temporary is left when it
  ///   fails.
  package func previews(of path: String, pages: Int, file: String, size: Int, output: String)
    async throws -> [StagedThumbnail]
  {
    let source = try absolute(path)
    var staged: [StagedThumbnail] = []
    do {
      for start in stride(from: 1, through: pages, by: Self.previewRun) {
        // Always `a-b` (a bare `1` names the unsuffixed file).
        let run = "\(start)-\(min(start + Self.previewRun - 1, pages))"
        staged += try await stage(
          .thumbnail(
            .init(
              input: input(source, file: file), password: nil, pages: run, size: size,
              format: .png, output: output, text: [])))
      }
      return staged
    } catch {
      for page in staged { unlink(page.temporary) }
      // A worker that was killed (CPU, memory, time) could not remove its own temporaries.
      AtomicFile.removeStaleTemporaries(in: Self.folder(of: output))
      throw error
    }
  }

  /// The preview sizes accepted, in pixels: the side of the square box a preview fits.
  package static let previewSizes = 16...2048

  /// The most previews one worker request draws.
  static let previewRun = 100

  /// The thumbnails a worker staged for `request`.
  private func stage(_ request: WorkerRequest) async throws -> [StagedThumbnail] {
    guard case .staged(let pages) = try await exchange(request) else {
      throw DocumentError.workerCrashed(
        file: request.input.file, detail: "an answer to another request")
    }
    return pages
  }

  /// Renames staged thumbnails to their final names (each is synced already), then syncs
  /// the folder once; when a final name is an input or a rename fails, nothing is renamed
  /// or the ones renamed are removed with the rest.
  package static func commit(_ pages: [StagedThumbnail], protected: FileIdentities)
    throws(FileError) -> [String]
  {
    // A numbered page (`a-2.png`) can be an input: known only now that the pages are.
    if let input = pages.first(where: { protected.contains($0.final) }) {
      for page in pages { unlink(page.temporary) }
      throw .outputIsInput(path: input.final)
    }
    var renamed: [String] = []
    for (index, page) in pages.enumerated() {
      guard rename(page.temporary, page.final) == 0 else {
        let reason = FileError.Reason.system(errno)
        for path in renamed { unlink(path) }
        for rest in pages[index...] { unlink(rest.temporary) }
        throw .unwritable(path: page.final, reason: reason)
      }
      renamed.append(page.final)
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

  /// The file at `path` (absolute), named `file` in messages, with this sandbox's CPU limit.
  private func input(_ path: String, file: String) -> WorkerRequest.Input {
    WorkerRequest.Input(path: path, file: file, cpuSeconds: limits.cpuSeconds)
  }

  /// The absolute path of `path`, refused here (as every input is, by `FileIO`) unless it is
  /// a regular file: a FIFO or device is `file.notRegular` at once, without blocking.
  private func absolute(_ path: String) throws(FileError) -> String {
    let (descriptor, _) = try FileIO.openForReading(path)
    close(descriptor)
    return path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
  }

  /// Sends `request` to a worker and waits for its answer.
  ///
  /// Cancelling the calling task kills the worker at once (the next request starts another):
  /// the call throws `DocumentError.canceled` unless the answer came first. A task cancelled
  /// while it waits for a worker leaves the queue and starts none.
  private func exchange(_ request: WorkerRequest) async throws -> WorkerResponse {
    let line = Array(request.wireLine.utf8) + [UInt8(ascii: "\n")]
    // A document needs poppler and qpdf, whose library a broken installation lacks: said here,
    // once for the whole run, rather than by a worker stopped when it first reached for them.
    if request.needsEngines { try DocumentEngines.required(file: request.input.file) }
    // A request cancelled while it waits for a worker leaves the queue.
    guard await permits.acquireUnlessCancelled() else {
      throw DocumentError.canceled(file: request.input.file)
    }
    defer { permits.release() }
    guard !Task.isCancelled else { throw DocumentError.canceled(file: request.input.file) }
    let worker = try checkOut()
    // The thread's closure holds the worker and the time, never the sandbox: it is released
    // after it ran, that is after `resume`, so a closure holding the sandbox could drop its
    // last reference on that thread once the command had returned, and the sandbox's deinit
    // stop its idle workers there, unsynchronised with the command's end.
    let seconds = wallSeconds
    let outcome = await withTaskCancellationHandler {
      await onOwnThread { worker.exchange(line, timeout: seconds) }
    } onCancel: {
      worker.interrupt()
    }
    switch outcome {
    case .answer(let data):
      // Answered just before it was killed: the answer stands, the worker does not.
      checkIn(worker, reusable: !worker.wasInterrupted)
      if worker.wasInterrupted { canceled.add(1, ordering: .relaxed) }
      guard let response = WorkerResponse.decode([UInt8](data)) else {
        throw DocumentError.workerCrashed(file: request.input.file, detail: "an unreadable answer")
      }
      switch response {
      case .inspected, .staged, .prepared, .decodedImage: return response
      case .failed(let error): throw error
      case .refused(let error): throw error
      // File errors (a FIFO swapped in, a full disk) keep their own code.
      case .otherFailure(let record): throw ReportedError(record: record)
      }
    case .timedOut:
      replaced.add(1, ordering: .relaxed)
      retire(worker, staging: request.stagedOutput)
      throw DocumentError.timeout(file: request.input.file, seconds: limits.wallSeconds)
    case .died(let exit):
      retire(worker, staging: request.stagedOutput)
      if worker.wasInterrupted {
        canceled.add(1, ordering: .relaxed)
        throw DocumentError.canceled(file: request.input.file)
      }
      replaced.add(1, ordering: .relaxed)
      throw exit.error(file: request.input.file, limits: limits)
    }
  }
}
