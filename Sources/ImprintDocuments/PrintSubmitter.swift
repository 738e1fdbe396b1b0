// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: prepared files sent to an IPP printer or a CUPS queue through libcups, each
// with its job ticket's attributes.

internal import CCups
import Foundation
import ImprintCore
import ImprintGraphics

/// A print job a printer accepted: one part of one line of the order.
public struct SubmittedJob: Codable, Sendable, Equatable {
  /// The print-ready PDF sent (for a job an earlier run sent, the document it sent, by its
  /// name in the same folder).
  public var document: String
  /// The file as the order names it.
  public var file: String
  /// The part of the order's line the job prints: `whole`, `color` or `mono`.
  public var part: String
  /// The printer as given: its URI, or the CUPS queue's name.
  public var printer: String
  /// For a queue, the scheduler the job is on (`host:port` or a socket's path); nil for an IPP
  /// URI.
  public var scheduler: String?
  /// The printer's `printer-uuid`, when it reported one.
  public var printerUUID: String?
  /// The job's id on that printer (on the scheduler, for a queue).
  public var jobID: Int
  /// True when an earlier run sent the part (its `PrintJournal` says so) and this one did not
  /// send it again; nil when this run sent it.
  public var resumed: Bool?
  /// The job's state when it was waited for: `completed`, `aborted` or `canceled` once it
  /// ended, else the last state seen (`pending`, `processing`...); nil when not waited for.
  public var state: String?
  /// The printer's `job-state-reasons` with that state (`job-completed-successfully`,
  /// `aborted-by-system`...).
  public var stateReasons: [String]?
  /// The printer's `job-state-message` with that state, if any.
  public var stateMessage: String?

  /// Job `jobID` of `part` of `file`, sent as `document` to `printer` (through `scheduler`,
  /// for a queue).
  public init(
    document: String, file: String, part: String = "whole", printer: String,
    scheduler: String? = nil, jobID: Int, resumed: Bool? = nil
  ) {
    self.document = document
    self.file = file
    self.part = part
    self.printer = printer
    self.scheduler = scheduler
    self.jobID = jobID
    self.resumed = resumed
  }
}

/// How printers are reached: the CUPS scheduler that holds the queues, and the credentials for
/// printers and schedulers that ask for them.
public struct PrintAccess: Sendable, Equatable {
  /// The scheduler queues are looked up on (`host:port`, `host`, or a socket's path), or nil
  /// for the one libcups is configured for (`CUPS_SERVER`, `client.conf`, the local socket).
  public var scheduler: String?
  /// The user name and password to answer with when asked, or nil to answer none (a printer
  /// that asks is then `print.unauthorized`; libcups never prompts).
  public var credentials: PrintCredentials?

  /// Queues on `scheduler` (nil: libcups' choice), answering with `credentials`.
  public init(scheduler: String? = nil, credentials: PrintCredentials? = nil) {
    self.scheduler = scheduler
    self.credentials = credentials
  }
}

/// Sends prepared files to printers with libcups, each with its ticket's attributes.
///
/// A printer is an IPP printer (`ipp://host:port/ipp/print`, `ipps://...`), sent to directly,
/// without a scheduler, or a CUPS queue by its name, sent to through the scheduler
/// (`PrintAccess.scheduler`). Create-Job with the ticket's attributes (`copies`,
/// `sides`, `media`, `print-color-mode`, `multiple-document-handling`, and `finishings` unless
/// none), then Send-Document with the PDF.
///
/// Synchronous; one connection a printer for all its files. A printer that answers
/// `server-error-busy` (one that takes one job at a time) is asked again every 50 ms for up to
/// `busySeconds`. libcups' settings (scheduler, user, password callback) are per thread: each
/// call sets them for its own thread and leaves a callback that never prompts.
public enum PrintSubmitter {
  /// Submits `files` to `printer`, in order, and returns their jobs; with `monoPrinter`, the
  /// files whose ticket's `print-color-mode` is `monochrome` (a colour split's monochrome
  /// parts, monochrome files) go to that printer instead.
  ///
  /// With a journal, each line of the order (its files sharing a `PreparedFile.lineKey`: a
  /// whole file, or a split file's parts) is decided from what the journal records of it,
  /// before anything is sent: nothing recorded, its files are sent; every part that run's split
  /// made recorded sent, the line is printed and nothing is sent: its recorded jobs are
  /// reported (`resumed`, with the printer, scheduler and document they were sent to) whatever
  /// the split, the printers or the scheduler are now; some parts recorded, and this run's split
  /// makes the same parts, only the missing ones are sent. Each part sent is recorded when its
  /// job is created and when its document is accepted. When every line was printed before, no
  /// printer is contacted.
  ///
  /// - Parameters:
  ///   - files: prepared files with their tickets (`OrderPreparer`).
  ///   - printer: the printer's IPP URI or CUPS queue name.
  ///   - monoPrinter: the IPP URI or queue name of the printer for monochrome files, or nil for
  ///     `printer`.
  ///   - busySeconds: how long to keep asking a busy printer.
  ///   - journal: the record of lines sent, or nil to send every file.
  ///   - access: the scheduler for queues, and credentials.
  /// - Returns: the jobs, line by line in the order's order (a line's parts in their order):
  ///   one a file sent now, and the jobs an earlier run recorded for a line it printed (as many
  ///   as that run's split made, which may differ from the files prepared now).
  /// - Throws: `DocumentError.printerUnreachable` (neither an IPP URI nor a queue name, a
  ///   printer or scheduler that does not answer), `.printerUnknown` (a queue the scheduler
  ///   does not have), `.printUnauthorized` (credentials missing or refused) or `.printRefused`
  ///   (a job or document the printer refused, naming the file); before anything is sent,
  ///   `.printUnconfirmed` when the journal has a job created for a line but not its document,
  ///   `.printPartlySent` when it records some parts of a line sent and this run's split makes
  ///   other parts, `.printJournalDamaged` when a line's entries disagree on its parts;
  ///   `FileError` reading a prepared file or writing the journal. Jobs submitted before a
  ///   failure stay submitted (and recorded): `send` returns them with the failure.
  public static func submit(
    _ files: [PreparedFile], printer: String, monoPrinter: String? = nil,
    busySeconds: Double = 60, journal: PrintJournal? = nil, access: PrintAccess = PrintAccess()
  ) throws -> [SubmittedJob] {
    let sent = try send(
      files, printer: printer, monoPrinter: monoPrinter, busySeconds: busySeconds,
      journal: journal, access: access)
    if let failure = sent.failure { throw failure }
    return sent.jobs
  }

