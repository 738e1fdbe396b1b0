// SPDX-License-Identifier: Apache-2.0
// Imprint: paths that come from input (a template's asset, an order's file, an account name used
// as a cache file name) resolved so that they cannot leave their folder, and outputs that cannot
// replace their inputs.

import Foundation

/// The one place where a path taken from input is joined to its folder.
///
/// The rule (docs/reliability.md): a path from input is relative, has no `..` component, and
/// after links are followed it still lies inside the folder; an output never replaces an input.
public enum ConfinedPath {
  /// Joins `relative` to `folder`, refusing anything that would lead outside the folder.
  ///
  /// Absolute paths, `..` components and NUL bytes are refused as written; then the deepest
  /// existing part of the joined path is resolved with `realpath`, so a symbolic link inside the
  /// folder that points out of it is refused too. The file itself need not exist.
  ///
  /// - Parameters:
  ///   - relative: the path as the input gave it.
  ///   - folder: the folder it is confined to.
  ///   - what: what the path is, for the error ("template asset", "order file").
  /// - Returns: `folder/relative`.
  /// - Throws: `FileError.escapesFolder`, or `.notFound` for an empty path.
  public static func resolve(_ relative: String, in folder: String, what: String)
    throws(FileError) -> String
  {
    guard !relative.isEmpty else { throw .notFound(path: relative) }
    let components = relative.split(separator: "/", omittingEmptySubsequences: true)
    guard !relative.hasPrefix("/"), !relative.utf8.contains(0), !components.contains("..")
    else {
      throw .escapesFolder(path: relative, folder: folder, what: what)
    }
    let base = folder.isEmpty ? "." : folder
    let joined = base + "/" + components.joined(separator: "/")
    guard let root = realPath(base) else { return joined }
    // The deepest part that exists decides where links lead.
    var probe = joined
    while true {
      if let resolved = realPath(probe) {
        guard resolved == root || resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
          throw .escapesFolder(path: relative, folder: folder, what: what)
        }
        return joined
      }
      let parent = (probe as NSString).deletingLastPathComponent
      if parent == probe || parent.isEmpty { return joined }
      probe = parent
    }
  }

  /// Whether `name` can be used as one file name inside a folder: not empty, no `/`, no NUL or
  /// other control character, not `.` or `..`, not hidden, at most 255 bytes.
  public static func isPlainFileName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".")
      && !name.unicodeScalars.contains { $0 == "/" || $0.properties.generalCategory == .control }
  }

  /// Refuses an output that is one of the inputs (the same file, by device and inode, whatever
  /// path names it).
  ///
  /// - Throws: `FileError.outputIsInput`.
  public static func checkNotInput(_ output: String, inputs: [String]) throws(FileError) {
    var target = stat()
    guard stat(output, &target) == 0 else { return }
    for input in inputs {
      var source = stat()
      if stat(input, &source) == 0 && source.st_dev == target.st_dev
        && source.st_ino == target.st_ino
      {
        throw .outputIsInput(path: output)
      }
    }
  }

  private static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
