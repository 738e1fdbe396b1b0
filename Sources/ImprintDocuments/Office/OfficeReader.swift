// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: an Office upload read as the PDF LibreOffice makes of it, once: the
// sandbox's inspect, thumbnails and print-ready files of the same upload read the same PDF.

import Foundation
import ImprintCore
import Synchronization

/// An Office upload converted: the PDF to read in its place.
public struct ConvertedUpload: Sendable {
  /// The PDF (in the conversion cache, or a temporary file `release` removes).
  public let pdf: String
  /// The upload's type, from its bytes.
  public let type: DocumentType
  /// What the conversion made.
  public let conversion: OfficeConversion
  let temporary: Bool

  /// Removes the PDF when it is a temporary file (not a cache entry).
  public func release() {
    if temporary { unlink(pdf) }
  }
}

/// Converts Office uploads for a `DocumentSandbox` (and anyone else), through one
/// `OfficeConverter` started on first use and a `ConversionCache` when one can be opened.
public final class OfficeReader: Sendable {
  /// The converter's limits.
  public let limits: OfficeLimits
  private let workers: Int
  private let converter = Mutex<OfficeConverter?>(nil)
  /// The cache, opened on the first Office upload (a sandbox that never sees one makes no
  /// folder): nil until then, `.some(nil)` when none can be opened.
  private let cache: Mutex<ConversionCache??>
  private let openCache: @Sendable () -> ConversionCache?

  /// A reader converting with up to `workers` office workers under `limits`, keeping PDFs in
  /// `cache` (none: each conversion is a temporary file, made again for the next request).
  public init(limits: OfficeLimits = OfficeLimits(), workers: Int = 1, cache: ConversionCache?) {
    self.limits = limits
    self.workers = max(1, workers)
    self.cache = Mutex(.some(cache))
    openCache = { cache }
  }

  /// A reader with `limits`, one office worker and the cache in
  /// `ConversionCache.defaultFolder`, made on the first Office upload (none when that folder
  /// cannot be made).
  public init(limits: OfficeLimits = OfficeLimits(), cachingIn folder: String) {
    self.limits = limits
    workers = 1
    cache = Mutex(nil)
    openCache = { try? ConversionCache(folder: folder) }
  }

  /// A reader with the default limits, one office worker and the cache in
  /// `ConversionCache.defaultFolder` (opened on the first Office upload).
  public static func standard() -> OfficeReader {
    OfficeReader(cachingIn: ConversionCache.defaultFolder)
  }

  /// Converts the Office document at `path` and writes its PDF to `output` (atomically; never
  /// over the input): what `imprint convert` does.
  ///
  /// - Returns: the upload's type and the conversion written.
  /// - Throws: `FileError.outputIsInput`; `DocumentError.notOffice` for a file that is no Office
  ///   document (a PDF or an image is read as it is); what `convert(path:file:password:)`
  ///   throws; `FileError` when the output cannot be written.
  public func write(path: String, file: String, password: String?, to output: String)
    async throws -> (type: DocumentType, conversion: OfficeConversion)
  {
    if FileIdentities([path]).contains(output) { throw FileError.outputIsInput(path: output) }
    guard let converted = try await convert(path: path, file: file, password: password) else {
      let (descriptor, _) = try FileIO.openForReading(path)
      defer { close(descriptor) }
      var head = [UInt8](repeating: 0, count: 512)
      let count = read(descriptor, &head, head.count)
      throw DocumentError.notOffice(
        file: file, found: ContentKind.describe(head.prefix(max(0, count))))
    }
    defer { converted.release() }
    try AtomicFile.write(try FileIO.read(converted.pdf, limit: Int.max), to: output)
    return (converted.type, converted.conversion)
  }

  deinit { converter.withLock { $0?.stop() } }

  /// Stops the office workers (a later conversion starts them again).
  public func stop() {
    converter.withLock { converter in
      converter?.stop()
      converter = nil
    }
  }

  /// The converted PDF of the file at `path` when its bytes are an Office document; nil when
  /// they are not (a PDF, an image, anything else is read as before).
  ///
  /// - Throws: `DocumentError`: `.unsupportedType` for HWP and HWPX (no converter reads them
  ///   here), what `OfficeConverter.convert` throws, `FileError` for an unreadable file.
  public func convert(path: String, file: String, password: String?) throws -> ConvertedUpload? {
    guard let (bytes, type) = try office(path: path, file: file) else { return nil }
    return try convert(bytes, type: type, path: path, file: file, password: password)
  }

