// SPDX-License-Identifier: Apache-2.0
// Imprint: a path from input resolved against a root folder, with a stated rule for absolute
// paths (a batch manifest's inputs, an order's files).

import Foundation

extension ConfinedPath {
  /// What an absolute path from input may name.
  public enum AbsolutePaths: Sendable {
    /// Refused (`file.escapesFolder`): every path is relative to the root.
    case refused
    /// Accepted when it lies inside the root (compared as written, then links checked).
    case insideRoot
    /// Taken as written: the input is trusted like a command line (relative paths stay
    /// confined to the root).
    case asWritten
  }

  /// `path` joined to `root` and confined to it by `resolve(_:in:what:)`; an absolute path is
  /// refused, accepted inside the root, or taken as written, as `absolute` says.
  ///
  /// - Parameters:
  ///   - path: the path as the input gives it.
  ///   - root: the folder relative paths are joined to and confined to.
  ///   - absolute: what an absolute path may name.
  ///   - what: what the path is, for the error ("order file", "photo").
  /// - Returns: the path to read.
  /// - Throws: `FileError.escapesFolder`, `.isDirectory` for the root itself, or `.notFound` for
  ///   an empty path.
  public static func resolve(
    _ path: String, root: String, absolute: AbsolutePaths, what: String
  ) throws(FileError) -> String {
    guard path.hasPrefix("/") else { return try resolve(path, in: root, what: what) }
    switch absolute {
    case .asWritten:
      return path
    case .refused:
      throw .escapesFolder(path: path, folder: root.isEmpty ? "." : root, what: what)
    case .insideRoot:
      guard let relative = relativePath(path, inside: root) else {
        throw .escapesFolder(path: path, folder: root.isEmpty ? "." : root, what: what)
      }
      guard !relative.isEmpty else { throw .isDirectory(path: path) }
      do {
        return try resolve(relative, in: root, what: what)
      } catch {
        // Name the path as the input wrote it.
        if case .escapesFolder = error {
          throw .escapesFolder(path: path, folder: root, what: what)
        }
        throw error
      }
    }
  }

  /// `path` (absolute) relative to `root` when it lies inside it, compared component by
  /// component as written (the links are checked afterwards by `resolve(_:in:what:)`).
  private static func relativePath(_ path: String, inside root: String) -> String? {
    // `..` climbs in the root (the caller's own option) but is refused in the input's path.
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
