// SPDX-License-Identifier: Apache-2.0
// ImprintService: the capability routes, each calling the library entry point its command
// calls: `QRSettings.make` (`imprint qr`), `CardRun.render` (`imprint card`, in memory),
// `DocumentSandbox.inspect` (`imprint inspect`), `DocumentSandbox.thumbnails` (`imprint thumb`).

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintHTTP
import ImprintQR

extension ImprintService {
  /// `POST /v1/qr`: a code from the options of a JSON body, or of the query when the body is
  /// empty (`payload`, `payloadType` text/eth/btc, `format` png/svg/pdf/eps, `level`, `module`,
  /// `size`, `dpi`, `quietZone`, `foreground`, `background`, `allowLowContrast`, `caption`,
  /// `captionAddress`, and the payment options `request`, `amount`, `token`, `decimals`,
  /// `chainId`, `gasLimit`, `gasPrice`, `label`, `message`).
  func qr(_ request: HTTPRequest) throws -> HTTPResponse {
    var options: RequestOptions
    if request.body.isEmpty {
      options = try RequestOptions(query: request)
    } else {
      try Self.expect(request, ["application/json"])
      // The options come from one place: a query beside a body would be ignored.
      if let name = request.query.keys.sorted().first {
        throw ServiceError.invalidParameter(
          name: name,
          problem: "is given in the query, but the request has a JSON body; expected the "
            + "options in the body alone, or in the query with an empty body")
      }
      options = try RequestOptions(jsonBody: request)
    }
    guard let text = try options.string("payload") else {
      throw ServiceError.missingParameter(name: "payload", route: request.path)
    }
    let kindName = try options.choice("payloadType", QRPayloadKind.allCases.map(\.shortName))
    let kind = kindName.flatMap(QRPayloadKind.init(shortName:)) ?? .text
    let formats = ["png", "svg", "pdf", "eps"]
    let format = QRFormat(rawValue: try options.choice("format", formats) ?? "png") ?? .png
    // The library reads the options by their names (`QROption`), as `imprint qr` does.
    let read = try QRSettings.read(kind: kind, from: &options)
    try options.finish()
    var settings = read.settings
    settings.style.fonts = configuration.fonts
    // The library's own checks, as `imprint qr` runs them: options that do not apply to the
    // payload or exclude each other (worded as the request's keys), payment options against
    // the kind, ranges and contrast.
    try settings.validate(moduleGiven: read.moduleGiven, refusing: Self.parameterError)
    let (_, rendering) = try settings.make(text, format: format, source: "the payload")
    return HTTPResponse(
      status: 200, contentType: Self.mediaTypes[format.rawValue] ?? "application/octet-stream",
      body: rendering.bytes)
  }

