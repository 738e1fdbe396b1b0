// SPDX-License-Identifier: Apache-2.0
// ImprintService: `POST /v1/prepare`: an order and its files (multipart, as `/v1/quote` takes
// them) prepared for print in the background through `OrderPrinter.run`, as `imprint prepare`
// prepares them, and sent to a printer of the server's configuration when the request names
// one; a retry with the same `Idempotency-Key` is answered with the job it made.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintHTTP
import ImprintJobsDB
import ImprintPricing
import ImprintPrinting

extension ImprintService {
  /// `POST /v1/prepare`: the order prepared (and printed) as `imprint prepare --json` does it,
  /// as long work: answered 202 with the job's id, its outputs fetched through
  /// `/v1/jobs/ID/files/` once it ended.
  ///
  /// The body is `/v1/quote`'s: the part `order` and one part per file of the order, named by
  /// its path in the order. Query: `prices` (a price list of the configuration), `splitColor`,
  /// `previews`, `previewSize`, `printer` (the name of a printer of the configuration, never
  /// an address), `wait` and `waitTimeout` (with `printer`), `callback`. The job's folder holds
  /// the order, the price list as loaded, the files, the print journal (never served) and
  /// `output/`: the PDFs, tickets and previews, and `report.json`, `imprint prepare --json`'s
  /// report with paths relative to `output/`. With an `Idempotency-Key` header, the same key
  /// and the same request are answered with the job made the first time (`IdempotencyKeys`).
  func prepare(_ request: HTTPRequest) async throws -> HTTPResponse {
    try Self.expect(request, ["multipart/form-data"])
    let key = try IdempotencyKeys.key(of: request)
    var query = try RequestOptions(query: request)
    // The library reads the options by their names (`QuoteOption`, `PrepareOption`), as
    // `imprint prepare` and manifests.
    let listName = try QuoteRequest.read(from: &query, offering: [.prices]).prices
    let (asked, printerName, _, _) = try PrepareRequest.read(
      from: &query, offering: PrepareOption.request)
    let callback = try callback(&query)
    try query.finish()
    // The library's rule, worded as the query's keys (the command line words it as flags).
    if let conflict = asked.conflict() { throw Self.parameterError(conflict) }
    // An unknown printer is refused now, before a file is written (the work names it again).
    if let printerName { _ = try configuredPrinter(printerName) }
    let prices = try priceList(listName, route: request.path)
    let parts = try Self.parts(of: request, known: nil)
    guard let orderPart = parts["order"] else {
      throw ServiceError.missingPart(path: request.path, name: "order")
    }
    let held = try takeJSON(orderPart, route: request.path)
    let order: Order
    do {
      defer { server.release(held) }
      order = try Order.parse(orderPart.bytes, source: orderPart.filename ?? "order")
    }

    let fingerprint = key.map { _ in IdempotencyKeys.fingerprint(of: request) } ?? []
    // With a jobs database, the key is the database's, checked as the job is enqueued.
    if let key, jobs.shared == nil {
      let claim = try idempotencyKeys.claim(key, fingerprint: fingerprint)
      if case .replay(let id) = claim {
        guard let record = jobs.record(id) else {
          throw ServiceError.idempotentJobGone(key: key, id: id)
        }
        return accepted(record)
      }
    }
    let record: JobStore.Record
    do {
      record = try jobs.reserve(
        kind: .prepare, bytes: parts.values.reduce(0) { $0 + $1.bytes.count }, callback: callback)
    } catch {
      if let key { idempotencyKeys.release(key) }
      throw error
    }
    let folder = record.folder
    do {
      try AtomicFile.write(orderPart.bytes, to: folder + "/order.json")
      try AtomicFile.write(prices.bytes, to: folder + "/prices.json")
      let root = folder + "/files"
      try FileIO.makeFolder(root)
      try Self.place(parts, of: order, at: try order.filePaths(root: root), route: request.path)
    } catch {
      jobs.abandon(record.id)
      if let key { idempotencyKeys.release(key) }
      throw Self.withoutFolder(error, folder)
    }
    do {
      // Past its deadline the request is answered 503 by the server: no job may start then.
      if request.isPastDeadline {
        throw HTTPError.deadlineExceeded(
          path: request.path, seconds: configuration.requestTimeout)
      }
      // With a jobs folder, the key is written with the job before its work may start.
      let idempotency = key.map {
        IdempotencyRecord(key: $0, fingerprint: SHA256.hex(fingerprint))
      }
      let queued = try start(
        record, .prepare(PrepareWork(request: asked, printer: printerName)),
        idempotency: idempotency)
      if jobs.shared != nil { return accepted(queued) }
    } catch {
      jobs.abandon(record.id)
      if let key { idempotencyKeys.release(key) }
      throw error
    }
    if let key { idempotencyKeys.bind(key, job: record.id) }
    return accepted(record)
  }

