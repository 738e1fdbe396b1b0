// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the record of an order's lines sent to printers, so that a run started
// again never prints a line twice, and never silently skips one.

import Foundation
import ImprintCore
import ImprintPricing

/// The lines of an order sent to printers, kept in a JSON file so that a run started again (a
/// batch resumed after a failure or a kill) never prints a line of the order twice, and never
/// silently skips one.
///
/// The unit is the order's line, not the prepared bytes: a line is known by its key
/// (`lineKey`): the SHA-256 of the upload's bytes, of the line's print options (what its quote
/// line says but the money, and its page range and extras) and of its occurrence among
/// identical lines. A changed upload or changed options is a new print; a price-list update, a
/// colour split turned on or off, or another monochrome printer is not. Each entry is one part
/// of a line (`whole`, or a colour split's `color` and `mono`) with the number of parts that
/// run's split made, the printer as given and where it really was (for a queue, the scheduler),
/// and the job. `PrintSubmitter.submit` decides from them, line by line: a line whose recorded
/// parts are all sent is printed (its recorded jobs are reported, nothing is sent); one partly
/// sent sends only its missing parts when this run's split makes the same parts, and is
/// refused otherwise (`PrintError.partlySent`).
///
/// Each entry is written, and flushed to the disk, twice: when the printer has created the job
/// (the document not yet sent) and when it has accepted the whole document. An entry left at
/// the first step (a run killed while sending) cannot say whether the printer printed:
/// `PrintSubmitter` refuses to send that line again on a guess
/// (`PrintError.unconfirmed`).
///
/// Not Sendable: one journal belongs to one submission.
public final class PrintJournal {
  /// One part of an order's line sent to one printer.
  public struct Entry: Codable, Sendable, Equatable {
    /// The line's key (`PrintJournal.lineKey`).
    public var key: String
    /// The file as the order names it.
    public var file: String
    /// The part sent: `whole`, `color` or `mono`.
    public var part: String
    /// How many parts that run's split made of the line (1 for a whole file, 2 for a split).
    public var parts: Int
    /// The print-ready PDF's file name.
    public var document: String
    /// The printer as given: an IPP URI or a CUPS queue's name.
    public var printer: String
    /// For a queue, the scheduler the job was sent through (`host:port` or a socket's path, as
    /// libcups resolved it); nil for an IPP URI, which is where it was sent.
    public var scheduler: String?
    /// The printer's `printer-uuid`, when it reported one.
    public var printerUUID: String?
    /// The job's id on that printer (on the scheduler, for a queue).
    public var jobID: Int
    /// Whether the printer accepted the whole document (false: the job was created, the
    /// document may not have arrived).
    public var sent: Bool
    /// The job's final state once waited for (`completed`, `aborted`, `canceled`), else nil.
    public var state: String?
    /// The printer's `job-state-reasons` with the final state.
    public var stateReasons: [String]?
    /// The printer's `job-state-message` with the final state.
    public var stateMessage: String?

    /// The entry of `part` of the line `key` (of `file`, split into `parts`), sent as
    /// `document` to `printer` (through `scheduler` for a queue) as job `jobID`.
    public init(
      key: String, file: String, part: String, parts: Int, document: String, printer: String,
      scheduler: String? = nil, printerUUID: String? = nil, jobID: Int, sent: Bool
    ) {
      self.key = key
      self.file = file
      self.part = part
      self.parts = parts
      self.document = document
      self.printer = printer
      self.scheduler = scheduler
      self.printerUUID = printerUUID
      self.jobID = jobID
      self.sent = sent
    }

    /// The job this entry records, reported as resumed.
    var job: SubmittedJob {
      var job = SubmittedJob(
        document: document, file: file, part: part, printer: printer, scheduler: scheduler,
        jobID: jobID, resumed: true)
      job.printerUUID = printerUUID
      job.state = state
      job.stateReasons = stateReasons
      job.stateMessage = stateMessage
      return job
    }
  }

  /// The journal's schema version.
  public static let schemaVersion = 2

  /// The file's contents.
  private struct Contents: Codable {
    var schemaVersion = PrintJournal.schemaVersion
    var entries: [Entry]
  }

  /// The schema version alone, read first.
  private struct Version: Decodable {
    var schemaVersion: Int
  }

  /// The journal's path.
  public let path: String
  /// The entries, oldest first.
  public private(set) var entries: [Entry]