  /// `POST /v1/card`: the card of a profile, as `imprint card` makes it: the profile JSON as
  /// the body, or a multipart body with the parts `profile` (the JSON) and `photo` (an image,
  /// decoded in a worker as `--photo` is; the placeholder without it).
  ///
  /// Query parameters: `template`, `side` (front/back/both), `format` (pdf/png/share),
  /// `locale`, `dpi`, `bleed`, `cropMarks`, `platform`, `allowMissingGlyphs`. A PNG is one
  /// side (front unless `side` says back).
  func card(_ request: HTTPRequest) async throws -> HTTPResponse {
    try Self.expect(request, ["application/json", "multipart/form-data"])
    var profile = request.body
    var photo: FormPart?
    // A profile part's decoding, held from the budget until the card is made.
    var held = 0
    defer { server.release(held) }
    if request.parts != nil {
      let parts = try Self.parts(of: request, known: ["profile", "photo"])
      guard let given = parts["profile"] else {
        throw ServiceError.missingPart(path: request.path, name: "profile")
      }
      held = try takeJSON(given, route: request.path)
      profile = given.bytes
      photo = parts["photo"]
    }
    var options = try RequestOptions(query: request)
    let templateName = try options.string("template") ?? "classic"
    guard let template = templates[templateName] else {
      throw CardError.templateNotFound(name: templateName, available: templates.keys.sorted())
    }
    let format =
      CardRun.Format(
        rawValue: try options.choice("format", CardRun.Format.allCases.map(\.rawValue)) ?? "pdf")
      ?? .pdf
    // The library reads the options by their names (`CardOption`), as `imprint card` does; a
    // PNG is one side, the front unless `side` says back.
    let read = try CardOptions.read(
      from: &options, defaultFaces: format == .png ? [.front] : [.front, .back])
    guard format != .png || read.options.faces.count == 1 else {
      throw ServiceError.invalidParameter(
        name: CardOption.side.names.key,
        problem: "must be front or back with format png: a response is one image")
    }
    var cardOptions = read.options
    cardOptions.fonts = configuration.fonts
    let platform = read.platform
    try options.finish()
    // Options the format does not use are refused, as `imprint card` refuses them.
    if let unused = format.unusedOption(cardOptions, dpiGiven: read.dpiGiven) {
      throw ServiceError.invalidParameter(name: unused.key, problem: unused.appliesTo)
    }
    // Drawn in memory (`CardRun.render`): the bytes `imprint card` writes, without a temporary
    // folder, a file written, read back and removed for every request.
    let card = try await CardRun.render(
      CardRequest(
        profile: "profile.json", inlineProfile: profile,
        photo: photo.map { $0.filename ?? "photo" }, inlinePhoto: photo?.bytes,
        platform: platform),
      format: format, options: cardOptions, template: template, loader: loader)
    return HTTPResponse(
      status: 200, contentType: format == .pdf ? "application/pdf" : "image/png", body: card.bytes)
  }

  /// `POST /v1/inspect`: one document, inspected in a worker as `imprint inspect`.
  ///
  /// The document is the body, or the part `file` of a multipart body; its type is read from
  /// its bytes (PDF or image). `name` names it in the report and messages (default: the
  /// part's file name, else `upload`); `password` opens an encrypted PDF. The answer is
  /// `imprint inspect --json`'s document for that one file; a file that fails is answered with
  /// its error.
  func inspect(_ request: HTTPRequest) async throws -> HTTPResponse {
    let upload = try Self.upload(of: request)
    var options = try RequestOptions(query: request)
    let name = try documentName(&options, upload: upload)
    let password = try options.string("password")
    try options.finish()
    let info = try await sandbox.inspect(bytes: upload.bytes, file: name, password: password)
    return .json(
      FilesReport(files: [InspectEntry(file: name, status: .ok, info: info, error: nil)]))
  }

  /// `POST /v1/thumbnail`: the thumbnail of one page of a document, drawn in a worker as
  /// `imprint thumb` draws it.
  ///
  /// The document is the body, or the part `file` of a multipart body (its type read from its
  /// bytes). Query parameters: `page` (default 1), `size` (the box in pixels, 16 to 2048,
  /// default 256), `format` (png/jpeg), `password`, `name` (for messages; default the part's
  /// file name, else `upload`).
  func thumbnail(_ request: HTTPRequest) async throws -> HTTPResponse {
    let upload = try Self.upload(of: request)
    var options = try RequestOptions(query: request)
    let name = try documentName(&options, upload: upload)
    let password = try options.string("password")
    let page = try options.integer("page", in: 1...1_000_000) ?? 1
    // The library reads size and format by their names (`ThumbnailOption`), as `imprint thumb`.
    let thumbnail = try ThumbnailOptions.read(from: &options)
    let (size, format) = (thumbnail.size, thumbnail.format)
    try options.finish()
    let folder = try RequestFolder()
    let input = folder.path + "/upload"
    try AtomicFile.write(upload.bytes, to: input)
    let written = try await sandbox.thumbnails(
      path: input, file: name, password: password, pages: String(page), size: size,
      format: format, output: folder.path + (format == .png ? "/page.png" : "/page.jpg"))
    // One page asked, one file written: the sandbox throws when it cannot write it.
    guard let file = written.first else {
      throw DocumentError.badOutput(file: name, detail: "the worker wrote no thumbnail")
    }
    return HTTPResponse(
      status: 200, contentType: format == .png ? "image/png" : "image/jpeg",
      body: try FileIO.read(file, limit: FileIO.Limit.image))
  }

