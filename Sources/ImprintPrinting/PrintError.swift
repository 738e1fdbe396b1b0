// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: every way sending to a printer can fail (`print.*`), each with its own code,
// the printer and the file, and the HTTP status the service answers it with.

import ImprintCore

/// A printer that cannot be reached, refuses a job, asks for credentials it is not given, or a
/// print journal or password file that cannot be used.
public enum PrintError: ImprintError, Equatable, Codable {
  /// The printer cannot be reached (`detail`: what libcups said, or what is wrong with the URI).
  case unreachable(printer: String, detail: String)
  /// The printer refused a job or its document (`detail`: the step and libcups' text).
  case refused(file: String, printer: String, detail: String)
  /// A print journal says the printer created job `jobID` for the file but not that it took
  /// the whole document (a run stopped while sending): sending it again could print it twice.
  case unconfirmed(file: String, printer: String, jobID: Int, journal: String)
  /// A print journal that cannot be read (`reason`).
  case journalDamaged(path: String, reason: String)
  /// Part `part` of the order's line of `file` was claimed for printing by another run of the
  /// same job (a replica that stopped before its journal said what it sent): the printer may
  /// have it already, so it is not sent again.
  case claimedByAnother(file: String, part: String)
  /// Part `part` of the order's line of `file` could not be claimed for this run (`reason`:
  /// this replica no longer holds the job, or cannot reach the jobs database): nothing of it
  /// was sent.
  case unclaimed(file: String, part: String, reason: String)
  /// An earlier run sent some parts of the order's line of `file` (`sent`, described), of the
  /// `parts` its colour split made, and this run's split makes `now` other parts: sending
  /// them could print sheets twice, or never.
  case partlySent(file: String, sent: [String], parts: Int, now: Int, journal: String)
  /// A job waited for ended without printing completely: `state` is `aborted` or `canceled`,
  /// with the printer's `job-state-reasons` and `job-state-message`.
  case jobEnded(
    file: String, printer: String, jobID: Int, state: String, reasons: [String], message: String?)
  /// A job waited for was not finished after `seconds` (`state`: its last state).
  case waitTimedOut(file: String, printer: String, jobID: Int, state: String, seconds: Double)
  /// The printer does not know the job waited for (printers forget finished jobs).
  case jobUnknown(file: String, printer: String, jobID: Int)
  /// The CUPS scheduler (`scheduler`: its host and port, or socket) has no queue named
  /// `printer`.
  case unknownPrinter(printer: String, scheduler: String)
  /// The printer or scheduler asked for credentials and refused the ones given (`user`), or
  /// none were given (`user` nil); `detail` is libcups' text.
  case unauthorized(printer: String, user: String?, detail: String)
  /// A password file that cannot be used (`problem`: what is wrong with it).
  case passwordFile(path: String, problem: String)
  /// The printer or scheduler asked for credentials over a connection that is neither
  /// encrypted nor to this machine: the password was not sent.
  case insecureCredentials(printer: String)

  /// `unclaimed`'s code, which a job's recorded outcome is matched against (the service hands
  /// such a job back to the replica that holds it).
  public static let unclaimedCode = "print.unclaimed"

  public var code: String {
    switch self {
    case .unreachable: "print.unreachable"
    case .refused: "print.refused"
    case .unconfirmed: "print.unconfirmed"
    case .journalDamaged: "print.journalDamaged"
    case .claimedByAnother: "print.claimedByAnother"
    case .unclaimed: Self.unclaimedCode
    case .partlySent: "print.partlySent"
    case .jobEnded(_, _, _, let state, _, _):
      state == "canceled" ? "print.canceled" : "print.aborted"
    case .waitTimedOut: "print.timeout"
    case .jobUnknown: "print.jobUnknown"
    case .unknownPrinter: "print.unknownPrinter"
    case .unauthorized: "print.unauthorized"
    case .passwordFile: "print.passwordFile"
    case .insecureCredentials: "print.insecureCredentials"
    }
  }

  /// The HTTP status `imprint serve` answers the error with: 422 for all of them (the request
  /// was understood; the printer, its credentials or the journal refused the work).
  public var status: Int {
    switch self {
    case .unreachable, .refused, .unconfirmed, .journalDamaged, .claimedByAnother, .unclaimed,
      .partlySent, .jobEnded, .waitTimedOut, .jobUnknown, .unknownPrinter, .unauthorized,
      .passwordFile, .insecureCredentials:
      422
    }
  }

  /// Seconds for a message: whole ones without a fraction (`300`, `0.5`).
  private static func seconds(_ value: Double) -> String {
    value.isFinite && value.magnitude < 1e9 && value == value.rounded()
      ? String(Int(value)) : String(value)
  }

