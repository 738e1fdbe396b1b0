// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the messages between a sandbox and its workers (one JSON line each way),
// and how a worker's end is told apart.

import Foundation
import ImprintCore

/// What a worker is asked to do: a request's case, named on the wire by its `operation` field.
public enum WorkerOperation: String, Codable, Sendable, CaseIterable {
  /// Count, measure and (with a colour rule) classify the pages.
  case inspect
  /// Draw pages as PNG or JPEG thumbnails.
  case thumbnail
  /// Place the pages on printer sheets, as a print-ready PDF.
  case prepare
  /// Decode an image (a card photo) upright, writing its pixels to a file.
  case decodeImage
}

/// One request to a worker, as a JSON line: one case per operation, each holding exactly the
/// fields that operation reads.
///
/// What every request names, the file (`Input`: its path, the name messages use, the CPU
/// seconds it may take), is one struct that each case's struct holds as `input`, not fields
/// repeated four times: the worker reads it before it looks at the operation (it maps the file,
/// names it in errors, sets the CPU limit), and the sandbox names the file in its own errors
/// whatever the operation. The password is not part of it: it opens a PDF, and an image has
/// none, so the three document operations carry it and `decodeImage` does not.
///
/// On the wire a request is one flat JSON object, as it was before the cases: `operation`,
/// the input's fields and the operation's own side by side
/// (`{"cpuSeconds":30,"file":"a.pdf","operation":"inspect","path":"/tmp/a.pdf"}`), so that
/// the lines of either end read as they did.
public enum WorkerRequest: Sendable {
  /// Count, measure and (with `colors`) classify the pages.
  case inspect(Inspect)
  /// Draw pages as PNG or JPEG thumbnails, staged beside `output`.
  case thumbnail(Thumbnail)
  /// Place the pages on printer sheets, as a print-ready PDF staged beside `output`.
  case prepare(Prepare)
  /// Decode an image upright, writing its pixels to `output`.
  case decodeImage(DecodeImage)

  /// Whether serving it may read a document with poppler or qpdf (every request but a photo's
  /// decoding), so needs the document engines (`DocumentEngines`).
  var needsEngines: Bool {
    if case .decodeImage = self { return false }
    return true
  }

  /// The file a request reads, whatever the operation.
  public struct Input: Sendable, Equatable {
    /// The absolute path of the file to read.
    public var path: String
    /// The name used in messages.
    public var file: String
    /// CPU seconds for this file.
    public var cpuSeconds: Int
  }

  /// `inspect`: the file's pages counted and measured.
  public struct Inspect: Sendable, Equatable {
    /// The file.
    public var input: Input
    /// The PDF password, if any.
    public var password: String?
    /// The colour rule; nil for no colour analysis.
    public var colors: ColorRule?
  }

  /// `thumbnail`: pages drawn into a box, each written to a synced temporary file (`staged` in
  /// the answer) that the caller renames once every page has succeeded.
  public struct Thumbnail: Sendable {
    /// The file.
    public var input: Input
    /// The PDF password, if any.
    public var password: String?
    /// The pages: `1`, `all` or ranges such as `1-3,5` (on the wire, `1` when absent).
    public var pages: String
    /// The side of the box in pixels (on the wire, 256 when absent).
    public var size: Int
    /// PNG or JPEG (on the wire, PNG when absent).
    public var format: ThumbnailFormat
    /// The thumbnail's path; with any pages but `1`, `-N` is added before the extension for
    /// page N.
    public var output: String
    /// PNG text chunks (on the wire, `[key, value]` pairs; absent when there are none).
    public var text: [(key: String, value: String)]
  }

  /// `prepare`: the pages placed on sheets by `layout`, written to a synced temporary file
  /// beside `output` (staged like thumbnails).
  public struct Prepare: Sendable, Equatable {
    /// The file.
    public var input: Input
    /// The PDF password, if any.
    public var password: String?
    /// The sheets, and the pages that go on them.
    public var layout: SheetLayout
    /// The print-ready PDF's path.
    public var output: String
  }

  /// `decodeImage`: an image decoded upright, its pixels written to `output`.
  public struct DecodeImage: Sendable, Equatable {
    /// The file.
    public var input: Input
    /// The new file the pixels go to (premultiplied BGRA rows, `Bitmap`'s layout).
    public var output: String
  }

