// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: a printer as given, an IPP URI or a CUPS queue's name, checked without
// asking anyone.

import ImprintCore

/// A printer as given: an IPP URI, sent to directly, or a CUPS queue's name, sent to through
/// the scheduler.
enum PrinterName: Equatable {
  case device(String)
  case queue(String)

  /// The longest queue name CUPS accepts, in bytes.
  static let maximumQueueLength = 127

  /// `printer` read as a URI or a queue name.
  ///
  /// - Throws: `PrintError.unreachable` when it is neither (another scheme; a name
  ///   with characters `lpadmin` refuses: controls, spaces, `/ \ ? ' " #`, or `@`, which
  ///   would name another server).
  init(_ printer: String) throws(PrintError) {
    if printer.hasPrefix("ipp://") || printer.hasPrefix("ipps://") {
      // A user name or password in the URI would be shown in reports, journals and messages:
      // credentials come from a password file. The URI is named without them.
      let scheme = printer.hasPrefix("ipp://") ? "ipp://" : "ipps://"
      let rest = printer.dropFirst(scheme.count)
      let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
      if let at = authority.lastIndex(of: "@") {
        throw .unreachable(
          printer: SafeText.excerpt(scheme + rest[rest.index(after: at)...]),
          detail: "the URI holds a user name or password; give them with --password-file")
      }
      self = .device(printer)
      return
    }
    let shown = SafeText.excerpt(printer)
    if printer.contains("://") {
      throw .unreachable(
        printer: shown, detail: "not an ipp:// or ipps:// URI, nor a CUPS queue name")
    }
    let refused = Set("/\\?'\"#@".utf8)
    guard (1...Self.maximumQueueLength).contains(printer.utf8.count),
      printer.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !refused.contains($0) })
    else {
      throw .unreachable(
        printer: shown,
        detail: "not an ipp:// or ipps:// URI, nor a CUPS queue name (1 to 127 bytes, without "
          + "spaces, control characters or / \\ ? ' \" # @)")
    }
    self = .queue(printer)
  }
}