  /// Submits `files` as `submit` does, but a printer that stops taking them part-way (it
  /// refuses a job or a document, stops answering, asks for credentials it is not given) is not
  /// thrown: the jobs sent before it are returned with that failure, so that a report can say
  /// what was printed.
  ///
  /// - Returns: the jobs, line by line in the order's order, as `submit` returns them: those
  ///   an earlier run recorded and those sent now, up to the failure; and the `DocumentError`
  ///   that stopped the sending, or nil when every file was sent.
  /// - Throws: what `submit` throws before anything is sent (the printer's name, the
  ///   journal's records), and `FileError` reading a prepared file or writing the journal.
  public static func send(
    _ files: [PreparedFile], printer: String, monoPrinter: String? = nil,
    busySeconds: Double = 60, journal: PrintJournal? = nil, access: PrintAccess = PrintAccess()
  ) throws -> (jobs: [SubmittedJob], failure: DocumentError?) {
    try checkPrinter(printer)
    if let monoPrinter { try checkPrinter(monoPrinter) }
    let mono = monoPrinter ?? printer
    let targets = files.map { $0.ticket.ipp.printColorMode == "monochrome" ? mono : printer }
    // The order's lines in order, each with its files (a split line's parts).
    var lines: [(key: String, indices: [Int])] = []
    for (index, file) in files.enumerated() {
      if let at = lines.firstIndex(where: { $0.key == file.lineKey }) {
        lines[at].indices.append(index)
      } else {
        lines.append((file.lineKey, [index]))
      }
    }
    var resumed: [String: [SubmittedJob]] = [:]
    var pending = Set(files.indices)
    if let journal {
      for line in lines {
        guard let (jobs, printed) = try recorded(line.indices.map { files[$0] }, in: journal)
        else { continue }
        resumed[line.key] = jobs
        let done = Set(jobs.map(\.part))
        pending.subtract(line.indices.filter { printed || done.contains(files[$0].part) })
      }
    }
    var sent: [Int: SubmittedJob] = [:]

    /// Sends the files `pending` names, each printer's in order, into `sent`.
    func sendPending() throws {
      try CupsSession.with(access) { session in
        // One connection a printer, each printer's files in order: the colour printer's first.
        for name in mono == printer ? [printer] : [printer, mono] {
          let indices = files.indices.filter { targets[$0] == name && pending.contains($0) }
          guard !indices.isEmpty else { continue }
          let target = try CupsPrinter(name, session)
          let info = try CupsDestinationInfo(target, session)
          let uuid = target.uuid()
          for index in indices {
            let file = files[index]
            let parts = files.filter { $0.lineKey == file.lineKey }.count
            var entry = PrintJournal.Entry(
              key: file.lineKey, file: file.ticket.file, part: file.part, parts: parts,
              document: file.ticket.document, printer: name, scheduler: target.scheduler,
              printerUUID: uuid, jobID: 0, sent: false)
            let id = try submit(
              file, busySeconds: busySeconds, target, info, session,
              created: { jobID throws(FileError) in
                entry.jobID = jobID
                try journal?.record(entry)
              })
            entry.jobID = id
            entry.sent = true
            try journal?.record(entry)
            var job = SubmittedJob(
              document: file.document, file: file.ticket.file, part: file.part, printer: name,
              scheduler: target.scheduler, jobID: id)
            job.printerUUID = uuid
            sent[index] = job
          }
        }
      }
    }
    var failure: DocumentError?
    if !pending.isEmpty {
      do {
        try sendPending()
      } catch let error as DocumentError {
        failure = error
      }
    }
    let jobs = lines.flatMap { line in
      ((resumed[line.key] ?? []) + line.indices.compactMap { sent[$0] }).sorted {
        partRank($0.part) < partRank($1.part)
      }
    }
    return (jobs, failure)
  }

