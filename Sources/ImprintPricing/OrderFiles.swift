// SPDX-License-Identifier: Apache-2.0
// ImprintPricing: where an order's files are read from: confined to one folder, whatever the
// order says.

import Foundation
import ImprintCore

extension Order {
  /// The path an order's file is read from, confined to `root`.
  ///
  /// An order is input, often an upload: a file named `../outside.pdf` or `/etc/passwd` would
  /// price (and report on) any file the server can read. So a file's path is relative to the
  /// files root, and `ConfinedPath.resolve` refuses `..`, absolute paths and links that lead
  /// out of it. The root is the order's own folder unless the caller names one
  /// (`imprint quote --files-root`); only then is an absolute path accepted, and only when it
  /// lies inside that root (a shop whose orders list `/srv/uploads/...` passes
  /// `--files-root /srv/uploads`).
  ///
  /// - Parameters:
  ///   - path: the file's path as the order gives it.
  ///   - root: the folder the files are confined to (the order's folder by default).
  ///   - explicitRoot: whether the caller chose `root` (absolute paths inside it are accepted).
  /// - Returns: the path to read.
  /// - Throws: `FileError.escapesFolder`, or `.notFound` for an empty path.
  public static func filePath(_ path: String, root: String, explicitRoot: Bool = false)
    throws(FileError) -> String
  {
    guard path.hasPrefix("/") else {
      return try ConfinedPath.resolve(path, in: root, what: "order file")
    }
    guard explicitRoot, let relative = relativePath(path, inside: root) else {
      throw .escapesFolder(path: path, folder: root.isEmpty ? "." : root, what: "order file")
    }
    guard !relative.isEmpty else { throw .isDirectory(path: path) }
    do {
      return try ConfinedPath.resolve(relative, in: root, what: "order file")
    } catch {
      // Name the path as the order wrote it.
      if case .escapesFolder = error {
        throw .escapesFolder(path: path, folder: root, what: "order file")
      }
      throw error
    }
  }

  /// `path` (absolute) relative to `root` when it lies inside it, compared component by
  /// component as written (the links are checked afterwards by `ConfinedPath`).
  private static func relativePath(_ path: String, inside root: String) -> String? {
    // `..` climbs in the root (the caller's own option) but is refused in the order's path.
    func components(_ text: String, climb: Bool) -> [Substring]? {
      var result: [Substring] = []
      for part in text.split(separator: "/") where part != "." {
        if part == ".." {
          guard climb else { return nil }
          _ = result.popLast()
        } else {
          result.append(part)
        }
      }
      return result
    }
    let absoluteRoot =
      root.hasPrefix("/") ? root : FileManager.default.currentDirectoryPath + "/" + root
    guard let file = components(path, climb: false),
      let base = components(absoluteRoot, climb: true),
      file.starts(with: base)
    else { return nil }
    return file.dropFirst(base.count).joined(separator: "/")
  }
}
