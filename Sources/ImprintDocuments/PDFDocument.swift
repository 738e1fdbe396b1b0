// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: PDF files opened with poppler-glib, one document per task.

internal import CImprintEngines
internal import CPango
import ImprintCore
import ImprintGraphics

/// Why poppler could not open a PDF: poppler's own report, the cause of a `DocumentError`
/// (`pdf.encrypted`, `pdf.damaged`) that names the file.
public enum PDFOpenFailure: ImprintError, Equatable, Codable {
  /// The file needs a password (or the one given is wrong).
  case encrypted
  /// The file is damaged beyond poppler's repair (truncated, broken xref).
  case damaged(String)
  /// Another failure (bad catalog, not a PDF).
  case invalid(String)

  public var code: String {
    switch self {
    case .encrypted: "poppler.encrypted"
    case .damaged: "poppler.damaged"
    case .invalid: "poppler.invalid"
    }
  }

  /// 422: a PDF poppler refused.
  public var status: Int {
    switch self {
    case .encrypted, .damaged, .invalid: 422
    }
  }

  public var message: String {
    switch self {
    case .encrypted: "poppler cannot open the document without its password"
    case .damaged(let text), .invalid(let text): "poppler cannot open the document (\(text))"
    }
  }
}

/// What the page checks read of an opened PDF (`DocumentEngine.checkPageTree`): poppler's page
/// count and each page's size, from poppler-glib (`PDFDocument`) or poppler's own classes
/// (`SplashDocument`, which thumbnails open alone).
protocol PDFPages: ~Copyable {
  /// The number of pages poppler reads (it trusts `/Count`).
  var pageCount: Int { get }
  /// The page's size in points as displayed (`/Rotate` applied), or nil for a missing page.
  func pageSize(_ index: Int) -> Size?
}

/// A PDF opened from bytes with poppler-glib.
///
/// Owns one `PopplerDocument` (released when destroyed). Never shared across tasks: poppler
/// documents are not thread-safe; open one per task from the same immutable bytes.
public struct PDFDocument: PDFPages, ~Copyable {
  private let raw: OpaquePointer
  private let handleScope: LiveHandles.Scope?

  /// Opens a PDF held in memory (`poppler_document_new_from_bytes`; poppler holds `data`, not
  /// a copy, for as long as the document lives).
  ///
  /// - Throws: `PDFOpenFailure` with poppler's message.
  public init(data: DocumentBytes, password: String?) throws(PDFOpenFailure) {
    _ = PDFDocument.globalState
    let holder = Unmanaged.passRetained(data).toOpaque()
    let gbytes = g_bytes_new_with_free_func(
      data.buffer.baseAddress, gsize(data.count),
      { holder in
        guard let holder else { return }
        Unmanaged<DocumentBytes>.fromOpaque(holder).release()
      }, holder)
    defer { g_bytes_unref(gbytes) }
    var error: UnsafeMutablePointer<GError>?
    let document = engines.poppler_document_new_from_bytes(gbytes, password, &error)
    guard let document else {
      let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
      let code = error?.pointee.code ?? -1
      if let error { g_error_free(error) }
      switch code {
      case engines.poppler_error_encrypted: throw .encrypted
      case engines.poppler_error_damaged: throw .damaged(message)
      default: throw .invalid(message)
      }
    }
    raw = document
    handleScope = LiveHandles.opened("PopplerDocument")
  }

  deinit {
    g_object_unref(UnsafeMutableRawPointer(raw))
    LiveHandles.closed("PopplerDocument", in: handleScope)
  }

  /// Sets up poppler's process-wide state once.
  ///
  /// poppler creates its global parameters when the first document is opened; doing that once,
  /// under the runtime's lock (a `static let`), keeps two first documents from racing on it.
  private static let globalState: Void = {
    // Made once a process: each document would otherwise make them again whenever no other
    // was open (`CImprintSplash_keep_global_params`).
    engines.splash_keep_global_params()
    let minimal = Array(
      "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
        .utf8)
    let gbytes = minimal.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
    var error: UnsafeMutablePointer<GError>?
    if let document = engines.poppler_document_new_from_bytes(gbytes, nil, &error) {
      g_object_unref(UnsafeMutableRawPointer(document))
    }
    if let error { g_error_free(error) }
    g_bytes_unref(gbytes)
  }()

  /// The number of pages poppler reports (from the page tree's `/Count`).
  public var pageCount: Int { Int(engines.poppler_document_get_n_pages(raw)) }

  /// Whether the document allows printing (`OK_TO_PRINT`).
  public var printAllowed: Bool {
    engines.poppler_document_permissions(raw) & engines.poppler_permission_print != 0
  }

  /// The page's size in points as displayed (`/Rotate` applied), or nil for a missing page.
  public func pageSize(_ index: Int) -> Size? {
    guard let page = engines.poppler_document_get_page(raw, Int32(index)) else { return nil }
    defer { g_object_unref(UnsafeMutableRawPointer(page)) }
    var width = 0.0
    var height = 0.0
    engines.poppler_page_get_size(page, &width, &height)
    return Size(width: width, height: height)
  }

  /// Renders page `index` (0-based) onto `canvas`, whose transform maps points to pixels.
  ///
  /// The canvas must already be white: poppler does not paint the paper. The canvas lends its
  /// cairo context for the call (`package` access: cairo stays ImprintGraphics' own).
  ///
  /// - Parameters:
  ///   - index: the page, 0-based.
  ///   - canvas: where it is drawn.
  ///   - printing: as a screen shows it (`poppler_page_render`: every annotation a viewer
  ///     shows, link boxes included) or as poppler prints it
  ///     (`poppler_page_render_for_printing`: annotations only with their print flag, optional
  ///     content by its print state).
  /// - Returns: false when the page does not exist.
  public func render(page index: Int, on canvas: borrowing Canvas, printing: Bool = false) -> Bool {
    guard let page = engines.poppler_document_get_page(raw, Int32(index)) else { return false }
    defer { g_object_unref(UnsafeMutableRawPointer(page)) }
    canvas.withUnsafeCairoContext {
      if printing {
        engines.poppler_page_render_for_printing(page, $0)
      } else {
        engines.poppler_page_render(page, $0)
      }
    }
    return true
  }
}
