// SPDX-License-Identifier: Apache-2.0
// ImprintService: long work over HTTP. `POST /v1/batch` takes a manifest and its files and
// answers 202 with a job id; the batch runs in the background through `BatchRunner.run`, as
// `imprint batch` runs it. `GET /v1/jobs/ID` polls a job, `GET /v1/jobs/ID/files/PATH` fetches
// one of its outputs, `DELETE /v1/jobs/ID` removes it.

import Foundation
import ImprintBatch
import ImprintCore
import ImprintHTTP
import Synchronization

extension ImprintService {
  /// The route-table path of `path`: itself, or the template of a job's path
  /// (`/v1/jobs/{id}`, `/v1/jobs/{id}/files/{path}`); nil for a path no route has.
  static func routeKey(_ path: String) -> String? {
    if routes[path] != nil { return path }
    guard path.hasPrefix("/v1/jobs/") else { return nil }
    let rest = path.dropFirst("/v1/jobs/".count)
    let id = rest.prefix { $0 != "/" }
    guard !id.isEmpty else { return nil }
    let after = rest.dropFirst(id.count)
    if after.isEmpty { return "/v1/jobs/{id}" }
    guard after.hasPrefix("/files/"), after.count > "/files/".count else { return nil }
    return "/v1/jobs/{id}/files/{path}"
  }

  /// `POST /v1/batch`: a manifest and its files, run in the background as `imprint batch` runs
  /// them; answered 202 with the job's id and where to poll it (`Location`).
  ///
  /// The body is multipart: the part `manifest` (JSON Lines, or CSV when its file name ends in
  /// `.csv`) and one part per input file, named by its path as the manifest gives it. The files
  /// are written to the job's private folder and every path of the manifest is confined to it
  /// (`--inputs-root`). A manifest line naming a `printer` is refused (422
  /// `http.printerNotAllowed`): a client never chooses where the server connects. Query:
  /// `callback`, a URL POSTed the job's report when it ends (`announce`).
  func batch(_ request: HTTPRequest) async throws -> HTTPResponse {
    try Self.expect(request, ["multipart/form-data"])
    var query = try RequestOptions(query: request)
    let callback = try callback(&query)
    try query.finish()
    let parts = try Self.parts(of: request, known: nil)
    guard let manifest = parts["manifest"] else {
      throw ServiceError.missingPart(path: request.path, name: "manifest")
    }
    let record = try jobs.reserve(
      kind: .batch, bytes: parts.values.reduce(0) { $0 + $1.bytes.count }, callback: callback)
    let folder = record.folder
    let csv =
      (manifest.filename ?? "").lowercased().hasSuffix(".csv") || manifest.contentType == "text/csv"
    var work = BatchWork(
      manifest: csv ? "manifest.csv" : "manifest.jsonl",
      manifestName: manifest.filename ?? "manifest",
      // A file the manifest names that no part brought is told apart from a part's own problem.
      sentInputs: parts.keys.filter { $0 != "manifest" }.sorted(), lines: 0)
    let shown = Self.messageFolders(folder)
    do {
      try AtomicFile.write(manifest.bytes, to: folder + "/" + work.manifest)
      let inputs = folder + "/inputs"
      try FileIO.makeFolder(inputs)
      try Self.write(
        parts.values.filter { $0.name != "manifest" }, into: inputs, route: request.path)
      (work.lines, work.uniqueIDs) = try Self.checkManifest(
        folder + "/" + work.manifest, inputsRoot: inputs, maximumLines: jobs.limits.lines,
        name: work.manifestName)
      // Past its deadline the request is answered 503 by the server: a job started now would
      // run with its client told it was not taken.
      if request.isPastDeadline {
        throw HTTPError.deadlineExceeded(
          path: request.path, seconds: configuration.requestTimeout)
      }
    } catch {
      jobs.abandon(record.id)
      // The client's names (a part's path, the manifest's), never the job's folders.
      throw Self.withoutFolders(error, shown)
    }
    return accepted(try start(record, .batch(work)))
  }

