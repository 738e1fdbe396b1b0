// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: jobs followed on their printer (Get-Job-Attributes) until they end.

internal import CCups
import Foundation
import ImprintCore

extension PrintSubmitter {
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
  /// - Throws: `PrintError.unreachable` (a printer that does not answer),
  ///   `.unknownPrinter` (a queue gone), `.jobUnknown` (a job the printer does not know),
  ///   `.unauthorized`, `.refused` (another IPP error); `FileError` writing the
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
      try CupsSession.with(place, printer: printer) { session in
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

  /// The first job of `jobs` waited for that did not complete: `.jobEnded` (aborted or
  /// canceled) or `.waitTimedOut` (still going after `seconds`), naming the job's file;
  /// nil when every job completed or none was waited for.
  public static func failure(of jobs: [SubmittedJob], seconds: Double) -> PrintError? {
    for job in jobs {
      guard let state = job.state, state != "completed" else { continue }
      let printer = shown(job.printer, scheduler: job.scheduler)
      if isFinal(state) {
        return .jobEnded(
          file: job.file, printer: printer, jobID: job.jobID, state: state,
          reasons: job.stateReasons ?? [], message: job.stateMessage)
      }
      return .waitTimedOut(
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
  ) throws(PrintError) -> (state: String, reasons: [String], message: String?) {
    guard let request = cups.ippNewRequest(IPP_OP_GET_JOB_ATTRIBUTES) else {
      preconditionFailure("ippNewRequest failed: out of memory")
    }
    let printer = target.name
    cups.ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri", nil, target.uri)
    cups.ippAddInteger(
      request, IPP_TAG_OPERATION, IPP_TAG_INTEGER, "job-id", Int32(clamping: jobID))
    cups.ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_NAME, "requesting-user-name", nil, cups.cupsUser())
    // cupsDoRequest frees the request, and returns nil when the printer did not answer.
    guard let raw = cups.cupsDoRequest(target.connection.raw, request, target.connection.resource)
    else {
      if let refusal = session.refusal(printer, "Get-Job-Attributes") { throw refusal }
      throw .cupsUnreachable(printer)
    }
    let response = IPPResponse(owning: raw)
    let status = cups.ippGetStatusCode(response.raw)
    guard isSuccess(status) else {
      if status == IPP_STATUS_ERROR_NOT_FOUND {
        throw .jobUnknown(file: file, printer: printer, jobID: jobID)
      }
      if let refusal = session.refusal(printer, "Get-Job-Attributes") { throw refusal }
      throw .refused(
        file: file, printer: printer,
        detail: "Get-Job-Attributes: \(cups.lastErrorText)")
    }
    func strings(_ name: String) -> [String] {
      guard let attribute = cups.ippFindAttribute(response.raw, name, IPP_TAG_ZERO) else {
        return []
      }
      return (0..<cups.ippGetCount(attribute)).compactMap { index in
        cups.ippGetString(attribute, index, nil).map { String(cString: $0) }
      }
    }
    guard let stateAttribute = cups.ippFindAttribute(response.raw, "job-state", IPP_TAG_ENUM) else {
      throw .refused(
        file: file, printer: printer, detail: "Get-Job-Attributes: no job-state in the answer")
    }
    let value = cups.ippGetInteger(stateAttribute, 0)
    let state = cups.ippEnumString("job-state", value).map { String(cString: $0) } ?? "\(value)"
    return (state, strings("job-state-reasons"), strings("job-state-message").first)
  }
}