  /// A prepare job's work: its order prepared as `imprint prepare` prepares it, and sent to the
  /// configuration's printer `work.printer` when it names one (a name this configuration does
  /// not have fails the job, as the request would have been answered).
  ///
  /// Never stopped part-way (its files may be on their way to a printer): a DELETE while it
  /// runs lets it end as it would. Its work runs in a task of its own, which the job's
  /// cancellation does not reach (the sandbox would kill the workers preparing its files).
  func prepareWork(_ work: PrepareWork, id: String, folder: String) -> JobStore.Work {
    let printer: ServicePrinter?
    do {
      printer = try work.printer.map { (name) throws(ServiceError) in try configuredPrinter(name) }
    } catch {
      return { _ in JobOutcome(error: ErrorRecord(error)) }
    }
    var target = printer?.target(
      credentials: configuration.printCredentials,
      journal: folder + "/" + ServicePrinter.journalName)
    target?.waitSeconds = work.request.waitSeconds
    // With replicas, each part is claimed in the jobs database, under this run's lease, before
    // it is sent (this work is made for one run: the one that claimed the job now).
    if let shared = jobs.shared {
      target?.claims = SharedPrintClaims(
        shared: shared, job: id, run: shared.owner + "/" + UUID().uuidString.prefix(8).lowercased())
    }
    let options = work.request.options
    let printing = OrderPrinter(
      preparer: OrderPreparer(
        quoter: OrderQuoter(sandbox: sandbox, jobs: configuration.concurrentRequests)))
    let named = work.printer.flatMap { name in printer.map { (name, $0) } }
    return { [target, jobs] folder in
      await Task(executorPreference: jobs.executor) {
        // Read by the client: hints name what a request sends.
        await ErrorSurface.$current.withValue(.http) {
          await Self.runPrepare(
            printing, in: folder, options: options, target: target, printer: named)
        }
      }.value
    }
  }

  /// The 400 for a combination of prepare options the library refuses, naming the query's keys.
  ///
  /// `PrepareRequest.conflict` finds it. The query has no monochrome printer or credentials
  /// (the configuration's printers hold them).
  static func parameterError(_ conflict: PrepareConflict) -> ServiceError {
    let name = conflict.option.names.key
    return switch conflict {
    case .previewSizeWithoutPreviews:
      .invalidParameter(name: name, problem: "needs \(PrepareOption.previews.names.key)=true")
    case .waitWithoutPrinter:
      .invalidParameter(name: name, problem: "needs \(PrepareOption.printer.names.key)=NAME")
    case .waitTimeoutWithoutWait:
      .invalidParameter(name: name, problem: "needs \(PrepareOption.wait.names.key)=true")
    case .monoPrinterWithoutPrinter, .passwordFileWithoutPrinter:
      preconditionFailure("the query has no \(conflict.option.rawValue)")
    }
  }

  /// The printer of the configuration named `name`.
  ///
  /// - Throws: `ServiceError.printerAddressRefused` for an address (a URI, a host, a path: a
  ///   configured name has none of `: / @ .`); `.unknownPrinter` for a name the configuration
  ///   does not have.
  func configuredPrinter(_ name: String) throws(ServiceError) -> ServicePrinter {
    if let printer = configuration.printers[name] { return printer }
    let available = configuration.printers.keys.sorted()
    if name.contains(where: { ":/@.".contains($0) }) {
      throw .printerAddressRefused(given: name, available: available)
    }
    throw .unknownPrinter(name: name, available: available)
  }

  /// Runs a prepare job in `folder` (its order, price list and files written there): the
  /// outputs and `report.json` in `output/`.
  ///
  /// - Returns: the job's outcome: no error when everything asked was done; the error that
  ///   stopped it, or the first print job that did not complete (`PrintedOrder.failure`; the
  ///   report is written then), with the job's folder left out of its message.
  private static func runPrepare(
    _ printing: OrderPrinter, in folder: String, options: PrepareOptions, target: PrintTarget?,
    printer: (name: String, printer: ServicePrinter)?
  ) async -> JobOutcome {
    func shown(_ error: any Error) -> ErrorRecord {
      let record = ErrorRecord(withoutFolder(error, folder))
      return printer.map { record.naming($0.printer, as: $0.name) } ?? record
    }
    let output = folder + "/output"
    do {
      var printed = try await AtomicFile.withDeferredFlush(syncing: output) {
        try await printing.run(
          order: folder + "/order.json", prices: folder + "/prices.json",
          filesRoot: folder + "/files", output: output, options: options, target: target)
      }
      func relative(_ path: String) -> String {
        path.hasPrefix(output + "/") ? String(path.dropFirst(output.count + 1)) : path
      }
      for index in printed.files.indices {
        printed.files[index].document = relative(printed.files[index].document)
        printed.files[index].ticketPath = relative(printed.files[index].ticketPath)
        printed.files[index].previews = printed.files[index].previews?.map(relative)
      }
      printed.jobs = printed.jobs?.map { job in
        var job = job
        job.document = relative(job.document)
        return job
      }
      try AtomicFile.write(Array(JSONOutput.pretty(printed).utf8), to: output + "/report.json")
      return JobOutcome(error: printed.failure.map(shown))
    } catch {
      return JobOutcome(error: shown(error))
    }
  }