  /// The order of parts in a line: the whole file, its colour part, its monochrome part.
  private static func partRank(_ part: String) -> Int {
    ["whole", "color", "mono"].firstIndex(of: part) ?? 3
  }

  /// The jobs `journal` records for the line whose files (its parts, prepared now) are
  /// `files`, as resumed jobs, and whether the line is printed, or nil when it records none:
  /// every part the recorded split made when the line was printed (nothing is to be sent), or
  /// the parts sent so far when this run's split makes the same parts (the others are to be
  /// sent).
  ///
  /// - Throws: `DocumentError.printUnconfirmed` (a part's job created, its document not
  ///   recorded as taken), `.printPartlySent` (parts missing, and this run's split makes other
  ///   parts), `.printJournalDamaged` (the entries disagree on the line's parts).
  private static func recorded(_ files: [PreparedFile], in journal: PrintJournal) throws
    -> (jobs: [SubmittedJob], printed: Bool)?
  {
    guard let first = files.first else { return nil }
    let entries = journal.entries(line: first.lineKey)
    guard let parts = entries.first?.parts else { return nil }
    if let unsent = entries.first(where: { !$0.sent }) {
      throw DocumentError.printUnconfirmed(
        file: unsent.file, printer: shown(unsent.printer, scheduler: unsent.scheduler),
        jobID: unsent.jobID, journal: journal.path)
    }
    let recordedParts = Set(entries.map(\.part))
    guard entries.allSatisfy({ $0.parts == parts }), recordedParts.count <= parts else {
      throw DocumentError.printJournalDamaged(
        path: journal.path, reason: "the entries of '\(first.ticket.file)' disagree on its parts")
    }
    // Resumed jobs name their documents in the folder this run prepares into.
    let folder = (first.document as NSString).deletingLastPathComponent
    let jobs = entries.map { entry in
      var job = entry.job
      job.document = folder.isEmpty ? entry.document : folder + "/" + entry.document
      return job
    }
    // Printed: nothing to send, whatever this run's split, printers or scheduler.
    if recordedParts.count == parts { return (jobs, true) }
    let current = files.map(\.part)
    guard current.count == parts && recordedParts.isSubset(of: Set(current)) else {
      throw DocumentError.printPartlySent(
        file: first.ticket.file,
        sent: entries.map {
          "the \($0.part) part as job \($0.jobID) on '\(shown($0.printer, scheduler: $0.scheduler))'"
        },
        parts: parts, now: current.count, journal: journal.path)
    }
    return (jobs, false)
  }

  /// A printer as messages name it: a queue with its scheduler as CUPS writes it
  /// (`shop@127.0.0.1:631`), a URI as it is.
  static func shown(_ printer: String, scheduler: String?) -> String {
    scheduler.map { "\(printer)@\($0)" } ?? printer
  }

  /// Checks that `printer` is an IPP URI (`ipp://`, `ipps://`) or could be a CUPS queue's name
  /// (1 to 127 bytes, no spaces, control characters, `/ \ ? ' " # @`), without asking anyone.
  ///
  /// - Throws: `DocumentError.printerUnreachable` for anything else (another scheme, a name
  ///   CUPS would refuse).
  public static func checkPrinter(_ printer: String) throws(DocumentError) {
    _ = try PrinterName(printer)
  }

  /// Checks `printer` and, for a queue, that the scheduler has it.
  ///
  /// The question a run asks before preparing anything. An IPP printer is not contacted.
  ///
  /// - Throws: `DocumentError.printerUnreachable` (not a printer, a scheduler that does not
  ///   answer), `.printerUnknown` (no such queue), `.printUnauthorized`.
  public static func lookUp(_ printer: String, access: PrintAccess = PrintAccess()) throws {
    guard case .queue = try PrinterName(printer) else { return }
    try CupsSession.with(access) { session in _ = try CupsPrinter(printer, session) }
  }

