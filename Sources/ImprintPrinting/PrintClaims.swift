// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: claims on an order's parts where every run of one job sees them (a jobs
// database that replicas share), so that a part is sent by one run at most, and only by a run
// that still holds its job.

/// Where the runs of one job claim the parts of its order before sending them.
///
/// The print journal says what a run sent; it lives in the job's folder and is read when a run
/// starts. Claims close what a journal cannot: a run that lost its job to another (its lease
/// expired) must send nothing more, and a part a stopped run claimed and made a printer's job
/// for may be at the printer. `PrintSubmitter.send` claims each part just before it creates the
/// printer's job for it, and says which job the printer made before it sends the document.
public protocol PrintClaims: Sendable {
  /// Claims part `part` of the order's line `key` (the file `file`) for this run.
  ///
  /// A claim another run made but made no printer's job for (it stopped before) is this run's
  /// now: that part never reached a printer.
  ///
  /// - Returns: true when this run holds the claim (made now, taken from a run that made no
  ///   printer's job, or made by this run before); false when another run claimed it and made
  ///   a printer's job for it (the printer may have it).
  /// - Throws: `PrintError.unclaimed` when this run may not send (it no longer holds its job,
  ///   or the claims cannot be reached).
  func claim(line key: String, part: String, file: String) throws(PrintError) -> Bool

  /// Records that `printer` made job `jobID` for part `part` of line `key` claimed by this run,
  /// before its document is sent.
  ///
  /// - Throws: `PrintError.unclaimed` when this run no longer holds its job or the claim, or
  ///   the claims cannot be reached: the document is not sent (the printer's job is canceled).
  func created(line key: String, part: String, file: String, printer: String, jobID: Int)
    throws(PrintError)

  /// Records that the printer's job `jobID` told by `created` for part `part` of line `key`
  /// was canceled before its document was sent (this run could not record it in its
  /// journal): the part reached no printer, so a later run may claim it again.
  ///
  /// - Throws: `PrintError.unclaimed` when the claims cannot be reached (the claim then still
  ///   names the job: a later run refuses the part as another's, never sends it twice).
  func withdrawn(line key: String, part: String, file: String, jobID: Int) throws(PrintError)
}
