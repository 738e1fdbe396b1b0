// SPDX-License-Identifier: Apache-2.0
// ImprintService: a printer named in the server's configuration (`printers` in --config), the
// only kind of printer a client can have an order sent to.

import ImprintDocuments
import ImprintPrinting

/// A printer of the server's configuration, which `POST /v1/prepare?printer=NAME` names.
///
/// A client names a printer, never an address: the server connects only where its
/// configuration says.
public struct ServicePrinter: Sendable, Equatable {
  /// The printer's IPP URI (`ipp://host:631/ipp/print`, `ipps://...`) or CUPS queue name.
  public var uri: String
  /// The IPP URI or queue name of the printer for monochrome files (a colour split's
  /// monochrome parts), or nil for `uri`.
  public var monoUri: String?
  /// The CUPS scheduler queue names are looked up on (`host:port`, `host` or a socket's path),
  /// or nil for the one libcups is configured for.
  public var scheduler: String?

  /// A printer at `uri`, monochrome files at `monoUri` when given, queues on `scheduler`.
  public init(uri: String, monoUri: String? = nil, scheduler: String? = nil) {
    self.uri = uri
    self.monoUri = monoUri
    self.scheduler = scheduler
  }

  /// The print journal's file name in a prepare job's folder (never served).
  static let journalName = "print-journal.json"

  /// Where files are sent through this printer, answering with `credentials` when asked, and
  /// recorded in `journal`.
  func target(credentials: PrintCredentials?, journal: String) -> PrintTarget {
    var target = PrintTarget(printer: uri, monoPrinter: monoUri, journal: journal)
    target.access = PrintAccess(scheduler: scheduler, credentials: credentials)
    return target
  }
}
