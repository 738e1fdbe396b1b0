// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: prepared files sent to an IPP printer or a CUPS queue through libcups, each
// with its job ticket's attributes, and an order's lines reconciled with the print journal.

import Foundation
import ImprintCore

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
  /// - Throws: `PrintError.unreachable` (neither an IPP URI nor a queue name, a
  ///   printer or scheduler that does not answer), `.unknownPrinter` (a queue the scheduler
  ///   does not have), `.unauthorized` (credentials missing or refused) or `.refused`
  ///   (a job or document the printer refused, naming the file); before anything is sent,
  ///   `.unconfirmed` when the journal has a job created for a line but not its document,
  ///   `.partlySent` when it records some parts of a line sent and this run's split makes
  ///   other parts, `.journalDamaged` when a line's entries disagree on its parts;
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
  ///   an earlier run recorded and those sent now, up to the failure; and the `PrintError`
  ///   that stopped the sending, or nil when every file was sent.
  /// - Throws: what `submit` throws before anything is sent (the printer's name, the
  ///   journal's records), and `FileError` reading a prepared file or writing the journal.
  public static func send(
    _ files: [PreparedFile], printer: String, monoPrinter: String? = nil,
    busySeconds: Double = 60, journal: PrintJournal? = nil, claims: (any PrintClaims)? = nil,
    access: PrintAccess = PrintAccess()
  ) throws -> (jobs: [SubmittedJob], failure: PrintError?) {
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
      try CupsSession.with(access, printer: printer) { session in
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
            // Claimed just before the printer's job is made: a part another run claimed may
            // be at the printer already, and a run that lost its job sends nothing more.
            if let claims,
              try !claims.claim(line: file.lineKey, part: file.part, file: file.ticket.file)
            {
              throw PrintError.claimedByAnother(file: file.ticket.file, part: file.part)
            }
            var entry = PrintJournal.Entry(
              key: file.lineKey, file: file.ticket.file, part: file.part, parts: parts,
              document: file.ticket.document, printer: name, scheduler: target.scheduler,
              printerUUID: uuid, jobID: 0, sent: false)
            let id = try submit(
              file, busySeconds: busySeconds, target, info, session,
              created: { jobID in
                entry.jobID = jobID
                try claims?.created(
                  line: file.lineKey, part: file.part, file: file.ticket.file, printer: name,
                  jobID: jobID)
                do {
                  try journal?.record(entry)
                } catch {
                  // The job is canceled unsent (`submit`): the claim is given back, so that a
                  // later run sends the part rather than refusing it as another's.
                  try? claims?.withdrawn(
                    line: file.lineKey, part: file.part, file: file.ticket.file, jobID: jobID)
                  throw error
                }
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
    var failure: PrintError?
    if !pending.isEmpty {
      do {
        try sendPending()
      } catch let error as PrintError {
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
  /// - Throws: `PrintError.unconfirmed` (a part's job created, its document not
  ///   recorded as taken), `.partlySent` (parts missing, and this run's split makes other
  ///   parts), `.journalDamaged` (the entries disagree on the line's parts).
  private static func recorded(_ files: [PreparedFile], in journal: PrintJournal) throws
    -> (jobs: [SubmittedJob], printed: Bool)?
  {
    guard let first = files.first else { return nil }
    let entries = journal.entries(line: first.lineKey)
    guard let parts = entries.first?.parts else { return nil }
    if let unsent = entries.first(where: { !$0.sent }) {
      throw PrintError.unconfirmed(
        file: unsent.file, printer: shown(unsent.printer, scheduler: unsent.scheduler),
        jobID: unsent.jobID, journal: journal.path)
    }
    let recordedParts = Set(entries.map(\.part))
    guard entries.allSatisfy({ $0.parts == parts }), recordedParts.count <= parts else {
      throw PrintError.journalDamaged(
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
      throw PrintError.partlySent(
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
  /// - Throws: `PrintError.unreachable` for anything else (another scheme, a name
  ///   CUPS would refuse).
  public static func checkPrinter(_ printer: String) throws(PrintError) {
    _ = try PrinterName(printer)
  }

  /// Checks `printer` and, for a queue, that the scheduler has it.
  ///
  /// The question a run asks before preparing anything. An IPP printer is not contacted.
  ///
  /// - Throws: `PrintError.unreachable` (not a printer, a scheduler that does not
  ///   answer), `.unknownPrinter` (no such queue), `.unauthorized`.
  public static func lookUp(_ printer: String, access: PrintAccess = PrintAccess()) throws {
    guard case .queue = try PrinterName(printer) else { return }
    try CupsSession.with(access, printer: printer) { session in
      _ = try CupsPrinter(printer, session)
    }
  }
}