  public var message: String {
    switch self {
    case .unreachable(let printer, let detail):
      "cannot reach the printer '\(printer)' (\(detail))"
    case .refused(let file, let printer, let detail):
      "the printer '\(printer)' refused '\(file)' (\(detail))"
    case .unconfirmed(let file, let printer, let jobID, let journal):
      "'\(file)' may have been printed already: job \(jobID) on '\(printer)' was created, but "
        + "'\(journal)' does not record that the printer took the whole document"
    case .journalDamaged(let path, let reason):
      "the print journal '\(path)' cannot be read (\(reason))"
    case .claimedByAnother(let file, let part):
      "'\(file)' (\(part)) may have been printed already: another run of this job claimed it "
        + "for printing and stopped before its journal said whether the printer took it"
    case .unclaimed(let file, let part, let reason):
      "'\(file)' (\(part)) was not sent: \(reason)"
    case .partlySent(let file, let sent, let parts, let now, _):
      "'\(file)' was partly sent by an earlier run that split it into \(parts) "
        + "part\(parts == 1 ? "" : "s") (\(sent.joined(separator: "; "))), and this run makes "
        + "\(now) part\(now == 1 ? "" : "s") of it: sending them could print sheets twice"
    case .jobEnded(let file, let printer, let jobID, let state, let reasons, let message):
      "job \(jobID) of '\(file)' on '\(printer)' was \(state) ("
        + ([reasons.joined(separator: ", ")] + (message.map { [$0] } ?? []))
        .filter { !$0.isEmpty }.joined(separator: ": ") + ")"
    case .waitTimedOut(let file, let printer, let jobID, let state, let seconds):
      "job \(jobID) of '\(file)' on '\(printer)' is still \(state) after "
        + "\(Self.seconds(seconds)) s"
    case .jobUnknown(let file, let printer, let jobID):
      "the printer '\(printer)' does not know job \(jobID) of '\(file)'"
    case .unknownPrinter(let printer, let scheduler):
      "the CUPS scheduler at '\(scheduler)' has no queue named '\(printer)'"
    case .unauthorized(let printer, let user?, let detail):
      "the printer '\(printer)' refused the credentials of '\(user)' (\(detail))"
    case .unauthorized(let printer, nil, let detail):
      "the printer '\(printer)' asks for credentials and none were given (\(detail))"
    case .passwordFile(let path, let problem):
      "the password file '\(path)' cannot be used: \(problem)"
    case .insecureCredentials(let printer):
      "the printer '\(printer)' asks for credentials over an unencrypted connection to another "
        + "machine; the password was not sent"
    }
  }

  public var hint: String? {
    switch self {
    case .unreachable:
      ErrorSurface.hint(
        "give the printer's IPP URI (ipp://host:port/ipp/print) or CUPS queue name, and check "
          + "that the printer (or the CUPS scheduler, for a queue) is on",
        http: "check that the printer is on; where it is, is the server's configuration "
          + "(printers)")
    case .refused:
      "compare the ticket with what the printer supports (ipptool URI get-printer-attributes.test)"
    case .unconfirmed(_, _, let jobID, let journal):
      "check job \(jobID) on the printer; to send the file again, remove its entry from '\(journal)'"
    case .partlySent(_, _, _, _, let journal):
      "rerun with the colour split the earlier run had (splitColor, --split-color), or print "
        + "the rest by hand and remove the file's entries from '\(journal)'"
    case .journalDamaged:
      "check what the printer printed, then remove the journal to send every file again"
    case .claimedByAnother:
      "check the printer's jobs for the file; to print it again, send a new order"
    case .unclaimed:
      "the replica that holds the job now goes on with it: poll the job on any replica"
    case .jobEnded:
      "the file was not printed completely: see the printer's reasons, then send it again"
    case .waitTimedOut:
      ErrorSurface.hint(
        "the job stays on the printer: wait longer (--wait-timeout) or check the printer",
        http: "the job stays on the printer: wait longer (waitTimeout) or check the printer")
    case .jobUnknown:
      "printers forget finished jobs after a while: check on the printer whether it printed"
    case .unknownPrinter:
      "'lpstat -e' lists the scheduler's queues (CUPS_SERVER or client.conf choose the "
        + "scheduler); or give the printer's ipp:// URI"
    case .unauthorized(_, nil, _):
      ErrorSurface.hint(
        "give a user name and password with --password-file FILE (one line user:password, a "
          + "file only its owner can read)",
        http: "the printer's credentials are the server's to give (its printCredentials): ask "
          + "its operator")
    case .unauthorized:
      "check the user name and password in the password file"
    case .passwordFile:
      "write one line user:password in a file only its owner can read (chmod 600 FILE)"
    case .insecureCredentials:
      "use the printer's ipps:// URI, or a CUPS queue on this machine that holds the credentials"
    }
  }
}
