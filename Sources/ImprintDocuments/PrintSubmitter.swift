// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: prepared files sent to an IPP printer through libcups, each with its job
// ticket's attributes.

internal import CCups
import Foundation
import ImprintCore
import ImprintGraphics

/// A print job a printer accepted.
public struct SubmittedJob: Codable, Sendable, Equatable {
  /// The print-ready PDF sent.
  public var document: String
  /// The printer's URI.
  public var printer: String
  /// The job's id on that printer.
  public var jobID: Int
  /// True when an earlier run sent the file (its `PrintJournal` says so) and this one did not
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

  /// A job of `document` on `printer`.
  public init(document: String, printer: String, jobID: Int, resumed: Bool? = nil) {
    self.document = document
    self.printer = printer
    self.jobID = jobID
    self.resumed = resumed
  }
}

/// Sends prepared files to an IPP printer (`ipp://host:port/ipp/print`, `ipps://...`) with
/// libcups, directly, without a CUPS scheduler: Create-Job with the ticket's attributes
/// (`copies`, `sides`, `media`, `print-color-mode`, `multiple-document-handling`, and
/// `finishings` unless none), then Send-Document with the PDF.
///
/// Synchronous; one connection for all the files. A printer that answers `server-error-busy`
/// (one that takes one job at a time) is asked again every 50 ms for up to `busySeconds`.
public enum PrintSubmitter {
  /// Submits `files` to `printer`, in order, and returns their job ids; with `monoPrinter`,
  /// the files whose ticket's `print-color-mode` is `monochrome` (a colour split's monochrome
  /// parts, monochrome files) go to that printer instead.
  ///
  /// With a journal, a file the journal records as sent to its printer (same bytes, same ticket)
  /// is not sent again (its job is reported with `resumed`), and each file sent is recorded
  /// when its job is created and when its document is accepted. When every file was sent
  /// before, the printer is not contacted.
  ///
  /// - Parameters:
  ///   - files: prepared files with their tickets (`OrderPreparer`).
  ///   - printer: the printer's IPP URI.
  ///   - monoPrinter: the IPP URI of the printer for monochrome files, or nil for `printer`.
  ///   - busySeconds: how long to keep asking a busy printer.
  ///   - journal: the record of files sent, or nil to send every file.
  /// - Returns: one job per file, in the files' order.
  /// - Throws: `DocumentError.printerUnreachable` (a URI that is not IPP, a printer that does
  ///   not answer) or `.printRefused` (a job or document the printer refused, naming the file);
  ///   `.printUnconfirmed` (before anything is sent) when the journal has a job created for a
  ///   file but not its document; `FileError` reading a prepared file or writing the journal.
  ///   Jobs submitted before a failure stay submitted (and recorded).
  public static func submit(
    _ files: [PreparedFile], printer: String, monoPrinter: String? = nil,
    busySeconds: Double = 60, journal: PrintJournal? = nil
  ) throws -> [SubmittedJob] {
    try checkURI(printer)
    if let monoPrinter { try checkURI(monoPrinter) }
    let mono = monoPrinter ?? printer
    let targets = files.map { $0.ticket.ipp.printColorMode == "monochrome" ? mono : printer }
    var digests: [String?] = Array(repeating: nil, count: files.count)
    var jobs: [Int: SubmittedJob] = [:]
    if let journal {
      for (index, file) in files.enumerated() {
        let digest = try PrintJournal.digest(document: file.document, attributes: file.ticket.ipp)
        digests[index] = digest
        guard let entry = journal.entry(digest: digest, printer: targets[index]) else { continue }
        guard entry.sent else {
          throw DocumentError.printUnconfirmed(
            file: file.ticket.file, printer: targets[index], jobID: entry.jobID,
            journal: journal.path)
        }
        jobs[index] = SubmittedJob(
          document: file.document, printer: targets[index], jobID: entry.jobID, resumed: true)
      }
    }
    // One connection a printer, each printer's files in order: the colour printer's first.
    for uri in [printer, mono] where jobs.count < files.count {
      let indices = files.indices.filter { targets[$0] == uri && jobs[$0] == nil }
      guard !indices.isEmpty else { continue }
      let destination = try CupsDestination(uri: uri)
      let connection = try CupsConnection(to: destination, printer: uri)
      let info = try CupsDestinationInfo(connection, destination, printer: uri)
      for index in indices {
        let file = files[index]
        let record = { (jobID: Int, sent: Bool) throws(FileError) in
          guard let journal, let digest = digests[index] else { return }
          try journal.record(
            PrintJournal.Entry(
              document: file.ticket.document, digest: digest, printer: uri, jobID: jobID,
              sent: sent))
        }
        let id = try submit(
          file, printer: uri, busySeconds: busySeconds, connection, destination, info,
          created: { jobID throws(FileError) in try record(jobID, false) })
        try record(id, true)
        jobs[index] = SubmittedJob(document: file.document, printer: uri, jobID: id)
      }
    }
    return files.indices.compactMap { jobs[$0] }
  }