  /// `POST /v1/convert`: the PDF LibreOffice makes of an Office upload, the one the other
  /// routes read for the same bytes (kept by the upload's SHA-256), as `imprint convert`.
  ///
  /// The document is the body, or the part `file` of a multipart body (its type read from its
  /// bytes). Query parameters: `password`, `name` (for messages). The answer carries the PDF's
  /// pages and SHA-256 in `X-Imprint-Pages` and `X-Imprint-PDF-SHA256`.
  func convert(_ request: HTTPRequest) async throws -> HTTPResponse {
    let upload = try Self.upload(of: request)
    var options = try RequestOptions(query: request)
    let name = try documentName(&options, upload: upload)
    let password = try options.string("password")
    try options.finish()
    let folder = try RequestFolder()
    let input = folder.path + "/upload"
    try AtomicFile.write(upload.bytes, to: input)
    guard
      let converted = try await sandbox.office.convert(path: input, file: name, password: password)
    else {
      throw DocumentError.notOffice(file: name, found: ContentKind.describe(upload.bytes))
    }
    defer { converted.release() }
    return HTTPResponse(
      status: 200, contentType: "application/pdf",
      body: try FileIO.read(converted.pdf, limit: Int.max),
      headers: [
        ("X-Imprint-Pages", "\(converted.conversion.pages)"),
        ("X-Imprint-PDF-SHA256", converted.conversion.pdfSHA256),
      ])
  }

  /// The name an upload has in a report and in messages: the parameter `name`, else the part's
  /// file name, else `upload`.
  ///
  /// - Throws: `ServiceError.invalidParameter` for a `name` that a part's name could not be
  ///   (control characters, longer than the multipart limit's name bytes), as a part's file name
  ///   is refused.
  func documentName(_ options: inout RequestOptions, upload: (bytes: [UInt8], filename: String?))
    throws(ServiceError) -> String
  {
    guard let name = try options.string("name") else { return upload.filename ?? "upload" }
    let limit = configuration.multipart.maximumNameBytes
    guard configuration.multipart.acceptsName(name) else {
      throw .invalidParameter(
        name: "name",
        problem: "is '\(SafeText.excerpt(name, limit: 100))'; expected at most \(limit) bytes "
          + "without control characters, as a part's file name")
    }
    return name
  }

  /// The declared types of Office documents an upload may carry (the type is read from the
  /// bytes all the same).
  static let officeMediaTypes = [
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/msword", "application/vnd.ms-powerpoint", "application/vnd.ms-excel",
    "application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.presentation",
    "application/vnd.oasis.opendocument.spreadsheet", "application/vnd.oasis.opendocument.graphics",
    "application/rtf", "text/rtf",
  ]

  /// The document a route reads: the body, or the part `file` of a multipart body.
  ///
  /// - Throws: `ServiceError.unsupportedMediaType` for a body of another declared type;
  ///   `ServiceError` for a multipart body without that part or with others.
  static func upload(of request: HTTPRequest) throws(ServiceError) -> (
    bytes: [UInt8], filename: String?
  ) {
    if request.contentType != nil {
      try expect(
        request,
        ["application/pdf", "application/octet-stream", "image/*", "multipart/form-data"]
          + officeMediaTypes)
    }
    guard request.parts != nil else { return (request.body, nil) }
    guard let file = try parts(of: request, known: ["file"])["file"] else {
      throw .missingPart(path: request.path, name: "file")
    }
    return (file.bytes, file.filename)
  }

