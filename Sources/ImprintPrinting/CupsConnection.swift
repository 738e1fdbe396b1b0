// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the owner of a libcups connection (`http_t`), to a device or a scheduler.

internal import CCups
import Foundation
import ImprintCore
import ImprintGraphics

/// A connection to a printer: made by `cupsConnectDest` straight to the device, or by
/// `httpConnect2` to the scheduler libcups is set up for.
///
/// Owns it; closed with `httpClose` when destroyed.
struct CupsConnection: ~Copyable {
  let raw: OpaquePointer
  /// The resource path for requests over the connection (`/ipp/print`; `/` on a scheduler).
  let resource: String
  private let handleScope: LiveHandles.Scope?

  /// Connects to `destination`'s device, waiting up to 30 s.
  ///
  /// - Throws: `PrintError.unreachable`.
  init(toDevice destination: borrowing CupsDestination, printer: String, _ session: CupsSession)
    throws(PrintError)
  {
    var resource = [CChar](repeating: 0, count: 1024)
    guard
      let raw = cups.cupsConnectDest(
        destination.raw, UInt32(CUPS_DEST_FLAGS_DEVICE), 30_000, nil, &resource, resource.count,
        nil, nil)
    else {
      throw .cupsUnreachable(printer)
    }
    self.raw = raw
    self.resource = resource.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.map { String(cString: $0) } ?? "/"
    }
    session.opened(raw)
    handleScope = LiveHandles.opened("http_t")
  }

  /// Connects to the scheduler for `queue`, waiting up to 30 s.
  ///
  /// The scheduler is libcups' (`cupsServer()`, `ippPort()`, `cupsEncryption()`). The connection has the scheduler's own name and port, so that
  /// `cupsCopyDestInfo` asks the queue, not its device.
  ///
  /// - Throws: `PrintError.unreachable` naming the scheduler.
  init(toSchedulerFor queue: String, _ session: CupsSession) throws(PrintError) {
    guard
      let raw = cups.httpConnect2(
        cups.cupsServer(), cups.ippPort(), nil, AF_UNSPEC, cups.cupsEncryption(), 1, 30_000, nil)
    else {
      throw .unreachable(
        printer: queue,
        detail: "the CUPS scheduler at '\(CupsSession.scheduler)' does not answer: "
          + cups.lastErrorText)
    }
    self.raw = raw
    resource = "/"
    session.opened(raw)
    handleScope = LiveHandles.opened("http_t")
  }

  deinit {
    cups.httpClose(raw)
    LiveHandles.closed("http_t", in: handleScope)
  }
}
