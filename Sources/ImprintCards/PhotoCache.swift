// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the folder of photos named after accounts (`--photo-cache`), read and filled
// without ever leaving the folder.

import Foundation
import ImprintCore
import ImprintGraphics

/// A folder of photos named `<account>.jpg` (or `.jpeg`, `.png`, `.heic`, `.heif`, `.webp`,
/// `.tif`, `.tiff`, `.gif`); the type is read from the content, never the name.
///
/// An account name comes from a profile, that is from input: it is used as a file name only when
/// it is one plain name (`ConfinedPath.isPlainFileName`: no `/`, no `..`, not hidden, no control
/// characters), and the entry is resolved with `ConfinedPath.resolve`, so a link in the folder
/// that leads out of it is not followed. Entries are read through `FileIO` (a FIFO or device
/// placed there is refused without blocking). The cache never decodes: its entries came from
/// strangers, and `CardInputLoader` decodes them in the sandbox, counting one that does not
/// decode as a miss, never a permanent failure. Downloads are stored atomically, and only after
/// they decoded.
public struct PhotoCache: Sendable {
  /// The folder.
  public let folder: String

  /// A cache in `folder` (created when the first photo is stored).
  public init(folder: String) { self.folder = folder }

  /// The result of a lookup.
  public enum Lookup: Sendable {
    /// A readable entry: its bytes and path (not decoded yet).
    case hit(bytes: [UInt8], path: String)
    /// Nothing cached, or the account name cannot name a file.
    case miss
    /// An entry exists but cannot be read (the reason is a warning; the entry counts as a miss).
    case unusable(path: String, reason: String)
  }

  /// The extensions looked for, in this order.
  public static let extensions = [
    "jpg", "jpeg", "png", "heic", "heif", "webp", "tif", "tiff", "gif",
  ]

  /// The extension a photo is stored under, from its content (`jpg` when it is none of these).
  static func `extension`(of bytes: [UInt8]) -> String {
    switch ImageType(sniffing: bytes) {
    case .png?: "png"
    case .heif?: "heic"
    case .webp?: "webp"
    case .tiff?: "tif"
    case .gif?: "gif"
    case .jpeg?, nil: "jpg"
    }
  }

  /// The file name stem for `account`, or nil when the name cannot be a file name.
  public static func stem(for account: String) -> String? {
    ConfinedPath.isPlainFileName(account) ? account : nil
  }

  /// Looks up `account`'s photo; the first existing entry decides.
  public func lookup(_ account: String) -> Lookup {
    guard let (path, problem) = locate(account) else { return .miss }
    if let problem { return .unusable(path: path, reason: problem.message) }
    return entry(path)
  }

  /// The entry `lookup` reads for `account`, without reading it: its path, with the reason it
  /// cannot be used when its name leads out of the folder; nil when there is none (or the
  /// account name cannot name a file).
  public func locate(_ account: String) -> (path: String, problem: FileError?)? {
    guard let stem = Self.stem(for: account) else { return nil }
    for ext in Self.extensions {
      let name = "\(stem).\(ext)"
      // A name that is not there cannot lead out of the folder (its deepest existing part is
      // the folder itself), so only an entry that exists is resolved: `realpath` reads every
      // link on the way, and most extensions are misses.
      var status = stat()
      let path = (folder.isEmpty ? "." : folder) + "/" + name
      guard lstat(path, &status) == 0 else { continue }
      // Nor can an entry that is not a link: its name is one plain component, so it lies in
      // the folder itself, which is what resolving it would find (two `realpath` calls a card,
      // a twentieth of a batch's CPU).
      if status.st_mode & S_IFMT != S_IFLNK { return (path, nil) }
      do {
        return (try ConfinedPath.resolve(name, in: folder, what: "photo cache entry"), nil)
      } catch {
        return (folder + "/" + name, error)
      }
    }
    return nil
  }

  /// Stores a downloaded photo for `account`, atomically, replacing the account's entries (under
  /// any extension); the photo must already have decoded.
  ///
  /// - Returns: the path written, or nil when the account name cannot name a file.
  /// - Throws: `FileError` when the folder cannot be made or the file cannot be written.
  @discardableResult
  public func store(_ bytes: [UInt8], account: String) throws(FileError) -> String? {
    guard let stem = Self.stem(for: account) else { return nil }
    try FileIO.makeFolder(folder)
    let ext = Self.extension(of: bytes)
    let path = try ConfinedPath.resolve("\(stem).\(ext)", in: folder, what: "photo cache entry")
    // The account has one photo: an entry under another extension (one that did not decode,
    // since a download is stored only after a miss) would be found first next time.
    for other in Self.extensions where other != ext {
      let stale = folder + "/" + stem + "." + other
      var status = stat()
      if lstat(stale, &status) == 0 { unlink(stale) }
    }
    try AtomicFile.write(bytes, to: path)
    return path
  }

  /// Reads one entry (without decoding it).
  private func entry(_ path: String) -> Lookup {
    do {
      return .hit(bytes: try FileIO.read(path, limit: FileIO.Limit.image), path: path)
    } catch {
      return .unusable(path: path, reason: error.message)
    }
  }

}
