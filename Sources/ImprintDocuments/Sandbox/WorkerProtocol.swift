// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the messages between a sandbox and its workers (one JSON line each way),
// and how a worker's end is told apart.

import Foundation
import ImprintCore

/// What a worker is asked to do.
public enum WorkerOperation: String, Codable, Sendable, CaseIterable {
  /// Count, measure and (with a colour rule) classify the pages.
  case inspect
  /// Draw pages as PNG or JPEG thumbnails.
  case thumbnail
  /// Place the pages on printer sheets (`layout`), as a print-ready PDF.
  case prepare
  /// Decode an image (a card photo) upright, writing its pixels to `output`.
  case decodeImage
}

/// One request to a worker, as a JSON line.
public struct WorkerRequest: Codable, Sendable {
  /// What to do with the file.
  public var operation: WorkerOperation
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
  /// Where the thumbnail goes; for `decodeImage`, the new file the pixels go to (premultiplied
  /// BGRA rows, `Bitmap`'s layout).
  ///
  /// With several pages, `-N` is added before the extension for page N. The worker writes each
  /// page to a temporary file beside it (`staged` in the answer) and the caller renames them all
  /// once every page has succeeded.
  public var output: String?
  /// PNG text chunks, as [key, value] pairs.
  public var text: [[String]]?
  /// The sheets for `prepare` (written to `output`, staged like thumbnails).
  public var layout: SheetLayout?
  /// CPU seconds for this file.
  public var cpuSeconds: Int

  /// The request in `line`, or why it cannot be served: an operation this worker does not know
  /// (`document.unknownOperation`) or a line that is not a request (`document.badRequest`).
  static func decode(_ line: [UInt8]) -> Result<WorkerRequest, WorkerProtocolError> {
    let data = Data(line)
    if let request = try? JSONDecoder().decode(WorkerRequest.self, from: data) {
      return .success(request)
    }
    /// Only the operation, to tell an unknown one from a malformed line.
    struct Operation: Decodable { var operation: String }
    if let named = try? JSONDecoder().decode(Operation.self, from: data),
      WorkerOperation(rawValue: named.operation) == nil
    {
      return .failure(.unknownOperation(name: named.operation))
    }
    return .failure(.malformedRequest)
  }
}

/// A thumbnail page written to a synced temporary file, to be renamed to its final path by the
/// caller once every page has succeeded.
public struct StagedThumbnail: Codable, Sendable, Equatable {
  /// The temporary file beside the final path.
  public var temporary: String
  /// The thumbnail's final path.
  public var final: String
}

extension StagedThumbnail {
  /// A synced temporary file beside `path` that `body` writes through its descriptor, to be
  /// renamed to `path` by the caller; removed again when `body`, the sync or the close fails.
  ///
  /// - Returns: the staged file and what `body` returned.
  /// - Throws: `FileError.unwritable`, or what `body` throws.
  package static func write<Result>(to path: String, _ body: (Int32) throws -> Result) throws
    -> (StagedThumbnail, Result)
  {
    let temporary = try AtomicFile.temporaryPath(for: path)
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw FileError.unwritable(path: path, reason: .system(errno)) }
    let result: Result
    do {
      result = try body(descriptor)
    } catch {
      close(descriptor)
      unlink(temporary)
      throw error
    }
    do {
      try FileIO.syncAndClose(descriptor, path: path)
    } catch {
      unlink(temporary)
      throw error
    }
    return (StagedThumbnail(temporary: temporary, final: path), result)
  }
}

/// A worker's answer, as a JSON line: exactly one per request line.
public enum WorkerResponse: Codable, Sendable {
  /// The inspection, for `inspect`.
  case inspected(info: DocumentInfo)
  /// The pages written, for `thumbnail`, in page order.
  case staged(pages: [StagedThumbnail])
  /// The print-ready PDF written, for `prepare`, and its sheet sides (its pages).
  case prepared(document: StagedThumbnail, sheetSides: Int)
  /// The image decoded, for `decodeImage`: its pixels are in the request's `output`;
  /// `embedsFile` when the bitmap keeps the file itself as its JPEG (`Bitmap.jpeg`: a JPEG a
  /// PDF embeds as it is).
  case decodedImage(width: Int, height: Int, hasAlpha: Bool, embedsFile: Bool)
  /// The file failed.
  case failed(error: DocumentError)
  /// The request itself could not be served (malformed, or an unknown operation).
  case refused(error: WorkerProtocolError)
  /// A failure outside the document domain (I/O), with its code, message and hint.
  case otherFailure(record: ErrorRecord)
}

/// A request line a worker cannot serve.
public enum WorkerProtocolError: ImprintError, Codable, Equatable {
  /// The line is not a request (not JSON, a field missing or of the wrong type, too long).
  case malformedRequest
  /// The request names an operation this worker does not know.
  case unknownOperation(name: String)

  public var code: String {
    switch self {
    case .malformedRequest: "document.badRequest"
    case .unknownOperation: "document.unknownOperation"
    }
  }

  public var message: String {
    switch self {
    case .malformedRequest: "the document worker received a request it cannot read"
    case .unknownOperation(let name):
      "the document worker was asked for the operation '\(SafeText.excerpt(name))', which it does not know"
    }
  }

  public var hint: String? {
    switch self {
    case .malformedRequest: nil
    case .unknownOperation:
      "known operations: "
        + WorkerOperation.allCases.map(\.rawValue).joined(separator: ", ")
        + " (is the worker executable another version of Imprint?)"
    }
  }
}

/// An error a worker reported, with its code, message, hint and causes unchanged.
struct ReportedError: ImprintError {
  let record: ErrorRecord

  var code: String { record.code }
  var message: String { record.message }
  var hint: String? { record.hint }

  /// The first cause the worker reported, with the rest beneath it.
  var underlying: (any Error)? {
    guard var cause = record.causes?.first, let causes = record.causes else { return nil }
    cause.causes = causes.count > 1 ? Array(causes.dropFirst()) : nil
    return ReportedError(record: cause)
  }
}

/// How a worker process ended, from its wait status alone (what it printed is never read).
enum WorkerExit: Equatable, Sendable {
  /// Killed by a signal (SIGXCPU at the CPU limit, SIGBUS for a mapped file that shrank...).
  case signal(Int32)
  /// Exited with a status (`WorkerPlumbing.outOfMemoryExitStatus` when an allocation failed).
  case status(Int32)

  /// The exit of a raw `waitpid` status (WIFSIGNALED / WTERMSIG / WEXITSTATUS spelled out: the
  /// macros do not import).
  init(waitStatus status: Int32) {
    let signal = status & 0x7F
    self = signal != 0 && signal != 0x7F ? .signal(signal) : .status((status >> 8) & 0xFF)
  }

  /// What this end means for the file the worker was reading.
  func error(file: String, limits: SandboxLimits) -> DocumentError {
    switch self {
    case .signal(SIGXCPU): .cpuLimit(file: file, seconds: limits.cpuSeconds)
    // A mapped file that shrank: its missing pages raise SIGBUS when touched.
    case .signal(SIGBUS): .fileChanged(file: file)
    case .status(WorkerPlumbing.outOfMemoryExitStatus):
      .memoryLimit(file: file, megabytes: limits.memoryMB)
    case .signal(let number): .workerCrashed(file: file, detail: "signal \(number)")
    case .status(let status): .workerCrashed(file: file, detail: "exit status \(status)")
    }
  }
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