  /// `error` with the job's folder left out of its message and hint (`a.pdf`, not
  /// `/tmp/imprint-serve-jobs-…/ID/files/a.pdf`): a client sees its own names.
  static func withoutFolder(_ error: any Error, _ folder: String) -> any Error {
    withoutFolders(error, [folder + "/files", folder + "/output", folder])
  }

  /// `error` with the paths under `folders` shown relative to them (`ErrorRecord.showing`), as
  /// a `RecordedError` answered with the original's status; `error` itself when it names none.
  static func withoutFolders(_ error: any Error, _ folders: [String]) -> any Error {
    let record = ErrorRecord(error)
    let shown = record.showing(pathsRelativeTo: folders)
    guard shown != record else { return error }
    return RecordedError(record: shown, status: ServiceStatus.of(error))
  }
}

/// An error whose message was rewritten (`ImprintService.withoutFolders`), answered with the
/// status of the error it stands for.
struct RecordedError: ImprintError {
  let record: ErrorRecord
  /// The status the original error is answered with.
  let status: Int
  var code: String { record.code }
  var message: String { record.message }
  var hint: String? { record.hint }
}

extension ErrorRecord {
  /// The record with `printer`'s addresses (its URI or queue, its monochrome one, its
  /// scheduler) replaced by the name the client knows it by (`printers` in `--config`): a
  /// client never learns where the server connects.
  ///
  /// An address is replaced where the message quotes it (`'ipp://10.0.0.5/ipp/print'`), and
  /// anywhere when it is a URI (`://`), which no other word of a message can be.
  func naming(_ printer: ServicePrinter, as name: String) -> ErrorRecord {
    var replacements = [(printer.uri, name)]
    if let mono = printer.monoUri { replacements.append((mono, name + " (monochrome)")) }
    if let scheduler = printer.scheduler {
      replacements.append((scheduler, "the scheduler of printer " + name))
    }
    func replaced(_ text: String) -> String {
      var text = text
      for (address, shown) in replacements where !address.isEmpty {
        text = text.replacingOccurrences(of: "'\(address)'", with: "'\(shown)'")
        if address.contains("://") { text = text.replacingOccurrences(of: address, with: shown) }
      }
      return text
    }
    var record = self
    record.message = replaced(message)
    record.hint = hint.map(replaced)
    record.causes = causes?.map { $0.naming(printer, as: name) }
    return record
  }
}

/// The print claims of one run of a prepare job whose replicas share a jobs database: each part
/// claimed in it (`JobsDBConnection.claimPrint`) in one transaction with the job's lease.
struct SharedPrintClaims: PrintClaims {
  let shared: SharedJobs
  /// The job's id.
  let job: String
  /// This run: the replica's name and a random part.
  let run: String

  /// The error for a part of `file` that the jobs database did not let this run claim.
  private static func unclaimed(_ file: String, _ part: String, _ error: JobsDBError) -> PrintError
  {
    let reason =
      if case .leaseLost = error {
        "this replica no longer holds the job (its lease ended; another replica may run it)"
      } else {
        "the jobs database cannot be asked (\(error.message))"
      }
    return .unclaimed(file: file, part: part, reason: reason)
  }

  func claim(line key: String, part: String, file: String) throws(PrintError) -> Bool {
    do {
      let holder = try shared.use { (db) throws(JobsDBError) in
        try db.claimPrint(job: job, line: key, part: part, owner: shared.owner, run: run)
      }
      return holder == run
    } catch {
      throw Self.unclaimed(file, part, error)
    }
  }

  func created(line key: String, part: String, file: String, printer: String, jobID: Int)
    throws(PrintError)
  {
    do {
      try shared.use { (db) throws(JobsDBError) in
        try db.printCreated(
          job: job, line: key, part: part, owner: shared.owner, run: run, printer: printer,
          printerJob: jobID)
      }
    } catch {
      throw Self.unclaimed(file, part, error)
    }
  }

  func withdrawn(line key: String, part: String, file: String, jobID: Int) throws(PrintError) {
    do {
      try shared.use { (db) throws(JobsDBError) in
        try db.printWithdrawn(job: job, line: key, part: part, run: run, printerJob: jobID)
      }
    } catch {
      throw Self.unclaimed(file, part, error)
    }
  }
}