  /// Asks the printer of each job for its state until it ends (`completed`, `aborted` or
  /// `canceled`) or `seconds` have passed, and returns the jobs with their states.
  ///
  /// Each job is asked where it was sent: an IPP URI's printer, or for a queue the scheduler
  /// the job records (`SubmittedJob.scheduler`; a job an earlier run sent may be on another
  /// scheduler than `access.scheduler`), with `access`'s credentials. A job the journal
  /// already records as ended is not asked for again (printers forget finished jobs); each
  /// job that ends is recorded with its state. One connection a printer; each job is asked
  /// for every 20 ms at first, then less often, up to every half second.
  ///
  /// - Parameters:
  ///   - jobs: the jobs `submit` returned.
  ///   - seconds: how long to wait for all the jobs together.
  ///   - journal: the record of lines sent, or nil.
  ///   - access: the scheduler for queue jobs that record none, and credentials.
  /// - Returns: the jobs with their states (a job still going after `seconds` has its last
  ///   state: see `failure(of:seconds:)`).
  /// - Throws: `DocumentError.printerUnreachable` (a printer that does not answer),
  ///   `.printerUnknown` (a queue gone), `.printJobUnknown` (a job the printer does not know),
  ///   `.printUnauthorized`, `.printRefused` (another IPP error); `FileError` writing the
  ///   journal.
  public static func wait(
    for jobs: [SubmittedJob], seconds: Double, journal: PrintJournal? = nil,
    access: PrintAccess = PrintAccess()
  ) throws -> [SubmittedJob] {
    var jobs = jobs
    for index in jobs.indices {
      try checkPrinter(jobs[index].printer)
      if let entry = journal?.entry(
        jobID: jobs[index].jobID, printer: jobs[index].printer,
        scheduler: jobs[index].scheduler),
        let state = entry.state
      {
        jobs[index].state = state
        jobs[index].stateReasons = entry.stateReasons
        jobs[index].stateMessage = entry.stateMessage
      }
    }
    let deadline = Date().addingTimeInterval(seconds.isFinite ? max(0, seconds) : 0)
    // Each printer where its jobs are: a queue on the scheduler each job records.
    var places: [(printer: String, scheduler: String?)] = []
    for job in jobs where !places.contains(where: { $0 == (job.printer, job.scheduler) }) {
      places.append((job.printer, job.scheduler))
    }
    for (printer, scheduler) in places {
      let waiting = jobs.indices.filter {
        jobs[$0].printer == printer && jobs[$0].scheduler == scheduler && !isFinal(jobs[$0].state)
      }
      guard !waiting.isEmpty else { continue }
      var place = access
      if let scheduler { place.scheduler = scheduler }
      try CupsSession.with(place) { session in
        let target = try CupsPrinter(printer, session)
        for index in waiting {
          var pause: UInt32 = 20_000
          while true {
            let status = try jobState(jobs[index].jobID, file: jobs[index].file, target, session)
            jobs[index].state = status.state
            jobs[index].stateReasons = status.reasons
            jobs[index].stateMessage = status.message
            // Once the time is up, every job left is still asked once, for its last state.
            if isFinal(status.state) || Date() >= deadline { break }
            usleep(pause)
            pause = min(pause * 2, 500_000)
          }
          if isFinal(jobs[index].state), let journal,
            var entry = journal.entry(
              jobID: jobs[index].jobID, printer: printer, scheduler: scheduler)
          {
            entry.state = jobs[index].state
            entry.stateReasons = jobs[index].stateReasons
            entry.stateMessage = jobs[index].stateMessage
            try journal.record(entry)
          }
        }
      }
    }
    return jobs
  }

  /// The first job of `jobs` waited for that did not complete: `.printJobEnded` (aborted or
  /// canceled) or `.printWaitTimedOut` (still going after `seconds`), naming the job's file;
  /// nil when every job completed or none was waited for.
  public static func failure(of jobs: [SubmittedJob], seconds: Double) -> DocumentError? {
    for job in jobs {
      guard let state = job.state, state != "completed" else { continue }
      let printer = shown(job.printer, scheduler: job.scheduler)
      if isFinal(state) {
        return .printJobEnded(
          file: job.file, printer: printer, jobID: job.jobID, state: state,
          reasons: job.stateReasons ?? [], message: job.stateMessage)
      }
      return .printWaitTimedOut(
        file: job.file, printer: printer, jobID: job.jobID, state: state, seconds: seconds)
    }
    return nil
  }

  /// Whether `state` is one a job ends in.
  static func isFinal(_ state: String?) -> Bool {
    state == "completed" || state == "aborted" || state == "canceled"
  }

