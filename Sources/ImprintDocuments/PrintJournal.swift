// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the record of prepared files sent to printers, so that a run started again
// never sends a file twice.

import Foundation
import ImprintCore

/// The files of an order sent to printers, kept in a JSON file so that a run started again
/// (a batch resumed after a failure or a kill) never prints a file twice.
///
/// A file is known by the SHA-256 of its bytes and of its ticket's IPP attributes, and by the
/// printer: the same file with the same ticket is sent to a printer once; a changed file or
/// ticket is a new print. Each entry is written, and flushed to the disk, twice: when the
/// printer has created the job (the document not yet sent) and when it has accepted the whole
/// document. An entry left at the first step (a run killed while sending) cannot say whether
/// the printer printed: `PrintSubmitter` refuses to send that file again on a guess
/// (`DocumentError.printUnconfirmed`).
///
/// Not Sendable: one journal belongs to one submission.
public final class PrintJournal {
  /// One file sent to one printer.
  public struct Entry: Codable, Sendable, Equatable {
    /// The print-ready PDF's file name.
    public var document: String
    /// SHA-256 (hex) of the PDF's bytes and its ticket's IPP attributes.
    public var digest: String
    /// The printer.
    public var printer: String
    /// The job's id on that printer.
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
  }

  /// The file's contents.
  private struct Contents: Codable {
    var schemaVersion = 1
    var entries: [Entry]
  }

  /// The journal's path.
  public let path: String
  /// The entries, oldest first.
  public private(set) var entries: [Entry]

  /// The journal at `path`: its entries when the file exists, none otherwise.
  ///
  /// - Throws: `DocumentError.printJournalDamaged` when the file exists but is not a journal
  ///   (never ignored: a lost entry could print a file twice); `FileError` reading it.
  public init(path: String) throws {
    self.path = path
    guard FileManager.default.fileExists(atPath: path) else {
      entries = []
      return
    }
    let bytes = try FileIO.read(path, limit: FileIO.Limit.structured)
    do {
      let contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
      guard contents.schemaVersion == 1 else {
        throw DocumentError.printJournalDamaged(
          path: path, reason: "schemaVersion \(contents.schemaVersion), expected 1")
      }
      entries = contents.entries
    } catch let error as DocumentError {
      throw error
    } catch {
      throw DocumentError.printJournalDamaged(path: path, reason: "not a print journal")
    }
  }

  /// The entry of the file with `digest` on `printer`, if it was sent there.
  public func entry(digest: String, printer: String) -> Entry? {
    entries.last { $0.digest == digest && $0.printer == printer }
  }

  /// The entry of job `jobID` on `printer`, if any.
  public func entry(jobID: Int, printer: String) -> Entry? {
    entries.last { $0.jobID == jobID && $0.printer == printer }
  }

  /// Adds `entry`, replacing the one of the same file and printer, and writes the journal
  /// atomically, flushed to the disk before this returns (even in a bulk run that defers its
  /// outputs' flushing: an entry lost to a power cut could print a file twice).
  ///
  /// - Throws: `FileError` when the journal cannot be written (the entry is kept in memory).
  public func record(_ entry: Entry) throws(FileError) {
    entries.removeAll { $0.digest == entry.digest && $0.printer == entry.printer }
    entries.append(entry)
    let bytes = Array(JSONOutput.pretty(Contents(entries: entries)).utf8)
    do {
      try AtomicFile.$flushEachFile.withValue(true) { try AtomicFile.write(bytes, to: path) }
    } catch let error as FileError {
      throw error
    } catch {
      preconditionFailure("AtomicFile.write throws FileError only")
    }
  }

  /// SHA-256 (hex) of a prepared file's bytes, streamed, and of its ticket's IPP attributes.
  ///
  /// - Parameters:
  ///   - document: the print-ready PDF.
  ///   - attributes: its ticket's IPP attributes.
  /// - Returns: the digest, 64 lowercase hex digits.
  /// - Throws: `FileError` reading the file.
  public static func digest(document: String, attributes: IPPJobAttributes) throws(FileError)
    -> String
  {
    var hash = SHA256()
    let (descriptor, _) = try FileIO.openForReading(document)
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else {
        throw .unreadable(path: document, reason: .system(errno))
      }
      if count == 0 { break }
      hash.update(buffer[0..<count])
    }
    hash.update(Array(JSONOutput.line(attributes).utf8))
    return hash.finish().map { String(format: "%02x", $0) }.joined()
  }
}