  /// The journal at `path`: its entries when the file exists, none otherwise.
  ///
  /// - Throws: `PrintError.journalDamaged` when the file exists but is not a journal
  ///   of this schema (never ignored: a lost entry could print a file twice), and for a journal
  ///   written by an earlier imprint (schema 1), which keyed files by their prepared bytes and
  ///   did not record the schedulers of queues; `FileError` reading it.
  public init(path: String) throws {
    self.path = path
    guard FileManager.default.fileExists(atPath: path) else {
      entries = []
      return
    }
    let data = Data(try FileIO.read(path, limit: FileIO.Limit.structured))
    guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
      throw PrintError.journalDamaged(path: path, reason: "not a print journal")
    }
    guard version.schemaVersion == Self.schemaVersion else {
      throw PrintError.journalDamaged(
        path: path,
        reason: version.schemaVersion == 1
          ? "written by an earlier imprint (schemaVersion 1), which recorded prepared files, "
            + "not the order's lines, and not the schedulers of queues"
          : "schemaVersion \(version.schemaVersion), expected \(Self.schemaVersion)")
    }
    guard let contents = try? JSONDecoder().decode(Contents.self, from: data) else {
      throw PrintError.journalDamaged(path: path, reason: "not a print journal")
    }
    entries = contents.entries
  }

  /// The entries of the line `key`, in the order they were first recorded.
  public func entries(line key: String) -> [Entry] {
    entries.filter { $0.key == key }
  }

  /// The entry of job `jobID` on `printer` (through `scheduler` for a queue), if any.
  public func entry(jobID: Int, printer: String, scheduler: String?) -> Entry? {
    entries.last { $0.jobID == jobID && $0.printer == printer && $0.scheduler == scheduler }
  }

  /// Adds `entry`, replacing the one of the same line and part, and writes the journal
  /// atomically, flushed to the disk before this returns (even in a bulk run that defers its
  /// outputs' flushing: an entry lost to a power cut could print a file twice).
  ///
  /// - Throws: `FileError` when the journal cannot be written (the entry is kept in memory).
  public func record(_ entry: Entry) throws(FileError) {
    if let index = entries.firstIndex(where: { $0.key == entry.key && $0.part == entry.part }) {
      entries[index] = entry
    } else {
      entries.append(entry)
    }
    let bytes = Array(JSONOutput.pretty(Contents(entries: entries)).utf8)
    do {
      try AtomicFile.$flushEachFile.withValue(true) { try AtomicFile.write(bytes, to: path) }
    } catch let error as FileError {
      throw error
    } catch {
      preconditionFailure("AtomicFile.write throws FileError only")
    }
  }

  /// What identifies an order's line as a print, less its occurrence: the upload's digest and
  /// the line's print options (its quote line's fields but the money and rates, the page range
  /// as the pages it names, the extras' names), as one JSON line with sorted keys.
  ///
  /// - Parameters:
  ///   - upload: SHA-256 (hex) of the upload's bytes.
  ///   - line: the line's quote.
  ///   - pages: the line's page range, or nil for all pages.
  ///   - extras: the line's extras, by name.
  /// - Returns: the identity, one JSON line.
  public static func lineIdentity(
    upload: String, line: FileQuote, pages: String?, extras: [String]
  ) -> String {
    // Two ranges naming the same pages are the same print; a range is kept as written when it
    // does not resolve (the quote would have refused it).
    var range = pages ?? "all"
    if case .pages(let list) = PageRange.resolve(range, count: line.pages) {
      range = PageRange.text(list)
    }
    return JSONOutput.line(
      LineIdentity(
        upload: upload, file: line.file, range: range, pages: line.pages,
        selectedPages: line.selectedPages, copies: line.copies, nUp: line.nUp,
        duplex: line.duplex, paper: line.paper, paperType: line.paperType,
        colorMode: line.colorMode, impressions: line.impressions,
        colorImpressions: line.colorImpressions, monoImpressions: line.monoImpressions,
        blankImpressions: line.blankImpressions, sheets: line.sheets, extras: extras.sorted()))
  }

  /// The key of the `occurrence`-th (0-based) line of an order with `identity`.
  ///
  /// SHA-256 (hex) of the identity (`lineIdentity`) and the occurrence: the same file named
  /// twice with the same options is two prints; a line inserted before them does not change
  /// their keys.
  public static func lineKey(identity: String, occurrence: Int) -> String {
    SHA256.hex(SHA256.hash(Array("\(identity)\n\(occurrence)".utf8)))
  }

  /// The fields of `lineIdentity`.
  private struct LineIdentity: Encodable {
    var upload: String
    var file: String
    var range: String
    var pages: Int
    var selectedPages: Int
    var copies: Int
    var nUp: Int
    var duplex: String
    var paper: String
    var paperType: String
    var colorMode: String
    var impressions: Int
    var colorImpressions: Int
    var monoImpressions: Int
    var blankImpressions: Int
    var sheets: Int
    var extras: [String]
  }
}