  /// The state of job `jobID` (Get-Job-Attributes): `job-state` as its keyword, the reasons
  /// and the message.
  private static func jobState(
    _ jobID: Int, file: String, _ target: borrowing CupsPrinter, _ session: CupsSession
  ) throws(DocumentError) -> (state: String, reasons: [String], message: String?) {
    guard let request = ippNewRequest(IPP_OP_GET_JOB_ATTRIBUTES) else {
      preconditionFailure("ippNewRequest failed: out of memory")
    }
    let printer = target.name
    ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri", nil, target.uri)
    ippAddInteger(request, IPP_TAG_OPERATION, IPP_TAG_INTEGER, "job-id", Int32(clamping: jobID))
    ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_NAME, "requesting-user-name", nil, cupsUser())
    // cupsDoRequest frees the request, and returns nil when the printer did not answer.
    guard let raw = cupsDoRequest(target.connection.raw, request, target.connection.resource)
    else {
      if let refusal = session.refusal(printer, "Get-Job-Attributes") { throw refusal }
      throw .unreachable(printer)
    }
    let response = IPPResponse(owning: raw)
    let status = ippGetStatusCode(response.raw)
    guard isSuccess(status) else {
      if status == IPP_STATUS_ERROR_NOT_FOUND {
        throw .printJobUnknown(file: file, printer: printer, jobID: jobID)
      }
      if let refusal = session.refusal(printer, "Get-Job-Attributes") { throw refusal }
      throw .printRefused(
        file: file, printer: printer,
        detail: "Get-Job-Attributes: \(String(cString: cupsLastErrorString()))")
    }
    func strings(_ name: String) -> [String] {
      guard let attribute = ippFindAttribute(response.raw, name, IPP_TAG_ZERO) else { return [] }
      return (0..<ippGetCount(attribute)).compactMap { index in
        ippGetString(attribute, index, nil).map { String(cString: $0) }
      }
    }
    guard let stateAttribute = ippFindAttribute(response.raw, "job-state", IPP_TAG_ENUM) else {
      throw .printRefused(
        file: file, printer: printer, detail: "Get-Job-Attributes: no job-state in the answer")
    }
    let value = ippGetInteger(stateAttribute, 0)
    let state = ippEnumString("job-state", value).map { String(cString: $0) } ?? "\(value)"
    return (state, strings("job-state-reasons"), strings("job-state-message").first)
  }

  /// The IPP `finishings` enum values of keywords (RFC 8011, PWG 5100.1).
  static let finishingValues: [String: Int] = [
    "none": 3, "staple": 4, "punch": 5, "cover": 6, "bind": 7, "saddle-stitch": 8, "fold": 10,
    "booklet-maker": 13,
  ]

  /// The job attributes of `ticket` as libcups options (name, value).
  static func options(_ ticket: JobTicket) -> [(String, String)] {
    var options = [
      ("copies", "\(ticket.ipp.copies)"), ("sides", ticket.ipp.sides),
      ("media", ticket.ipp.media), ("print-color-mode", ticket.ipp.printColorMode),
      ("multiple-document-handling", ticket.ipp.multipleDocumentHandling),
    ]
    let finishings = ticket.ipp.finishings.filter { $0 != "none" }.compactMap {
      finishingValues[$0]
    }
    if !finishings.isEmpty {
      options.append(("finishings", finishings.map(String.init).joined(separator: ",")))
    }
    return options
  }

  private static func submit(
    _ file: PreparedFile, busySeconds: Double, _ target: borrowing CupsPrinter,
    _ info: borrowing CupsDestinationInfo, _ session: CupsSession,
    created: (Int) throws(FileError) -> Void
  ) throws -> Int {
    let (descriptor, _) = try FileIO.openForReading(file.document)
    defer { close(descriptor) }
    var count: Int32 = 0
    var list: UnsafeMutablePointer<cups_option_t>?
    defer { cupsFreeOptions(count, list) }
    for (name, value) in options(file.ticket) { count = cupsAddOption(name, value, count, &list) }
    let title = file.ticket.document
    let printer = target.name
    let connection = target.connection.raw
    let destination = target.destination.raw
    func refused(_ what: String) -> DocumentError {
      session.refusal(printer, what)
        ?? .printRefused(
          file: file.ticket.file, printer: printer,
          detail: "\(what): \(String(cString: cupsLastErrorString()))")
    }
    var jobID: Int32 = 0
    let deadline = Date().addingTimeInterval(busySeconds.isFinite ? max(0, busySeconds) : 60)
    while true {
      let status = cupsCreateDestJob(
        connection, destination, info.raw, &jobID, title, count, list)
      if isSuccess(status) { break }
      guard status == IPP_STATUS_ERROR_BUSY, Date() < deadline else {
        throw refused("Create-Job")
      }
      usleep(50_000)
    }
    try created(Int(jobID))
    guard
      cupsStartDestDocument(
        connection, destination, info.raw, jobID, title, "application/pdf", 0, nil, 1)
        == HTTP_STATUS_CONTINUE
    else { throw refused("Send-Document") }
    var buffer = [CChar](repeating: 0, count: 1 << 16)
    while true {
      let read = buffer.withUnsafeMutableBytes {
        Foundation.read(descriptor, $0.baseAddress, $0.count)
      }
      if read < 0 && errno == EINTR { continue }
      guard read >= 0 else {
        throw FileError.unreadable(path: file.document, reason: .system(errno))
      }
      if read == 0 { break }
      guard cupsWriteRequestData(connection, buffer, read) == HTTP_STATUS_CONTINUE else {
        throw refused("sending the document")
      }
    }
    guard isSuccess(cupsFinishDestDocument(connection, destination, info.raw)) else {
      throw refused("Send-Document")
    }
    return Int(jobID)
  }

  /// Whether an IPP status is one of the successful ones (0x0000-0x00FF).
  fileprivate static func isSuccess(_ status: ipp_status_t) -> Bool {
    status.rawValue >= 0 && status.rawValue < 0x100
  }
}

// What a submission is made of. Raw pointers stay in this file.