  /// The parts of a multipart request by name.
  ///
  /// - Parameters:
  ///   - request: the request.
  ///   - known: the names the route reads; nil for any name.
  /// - Returns: each part by its name.
  /// - Throws: `ServiceError.unknownPart` for a name not in `known`;
  ///   `ServiceError.duplicatePart` for a name given twice.
  static func parts(of request: HTTPRequest, known: [String]?) throws(ServiceError)
    -> [String: FormPart]
  {
    var named: [String: FormPart] = [:]
    for part in request.parts ?? [] {
      if let known, !known.contains(part.name) {
        throw .unknownPart(path: request.path, name: part.name, expected: known)
      }
      guard named[part.name] == nil else {
        throw .duplicatePart(path: request.path, name: part.name)
      }
      named[part.name] = part
    }
    return named
  }

  /// Takes a JSON part (an order, a profile) to be decoded: at most `HTTPServer.jsonByteLimit`
  /// bytes, and the work of decoding it taken from the body budget until `release`d.
  ///
  /// - Returns: the bytes of the budget taken.
  /// - Throws: `HTTPError.jsonTooLarge` (413), `.bodiesBusy` (503) when the work does not fit
  ///   beside the bodies held.
  func takeJSON(_ part: FormPart, route: String) throws(HTTPError) -> Int {
    guard part.bytes.count <= HTTPServer.jsonByteLimit else {
      throw .jsonTooLarge(path: route, bytes: part.bytes.count, limit: HTTPServer.jsonByteLimit)
    }
    let work = part.bytes.count * HTTPServer.jsonWorkFactor
    guard server.reserve(work) else {
      throw .bodiesBusy(
        path: route, bytes: part.bytes.count, held: server.bodyBytesHeld, limit: server.bodyBudget)
    }
    return work
  }

  /// The media types of the QR formats.
  static let mediaTypes = [
    "png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf",
    "eps": "application/postscript",
  ]

  /// Refuses a body whose media type is not one of `accepted` (`image/*` accepts any image),
  /// and a JSON body declared in a charset other than UTF-8 (RFC 8259 section 8.1: JSON
  /// exchanged between systems is UTF-8).
  ///
  /// - Throws: `ServiceError.unsupportedMediaType`, `ServiceError.unsupportedCharset`.
  static func expect(_ request: HTTPRequest, _ accepted: [String]) throws(ServiceError) {
    let type = request.contentType ?? ""
    let matches = accepted.contains { pattern in
      pattern.hasSuffix("/*") ? type.hasPrefix(pattern.dropLast()) : type == pattern
    }
    guard matches else {
      throw .unsupportedMediaType(
        path: request.path, found: request.contentType, expected: accepted)
    }
    if type == "application/json", let charset = request.charset, charset != "utf-8" {
      throw .unsupportedCharset(path: request.path, found: charset)
    }
  }

  /// The 400 for a combination of QR options the settings refuse (`QRSettings.conflict`),
  /// naming the request's own keys.
  static func parameterError(_ conflict: QRConflict) -> ServiceError {
    switch conflict {
    case .ethereumOnly(let option):
      .invalidParameter(
        name: option.key, problem: "applies to Ethereum requests (payloadType eth)")
    case .bitcoinOnly(let option):
      .invalidParameter(
        name: option.key, problem: "applies to Bitcoin requests (payloadType btc)")
    case .needsPayment(let option):
      .invalidParameter(name: option.key, problem: "needs payloadType eth or btc")
    case .decimalsWithoutToken:
      .invalidParameter(name: "decimals", problem: "applies to token requests; give token")
    case .captionAndCaptionAddress:
      .invalidParameter(name: "captionAddress", problem: "cannot be combined with caption")
    case .moduleAndSize:
      .invalidParameter(
        name: "module", problem: "cannot be combined with size, which sets the module's size")
    }
  }
}

/// A private folder for one request's files, removed with its contents when released.
final class RequestFolder {
  let path: String

  init() throws(FileError) {
    var template = Array(
      (FileManager.default.temporaryDirectory.path + "/imprint-serve-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else {
      throw .unwritable(path: FileManager.default.temporaryDirectory.path, reason: .system(errno))
    }
    path = made
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}
