// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: a printer to send to: its destination, a connection and its URI.

internal import CCups
import ImprintCore

/// A printer to send to: its destination, a connection (to the device for a URI, to the
/// scheduler for a queue), and the URI requests name it by.
struct CupsPrinter: ~Copyable {
  /// The printer as given (URI or queue name).
  let name: String
  /// The printer's URI for requests: the device's, or the queue's on the scheduler
  /// (`printer-uri-supported`).
  let uri: String
  /// For a queue, the scheduler it is on, as libcups resolved it (`host:port` or a socket's
  /// path); nil for an IPP URI.
  let scheduler: String?
  let destination: CupsDestination
  let connection: CupsConnection

  /// Connects to `printer`: for a queue, to the scheduler first, then asks it for the queue.
  ///
  /// - Throws: `PrintError.unreachable`, `.unknownPrinter`, `.unauthorized`.
  init(_ printer: String, _ session: CupsSession) throws(PrintError) {
    name = printer
    switch try PrinterName(printer) {
    case .device(let uri):
      let destination = try CupsDestination(uri: uri)
      connection = try CupsConnection(toDevice: destination, printer: uri, session)
      self.destination = destination
      self.uri = uri
      scheduler = nil
    case .queue(let queue):
      let connection = try CupsConnection(toSchedulerFor: queue, session)
      destination = try CupsDestination(queue: queue, connection, session)
      self.connection = connection
      uri = destination.option("printer-uri-supported") ?? "ipp://localhost/printers/\(queue)"
      scheduler = CupsSession.scheduler
    }
  }

  /// The printer's `printer-uuid` (Get-Printer-Attributes asking for it alone), or nil when
  /// it reports none or does not answer: a record, never a reason to fail.
  func uuid() -> String? {
    guard let request = cups.ippNewRequest(IPP_OP_GET_PRINTER_ATTRIBUTES) else {
      preconditionFailure("ippNewRequest failed: out of memory")
    }
    cups.ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri", nil, uri)
    cups.ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_KEYWORD, "requested-attributes", nil, "printer-uuid")
    cups.ippAddString(
      request, IPP_TAG_OPERATION, IPP_TAG_NAME, "requesting-user-name", nil, cups.cupsUser())
    // cupsDoRequest frees the request, and returns nil when the printer did not answer.
    guard let raw = cups.cupsDoRequest(connection.raw, request, connection.resource) else {
      return nil
    }
    let response = IPPResponse(owning: raw)
    guard PrintSubmitter.isSuccess(cups.ippGetStatusCode(response.raw)),
      let attribute = cups.ippFindAttribute(response.raw, "printer-uuid", IPP_TAG_URI),
      let value = cups.ippGetString(attribute, 0, nil)
    else { return nil }
    return SafeText.excerpt(String(cString: value), limit: 128)
  }
}
