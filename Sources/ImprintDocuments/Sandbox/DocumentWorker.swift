// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the worker side of the sandbox, and the entry point any executable calls
// first thing to host workers.

import Foundation
import ImprintCore
import ImprintGraphics

/// The worker side: a process started as `EXECUTABLE __worker --memory-mb N --parent PID`
/// serves requests on standard input, one JSON line each, and answers each on standard output.
///
/// Any executable can host workers: call `DocumentWorker.runIfWorker()` first thing in `main`
/// (before threads or other work), and give that executable's path to `DocumentSandbox`. The
/// `imprint` CLI does exactly this.
public enum DocumentWorker {
  /// The first argument that makes a process a document worker.
  public static let argument = "__worker"

  /// Serves as a document worker and exits when this process was started as one
  /// (`arguments[1]` is `__worker`); returns at once otherwise.
  ///
  /// - Parameter arguments: the command line, program name first.
  public static func runIfWorker(arguments: [String] = CommandLine.arguments) {
    guard arguments.count > 1, arguments[1] == argument else { return }
    main(arguments: Array(arguments.dropFirst(2)))
  }

  /// Serves requests until standard input closes, then exits with status 0.
  ///
  /// - Parameter arguments: what follows `__worker`: `--memory-mb N` (default
  ///   `SandboxLimits.defaultMemoryMB`) and `--parent PID` (the worker ends with that process).
  public static func main(arguments: [String]) -> Never {
    func value(_ name: String) -> String? {
      arguments.firstIndex(of: name).flatMap {
        $0 + 1 < arguments.count ? arguments[$0 + 1] : nil
      }
    }
    let memory = value("--memory-mb").flatMap { Int($0) } ?? SandboxLimits.defaultMemoryMB
    serve(memoryMB: memory, parent: value("--parent").flatMap { pid_t($0) })
    exit(0)
  }