extension DocumentError {
  /// `printerUnreachable` for `printer` with libcups' last error text.
  fileprivate static func unreachable(_ printer: String) -> DocumentError {
    .printerUnreachable(printer: printer, detail: "cups: \(String(cString: cupsLastErrorString()))")
  }
}

/// A printer as given: an IPP URI, sent to directly, or a CUPS queue's name, sent to through
/// the scheduler.
enum PrinterName: Equatable {
  case device(String)
  case queue(String)

  /// The longest queue name CUPS accepts, in bytes.
  static let maximumQueueLength = 127

  /// `printer` read as a URI or a queue name.
  ///
  /// - Throws: `DocumentError.printerUnreachable` when it is neither (another scheme; a name
  ///   with characters `lpadmin` refuses: controls, spaces, `/ \ ? ' " #`, or `@`, which
  ///   would name another server).
  init(_ printer: String) throws(DocumentError) {
    if printer.hasPrefix("ipp://") || printer.hasPrefix("ipps://") {
      // A user name or password in the URI would be shown in reports, journals and messages:
      // credentials come from a password file. The URI is named without them.
      let scheme = printer.hasPrefix("ipp://") ? "ipp://" : "ipps://"
      let rest = printer.dropFirst(scheme.count)
      let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
      if let at = authority.lastIndex(of: "@") {
        throw .printerUnreachable(
          printer: SafeText.excerpt(scheme + rest[rest.index(after: at)...]),
          detail: "the URI holds a user name or password; give them with --password-file")
      }
      self = .device(printer)
      return
    }
    let shown = SafeText.excerpt(printer)
    if printer.contains("://") {
      throw .printerUnreachable(
        printer: shown, detail: "not an ipp:// or ipps:// URI, nor a CUPS queue name")
    }
    let refused = Set("/\\?'\"#@".utf8)
    guard (1...Self.maximumQueueLength).contains(printer.utf8.count),
      printer.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !refused.contains($0) })
    else {
      throw .printerUnreachable(
        printer: shown,
        detail: "not an ipp:// or ipps:// URI, nor a CUPS queue name (1 to 127 bytes, without "
          + "spaces, control characters or / \\ ? ' \" # @)")
    }
    self = .queue(printer)
  }
}

/// libcups' settings for one call on one thread: the scheduler, the user, and the password
/// callback (`cupsSetPasswordCB2`), which answers from the credentials and never prompts.
///
/// libcups keeps these per thread; `with` sets them for its body and afterwards leaves the
/// thread on libcups' default scheduler and user with a callback that answers nothing (libcups'
/// own callback would prompt on the terminal and wait). Not Sendable: it lives on its thread.
final class CupsSession {
  /// The scheduler and credentials.
  let access: PrintAccess
  /// The password as libcups takes it (kept alive while libcups may read it).
  private let password: UnsafeMutablePointer<CChar>?
  /// The connections the password was given on: asked again on one, it was refused.
  private var answered: Set<UInt> = []
  /// Whether libcups asked for a password.
  private(set) var asked = false
  /// Whether a printer asked again on a connection after being given the password.
  private(set) var refused = false
  /// Whether a printer asked for the password over plain IPP from another machine (not given:
  /// HTTP Basic would carry it readable by anyone on the way).
  private(set) var insecure = false

  private init(_ access: PrintAccess) {
    self.access = access
    password = access.credentials.map { strdup($0.password) }
  }

  deinit {
    if let password { explicit_bzero(password, strlen(password)) }
    free(password)
  }

  /// Runs `body` with libcups set up for `access` on this thread.
  static func with<Value>(_ access: PrintAccess, _ body: (CupsSession) throws -> Value) throws
    -> Value
  {
    let session = CupsSession(access)
    if let scheduler = access.scheduler { cupsSetServer(scheduler) }
    if let user = access.credentials?.user { cupsSetUser(user) }
    cupsSetPasswordCB2(
      { _, http, _, _, context in
        guard let context else { return nil }
        return Unmanaged<CupsSession>.fromOpaque(context).takeUnretainedValue().answer(http)
      }, Unmanaged.passUnretained(session).toOpaque())
    defer {
      cupsSetPasswordCB2({ _, _, _, _, _ in nil }, nil)
      if access.credentials != nil { cupsSetUser(nil) }
      if access.scheduler != nil { cupsSetServer(nil) }
    }
    return try body(session)
  }

  /// The scheduler libcups talks to now: `host:port`, or the socket's path.
  static var scheduler: String {
    let server = String(cString: cupsServer())
    return server.hasPrefix("/") ? server : "\(server):\(ippPort())"
  }

