// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: a print job a printer accepted, as reports and journals name it.

import ImprintCore

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