  /// Serves requests until standard input closes.
  ///
  /// Sets the address-space limit once and a CPU limit before each file (SIGXCPU ends the
  /// worker when a file exceeds it; the soft limit only, the hard one left as inherited). With
  /// `parent`, the worker ends as soon as that process does, busy or not (and at once if it already has). A failed allocation ends it with
  /// `WorkerPlumbing.outOfMemoryExitStatus`. Every request line gets an answer at once, a
  /// malformed one or one naming an unknown operation included.
  static func serve(memoryMB: Int, parent: pid_t?) {
    if let parent, !WorkerPlumbing.exitWithParent(parent) { return }
    WorkerPlumbing.exitStatusOnAllocationFailure()
    // A file-size limit (a stand-in for a full disk) makes a write fail with EFBIG, reported
    // for that file, instead of killing the worker (a forked one starts before the CLI
    // ignores SIGXFSZ).
    signal(SIGXFSZ, SIG_IGN)
    WorkerPlumbing.suitParsers()
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
      var bytes = Array(response.wireLine.utf8)
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
        answer(.refused(error: .malformedRequest))
        continue
      }
      let request: WorkerRequest
      switch WorkerRequest.decode(line) {
      case .success(let decoded): request = decoded
      case .failure(let refusal):
        answer(.refused(error: refusal))
        continue
      }
      var usage = rusage()
      getrusage(RUSAGE_SELF.rawValue, &usage)
      let used = rlim_t(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1
      let seconds = rlim_t(min(max(request.input.cpuSeconds, 1), 1 << 31))
      // Only the soft limit moves (SIGXCPU, whose default ends the worker; rlim_t.max is
      // RLIM_INFINITY): a hard limit once lowered cannot be raised again without
      // CAP_SYS_RESOURCE, which containers drop, so a lowered one would cap the CPU of every
      // later request the worker serves at the first request's allowance.
      var cpu = rlimit()
      getrlimit(Int32(RLIMIT_CPU.rawValue), &cpu)
      cpu.rlim_cur =
        cpu.rlim_max == rlim_t.max ? used + seconds : min(used + seconds, cpu.rlim_max)
      setrlimit(Int32(RLIMIT_CPU.rawValue), &cpu)
      answer(handle(request))
    }
  }

  static func handle(_ request: WorkerRequest) -> WorkerResponse {
    do {
      // A worker its parent did not fork after loading the engines loads them here, before
      // its first document: a library that will not load is this request's answer.
      if request.needsEngines {
        // Its address space cannot hold poppler and qpdf: the memory limit, told as every
        // other allocation it cannot make is (its exit status).
        if DocumentEngines.failedForMemory { _exit(WorkerPlumbing.outOfMemoryExitStatus) }
        try DocumentEngines.required(file: request.input.file)
      }
      // Mapped, not read: parsers touch the parts they need, and poppler shares the mapping.
      // Opened as every input is (FileIO): a FIFO or device put in the file's place since
      // the caller checked it is refused without blocking.
      let bytes: DocumentBytes
      do {
        bytes = try DocumentBytes(mapping: request.input.path)
      } catch {
        // The address space the sandbox allows cannot hold the file's mapping: the memory
        // limit, as any other allocation this worker cannot make (its exit status says so).
        if case .unreadable(_, let reason) = error, reason.errno == ENOMEM {
          _exit(WorkerPlumbing.outOfMemoryExitStatus)
        }
        throw error.naming(request.input.file)
      }
      switch request {
      case .thumbnail(let thumbnail):
        return .staged(pages: try thumbnails(thumbnail, bytes))
      case .decodeImage(let image):
        return try decodeImage(image, bytes)
      case .inspect(let inspect):
        return .inspected(
          info: try DocumentEngine.inspect(
            bytes, file: inspect.input.file, password: inspect.password, colors: inspect.colors))
      case .prepare(let prepare):
        let (staged, sides) = try self.prepare(prepare, bytes)
        return .prepared(document: staged, sheetSides: sides)
      }
    } catch let error as DocumentError {
      return .failed(error: error)
    } catch {
      // With its causes: the caller shows them with --verbose.
      return .otherFailure(record: ErrorRecord(error, causes: true))
    }
  }

  /// Places the pages on sheets and writes the PDF to a synced temporary file beside the
  /// request's `output`, removed again when anything fails (the caller renames it).
  static func prepare(_ request: WorkerRequest.Prepare, _ bytes: DocumentBytes) throws
    -> (StagedThumbnail, Int)
  {
    try StagedThumbnail.write(to: request.output) { descriptor in
      try PageImposer.impose(
        bytes, file: request.input.file, password: request.password, layout: request.layout,
        descriptor: descriptor, output: request.output)
    }
  }

  /// Decodes the image and writes its pixels to the request's `output`, a file this creates
  /// (the caller reads and removes it; nothing is synced: it lives as long as the request).
  static func decodeImage(_ request: WorkerRequest.DecodeImage, _ bytes: DocumentBytes) throws
    -> WorkerResponse
  {
    let output = request.output
    let bitmap: Bitmap
    do {
      bitmap = try ImageDecoder.decode(bytes.array, source: request.input.file)
    } catch {
      throw DocumentError.image(error)
    }
    let descriptor = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw FileError.unwritable(path: output, reason: .system(errno))
    }
    defer { close(descriptor) }
    try FileIO.writeAll(bitmap.pixels, to: descriptor, path: output)
    // A decoder keeps no JPEG but the file's own bytes: the caller has them.
    return .decodedImage(
      width: bitmap.width, height: bitmap.height, hasAlpha: bitmap.hasAlpha,
      embedsFile: bitmap.jpeg != nil)
  }

  /// Draws the pages and writes each to a synced temporary file beside its final path.
  ///
  /// The caller renames them. When a page fails, the temporaries are removed; when the worker is
  /// killed (CPU or memory limit), the caller removes them (`AtomicFile` names them after
  /// this process, which is then gone).
  static func thumbnails(_ request: WorkerRequest.Thumbnail, _ bytes: DocumentBytes) throws
    -> [StagedThumbnail]
  {
    let output = request.output
    let spec = request.pages
    var staged: [StagedThumbnail] = []
    var failure: (any Error)?
    defer { if failure != nil { for page in staged { unlink(page.temporary) } } }
    do {
      try DocumentEngine.thumbnails(
        bytes, file: request.input.file, password: request.password, pages: spec,
        size: request.size, format: request.format, text: request.text
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
            throw FileError.unwritable(path: path, reason: .system(errno))
          }
          staged.append(StagedThumbnail(temporary: temporary, final: path))
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