  /// The file at `path` mapped, when its bytes are an Office document, with its type (nil for
  /// a password-protected OOXML package, which hides it); nil when they are not one.
  ///
  /// - Throws: `DocumentError.unsupportedType` for HWP and HWPX and for a ZIP archive or
  ///   Compound File holding no Office document, `.officeDamaged` for one that cannot be read;
  ///   `FileError`.
  private func office(path: String, file: String) throws -> (DocumentBytes, DocumentType?)? {
    let bytes = try DocumentBytes(mapping: path)
    switch OfficeSniff.sniff(bytes) {
    case .office(let office): return (bytes, DocumentType(office))
    case .encryptedOffice: return (bytes, nil)
    case .hwp:
      throw DocumentError.unsupportedType(file: file, found: "a Hangul (HWP) document")
    case .hwpx:
      throw DocumentError.unsupportedType(file: file, found: "a Hangul (HWPX) document")
    case .damagedZip: throw DocumentError.officeDamaged(file: file, container: .zip)
    case .damagedCompound: throw DocumentError.officeDamaged(file: file, container: .compound)
    case .unknownZip:
      throw DocumentError.unsupportedType(
        file: file,
        found: "a ZIP archive holding no Word, Excel, PowerPoint or OpenDocument document")
    case .unknownCompound:
      throw DocumentError.unsupportedType(
        file: file,
        found:
          "a Compound File (the container of old Office files) holding no Word, Excel or PowerPoint document"
      )
    case nil: return nil
    }
  }

  /// Converts the Office document in `bytes` (the file at `path`), or takes it from the cache.
  private func convert(
    _ bytes: DocumentBytes, type: DocumentType?, path: String, file: String, password: String?
  ) throws -> ConvertedUpload {
    let digest = SHA256.hex(bytes.withBuffer { SHA256.hash($0) })
    let office = try officeConverter()
    func typed(_ conversion: OfficeConversion) -> DocumentType {
      // A password-protected OOXML package hides which one it is: the application says.
      type
        ?? (conversion.application == "calc"
          ? .xlsx : conversion.application == "impress" ? .pptx : .docx)
    }
    let cache = self.cache.withLock { cache in
      if cache == nil { cache = .some(openCache()) }
      return cache ?? nil
    }
    if let cache {
      let key = ConversionCache.key(digest: digest, converter: OfficeConverter.version)
      if let (pdf, conversion) = cache.entry(key) {
        return ConvertedUpload(
          pdf: pdf, type: typed(conversion), conversion: conversion, temporary: false)
      }
      let (pdf, conversion) = try cache.store(key) { (pdf) throws(DocumentError) in
        try office.convert(path, file: file, password: password, to: pdf)
      }
      return ConvertedUpload(
        pdf: pdf, type: typed(conversion), conversion: conversion, temporary: false)
    }
    let pdf =
      FileManager.default.temporaryDirectory.path + "/imprint-converted-\(UUID().uuidString).pdf"
    let conversion = try office.convert(path, file: file, password: password, to: pdf)
    return ConvertedUpload(
      pdf: pdf, type: typed(conversion), conversion: conversion, temporary: true)
  }

  /// `convert(path:file:password:)` off the caller's thread (a conversion blocks for up to the
  /// converter's time limit; Swift's global pool must not wait that long: `onOwnThread`).
  ///
  /// Only a conversion leaves the caller's thread: a PDF or an image is told apart on it (a
  /// look at the file's directory), and read on at once.
  public func convert(path: String, file: String, password: String?) async throws
    -> ConvertedUpload?
  {
    guard let (bytes, type) = try office(path: path, file: file) else { return nil }
    return try await onOwnThread(stackSize: 8 << 20) {
      try self.convert(bytes, type: type, path: path, file: file, password: password)
    }
  }

  private func officeConverter() throws -> OfficeConverter {
    try converter.withLock { converter in
      if let converter { return converter }
      let made = try OfficeConverter(limits: limits, workers: workers)
      converter = made
      return made
    }
  }
}