  /// Checks that `printer` is an IPP URI.
  ///
  /// - Throws: `DocumentError.printerUnreachable` for anything but `ipp://` and `ipps://`.
  public static func checkURI(_ printer: String) throws(DocumentError) {
    guard printer.hasPrefix("ipp://") || printer.hasPrefix("ipps://") else {
      throw .printerUnreachable(
        printer: SafeText.excerpt(printer), detail: "not an ipp:// or ipps:// URI")
    }
  }

  /// Asks the printer of each job for its state until it ends (`completed`, `aborted` or
  /// `canceled`) or `seconds` have passed, and returns the jobs with their states.
  ///
  /// A job the journal already records as ended is not asked for again (printers forget
  /// finished jobs); each job that ends is recorded with its state. One connection a printer;
  /// each job is asked for every 20 ms at first, then less often, up to every half second.
  ///
  /// - Parameters:
  ///   - jobs: the jobs `submit` returned, one a file, in order.
  ///   - files: the files sent.
  ///   - seconds: how long to wait for all the jobs together.
  ///   - journal: the record of files sent, or nil.
  /// - Returns: the jobs with their states (a job still going after `seconds` has its last
  ///   state: see `failure(of:files:seconds:)`).
  /// - Throws: `DocumentError.printerUnreachable` (a printer that does not answer),
  ///   `.printJobUnknown` (a job the printer does not know), `.printRefused` (another IPP
  ///   error); `FileError` writing the journal.
  public static func wait(
    for jobs: [SubmittedJob], files: [PreparedFile], seconds: Double,
    journal: PrintJournal? = nil
  ) throws -> [SubmittedJob] {
    var jobs = jobs
    for index in jobs.indices {
      try checkURI(jobs[index].printer)
      if let entry = journal?.entry(jobID: jobs[index].jobID, printer: jobs[index].printer),
        let state = entry.state
      {
        jobs[index].state = state
        jobs[index].stateReasons = entry.stateReasons
        jobs[index].stateMessage = entry.stateMessage
      }
    }
    let deadline = Date().addingTimeInterval(seconds.isFinite ? max(0, seconds) : 0)
    var printers: [String] = []
    for job in jobs where !printers.contains(job.printer) { printers.append(job.printer) }
    for printer in printers {
      let waiting = zip(jobs.indices, files).filter {
        jobs[$0.0].printer == printer && !isFinal(jobs[$0.0].state)
      }
      guard !waiting.isEmpty else { continue }
      let destination = try CupsDestination(uri: printer)
      let connection = try CupsConnection(to: destination, printer: printer)
      for (index, file) in waiting {
        var pause: UInt32 = 20_000
        while true {
          let status = try jobState(
            jobs[index].jobID, file: file.ticket.file, printer: printer, connection)
          jobs[index].state = status.state
          jobs[index].stateReasons = status.reasons
          jobs[index].stateMessage = status.message
          // Once the time is up, every job left is still asked once, for its last state.
          if isFinal(status.state) || Date() >= deadline { break }
          usleep(pause)
          pause = min(pause * 2, 500_000)
        }
        if isFinal(jobs[index].state), let journal,
          var entry = journal.entry(jobID: jobs[index].jobID, printer: printer)
        {
          entry.state = jobs[index].state
          entry.stateReasons = jobs[index].stateReasons
          entry.stateMessage = jobs[index].stateMessage
          try journal.record(entry)
        }
      }
    }
    return jobs
  }

