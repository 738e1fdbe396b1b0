// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the owner of what a printer supports (`cups_dinfo_t`).

internal import CCups
import ImprintCore
import ImprintGraphics

/// What a printer supports, from `cupsCopyDestInfo`.
///
/// Owns it; freed with `cupsFreeDestInfo` when destroyed.
struct CupsDestinationInfo: ~Copyable {
  let raw: OpaquePointer
  private let handleScope: LiveHandles.Scope?

  /// The attributes of `printer` (the queue's, through the scheduler, for a queue).
  ///
  /// - Throws: `PrintError.unauthorized`, `.unreachable`.
  init(_ printer: borrowing CupsPrinter, _ session: CupsSession) throws(PrintError) {
    guard let raw = cups.cupsCopyDestInfo(printer.connection.raw, printer.destination.raw) else {
      if let refusal = session.refusal(printer.name, "Get-Printer-Attributes") { throw refusal }
      throw .cupsUnreachable(printer.name)
    }
    self.raw = raw
    handleScope = LiveHandles.opened("cups_dinfo_t")
  }

  deinit {
    cups.cupsFreeDestInfo(raw)
    LiveHandles.closed("cups_dinfo_t", in: handleScope)
  }
}
