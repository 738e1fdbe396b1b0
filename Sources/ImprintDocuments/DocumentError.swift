// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: every way an upload can fail, each with its own code and the file's name.

import ImprintCore
import ImprintGraphics

/// An uploaded file that cannot be counted, measured or rendered.
public enum DocumentError: ImprintError, Equatable, Codable {
  /// The file is empty.
  case empty(file: String)
  /// The content is not a PDF or an image type Imprint reads (whatever its name says).
  case unsupportedType(file: String, found: String)
  /// poppler cannot read the PDF (truncated, broken cross-reference table); `cause` is
  /// poppler's report.
  case damaged(file: String, reason: String, cause: PDFOpenFailure? = nil)
  /// The PDF needs a password, or the one given is wrong.
  case encrypted(file: String, passwordGiven: Bool)
  /// The PDF has no pages.
  case noPages(file: String)
  /// The page tree's `/Count` disagrees with the pages it holds.
  /// `declared` is nil when the file's /Count cannot be read (a number past 64 bits).
  case countMismatch(file: String, declared: Int?, found: Int)
  /// The page tree loops back on itself.
  case pageTreeCycle(file: String)
  /// The cross-reference table is broken (readers would have to guess where objects are).
  case brokenXref(file: String)
  /// A page holds an image that expands to more memory than Imprint decodes.
  case imageBomb(file: String, page: Int, width: Int, height: Int, megabytes: Int, maximumMB: Int)
  /// A page is larger than Imprint renders.
  case pageTooLarge(file: String, page: Int, widthMM: Double, heightMM: Double, maximumMM: Double)
  /// A page box is empty or negative.
  case emptyPage(file: String, page: Int)
  /// An uploaded image that cannot be used (too large, damaged): the image error's own code,
  /// message and hint (`image.tooLarge`, `image.damaged`).
  case image(ImageError)
  /// A page range that is not `1`, `all` or ranges like `1-3,5`.
  case badPageRange(file: String, range: String)
  /// A requested page does not exist.
  case pageOutOfRange(file: String, page: Int, pages: Int)
  /// The worker used more CPU time than allowed for one file.
  case cpuLimit(file: String, seconds: Int)
  /// The worker needed more memory than allowed.
  case memoryLimit(file: String, megabytes: Int)
  /// The file took longer than the wall-clock limit.
  case timeout(file: String, seconds: Double)
  /// The work on the file was canceled (its task was: a server's request whose client left or
  /// that the server's stop cut short, a job canceled or past its limits) and its worker killed.
  case canceled(file: String)
  /// The file changed or was truncated while the worker was reading it (SIGBUS on its mapping).
  case fileChanged(file: String)
  /// The worker process died while handling the file.
  case workerCrashed(file: String, detail: String)
  /// A rendered image does not have the size that was asked for, or could not be drawn or
  /// encoded (`cause`, when the drawing library failed).
  case badOutput(file: String, detail: String, cause: GraphicsError? = nil)
  /// The file has another number of pages than when it was quoted.
  case changedSinceQuote(file: String, quotedPages: Int, pages: Int)
  /// libqpdf could not place the pages on sheets or write them (`reason` is its text).
  case prepareFailed(file: String, reason: String)
  /// The PDF's permissions forbid printing.
  case printNotAllowed(file: String)
  /// The prepared file holds another number of sheet sides than the quote counted.
  case impressionsMismatch(file: String, quoted: Int, prepared: Int)
  /// Previews were asked for at a size outside `OrderPreparer.previewSizes` (ImprintPrinting).
  case previewSize(size: Int)
  /// An Office document cannot be converted here: LibreOffice or its Python bridge is missing.
  case officeUnavailable(detail: String)
  /// LibreOffice cannot read the Office document (damaged, or not what it looks like).
  case officeUnreadable(file: String)
  /// The Office document needs a password, or the one given is wrong.
  case officeEncrypted(file: String, passwordGiven: Bool)
  /// LibreOffice read the Office document but made no usable PDF of it.
  case conversionFailed(file: String, detail: String)
  /// The converted document has more pages than the limit.
  case tooManyPages(file: String, pages: Int, maximum: Int)
  /// `convert` was given a file that is not an Office document.
  case notOffice(file: String, found: String)
  /// An Office file's container cannot be read: a ZIP archive without its central directory (a
  /// file cut short), a Compound File whose header or directory is broken.
  case officeDamaged(file: String, container: OfficeContainer)