  /// Forgets that `connection` (just opened, perhaps where a closed one was) was answered.
  func opened(_ connection: OpaquePointer) {
    answered.remove(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))))
  }

  /// The password for libcups' question on `http`: once a connection; nil (libcups gives up)
  /// when there are no credentials or the printer asked again after getting them.
  private func answer(_ http: OpaquePointer?) -> UnsafePointer<CChar>? {
    asked = true
    guard let password else { return nil }
    // Only over TLS (ipps://, or a scheduler that encrypts), or to this machine (loopback, a
    // local socket): HTTP Basic over plain IPP would show the password to the network.
    guard let http, httpIsEncrypted(http) != 0 || Self.isLocal(http) else {
      insecure = true
      return nil
    }
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(http)))
    guard answered.insert(key).inserted else {
      refused = true
      return nil
    }
    return UnsafePointer(password)
  }

  /// Whether `http` is a connection to this machine (a loopback address or a local socket).
  private static func isLocal(_ http: OpaquePointer) -> Bool {
    guard let address = httpGetAddress(http) else { return false }
    return httpAddrLocalhost(address) != 0
  }

  /// `printUnauthorized` for `printer` when libcups' last error (after `what`) says the
  /// credentials were missing or refused, else nil.
  func refusal(_ printer: String, _ what: String) -> DocumentError? {
    let status = cupsLastError()
    let authentication = [
      IPP_STATUS_ERROR_NOT_AUTHENTICATED, IPP_STATUS_ERROR_NOT_AUTHORIZED,
      IPP_STATUS_ERROR_FORBIDDEN, IPP_STATUS_ERROR_CUPS_AUTHENTICATION_CANCELED,
    ]
    guard authentication.contains(status) || refused || insecure else { return nil }
    if insecure { return .printInsecureCredentials(printer: printer) }
    return .printUnauthorized(
      printer: printer, user: access.credentials?.user,
      detail: "\(what): \(String(cString: cupsLastErrorString()))")
  }
}

/// A printer to send to: its destination, a connection (to the device for a URI, to the
/// scheduler for a queue), and the URI requests name it by.
struct CupsPrinter: ~Copyable {
  /// The printer as given (URI or queue name).
  let name: String
  /// The printer's URI for requests: the device's, or the queue's on the scheduler
  /// (`printer-uri-supported`).
  let uri: String
  /// For a queue, the scheduler it is on, as libcups resolved it (`host:port` or a socket's
  /// path); nil for an IPP URI.
  let scheduler: String?
  fileprivate let destination: CupsDestination
  fileprivate let connection: CupsConnection

  /// Connects to `printer`: for a queue, to the scheduler first, then asks it for the queue.
  ///
  /// - Throws: `DocumentError.printerUnreachable`, `.printerUnknown`, `.printUnauthorized`.
  init(_ printer: String, _ session: CupsSession) throws(DocumentError) {
    name = printer
    switch try PrinterName(printer) {
    case .device(let uri):
      let destination = try CupsDestination(uri: uri)
      connection = try CupsConnection(toDevice: destination, printer: uri, session)
      self.destination = destination
      self.uri = uri
      scheduler = nil
    case .queue(let queue):
      let connection = try CupsConnection(toSchedulerFor: queue, session)
      destination = try CupsDestination(queue: queue, connection, session)
      self.connection = connection
      uri = destination.option("printer-uri-supported") ?? "ipp://localhost/printers/\(queue)"
      scheduler = CupsSession.scheduler
    }
  }

  /// The printer's `printer-uuid` (Get-Printer-Attributes asking for it alone), or nil when
  /// it reports none or does not answer: a record, never a reason to fail.
  func uuid() -> String? {
    guard let request = ippNewRequest(IPP_OP_GET_PRINTER_ATTRIBUTES) else {
      preconditionFailure("ippNewRequest failed: out of memory")
    }
    ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri", nil, uri)
    ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_KEYWORD, "requested-attributes", nil, "printer-uuid")
    ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_NAME, "requesting-user-name", nil, cupsUser())
    // cupsDoRequest frees the request, and returns nil when the printer did not answer.
    guard let raw = cupsDoRequest(connection.raw, request, connection.resource) else {
      return nil
    }
    let response = IPPResponse(owning: raw)
    guard PrintSubmitter.isSuccess(ippGetStatusCode(response.raw)),
      let attribute = ippFindAttribute(response.raw, "printer-uuid", IPP_TAG_URI),
      let value = ippGetString(attribute, 0, nil)
    else { return nil }
    return SafeText.excerpt(String(cString: value), limit: 128)
  }
}

/// A destination made by `cupsGetDestWithURI` or `cupsGetNamedDest`.
///
/// Owns it; freed with `cupsFreeDests` when destroyed.
struct CupsDestination: ~Copyable {
  fileprivate let raw: UnsafeMutablePointer<cups_dest_t>
  private let handleScope: LiveHandles.Scope?

  /// The destination of the printer at `uri`.
  ///
  /// - Throws: `DocumentError.printerUnreachable` when libcups cannot read the URI.
  init(uri: String) throws(DocumentError) {
    guard let raw = cupsGetDestWithURI(nil, uri) else {
      throw .unreachable(uri)
    }
    self.raw = raw
    handleScope = LiveHandles.opened("cups_dest_t")
  }