  /// The first job of `jobs` waited for that did not complete: `.printJobEnded` (aborted or
  /// canceled) or `.printWaitTimedOut` (still going after `seconds`); nil when every job
  /// completed or none was waited for.
  public static func failure(of jobs: [SubmittedJob], files: [PreparedFile], seconds: Double)
    -> DocumentError?
  {
    for (job, file) in zip(jobs, files) {
      guard let state = job.state, state != "completed" else { continue }
      if isFinal(state) {
        return .printJobEnded(
          file: file.ticket.file, printer: job.printer, jobID: job.jobID, state: state,
          reasons: job.stateReasons ?? [], message: job.stateMessage)
      }
      return .printWaitTimedOut(
        file: file.ticket.file, printer: job.printer, jobID: job.jobID, state: state,
        seconds: seconds)
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
    _ jobID: Int, file: String, printer: String, _ connection: borrowing CupsConnection
  ) throws(DocumentError) -> (state: String, reasons: [String], message: String?) {
    guard let request = ippNewRequest(IPP_OP_GET_JOB_ATTRIBUTES) else {
      preconditionFailure("ippNewRequest failed: out of memory")
    }
    ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri", nil, printer)
    ippAddInteger(request, IPP_TAG_OPERATION, IPP_TAG_INTEGER, "job-id", Int32(clamping: jobID))
    ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_NAME, "requesting-user-name", nil, cupsUser())
    // cupsDoRequest frees the request, and returns nil when the printer did not answer.
    guard let raw = cupsDoRequest(connection.raw, request, connection.resource) else {
      throw .unreachable(printer)
    }
    let response = IPPResponse(owning: raw)
    let status = ippGetStatusCode(response.raw)
    guard isSuccess(status) else {
      if status == IPP_STATUS_ERROR_NOT_FOUND {
        throw .printJobUnknown(file: file, printer: printer, jobID: jobID)
      }
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
    _ file: PreparedFile, printer: String, busySeconds: Double,
    _ connection: borrowing CupsConnection, _ destination: borrowing CupsDestination,
    _ info: borrowing CupsDestinationInfo, created: (Int) throws(FileError) -> Void
  ) throws -> Int {
    let (descriptor, _) = try FileIO.openForReading(file.document)
    defer { close(descriptor) }
    var count: Int32 = 0
    var list: UnsafeMutablePointer<cups_option_t>?
    defer { cupsFreeOptions(count, list) }
    for (name, value) in options(file.ticket) { count = cupsAddOption(name, value, count, &list) }
    let title = file.ticket.document
    func refused(_ what: String) -> DocumentError {
      .printRefused(
        file: file.ticket.file, printer: printer,
        detail: "\(what): \(String(cString: cupsLastErrorString()))")
    }
    var jobID: Int32 = 0
    let deadline = Date().addingTimeInterval(busySeconds.isFinite ? max(0, busySeconds) : 60)
    while true {
      let status = cupsCreateDestJob(
        connection.raw, destination.raw, info.raw, &jobID, title, count, list)
      if isSuccess(status) { break }
      guard status == IPP_STATUS_ERROR_BUSY, Date() < deadline else {
        throw refused("Create-Job")
      }
      usleep(50_000)
    }
    try created(Int(jobID))
    guard
      cupsStartDestDocument(
        connection.raw, destination.raw, info.raw, jobID, title, "application/pdf", 0, nil, 1)
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
      guard cupsWriteRequestData(connection.raw, buffer, read) == HTTP_STATUS_CONTINUE else {
        throw refused("sending the document")
      }
    }
    guard isSuccess(cupsFinishDestDocument(connection.raw, destination.raw, info.raw)) else {
      throw refused("Send-Document")
    }
    return Int(jobID)
  }

  /// Whether an IPP status is one of the successful ones (0x0000-0x00FF).
  private static func isSuccess(_ status: ipp_status_t) -> Bool {
    status.rawValue >= 0 && status.rawValue < 0x100
  }
}

// The three libcups objects of a submission. Raw pointers stay in this file.

extension DocumentError {
  /// `printerUnreachable` for `printer` with libcups' last error text.
  fileprivate static func unreachable(_ printer: String) -> DocumentError {
    .printerUnreachable(printer: printer, detail: "cups: \(String(cString: cupsLastErrorString()))")
  }
}

/// A destination made by `cupsGetDestWithURI`.
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

  deinit {
    cupsFreeDests(1, raw)
    LiveHandles.closed("cups_dest_t", in: handleScope)
  }
}

/// A connection made by `cupsConnectDest` straight to the device (no scheduler).
///
/// Owns it; closed with `httpClose` when destroyed.
struct CupsConnection: ~Copyable {
  fileprivate let raw: OpaquePointer
  /// The printer's resource path (`/ipp/print`), for requests over the connection.
  fileprivate let resource: String
  private let handleScope: LiveHandles.Scope?

  /// Connects to `destination`, waiting up to 30 s.
  ///
  /// - Throws: `DocumentError.printerUnreachable`.
  init(to destination: borrowing CupsDestination, printer: String) throws(DocumentError) {
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

  /// The printer's attributes, asked over `connection`.
  ///
  /// - Throws: `DocumentError.printerUnreachable`.
  init(
    _ connection: borrowing CupsConnection, _ destination: borrowing CupsDestination,
    printer: String
  ) throws(DocumentError) {
    guard let raw = cupsCopyDestInfo(connection.raw, destination.raw) else {
      throw .unreachable(printer)
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