  public var code: String {
    switch self {
    case .empty: "document.empty"
    case .unsupportedType: "document.unsupportedType"
    case .damaged: "pdf.damaged"
    case .encrypted: "pdf.encrypted"
    case .noPages: "pdf.noPages"
    case .countMismatch: "pdf.countMismatch"
    case .pageTreeCycle: "pdf.pageTreeCycle"
    case .brokenXref: "pdf.brokenXref"
    case .imageBomb: "pdf.imageTooLarge"
    case .pageTooLarge: "pdf.pageTooLarge"
    case .emptyPage: "pdf.emptyPage"
    case .image(let error): error.code
    case .badPageRange: "document.badPageRange"
    case .pageOutOfRange: "document.pageOutOfRange"
    case .cpuLimit: "document.cpuLimit"
    case .memoryLimit: "document.memoryLimit"
    case .timeout: "document.timeout"
    case .canceled: "document.canceled"
    case .fileChanged: "document.fileChanged"
    case .workerCrashed: "document.workerCrashed"
    case .badOutput: "document.badOutput"
    case .changedSinceQuote: "document.changedSinceQuote"
    case .prepareFailed: "pdf.prepareFailed"
    case .printNotAllowed: "pdf.printNotAllowed"
    case .impressionsMismatch: "document.impressionsMismatch"
    case .previewSize: "document.previewSize"
    case .officeUnavailable: "document.officeUnavailable"
    case .officeUnreadable: "document.officeUnreadable"
    case .officeEncrypted: "document.encrypted"
    case .conversionFailed: "document.conversionFailed"
    case .tooManyPages: "document.tooManyPages"
    case .notOffice: "document.notOffice"
    case .officeDamaged: "document.officeDamaged"
    }
  }

  /// 503 without LibreOffice (not the request's fault, and not one a retry mends), the image
  /// error's own for an image, 422 for the rest: a document understood and refused.
  public var status: Int {
    switch self {
    case .officeUnavailable: 503
    case .image(let error): error.status
    case .empty, .unsupportedType, .damaged, .encrypted, .noPages, .countMismatch,
      .pageTreeCycle, .brokenXref, .imageBomb, .pageTooLarge, .emptyPage, .badPageRange,
      .pageOutOfRange, .cpuLimit, .memoryLimit, .timeout, .canceled, .fileChanged,
      .workerCrashed, .badOutput, .changedSinceQuote, .prepareFailed, .printNotAllowed,
      .impressionsMismatch, .previewSize, .officeUnreadable, .officeEncrypted,
      .conversionFailed, .tooManyPages, .notOffice, .officeDamaged:
      422
    }
  }

  /// A page's size for a message: `210 x 297 mm`; a side larger than any paper (1e30 points,
  /// infinity) is "over 1000 m", not a 309-digit number, and never followed by "mm"
  /// (`over 1000 m x 5 mm`, `over 1000 m a side`).
  static func pageSize(width: Double, height: Double) -> String {
    func huge(_ value: Double) -> Bool { !value.isFinite || value.magnitude >= 1e6 }
    func millimetres(_ value: Double) -> String { Formatting.number(value.rounded()) }
    switch (huge(width), huge(height)) {
    case (false, false): return "\(millimetres(width)) x \(millimetres(height)) mm"
    case (true, true): return "over 1000 m a side"
    case (true, false): return "over 1000 m x \(millimetres(height)) mm"
    case (false, true): return "\(millimetres(width)) mm x over 1000 m"
    }
  }

