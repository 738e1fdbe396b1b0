// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: converted PDFs kept by the SHA-256 of the upload, so that inspect,
// thumbnails, the quote and the print-ready file of one Office upload read the same bytes.

import Foundation
import ImprintCore

/// A folder of converted PDFs, each named by the SHA-256 of the Office file it was made from
/// (and of the converter's version), bounded in size.
///
/// Safe for several processes on one folder: an entry is written to a temporary name and
/// renamed into place (a reader sees a whole PDF or none), two processes converting the same
/// upload at once both write the same bytes (conversion is deterministic), and eviction removes
/// the least recently used entries, which a reader holding one open still reads to its end.
public final class ConversionCache: Sendable {
  /// The folder.
  public let folder: String
  /// The bytes the cache may hold; past them, the least recently used entries are removed.
  public let maximumBytes: Int

  /// The default folder: `$XDG_CACHE_HOME/imprint/converted`, else `~/.cache/imprint/converted`.
  public static var defaultFolder: String {
    let environment = ProcessInfo.processInfo.environment
    if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
      return cache + "/imprint/converted"
    }
    return NSHomeDirectory() + "/.cache/imprint/converted"
  }

  /// Opens (making it, readable by its owner only) the cache in `folder`.
  ///
  /// - Throws: `FileError` when the folder cannot be made.
  public init(folder: String = ConversionCache.defaultFolder, maximumBytes: Int = 2 << 30)
    throws(FileError)
  {
    self.folder = folder
    self.maximumBytes = max(1 << 16, maximumBytes)
    do {
      try FileManager.default.createDirectory(
        atPath: folder, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw .unwritable(path: folder, reason: .system(errno == 0 ? EACCES : errno))
    }
  }

  /// The entry's name for an upload with `digest` (lower-case hex SHA-256) converted by
  /// `converter` (a short text naming the converter and its settings).
  static func key(digest: String, converter: String) -> String {
    let version = SHA256.hex(Array(SHA256.hash(Array(converter.utf8)).prefix(6)))
    return "\(digest)-\(version)"
  }

  /// The cached PDF and what its conversion recorded, or nil; a hit is marked as used.
  func entry(_ key: String) -> (pdf: String, conversion: OfficeConversion)? {
    let pdf = "\(folder)/\(key).pdf"
    guard let record = try? FileIO.read("\(folder)/\(key).json", limit: 4096),
      let conversion = try? JSONDecoder().decode(OfficeConversion.self, from: Data(record)),
      access(pdf, R_OK) == 0
    else { return nil }
    utimes(pdf, nil)
    return (pdf, conversion)
  }

  /// Stores what `convert` writes to the path it is given as the entry `key`, then trims the
  /// cache to its size; returns the entry.
  func store(
    _ key: String, convert: (String) throws(DocumentError) -> OfficeConversion
  ) throws(DocumentError) -> (pdf: String, conversion: OfficeConversion) {
    let pdf = "\(folder)/\(key).pdf"
    // The PDF (renamed into place by the converter), then its record: an entry is whole once
    // both are there.
    let conversion = try convert(pdf)
    do {
      try AtomicFile.write(Array(JSONOutput.line(conversion).utf8), to: "\(folder)/\(key).json")
    } catch {
      unlink(pdf)
      throw .conversionFailed(file: key, detail: error.message)
    }
    trim(keeping: key)
    return (pdf, conversion)
  }

  /// Removes the least recently used entries until the cache holds at most `maximumBytes`
  /// (never `keeping`, the entry just made).
  func trim(keeping: String) {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    var entries: [(key: String, used: Int, bytes: Int)] = []
    var total = 0
    for name in names where name.hasSuffix(".pdf") && !name.hasPrefix(".") {
      var info = stat()
      guard stat("\(folder)/\(name)", &info) == 0 else { continue }
      let bytes = Int(info.st_size)
      total += bytes
      let used = Int(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int(info.st_mtim.tv_nsec)
      entries.append((String(name.dropLast(4)), used, bytes))
    }
    guard total > maximumBytes else { return }
    for entry in entries.sorted(by: { $0.used < $1.used }) where entry.key != keeping {
      unlink("\(folder)/\(entry.key).json")
      unlink("\(folder)/\(entry.key).pdf")
      total -= entry.bytes
      if total <= maximumBytes { break }
    }
  }
}