  /// The operation, as the wire names it.
  public var operation: WorkerOperation {
    switch self {
    case .inspect: .inspect
    case .thumbnail: .thumbnail
    case .prepare: .prepare
    case .decodeImage: .decodeImage
    }
  }

  /// The file the request reads.
  public var input: Input {
    switch self {
    case .inspect(let request): request.input
    case .thumbnail(let request): request.input
    case .prepare(let request): request.input
    case .decodeImage(let request): request.input
    }
  }

  /// The request in `line`, or why it cannot be served: an operation this worker does not know
  /// (`document.unknownOperation`) or a line that is not a request (`document.badRequest`: not
  /// JSON, or a field the operation needs missing or of the wrong type).
  static func decode(_ line: [UInt8]) -> Result<WorkerRequest, WorkerProtocolError> {
    if let request = decodeImageRequest(line) { return .success(request) }
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

// A card's photos are decoded by the workers, a few exchanges a run: Foundation's JSONDecoder
// and JSONEncoder, each first used in every new worker and in the parent, were 2 % of the CPU
// of 200 cards (perf: their metadata and caches, not the bytes). `decodeImage` and its answer
// are read and written by hand; every other request and answer as before, and the bytes are
// the same (WorkerProtocolTests compares them with JSONEncoder's and JSONDecoder's).
extension WorkerRequest {
  /// The request as its line (without the newline).
  var wireLine: String {
    guard case .decodeImage(let request) = self else { return JSONOutput.line(self) }
    return JSONOutput.line(
      node: .object(
        OutputObject([
          ("cpuSeconds", .number(request.input.cpuSeconds)), ("file", .string(request.input.file)),
          ("operation", .string(WorkerOperation.decodeImage.rawValue)),
          ("output", .string(request.output)), ("path", .string(request.input.path)),
        ])))
  }

  /// A `decodeImage` request whose fields are all there with their types; nil for anything
  /// else (another operation, a field missing or of another type, a line that is not JSON or
  /// repeats a key), which `decode` gives to JSONDecoder as before.
  private static func decodeImageRequest(_ line: [UInt8]) -> WorkerRequest? {
    // Other requests are not parsed twice.
    guard line.count < 65_536, line.firstRange(of: Self.decodeImageName) != nil,
      let fields = (try? StrictJSON.tree(line, source: "request"))?.object,
      fields["operation"]?.string == WorkerOperation.decodeImage.rawValue,
      let path = fields["path"]?.string, let file = fields["file"]?.string,
      let output = fields["output"]?.string,
      let cpuSeconds = fields["cpuSeconds"]?.number.flatMap(Self.integer)
    else { return nil }
    return .decodeImage(
      DecodeImage(input: Input(path: path, file: file, cpuSeconds: cpuSeconds), output: output))
  }

  /// `"decodeImage"`, as a request that names it holds it.
  private static let decodeImageName = Array(#""decodeImage""#.utf8)

  /// An integer literal's exact value (JSONDecoder's: never through a Double, which rounds past
  /// 2^53); nil for a fraction, an exponent or a value past `Int`.
  static func integer(_ number: JSONNumber) -> Int? {
    number.isIntegerLiteral ? Int(number.text) : nil
  }
}

extension WorkerResponse {
  /// The answer as its line (without the newline).
  var wireLine: String {
    guard case .decodedImage(let width, let height, let hasAlpha, let embedsFile) = self else {
      return JSONOutput.line(self, flags: [DocumentInfo.compactPageSizes])
    }
    return JSONOutput.line(
      node: .object(
        OutputObject([
          (
            "decodedImage",
            .object(
              OutputObject([
                ("embedsFile", .bool(embedsFile)), ("hasAlpha", .bool(hasAlpha)),
                ("height", .number(height)), ("width", .number(width)),
              ]))
          )
        ])))
  }

  /// The answer in `line`, or nil when it is not one.
  static func decode(_ line: [UInt8]) -> WorkerResponse? {
    // Only a line that starts as the hand-written one does is parsed twice at worst (not an
    // inspection's, which may hold thousands of pages).
    if line.starts(with: Self.decodedImagePrefix),
      let fields = (try? StrictJSON.tree(line, source: "answer"))?.object, fields.count == 1,
      let image = fields["decodedImage"]?.object, image.count == 4,
      let width = image["width"]?.number.flatMap(WorkerRequest.integer),
      let height = image["height"]?.number.flatMap(WorkerRequest.integer),
      case .bool(let hasAlpha)? = image["hasAlpha"],
      case .bool(let embedsFile)? = image["embedsFile"]
    {
      return .decodedImage(width: width, height: height, hasAlpha: hasAlpha, embedsFile: embedsFile)
    }
    return try? JSONDecoder().decode(WorkerResponse.self, from: Data(line))
  }

  /// How `wireLine` starts a `decodedImage` answer.
  private static let decodedImagePrefix = Array(#"{"decodedImage":"#.utf8)
}

extension WorkerRequest {
  /// The output beside which the worker stages files (thumbnails, a prepared PDF), or nil: a
  /// worker killed on the way leaves its temporaries in that folder.
  var stagedOutput: String? {
    switch self {
    case .thumbnail(let request): request.output
    case .prepare(let request): request.output
    case .inspect, .decodeImage: nil
    }
  }
}

extension WorkerRequest: Codable {
  /// The fields of the flat JSON object, every operation's.
  private enum Field: String, CodingKey {
    case operation, path, file, cpuSeconds, password, colors, pages, size, format, output, text
    case layout
  }

  public init(from decoder: any Decoder) throws {
    let fields = try decoder.container(keyedBy: Field.self)
    let operation = try fields.decode(WorkerOperation.self, forKey: .operation)
    let input = Input(
      path: try fields.decode(String.self, forKey: .path),
      file: try fields.decode(String.self, forKey: .file),
      cpuSeconds: try fields.decode(Int.self, forKey: .cpuSeconds))
    func password() throws -> String? { try fields.decodeIfPresent(String.self, forKey: .password) }
    func output() throws -> String { try fields.decode(String.self, forKey: .output) }
    switch operation {
    case .inspect:
      self = .inspect(
        Inspect(
          input: input, password: try password(),
          colors: try fields.decodeIfPresent(ColorRule.self, forKey: .colors)))
    case .thumbnail:
      let pairs = try fields.decodeIfPresent([[String]].self, forKey: .text) ?? []
      self = .thumbnail(
        Thumbnail(
          input: input, password: try password(),
          pages: try fields.decodeIfPresent(String.self, forKey: .pages) ?? "1",
          size: try fields.decodeIfPresent(Int.self, forKey: .size) ?? 256,
          format: try fields.decodeIfPresent(ThumbnailFormat.self, forKey: .format) ?? .png,
          output: try output(),
          // Anything but a pair is no text chunk: left out, as it always was.
          text: pairs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }))
    case .prepare:
      self = .prepare(
        Prepare(
          input: input, password: try password(),
          layout: try fields.decode(SheetLayout.self, forKey: .layout), output: try output()))
    case .decodeImage:
      self = .decodeImage(DecodeImage(input: input, output: try output()))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var fields = encoder.container(keyedBy: Field.self)
    try fields.encode(operation, forKey: .operation)
    try fields.encode(input.path, forKey: .path)
    try fields.encode(input.file, forKey: .file)
    try fields.encode(input.cpuSeconds, forKey: .cpuSeconds)
    switch self {
    case .inspect(let request):
      try fields.encodeIfPresent(request.password, forKey: .password)
      try fields.encodeIfPresent(request.colors, forKey: .colors)
    case .thumbnail(let request):
      try fields.encodeIfPresent(request.password, forKey: .password)
      try fields.encode(request.pages, forKey: .pages)
      try fields.encode(request.size, forKey: .size)
      try fields.encode(request.format, forKey: .format)
      try fields.encode(request.output, forKey: .output)
      if !request.text.isEmpty {
        try fields.encode(request.text.map { [$0.key, $0.value] }, forKey: .text)
      }
    case .prepare(let request):
      try fields.encodeIfPresent(request.password, forKey: .password)
      try fields.encode(request.layout, forKey: .layout)
      try fields.encode(request.output, forKey: .output)
    case .decodeImage(let request):
      try fields.encode(request.output, forKey: .output)
    }
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

  /// 422, as the service has always answered them.
  public var status: Int {
    switch self {
    case .malformedRequest, .unknownOperation: 422
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
  /// The status of the error the worker reported, from its code.
  var status: Int { ErrorStatus.of(code: record.code) }

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