  /// Queues job `record` (reserved, its inputs written) to run `work`, kept in its record.
  ///
  /// - Returns: the job queued (`JobStore.start`).
  /// - Throws: what `JobStore.start` throws (the reservation is dropped then).
  func start(_ record: JobStore.Record, _ work: JobWork, idempotency: IdempotencyRecord? = nil)
    throws -> JobStore.Record
  {
    try jobs.start(
      record.id, idempotency: idempotency, spec: work,
      work: self.work(for: work, id: record.id, folder: record.folder))
  }

  /// The folders whose paths a batch job's messages show relative to them: a client sees its
  /// own names, never the server's folders (links resolved too: a path may have been reached
  /// through them).
  static func messageFolders(_ folder: String) -> [String] {
    let roots = [folder, URL(fileURLWithPath: folder).resolvingSymlinksInPath().path]
    return Set(roots).sorted().flatMap { [$0 + "/inputs", $0 + "/output", $0] }
  }

  /// The work of job `id` in `folder`, made from what its record keeps (`JobWork`) and this
  /// service's configuration: by the request that accepted it, and again by whoever resumes it.
  ///
  /// With `shard`, a batch's work is that shard's (a prepare job is never run in shards).
  func work(for work: JobWork, id: String, folder: String, shard: ShardRun? = nil)
    -> JobStore.Work
  {
    switch work {
    case .batch(let batch): batchWork(batch, id: id, folder: folder, shard: shard)
    case .prepare(let prepare): prepareWork(prepare, id: id, folder: folder)
    }
  }

  /// A batch job's work: its manifest run as `imprint batch` runs it, with the service's
  /// sandbox, designs, fonts and width; with `shard`, as `imprint batch --shard I/N` runs it,
  /// then, when that shard's end finds the others ended, `imprint batch merge`.
  private func batchWork(_ work: BatchWork, id: String, folder: String, shard: ShardRun?)
    -> JobStore.Work
  {
    var options = BatchOptions(
      outputFolder: folder + "/output", placeholder: configuration.placeholder)
    // Messages name the client's files and the outputs, never this server's folders; the
    // manifest by its part's file name.
    options.manifestName = work.manifestName
    options.sentInputs = work.sentInputs
    options.relativeMessageFolders = Self.messageFolders(folder)
    options.inputsRoot = folder + "/inputs"
    options.sandbox = sandbox
    options.templatesFolder = configuration.templatesFolder
    options.jobs = configuration.concurrentRequests
    options.cardOptions.fonts = configuration.fonts
    // An item whose document's worker the job's stop killed ends with the job's own code.
    let cut = CutItems()
    options.canceledJob = { [jobs] item in
      cut.count.add(1, ordering: .relaxed)
      return (jobs.record(id)?.halt ?? .canceled).error(job: id, item: item)
    }
    let manifest = folder + "/" + work.manifest
    return { [options] folder in
      // Its items' errors are read by the client: hints name what a request sends.
      await ErrorSurface.$current.withValue(.http) {
        var options = options
        do {
          if let shard {
            options.shard = try BatchShard(index: shard.index, count: shard.count)
            options.uniqueIDs = work.uniqueIDs ?? false
          }
          // As `imprint batch` runs it: outputs synced together, not one by one.
          return try await AtomicFile.withDeferredFlush(syncing: folder) {
            let summary = try await BatchRunner.run(manifest: manifest, options: options)
            // A canceled run starts no new line (fewer results than lines) and cuts short the
            // items under way in workers.
            let complete =
              summary.total >= options.shard.items(of: work.lines)
              && cut.count.load(ordering: .relaxed) == 0
            var outcome = JobOutcome(
              summary: JobSummary(
                total: summary.total, ok: summary.ok, skipped: summary.skipped,
                failed: summary.failed),
              complete: complete)
            guard let shard, complete else { return outcome }
            let end = shard.end()
            guard end == .last else {
              outcome.shardEnd = end
              return outcome
            }
            // The last shard: the job's results are the shards' merged.
            let merged = try await ShardMerge.run(
              manifest: manifest, options: options, shards: shard.count)
            return JobOutcome(summary: JobSummary(merged.merged, failed: merged.failed))
          }
        } catch {
          return JobOutcome(
            error: ErrorRecord(error).showing(pathsRelativeTo: options.relativeMessageFolders))
        }
      }
    }
  }

