// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: print what was quoted, in one call: the order prepared (OrderPreparer), then
// optionally sent to a printer (PrintSubmitter), recorded so that a run started again never
// prints a file twice.

import Foundation
import ImprintCore
import ImprintPricing

/// Where prepared files are sent, and how.
public struct PrintTarget: Sendable {
  /// The printer's IPP URI (`ipp://host:port/ipp/print`, `ipps://...`) or CUPS queue name.
  public var printer: String
  /// The IPP URI or queue name of the printer for monochrome files, or nil for `printer`.
  public var monoPrinter: String?
  /// The scheduler queues are looked up on, and the credentials to answer with.
  public var access = PrintAccess()
  /// How long to keep asking a printer that answers busy, in seconds.
  public var busySeconds: Double = 60
  /// The `PrintJournal` file recording what was sent, or nil to send every file on every run.
  public var journal: String?
  /// Where each part is claimed before it is sent, when the job's runs may be on several
  /// replicas (`PrintClaims`); nil: the journal alone decides.
  public var claims: (any PrintClaims)?
  /// How long to wait, in seconds, for every job to end (`PrintSubmitter.wait`), or nil not to
  /// wait: the jobs are then reported as the printer accepted them.
  public var waitSeconds: Double?
  /// How long `imprint prepare --wait` and a batch print job wait when no time is given, in
  /// seconds.
  public static let defaultWaitSeconds: Double = 300
  /// The seconds one may ask them to wait (`--wait-timeout`, `waitTimeout`): a day at most.
  public static let waitSecondsRange: ClosedRange<Double> = 0...86_400

  /// Files sent to `printer` (monochrome ones to `monoPrinter` when given), recorded in
  /// `journal` when one is given.
  public init(printer: String, monoPrinter: String? = nil, journal: String? = nil) {
    self.printer = printer
    self.monoPrinter = monoPrinter
    self.journal = journal
  }
}

/// An order printed: the quote, the prepared files with their tickets, and the printer's jobs.
///
/// Encoded, it is the report `imprint prepare --json` prints and a batch `print` job writes.
public struct PrintedOrder: Encodable, Sendable, Equatable {
  /// The JSON schema version (1).
  public var schemaVersion = 1
  /// The quote the files realise.
  public var quote: Quote
  /// The prepared files, in the order's order.
  public var files: [PreparedFile]
  /// The printer jobs of the order's lines, in the order's order, when a printer was given.
  ///
  /// One a file sent by this run, and for a line an earlier run printed (its journal says so)
  /// the jobs it recorded, `resumed` (as many as that run's colour split made: a line sent
  /// whole then prepared split now has one job for two files). Each names its line's file and
  /// part (`SubmittedJob.file`, `.part`).
  public var jobs: [SubmittedJob]?
  /// Why the files were not all printed, or nil.
  ///
  /// The printer that stopped taking them part-way (`PrintSubmitter.send`: `jobs` holds those
  /// it took), or, waited for, the first job aborted, canceled or still going
  /// (`PrintSubmitter.failure`), or the error asking the printer. Not in the report (its jobs carry their states): the caller reports
  /// it as an error.
  public var failure: PrintError?

  enum CodingKeys: String, CodingKey {
    case schemaVersion, quote, files, jobs
  }
}

/// Prints orders as they were quoted: prepares every file of the order (`OrderPreparer`: all
/// files and tickets written, or none), then, given a printer, sends each file to it
/// (`PrintSubmitter`) with its ticket's attributes.
///
/// The library entry point `imprint prepare` and a batch `print` job call.
public struct OrderPrinter: Sendable {
  /// The preparer (its quoter and sandbox).
  public let preparer: OrderPreparer

  /// A printer preparing files with `preparer`.
  public init(preparer: OrderPreparer) {
    self.preparer = preparer
  }

  /// Prepares the order at `orderPath` into `folder` and sends its files to `target`'s printer.
  ///
  /// The printer is checked before anything is prepared: its URI, or, for a CUPS queue, that
  /// the scheduler has it (`PrintSubmitter.lookUp`). The files are sent from a
  /// thread of their own (libcups blocks: a busy printer is asked again for up to a minute),
  /// not from the caller's task pool. With `target.waitSeconds`, each job is then followed
  /// until it ends: a job that did not complete, or a printer that cannot be asked, is the
  /// result's `failure` (the files stay sent). A printer that stops taking the files part-way
  /// (`PrintSubmitter.send`: a job or document refused, a printer gone) is the result's
  /// `failure` too, its `jobs` those it took (and those a journal recorded), not waited for:
  /// the report says what was printed.
  ///
  /// - Parameters:
  ///   - orderPath: the order (JSON).
  ///   - pricesPath: the store's price list (JSON).
  ///   - filesRoot: the folder the order's files are relative to and confined to, or nil for
  ///     the order's folder.
  ///   - folder: where the PDFs and tickets go (created when missing).
  ///   - options: how the files are prepared (`PrepareOptions`: the colour split).
  ///   - target: the printer, or nil to prepare only.
  /// - Returns: the quote, the files and, with a target, their jobs (`PrintedOrder.jobs`, with
  ///   their states when waited for).
  /// - Throws: what `OrderPreparer.prepare(order:prices:filesRoot:output:)`,
  ///   `PrintSubmitter.lookUp` and `PrintSubmitter.send` throw (`.unconfirmed`,
  ///   `.partlySent` before anything is sent); `PrintError.journalDamaged` for a
  ///   journal that cannot be read or was written by an earlier imprint.
  public func run(
    order orderPath: String, prices pricesPath: String, filesRoot: String? = nil,
    output folder: String, options: PrepareOptions = PrepareOptions(),
    target: PrintTarget? = nil
  ) async throws -> PrintedOrder {
    if let target {
      try PrintSubmitter.checkPrinter(target.printer)
      if let mono = target.monoPrinter { try PrintSubmitter.checkPrinter(mono) }
      try await onOwnThread(stackSize: 8 << 20) {
        for printer in [target.printer] + (target.monoPrinter.map { [$0] } ?? []) {
          try PrintSubmitter.lookUp(printer, access: target.access)
        }
      }
    }
    let prepared = try await preparer.prepare(
      order: orderPath, prices: pricesPath, filesRoot: filesRoot, output: folder,
      options: options)
    var printed = PrintedOrder(quote: prepared.quote, files: prepared.files)
    if let target {
      let files = prepared.files
      (printed.jobs, printed.failure) = try await onOwnThread(stackSize: 8 << 20) {
        let journal = try target.journal.map { try PrintJournal(path: $0) }
        let (jobs, stopped) = try PrintSubmitter.send(
          files, printer: target.printer, monoPrinter: target.monoPrinter,
          busySeconds: target.busySeconds, journal: journal, claims: target.claims,
          access: target.access)
        // The printer stopped taking the files: the jobs it took are reported, not waited for.
        if let stopped { return (jobs, stopped) }
        guard let seconds = target.waitSeconds else { return (jobs, nil) }
        do {
          let waited = try PrintSubmitter.wait(
            for: jobs, seconds: seconds, journal: journal, access: target.access)
          return (waited, PrintSubmitter.failure(of: waited, seconds: seconds))
        } catch let error as PrintError {
          return (jobs, error)
        }
      }
    }
    return printed
  }
}
