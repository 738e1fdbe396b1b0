// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: Office documents converted to PDF by LibreOffice, in office workers kept
// warm (Resources/office/office-worker.py says how the office is run and fenced in).

internal import CImprintEngines
import Foundation
import ImprintCore
import Synchronization

/// The limits of one conversion.
public struct OfficeLimits: Sendable, Equatable {
  /// Wall time: the office is killed past it (`document.timeout`).
  public var seconds: Int
  /// CPU time of the office for the file (`document.cpuLimit`).
  public var cpuSeconds: Int
  /// Memory of the office: its resident memory and its temporary files together
  /// (`document.memoryLimit`).
  ///
  /// LibreOffice inflates a package's parts into temporary files before it parses them,
  /// gigabytes for a zip bomb. LibreOffice alone takes some 200 MB.
  public var memoryMB: Int
  /// The most pages a converted PDF may have (`document.tooManyPages`).
  public var maximumPages: Int
  /// Files an office worker converts before it is replaced by a fresh one.
  public var filesPerWorker: Int

  /// Creates limits; the defaults suit a print shop's uploads (a 300-page report converts in
  /// a few seconds).
  public init(
    seconds: Int = 120, cpuSeconds: Int = 120, memoryMB: Int = 2048, maximumPages: Int = 2000,
    filesPerWorker: Int = 200
  ) {
    self.seconds = seconds
    self.cpuSeconds = cpuSeconds
    self.memoryMB = memoryMB
    self.maximumPages = maximumPages
    self.filesPerWorker = filesPerWorker
  }
}

/// What a conversion made.
public struct OfficeConversion: Sendable, Codable, Equatable {
  /// The LibreOffice application that read the file: `writer`, `calc`, `impress` or `draw`.
  public let application: String
  /// The pages of the PDF.
  public let pages: Int
  /// The SHA-256 of the PDF, lower-case hex.
  public let pdfSHA256: String
}

/// Converts Office documents (Word, Excel, PowerPoint, OpenDocument, RTF) to PDF with
/// LibreOffice, one office worker per slot, kept warm between files.
///
/// Each worker is `python3 office-worker.py`, driving a `soffice.bin --headless` with a
/// private profile in this converter's scratch folder, over a pipe: no network, no macros, no
/// link updates, and the limits of `OfficeLimits` (see the script). A worker that crashes, is
/// killed at a limit or has converted `filesPerWorker` files is replaced on the next request.
/// The PDF is written again by libqpdf without its dates and with an /ID from its content, so
/// that the same file converts to the same bytes.
public final class OfficeConverter: Sendable {
  /// Names the conversion: the LibreOffice installed (its `versionrc`) and this converter's
  /// settings (the SHA-256 of the worker script that holds them: how files are loaded, laid
  /// out and exported).
  ///
  /// A cached PDF made by another is not reused.
  /// The worker script (nil when its bundle is not installed).
  static let scriptPath = ResourceBundle.path(
    of: "office/office-worker.py", module: "ImprintDocuments", bundle: .module)

  public static let version: String = {
    let office =
      (try? FileIO.read("/usr/lib/libreoffice/program/versionrc", limit: 65_536)).map {
        String(decoding: $0, as: UTF8.self)
      } ?? "none"
    let settings = scriptPath.flatMap { try? SHA256.hex(ofFile: $0, limit: 1 << 20) } ?? "none"
    return "imprint-office-2 \(settings) " + office
  }()

  /// The limits of each conversion.
  public let limits: OfficeLimits
  private let python: String
  private let script: String?
  private let scratch: String
  private let slots: Mutex<[Slot?]>
  private let available: DispatchSemaphore

  /// One worker slot: its profile folder (kept across the workers that use it, so that a new
  /// worker starts warm) and its running worker.
  private final class Slot: @unchecked Sendable {
    let profile: String
    var worker: WorkerProcess?
    var served = 0
    init(profile: String) { self.profile = profile }
  }