  public var message: String {
    switch self {
    case .empty(let file): "'\(file)' is empty"
    case .unsupportedType(let file, let found):
      "'\(file)' is not a PDF, an Office document or a \(ImageType.accepted) image: it looks "
        + "like \(found)"
    case .damaged(let file, let reason, _): "pdf '\(file)' is damaged (poppler: \(reason))"
    case .encrypted(let file, let given):
      given ? "pdf '\(file)' is encrypted and the password is wrong" : "pdf '\(file)' is encrypted"
    case .noPages(let file): "pdf '\(file)' has no pages"
    case .countMismatch(let file, let declared?, let found):
      "pdf '\(file)' declares \(declared) pages (/Count) but its page tree holds \(found)"
    case .countMismatch(let file, nil, let found):
      "pdf '\(file)' has no readable page count (/Count) but its page tree holds \(found)"
    case .pageTreeCycle(let file): "pdf '\(file)' has a page tree that loops back on itself"
    case .brokenXref(let file):
      "pdf '\(file)' has a broken cross-reference table (qpdf had to rebuild it)"
    case .imageBomb(let file, let page, let width, let height, let megabytes, let maximum):
      "pdf '\(file)' page \(page) holds a \(width) x \(height) image that expands to \(megabytes) MB; "
        + "at most \(maximum) MB is decoded"
    case .pageTooLarge(let file, let page, let width, let height, let maximum):
      // Sizes come from the file (1e30 points, infinity): formatted, never converted to Int.
      "pdf '\(file)' page \(page) is \(Self.pageSize(width: width, height: height)); "
        + "at most \(Formatting.number(maximum)) mm a side is rendered"
    case .emptyPage(let file, let page):
      "pdf '\(file)' page \(page) has an empty or negative page box"
    case .image(let error): error.message
    case .badPageRange(let file, let range):
      "'\(range)' is not a page range for '\(file)'; expected 1, all, or ranges like 1-3,5,8-"
    case .pageOutOfRange(let file, let page, let pages):
      "'\(file)' has \(pages) page\(pages == 1 ? "" : "s"); page \(page) does not exist"
    case .cpuLimit(let file, let seconds):
      "'\(file)' needed more than \(seconds) s of CPU time and was stopped"
    case .memoryLimit(let file, let megabytes) where megabytes <= 0:
      "'\(file)' needed more memory than is available and was stopped"
    case .memoryLimit(let file, let megabytes):
      "'\(file)' needed more than \(megabytes) MB of memory and was stopped"
    case .timeout(let file, let seconds):
      "'\(file)' took longer than \(Formatting.number(seconds)) s and was stopped"
    case .fileChanged(let file):
      "'\(file)' changed or was truncated while it was being read"
    case .canceled(let file):
      "the work on '\(file)' was canceled and its worker stopped"
    case .workerCrashed(let file, let detail): "the worker reading '\(file)' crashed (\(detail))"
    case .badOutput(let file, let detail, _): "the thumbnail of '\(file)' is wrong (\(detail))"
    case .changedSinceQuote(let file, let quoted, let pages):
      "'\(file)' had \(quoted) page\(quoted == 1 ? "" : "s") when it was quoted and has \(pages) now"
    case .prepareFailed(let file, let reason):
      "pdf '\(file)' could not be prepared for print (qpdf: \(reason))"
    case .printNotAllowed(let file): "pdf '\(file)' does not allow printing (its permissions)"
    case .impressionsMismatch(let file, let quoted, let prepared):
      "the print-ready file of '\(file)' has \(prepared) sheet sides; the quote counted \(quoted)"
    case .previewSize(let size):
      "a preview size of \(size) px is outside \(DocumentSandbox.previewSizes.lowerBound) to "
        + "\(DocumentSandbox.previewSizes.upperBound) px"
    case .officeUnavailable(let detail): "Office documents cannot be converted here: \(detail)"
    case .officeUnreadable(let file):
      "LibreOffice cannot read '\(file)' (damaged, or not the Office document it looks like)"
    case .officeEncrypted(let file, let given):
      given
        ? "'\(file)' is protected by a password and the one given is wrong"
        : "'\(file)' is protected by a password"
    case .conversionFailed(let file, let detail):
      "'\(file)' could not be converted to PDF (\(detail))"
    case .tooManyPages(let file, let pages, let maximum):
      "'\(file)' converts to \(pages) pages; at most \(maximum) are accepted"
    case .notOffice(let file, let found):
      "'\(file)' is not a Word, Excel, PowerPoint, OpenDocument or RTF document: it looks like "
        + "\(found)"
    case .officeDamaged(let file, .zip):
      "'\(file)' is a damaged Office file: a ZIP archive whose list of entries, at its end, "
        + "cannot be read (missing, broken or too long; the file may be cut short)"
    case .officeDamaged(let file, .compound):
      "'\(file)' is a damaged Office file: a Compound File (an old Word, Excel or PowerPoint "
        + "file) whose header or directory is broken (the file may be cut short)"
    }
  }

