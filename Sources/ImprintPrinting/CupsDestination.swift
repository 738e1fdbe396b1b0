// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the owner of a libcups destination (`cups_dest_t`).

internal import CCups
import ImprintCore
import ImprintGraphics

/// A destination made by `cupsGetDestWithURI` or `cupsGetNamedDest`.
///
/// Owns it; freed with `cupsFreeDests` when destroyed.
struct CupsDestination: ~Copyable {
  let raw: UnsafeMutablePointer<cups_dest_t>
  private let handleScope: LiveHandles.Scope?

  /// The destination of the printer at `uri`.
  ///
  /// - Throws: `PrintError.unreachable` when libcups cannot read the URI.
  init(uri: String) throws(PrintError) {
    guard let raw = cups.cupsGetDestWithURI(nil, uri) else {
      throw .cupsUnreachable(uri)
    }
    self.raw = raw
    handleScope = LiveHandles.opened("cups_dest_t")
  }

  /// The queue `queue` as the scheduler at the other end of `connection` describes it.
  ///
  /// - Throws: `PrintError.unknownPrinter` when the scheduler has no such queue,
  ///   `.unauthorized` when it wants credentials to say, `.unreachable` otherwise.
  init(queue: String, _ connection: borrowing CupsConnection, _ session: CupsSession)
    throws(PrintError)
  {
    guard let raw = cups.cupsGetNamedDest(connection.raw, queue, nil) else {
      if cups.cupsLastError() == IPP_STATUS_ERROR_NOT_FOUND {
        throw .unknownPrinter(printer: queue, scheduler: CupsSession.scheduler)
      }
      if let refusal = session.refusal(queue, "looking up the queue") { throw refusal }
      throw .cupsUnreachable(queue)
    }
    self.raw = raw
    handleScope = LiveHandles.opened("cups_dest_t")
  }

  /// The destination's option `name` (`printer-uri-supported`...), if it has one.
  func option(_ name: String) -> String? {
    cups.cupsGetOption(name, raw.pointee.num_options, raw.pointee.options).map {
      String(cString: $0)
    }
  }

  deinit {
    cups.cupsFreeDests(1, raw)
    LiveHandles.closed("cups_dest_t", in: handleScope)
  }
}