  /// Creates a converter with `workers` office workers (each some 200-300 MB when running;
  /// started on first use).
  ///
  /// - Parameters:
  ///   - limits: the limits of each conversion.
  ///   - workers: how many files convert at once (at least 1).
  ///   - python: the Python interpreter with python3-uno and python3-seccomp (Debian's).
  /// - Throws: `FileError` when the scratch folder cannot be made.
  public init(
    limits: OfficeLimits = OfficeLimits(), workers: Int = 1, python: String = "/usr/bin/python3"
  ) throws(FileError) {
    self.limits = limits
    self.python = python
    script = Self.scriptPath
    Self.removeAbandonedScratch()
    var template = Array(
      (NSTemporaryDirectory() + "/imprint-office-\(getpid())-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
      guard let base = buffer.baseAddress, let path = mkdtemp(base) else { return nil }
      return String(cString: path)
    }
    guard let made else {
      throw .unwritable(path: NSTemporaryDirectory(), reason: .system(errno))
    }
    scratch = made
    let count = max(1, workers)
    slots = Mutex((0..<count).map { Slot(profile: "\(made)/profile-\($0)") })
    available = DispatchSemaphore(value: count)
  }

  deinit { stop() }

  /// Removes the scratch folders of converters whose process has ended without stopping them
  /// (killed, or a converter kept for the life of a process): `imprint-office-PID-*` in the
  /// temporary folder, for a PID that no longer runs on this machine.
  static func removeAbandonedScratch() {
    let folder = NSTemporaryDirectory()
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    for name in names where name.hasPrefix("imprint-office-") {
      let parts = name.dropFirst("imprint-office-".count).split(separator: "-")
      guard parts.count == 2, let pid = pid_t(parts[0]), pid > 0, pid != getpid(),
        kill(pid, 0) != 0, errno == ESRCH
      else { continue }
      try? FileManager.default.removeItem(atPath: folder + "/" + name)
    }
  }

  /// The converter's scratch folder, which holds its office profiles: tests find this
  /// converter's office by it on the office's command line.
  var scratchFolder: String { scratch }

  /// Stops the office workers and removes the scratch folder (profiles, partial outputs).
  public func stop() {
    let taken = slots.withLock { slots in slots.compactMap { $0 } }
    for slot in taken {
      slot.worker?.stop()
      slot.worker = nil
    }
    try? FileManager.default.removeItem(atPath: scratch)
  }

  /// Converts the Office document at `path` to a PDF written atomically at `output`.
  ///
  /// - Parameters:
  ///   - path: the document (read by the office; never written).
  ///   - file: its name for messages.
  ///   - password: the document's password, if any.
  ///   - output: where the PDF goes (replaced atomically; nothing is left there on failure).
  /// - Returns: the application that read it, the PDF's pages and digest.
  /// - Throws: `DocumentError`: `.officeUnavailable` (LibreOffice, python3-uno or
  ///   python3-seccomp missing), `.encrypted`, `.officeUnreadable`, `.conversionFailed`,
  ///   `.timeout`, `.cpuLimit`, `.memoryLimit`, `.workerCrashed`, `.tooManyPages`.
  public func convert(_ path: String, file: String, password: String? = nil, to output: String)
    throws(DocumentError) -> OfficeConversion
  {
    // A folder of its own: LibreOffice writes the PDF to a temporary file beside it and renames
    // that at the end, so an office killed while it exports leaves the temporary file; the
    // folder goes with whatever is in it.
    let folder = scratch + "/out-\(UUID().uuidString)"
    guard mkdir(folder, 0o700) == 0 else {
      throw .conversionFailed(
        file: file, detail: FileError.unwritable(path: folder, reason: .system(errno)).message)
    }
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let converted = folder + "/converted.pdf"
    let application = try withWorker(file: file) { (worker) throws(DocumentError) in
      try self.exchange(worker, path: path, file: file, password: password, output: converted)
    }
    return try normalize(converted, file: file, application: application, to: output)
  }

  /// Runs `body` with a worker of a free slot (waiting for one), starting one when the slot
  /// has none or its worker has served its files; a worker that failed is stopped.
  private func withWorker<Result>(
    file: String, _ body: (WorkerProcess) throws(DocumentError) -> (Result, ended: Bool)
  ) throws(DocumentError) -> Result {
    available.wait()
    defer { available.signal() }
    guard
      let (index, slot) = slots.withLock({ slots -> (Int, Slot)? in
        guard let index = slots.firstIndex(where: { $0 != nil }), let slot = slots[index] else {
          return nil
        }
        slots[index] = nil
        return (index, slot)
      })
    else { preconditionFailure("a free slot for every semaphore count") }
    defer { slots.withLock { $0[index] = slot } }
    if slot.worker == nil || slot.served >= limits.filesPerWorker {
      slot.worker?.stop()
      slot.worker = try start(profile: slot.profile)
      slot.served = 0
    }
    guard let worker = slot.worker else { preconditionFailure("started above") }
    slot.served += 1
    do {
      let (result, ended) = try body(worker)
      if ended {
        // The worker answered, then ended with its office: the next file starts a new one.
        worker.stop()
        slot.worker = nil
      }
      return result
    } catch {
      // A worker after a limit or a crash is gone or going; any other failure leaves it warm.
      switch error {
      case .timeout, .cpuLimit, .memoryLimit, .workerCrashed:
        worker.stop()
        slot.worker = nil
      default: break
      }
      throw error
    }
  }

  /// Starts an office worker on `profile`.
  private func start(profile: String) throws(DocumentError) -> WorkerProcess {
    guard let script else {
      throw .officeUnavailable(
        detail:
          "the office worker script is not installed (\(ResourceBundle.location(module: "ImprintDocuments"))/office)"
      )
    }
    for (path, what) in [
      (python, "Python 3"), ("/usr/lib/libreoffice/program/soffice.bin", "LibreOffice"),
    ] where access(path, X_OK) != 0 {
      throw .officeUnavailable(detail: "\(what) is not installed (\(path))")
    }
    do {
      return try WorkerProcess(
        arguments: [python, "-I", script, "--profile", profile, "--parent", "\(getpid())"],
        memoryMB: limits.memoryMB)
    } catch {
      throw .officeUnavailable(detail: error.message)
    }
  }

  /// One request to `worker`; returns the application that read the file.
  private func exchange(
    _ worker: WorkerProcess, path: String, file: String, password: String?, output: String
  ) throws(DocumentError) -> (String, ended: Bool) {
    struct Request: Encodable {
      let input: String
      let output: String
      let password: String?
      let seconds: Int
      let cpuSeconds: Int
      let memoryMB: Int
    }
    struct Answer: Decodable {
      let status: String
      let application: String?
      let code: String?
      let detail: String?
      /// The warm office ended on this file, which then converted from the command line (see
      /// `convert_once` in the script); the worker ends after this answer.
      let officeEnded: Bool?
    }
    let request = Request(
      input: path, output: output, password: password, seconds: limits.seconds,
      cpuSeconds: limits.cpuSeconds, memoryMB: limits.memoryMB)
    var line = Array(JSONOutput.line(request).utf8)
    line.append(UInt8(ascii: "\n"))
    // The worker's own watchdog ends the office at `seconds`; this one covers its start (the
    // first in a new profile takes a few seconds) and a worker that hangs itself.
    switch worker.exchange(line, timeout: Double(limits.seconds) + 90) {
    case .timedOut:
      throw .timeout(file: file, seconds: Double(limits.seconds))
    case .died(let exit):
      throw .workerCrashed(file: file, detail: "the office worker ended (\(exit))")
    case .answer(let data):
      guard let answer = try? JSONDecoder().decode(Answer.self, from: data) else {
        throw .workerCrashed(file: file, detail: "the office worker answered something else")
      }
      if answer.status == "converted", let application = answer.application {
        return (application, answer.officeEnded == true)
      }
      switch answer.code {
      case "encrypted": throw .officeEncrypted(file: file, passwordGiven: password != nil)
      case "unreadable":
        // LibreOffice loading without a handler to ask does not say that a password was
        // needed: the file's own bytes do (an OOXML package encrypted into a Compound File).
        if let bytes = try? DocumentBytes(mapping: path),
          OfficeSniff.sniff(bytes) == .encryptedOffice
        {
          throw .officeEncrypted(file: file, passwordGiven: password != nil)
        }
        throw .officeUnreadable(file: file)
      case "timeLimit": throw .timeout(file: file, seconds: Double(limits.seconds))
      case "cpuLimit": throw .cpuLimit(file: file, seconds: limits.cpuSeconds)
      case "memoryLimit": throw .memoryLimit(file: file, megabytes: limits.memoryMB)
      case "officeDied": throw .workerCrashed(file: file, detail: "LibreOffice ended")
      case "officeDidNotStart":
        throw .workerCrashed(
          file: file,
          detail: "LibreOffice did not start (\(SafeText.excerpt(answer.detail ?? "", limit: 80)))")
      case "workerFailed":
        throw .workerCrashed(
          file: file,
          detail: "the office worker failed (\(SafeText.excerpt(answer.detail ?? "", limit: 80)))")
      case "noPages": throw .noPages(file: file)
      default:
        throw .conversionFailed(
          file: file, detail: SafeText.excerpt(answer.detail ?? answer.code ?? "", limit: 200))
      }
    }
  }

  /// Writes the office's PDF at `converted` to `output` without its dates (libqpdf), checking
  /// its page count against the limit.
  private func normalize(
    _ converted: String, file: String, application: String, to output: String
  ) throws(DocumentError) -> OfficeConversion {
    try DocumentEngines.required(file: file)
    let bytes: DocumentBytes
    do {
      bytes = try DocumentBytes(mapping: converted)
    } catch {
      throw .conversionFailed(file: file, detail: "LibreOffice wrote no PDF")
    }
    var result = CImprintImpose_Result()
    do {
      try AtomicFile.write(to: output) { temporary in
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
          throw FileError.unwritable(path: output, reason: .system(errno))
        }
        defer { close(descriptor) }
        _ = bytes.withBuffer {
          engines.impose_normalize($0.baseAddress, $0.count, descriptor, &result)
        }
        if result.status == CImprintImpose_writeFailed {
          throw FileError.unwritable(path: output, reason: .system(result.systemError))
        }
        guard result.status == CImprintImpose_ok else {
          throw DocumentError.conversionFailed(
            file: file, detail: "libqpdf cannot read LibreOffice's PDF")
        }
        guard Int(result.foundPages) <= limits.maximumPages else {
          throw DocumentError.tooManyPages(
            file: file, pages: Int(result.foundPages), maximum: limits.maximumPages)
        }
        guard result.foundPages > 0 else { throw DocumentError.noPages(file: file) }
      }
    } catch let error as DocumentError {
      throw error
    } catch let error as FileError {
      throw .conversionFailed(file: file, detail: error.message)
    } catch {
      throw .conversionFailed(file: file, detail: "\(error)")
    }
    let digest: [UInt8]
    do {
      digest = try DocumentBytes(mapping: output).withBuffer { SHA256.hash($0) }
    } catch {
      throw .conversionFailed(file: file, detail: error.message)
    }
    return OfficeConversion(
      application: application, pages: Int(result.foundPages),
      pdfSHA256: SHA256.hex(digest))
  }
}