  public var hint: String? {
    switch self {
    case .encrypted, .officeEncrypted:
      ErrorSurface.hint(
        "pass --password or remove the protection",
        http: "send the password as the query parameter 'password', or remove the protection")
    case .damaged: "export or print the document to PDF again"
    case .countMismatch, .pageTreeCycle, .brokenXref:
      "the file is malformed; export it to PDF again"
    case .unsupportedType(_, let found) where found.contains("Hangul"):
      "LibreOffice cannot read HWP or HWPX here: in Hancom Office, save the document as PDF "
        + "(File > Save As > PDF) and upload the PDF"
    case .unsupportedType:
      "upload a PDF, an Office document (Word, Excel, PowerPoint, OpenDocument, RTF) or a "
        + "JPEG, PNG, HEIF, WebP, TIFF or GIF image"
    case .fileChanged: "read the file again once it has been written completely"
    case .cpuLimit, .memoryLimit, .timeout:
      ErrorSurface.hint(
        "the limits are adjustable (--cpu-limit, --memory-limit, --timeout)",
        http: "the server's limits are its operator's to set; send a smaller or simpler file")
    case .image(let error): error.hint
    case .changedSinceQuote: "quote the order again"
    case .prepareFailed: "export or print the document to PDF again"
    case .printNotAllowed: "ask the author for a copy that allows printing"
    case .previewSize: "previews fit a square box; give its side in pixels"
    case .officeUnavailable:
      "install LibreOffice and its Python bridge (scripts/bootstrap, or the packages "
        + "libreoffice-core-nogui, libreoffice-writer-nogui, libreoffice-calc-nogui, "
        + "libreoffice-impress-nogui, python3-uno and python3-seccomp)"
    case .officeUnreadable, .conversionFailed:
      "open it in its application and save or export it again (a PDF is read directly)"
    case .tooManyPages: "split the document, or send the pages to print as a PDF"
    case .officeDamaged:
      "copy or upload the file again (it may have been cut short on its way), or open it in "
        + "its application and save it again"
    case .notOffice: "a PDF or an image is read as it is: inspect, thumb and quote take it directly"
    default: nil
    }
  }

  /// What the drawing library reported, for a thumbnail it could not draw or encode.
  public var underlying: (any Error)? {
    switch self {
    case .badOutput(_, _, let cause?): cause
    case .damaged(_, _, let cause?): cause
    case .image(let error): error.underlying
    default: nil
    }
  }
}

/// The container an Office file is packed in.
public enum OfficeContainer: String, Sendable, Codable {
  /// A ZIP archive: OOXML (DOCX, XLSX, PPTX), OpenDocument, HWPX.
  case zip
  /// A Compound File (OLE2): DOC, XLS, PPT, HWP, a password-protected OOXML file.
  case compound
}