  /// The 202 answer to a request that made job `record`: its report as it is when accepted (its
  /// id, state and where to poll it: `status`, and `Location`).
  func accepted(_ record: JobStore.Record) -> HTTPResponse {
    let document = report(record)
    var response = HTTPResponse.json(document, status: 202)
    response.headers.append(("Location", document.status))
    return response
  }

  /// `GET /v1/jobs/ID`, `DELETE /v1/jobs/ID` and `GET /v1/jobs/ID/files/PATH` (`HEAD` as `GET`:
  /// the server sends the same headers without the body).
  func job(_ request: HTTPRequest) throws -> HTTPResponse {
    try RequestOptions(query: request).finish()
    let rest = request.path.dropFirst("/v1/jobs/".count)
    let id = String(rest.prefix { $0 != "/" })
    if request.method == "DELETE" {
      struct Removed: Encodable {
        var schemaVersion = 1
        var job: String
        var removed: Bool
        var state: JobState
      }
      switch try jobs.remove(id) {
      case .removed(let state):
        return .json(Removed(job: id, removed: true, state: state))
      case .canceling:
        // Accepted: the job ends `canceled` once its items under way end.
        var response = HTTPResponse.json(
          Removed(job: id, removed: false, state: .running), status: 202)
        response.headers.append(("Location", "/v1/jobs/\(id)"))
        return response
      }
    }
    guard let record = try jobs.lookup(id) else { throw ServiceError.unknownJob(id: id) }
    let after = rest.dropFirst(id.count)
    guard after.isEmpty else {
      return try jobFile(record, String(after.dropFirst("/files/".count)))
    }
    return .json(report(record))
  }

  /// One output of job `record`: `relative` inside its output folder, opened and streamed.
  ///
  /// Only a regular file of one name reached through real folders is served: a symbolic link
  /// at any component (one planted in the output folder pointing at the jobs folder's records,
  /// at another job or out of the jobs folder), a hard link, a FIFO, a device or a folder is
  /// answered as a file that is not there, and nothing is followed or opened that would block
  /// (`ResponseFile`, `ConfinedPath.openFile`).
  ///
  /// - Throws: `ServiceError.unknownJobFile` for a path that is not such a file there, or that
  ///   is hidden (`.state/`, `./`); `FileError.escapesFolder` (422) for one leading out as
  ///   written (`..`, absolute).
  private func jobFile(_ record: JobStore.Record, _ relative: String) throws -> HTTPResponse {
    let output = record.folder + "/output"
    // Hidden names are the job's own (`.state/`); `..` is refused as leading out below.
    let hidden = relative.split(separator: "/").contains { $0.hasPrefix(".") && $0 != ".." }
    guard !hidden else { throw ServiceError.unknownJobFile(id: record.id, path: relative) }
    let file: ResponseFile
    do {
      let events = configuration.events
      file = try ResponseFile(relative, in: output, what: "job output") { [id = record.id] in
        events?("job '\(id)': its file '\(relative)' \($0); the connection was closed")
      }
    } catch {
      // Named as the client asked for it, inside the job's outputs, never the server's folder.
      if case .escapesFolder = error { throw Self.withoutFolders(error, [output]) }
      // Missing, a link, not a regular file: one answer, so that none tells what is there.
      throw ServiceError.unknownJobFile(id: record.id, path: relative)
    }
    let type = Self.outputTypes[(relative as NSString).pathExtension.lowercased()]
    // Streamed from the file as it is sent: a large output costs no memory.
    var response = HTTPResponse(
      status: 200, contentType: type ?? "application/octet-stream", body: [], file: file)
    let name = relative.split(separator: "/").last.map(String.init) ?? relative
    response.headers.append(("Content-Disposition", Self.attachment(name)))
    return response
  }

