// SPDX-License-Identifier: Apache-2.0
// ImprintService: the document routes `POST /v1/inspect`, `/v1/thumbnail` and `/v1/convert`,
// through the sandbox `imprint inspect`, `thumb` and `convert` use (`DocumentSandbox`).

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintHTTP

extension ImprintService {
  /// `POST /v1/inspect`: one document, inspected in a worker as `imprint inspect`.
  ///
  /// The document is the body, or the part `file` of a multipart body; its type is read from
  /// its bytes (PDF or image). `name` names it in the report and messages (default: the
  /// part's file name, else `upload`); `password` opens an encrypted PDF. The answer is
  /// `imprint inspect --json`'s document for that one file; a file that fails is answered with
  /// its error.
  func inspect(_ request: HTTPRequest) async throws -> HTTPResponse {
    let (upload, name, password) = try passwordedUpload(of: request)
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
    // The name and password by their names (`InspectOption`), as every document route.
    let asked = try InspectRequest.read(from: &options, offering: InspectOption.request)
    let (name, password) = (try documentName(asked.name, upload: upload), asked.password)
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
    let (upload, name, password) = try passwordedUpload(of: request)
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

  /// The document of a request whose only query parameters are `name` and `password`, its
  /// name (`documentName`) and its password; any other parameter is refused.
  func passwordedUpload(of request: HTTPRequest) throws -> (
    upload: (bytes: [UInt8], filename: String?), name: String, password: String?
  ) {
    let upload = try Self.upload(of: request)
    var options = try RequestOptions(query: request)
    // The library reads the options by their names (`InspectOption`), as `imprint inspect`.
    let asked = try InspectRequest.read(from: &options, offering: InspectOption.request)
    let name = try documentName(asked.name, upload: upload)
    try options.finish()
    return (upload, name, asked.password)
  }

  /// The name an upload has in a report and in messages: the parameter `name` (`given`), else
  /// the part's file name, else `upload`.
  ///
  /// - Throws: `ServiceError.invalidParameter` for a `name` that a part's name could not be
  ///   (control characters, longer than the multipart limit's name bytes), as a part's file name
  ///   is refused.
  func documentName(_ given: String?, upload: (bytes: [UInt8], filename: String?))
    throws(ServiceError) -> String
  {
    guard let name = given else { return upload.filename ?? "upload" }
    let limit = configuration.multipart.maximumNameBytes
    guard configuration.multipart.acceptsName(name) else {
      throw .invalidParameter(
        name: InspectOption.name.names.key,
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
}