  /// The queue `queue` as the scheduler at the other end of `connection` describes it.
  ///
  /// - Throws: `DocumentError.printerUnknown` when the scheduler has no such queue,
  ///   `.printUnauthorized` when it wants credentials to say, `.printerUnreachable` otherwise.
  init(queue: String, _ connection: borrowing CupsConnection, _ session: CupsSession)
    throws(DocumentError)
  {
    guard let raw = cupsGetNamedDest(connection.raw, queue, nil) else {
      if cupsLastError() == IPP_STATUS_ERROR_NOT_FOUND {
        throw .printerUnknown(printer: queue, scheduler: CupsSession.scheduler)
      }
      if let refusal = session.refusal(queue, "looking up the queue") { throw refusal }
      throw .unreachable(queue)
    }
    self.raw = raw
    handleScope = LiveHandles.opened("cups_dest_t")
  }

  /// The destination's option `name` (`printer-uri-supported`...), if it has one.
  func option(_ name: String) -> String? {
    cupsGetOption(name, raw.pointee.num_options, raw.pointee.options).map { String(cString: $0) }
  }

  deinit {
    cupsFreeDests(1, raw)
    LiveHandles.closed("cups_dest_t", in: handleScope)
  }
}

/// A connection to a printer: made by `cupsConnectDest` straight to the device, or by
/// `httpConnect2` to the scheduler libcups is set up for.
///
/// Owns it; closed with `httpClose` when destroyed.
struct CupsConnection: ~Copyable {
  fileprivate let raw: OpaquePointer
  /// The resource path for requests over the connection (`/ipp/print`; `/` on a scheduler).
  fileprivate let resource: String
  private let handleScope: LiveHandles.Scope?

  /// Connects to `destination`'s device, waiting up to 30 s.
  ///
  /// - Throws: `DocumentError.printerUnreachable`.
  init(toDevice destination: borrowing CupsDestination, printer: String, _ session: CupsSession)
    throws(DocumentError)
  {
    var resource = [CChar](repeating: 0, count: 1024)
    guard
      let raw = cupsConnectDest(
        destination.raw, UInt32(CUPS_DEST_FLAGS_DEVICE), 30_000, nil, &resource, resource.count,
        nil, nil)
    else {
      throw .unreachable(printer)
    }
    self.raw = raw
    self.resource = resource.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.map { String(cString: $0) } ?? "/"
    }
    session.opened(raw)
    handleScope = LiveHandles.opened("http_t")
  }

  /// Connects to the scheduler for `queue`, waiting up to 30 s.
  ///
  /// The scheduler is libcups' (`cupsServer()`, `ippPort()`, `cupsEncryption()`). The connection has the scheduler's own name and port, so that
  /// `cupsCopyDestInfo` asks the queue, not its device.
  ///
  /// - Throws: `DocumentError.printerUnreachable` naming the scheduler.
  init(toSchedulerFor queue: String, _ session: CupsSession) throws(DocumentError) {
    guard
      let raw = httpConnect2(
        cupsServer(), ippPort(), nil, AF_UNSPEC, cupsEncryption(), 1, 30_000, nil)
    else {
      throw .printerUnreachable(
        printer: queue,
        detail: "the CUPS scheduler at '\(CupsSession.scheduler)' does not answer: "
          + String(cString: cupsLastErrorString()))
    }
    self.raw = raw
    resource = "/"
    session.opened(raw)
    handleScope = LiveHandles.opened("http_t")
  }

  deinit {
    httpClose(raw)
    LiveHandles.closed("http_t", in: handleScope)
  }
}

/// What a printer supports, from `cupsCopyDestInfo`.
///
/// Owns it; freed with `cupsFreeDestInfo` when destroyed.
struct CupsDestinationInfo: ~Copyable {
  fileprivate let raw: OpaquePointer
  private let handleScope: LiveHandles.Scope?

  /// The attributes of `printer` (the queue's, through the scheduler, for a queue).
  ///
  /// - Throws: `DocumentError.printUnauthorized`, `.printerUnreachable`.
  init(_ printer: borrowing CupsPrinter, _ session: CupsSession) throws(DocumentError) {
    guard let raw = cupsCopyDestInfo(printer.connection.raw, printer.destination.raw) else {
      if let refusal = session.refusal(printer.name, "Get-Printer-Attributes") { throw refusal }
      throw .unreachable(printer.name)
    }
    self.raw = raw
    handleScope = LiveHandles.opened("cups_dinfo_t")
  }

  deinit {
    cupsFreeDestInfo(raw)
    LiveHandles.closed("cups_dinfo_t", in: handleScope)
  }
}

/// An IPP response from `cupsDoRequest`.
///
/// Owns it; freed with `ippDelete` when destroyed.
struct IPPResponse: ~Copyable {
  fileprivate let raw: OpaquePointer
  private let handleScope: LiveHandles.Scope?

  /// Takes ownership of `raw` ("transfer full").
  init(owning raw: OpaquePointer) {
    self.raw = raw
    handleScope = LiveHandles.opened("ipp_t")
  }

  deinit {
    ippDelete(raw)
    LiveHandles.closed("ipp_t", in: handleScope)
  }
}
