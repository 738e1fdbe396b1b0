// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: how printers are reached: the CUPS scheduler for queues, and credentials.

import ImprintCore

/// How printers are reached: the CUPS scheduler that holds the queues, and the credentials for
/// printers and schedulers that ask for them.
public struct PrintAccess: Sendable, Equatable {
  /// The scheduler queues are looked up on (`host:port`, `host`, or a socket's path), or nil
  /// for the one libcups is configured for (`CUPS_SERVER`, `client.conf`, the local socket).
  public var scheduler: String?
  /// The user name and password to answer with when asked, or nil to answer none (a printer
  /// that asks is then `print.unauthorized`; libcups never prompts).
  public var credentials: PrintCredentials?

  /// Queues on `scheduler` (nil: libcups' choice), answering with `credentials`.
  public init(scheduler: String? = nil, credentials: PrintCredentials? = nil) {
    self.scheduler = scheduler
    self.credentials = credentials
  }
}
