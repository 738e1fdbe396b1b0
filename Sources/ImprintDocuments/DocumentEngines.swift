// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: poppler's, poppler-glib's and qpdf's functions, from the library
// ImprintDocumentEngines (libImprintDocumentEngines.so), loaded when a run first reads a document.

internal import CImprintEngines

/// The functions of poppler, poppler-glib and qpdf that this module calls, and Imprint's C++
/// over them (Splash thumbnails, imposition): one table (`CImprintEngines`).
///
/// `imprint` does not link these libraries: a card or QR run never loads them, which takes 19
/// of its 74 libraries (NSS, GnuTLS, lcms2, OpenJPEG...) out of every start. The table is the
/// one a program links (the CImprintDocumentEngines target: the tests, a backend through the
/// `ImprintDocumentEngines` product), else the library's, found beside the executable or in
/// `../lib/imprint` from it (`IMPRINT_ENGINES` names another file).
package enum DocumentEngines {
  /// Loads the table now, and poppler's global parameters with it, unless done already: before
  /// a program forks its document workers, so that each inherits them.
  ///
  /// - Returns: nil when loaded, else why the library could not be loaded (the paths tried and
  ///   the loader's words).
  @discardableResult
  package static func load() -> String? { loaded }

  private static let loaded: String? = {
    guard let table = CImprintEngines_get() else {
      return String(cString: CImprintEngines_error())
    }
    table.pointee.splash_keep_global_params()
    return nil
  }()

  /// Loads the table unless done already.
  ///
  /// - Throws: `DocumentError.workerCrashed` naming `file`, the library and why it could not be
  ///   loaded (a broken installation): every way into poppler or qpdf asks this first, so that
  ///   no document stops the process (`table` would).
  static func required(file: String) throws(DocumentError) {
    if let problem = load() {
      throw .workerCrashed(
        file: file,
        detail: "Imprint's document engines (libImprintDocumentEngines.so) cannot be loaded: "
          + problem)
    }
  }

  /// Whether loading failed for want of address space (mapping a library met ENOMEM), not for
  /// a missing or foreign library.
  static var failedForMemory: Bool { load() != nil && CImprintEngines_out_of_memory() != 0 }

  /// The table.
  ///
  /// Every way into poppler or qpdf asks `required(file:)` first (the sandbox before it sends a
  /// document to a worker, the worker before it reads one, the office converter, the engine's
  /// own entries), so this never meets a missing library; if it did, it would stop the process
  /// with the loader's words.
  static var table: UnsafePointer<CImprintEngines> {
    guard let table = CImprintEngines_get() else {
      preconditionFailure(
        "Imprint's document engines cannot be loaded (an incomplete installation): "
          + String(cString: CImprintEngines_error()))
    }
    return table
  }
}

/// The document engines' table (`DocumentEngines`), copied once on its first use (after
/// `DocumentEngines.required(file:)`): the page tree's walk calls it for every node.
let engines: CImprintEngines = DocumentEngines.table.pointee