  /// A `Content-Disposition` value saving the file as `name` (RFC 6266): `filename` in ASCII,
  /// any other character (and `"`, `\\`, `%`) as `_`, and, when that changed it, `filename*` with
  /// the name in UTF-8, percent-encoded (RFC 8187), which clients that read it prefer.
  static func attachment(_ name: String) -> String {
    let plain = String(
      name.unicodeScalars.map { scalar -> Character in
        (0x20...0x7E).contains(scalar.value) && !"\"\\%".unicodeScalars.contains(scalar)
          ? Character(scalar) : "_"
      })
    guard plain != name else { return "attachment; filename=\"\(name)\"" }
    // RFC 8187's attr-char: letters, digits and !#$&+-.^_`|~ stay as they are.
    let kept = Set("!#$&+-.^_`|~".utf8)
    let encoded = name.utf8.map { byte -> String in
      let isAlphanumeric =
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
        || (0x61...0x7A).contains(byte)
      return isAlphanumeric || kept.contains(byte)
        ? String(UnicodeScalar(byte)) : "%" + RequestText.hex(byte)
    }
    return "attachment; filename=\"\(plain)\"; filename*=UTF-8''" + encoded.joined()
  }

  /// The largest results file given inline in a job's report (1 MiB); a larger one is fetched
  /// through its link.
  static let inlineResultsLimit = 1 << 20

  /// Where job `record` is: its state, times, summary, results, files and webhook.
  func report(_ record: JobStore.Record) -> JobReport {
    let href = "/v1/jobs/\(record.id)"
    var report = JobReport(
      job: record.id, kind: record.kind, state: record.state, status: href,
      accepted: record.accepted, started: record.started, finished: record.finished,
      webhook: record.webhook?.shown)
    guard record.state.isFinished else { return report }
    report.summary = record.outcome?.summary
    report.error = record.outcome?.error
    let output = record.folder + "/output"
    // A shard's own results (`results-I-of-N.jsonl`) are not an ended job's: its end merged
    // them into results.jsonl and removes them, but a shard still stopping on a loaded
    // replica may write its own a moment after (and remove it once it has stopped).
    report.files = JobStore.files(in: output).filter { ShardMerge.shardOf(resultsFile: $0) == nil }
    if report.files?.contains("results.jsonl") == true {
      report.resultsFile = href + "/files/results.jsonl"
      // Opened as a fetch opens it: a link put in its place is not followed.
      if let file = try? ResponseFile("results.jsonl", in: output, what: "job output"),
        let lines = try? file.read(limit: Self.inlineResultsLimit)
      {
        report.results = lines.split(separator: UInt8(ascii: "\n")).compactMap {
          try? JSONDecoder().decode(ItemResult.self, from: Data($0))
        }
      }
    }
    return report
  }

  /// Writes each part to its path inside `folder`, its name confined there as an order's or a
  /// manifest's paths are.
  ///
  /// - Throws: `FileError.escapesFolder` for a name leading out of the folder;
  ///   `ServiceError.duplicatePart` for two names that lead to one file (`a.pdf`, `./a.pdf`) or
  ///   a name another uses as a folder; `FileError` when a file cannot be written.
  static func write(_ parts: [FormPart], into folder: String, route: String) throws {
    var placed: [String: String] = [:]
    for part in parts.sorted(by: { $0.name < $1.name }) {
      // `a.pdf` and `./a.pdf` name one file.
      let name = part.name.split(separator: "/", omittingEmptySubsequences: true)
        .filter { $0 != "." }.joined(separator: "/")
      // An absolute name is refused as one leading out, though it would be stored inside: a
      // manifest line naming it would read another file (docs/service.md, "Jobs").
      if part.name.hasPrefix("/") {
        throw FileError.escapesFolder(path: part.name, folder: "inputs", what: "uploaded file")
      }
      // `.`, `./`: the inputs folder itself, no file.
      guard !name.isEmpty else { throw HTTPError.partNamesNoFile(path: route, name: part.name) }
      let path = try ConfinedPath.resolve(name, in: folder, what: "uploaded file")
      if let clash = placed.keys.first(where: {
        $0 == path || $0.hasPrefix(path + "/") || path.hasPrefix($0 + "/")
      }) {
        throw ServiceError.duplicatePart(path: route, name: placed[clash] ?? part.name)
      }
      placed[path] = part.name
      try FileIO.makeFolder((path as NSString).deletingLastPathComponent)
      try AtomicFile.write(part.bytes, to: path)
    }
  }

