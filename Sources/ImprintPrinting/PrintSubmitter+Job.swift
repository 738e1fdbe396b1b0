// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: one prepared file sent as one job: Create-Job with its ticket's attributes,
// then Send-Document with the PDF.

internal import CCups
import Foundation
import ImprintCore

extension PrintSubmitter {
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

  /// Sends `file` to `target` as one job, and returns its id.
  ///
  /// Create-Job with the ticket's attributes (asked again every 50 ms for up to `busySeconds`
  /// while the printer answers busy), then Send-Document with the PDF. `created` is told the
  /// job's id once the printer created it, before the document is sent (the journal and the
  /// claims record it); when it throws, the job is canceled and the document not sent.
  ///
  /// - Returns: the job's id.
  /// - Throws: `PrintError.refused` or `.unauthorized` (from `session.refusal`) naming the
  ///   file; `FileError` reading it, or what `created` throws.
  static func submit(
    _ file: PreparedFile, busySeconds: Double, _ target: borrowing CupsPrinter,
    _ info: borrowing CupsDestinationInfo, _ session: CupsSession,
    created: (Int) throws -> Void
  ) throws -> Int {
    let (descriptor, _) = try FileIO.openForReading(file.document)
    defer { close(descriptor) }
    var count: Int32 = 0
    var list: UnsafeMutablePointer<cups_option_t>?
    defer { cups.cupsFreeOptions(count, list) }
    for (name, value) in options(file.ticket) {
      count = cups.cupsAddOption(name, value, count, &list)
    }
    let title = file.ticket.document
    let printer = target.name
    let connection = target.connection.raw
    let destination = target.destination.raw
    func refused(_ what: String) -> PrintError {
      session.refusal(printer, what)
        ?? .refused(
          file: file.ticket.file, printer: printer,
          detail: "\(what): \(cups.lastErrorText)")
    }
    var jobID: Int32 = 0
    let deadline = Date().addingTimeInterval(busySeconds.isFinite ? max(0, busySeconds) : 60)
    while true {
      let status = cups.cupsCreateDestJob(
        connection, destination, info.raw, &jobID, title, count, list)
      if isSuccess(status) { break }
      guard status == IPP_STATUS_ERROR_BUSY, Date() < deadline else {
        throw refused("Create-Job")
      }
      usleep(50_000)
    }
    do {
      try created(Int(jobID))
    } catch {
      // Not to be sent (its record could not be written, or this run may not send): the job
      // is canceled rather than left waiting at the printer for a document.
      _ = cups.cupsCancelDestJob(connection, destination, jobID)
      throw error
    }
    guard
      cups.cupsStartDestDocument(
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
      guard cups.cupsWriteRequestData(connection, buffer, read) == HTTP_STATUS_CONTINUE else {
        throw refused("sending the document")
      }
    }
    guard isSuccess(cups.cupsFinishDestDocument(connection, destination, info.raw)) else {
      throw refused("Send-Document")
    }
    return Int(jobID)
  }

  /// Whether an IPP status is one of the successful ones (0x0000-0x00FF).
  static func isSuccess(_ status: ipp_status_t) -> Bool {
    status.rawValue >= 0 && status.rawValue < 0x100
  }
}