  /// Refuses a manifest with more than `maximumLines` lines or a line that names a printer.
  ///
  /// - Returns: its lines (the items a run of it makes), and whether no two of its items have
  ///   one id (ids are compared by their hashes, of the first million items at most: a
  ///   collision, or more, says no, which costs only speed).
  /// - Throws: `ServiceError.tooManyLines` once a line past the limit is read;
  ///   `.printerNotAllowed` naming the first line with a printer; `FileError` when the manifest
  ///   cannot be read.
  private static func checkManifest(
    _ manifest: String, inputsRoot: String, maximumLines: Int, name: String
  ) throws -> (lines: Int, uniqueIDs: Bool) {
    var reader = try ManifestReader(path: manifest, inputsRoot: inputsRoot, displayName: name)
    var lines = 0
    var ids = Set<Int>()
    var unique = true
    while let item = reader.next() {
      lines += 1
      guard lines <= maximumLines else {
        throw ServiceError.tooManyLines(lines: lines, limit: maximumLines)
      }
      guard case .success(let item) = item else { continue }
      if case .print(let print) = item.work, print.printer != nil {
        throw ServiceError.printerNotAllowed(line: item.line, id: item.id)
      }
      // Only items that read are checked for an earlier one's id (`BatchRunner`).
      if unique {
        unique = ids.count < 1_000_000 && ids.insert(item.id.hashValue).inserted
        if !unique { ids = [] }
      }
    }
    // A job of no line would end done with nothing made: the client sent the wrong part.
    guard lines > 0 else { throw ServiceError.emptyManifest(part: name) }
    return (lines, unique)
  }

  /// The media types of job outputs, by extension.
  static let outputTypes = [
    "pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "svg": "image/svg+xml",
    "eps": "application/postscript", "json": "application/json", "jsonl": "application/jsonl",
    "csv": "text/csv", "txt": "text/plain; charset=utf-8",
  ]
}

/// The items of one job cut short by its stop.
private final class CutItems: Sendable {
  let count = Atomic(0)
}

extension JobHalt {
  /// The error of item `item` of job `job`, cut short by this stop (its document's worker
  /// killed): the code the job ends with.
  func error(job: String, item: String) -> JobError {
    let (stop, reason): (JobError, String) =
      switch self {
      case .canceled: (.canceled(id: job, ended: 0), "the job was canceled")
      case .timeLimit:
        (.timeLimit(id: job, seconds: 0, ended: 0), "the job ran past its time limit")
      case .diskLimit:
        (
          .diskLimit(id: job, bytes: 0, held: 0, limit: 0),
          "the job's files grew past the disk limit"
        )
      case .stopping: (.interrupted(id: job, ended: 0), "the server stopped")
      }
    return .itemStopped(id: job, item: item, code: stop.code, reason: reason)
  }
}

/// A job as `GET /v1/jobs/ID` reports it.
struct JobReport: Encodable {
  var schemaVersion = 1
  /// Its id.
  var job: String
  /// What made it (`batch`).
  var kind: JobKind
  var state: JobState
  /// This report's path.
  var status: String
  var accepted: Timestamp
  var started: Timestamp?
  var finished: Timestamp?
  /// Where the call of its callback is, when its request gave one.
  var webhook: WebhookStatus?
  /// Item counts, once it ended.
  var summary: JobSummary?
  /// Why the work as a whole failed.
  var error: ErrorRecord?
  /// The lines of its `results.jsonl`, when the file is at most 1 MiB.
  var results: [ItemResult]?
  /// The path of its `results.jsonl`.
  var resultsFile: String?
  /// Its outputs, relative to `/v1/jobs/ID/files/`, once it ended.
  var files: [String]?
}
