// SPDX-License-Identifier: Apache-2.0
// Imprint: a folder removed with everything in it, through descriptors, following no link.

import Foundation

extension FileIO {
  /// The deepest nesting `removeFolder` goes into below the folder removed; a folder deeper is
  /// left, and so are the folders holding it.
  public static let removalDepth = 256

  /// Removes folder `path` with everything in it, following no symbolic link.
  ///
  /// Each folder is opened with `openat` and `O_NOFOLLOW` from its parent's descriptor, `path`'s
  /// last component too: a link met on the way, or put in a folder's place while it is being
  /// removed, is removed as a link and never entered, so nothing outside the folder is touched.
  /// Names are used as the system gives them (bytes, not text).
  ///
  /// - Returns: whether the folder is gone (false when something in it could not be removed,
  ///   or is nested deeper than `removalDepth`).
  @discardableResult
  public static func removeFolder(_ path: String) -> Bool {
    let parentPath = (path as NSString).deletingLastPathComponent
    let parent = open(parentPath.isEmpty ? "." : parentPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard parent >= 0 else { return errno == ENOENT }
    defer { Foundation.close(parent) }
    return removeFolder(
      Array((path as NSString).lastPathComponent.utf8CString), in: parent, depth: 0)
  }

  /// Removes entry `name` (NUL-terminated) of the open folder `parent`: a folder with what it
  /// holds, anything else (a link too) unlinked.
  private static func removeFolder(_ name: [CChar], in parent: Int32, depth: Int) -> Bool {
    let folder = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard folder >= 0 else {
      if errno == ENOENT { return true }
      // Not a folder (a link or a file in its place): removed as what it is.
      return unlinkat(parent, name, 0) == 0 || errno == ENOENT
    }
    guard depth < removalDepth, let listing = fdopendir(folder) else {
      Foundation.close(folder)
      return false
    }
    // closedir closes `folder`.
    defer { closedir(listing) }
    var names: [[CChar]] = []
    while let entry = readdir(listing) {
      let entryName = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        bytes.prefix { $0 != 0 }.map { CChar(bitPattern: $0) } + [0]
      }
      if entryName != [46, 0] && entryName != [46, 46, 0] { names.append(entryName) }
    }
    var complete = true
    for entryName in names {
      var status = stat()
      guard fstatat(folder, entryName, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
        complete = complete && errno == ENOENT
        continue
      }
      if (status.st_mode & S_IFMT) == S_IFDIR {
        complete = removeFolder(entryName, in: folder, depth: depth + 1) && complete
      } else if unlinkat(folder, entryName, 0) != 0 && errno != ENOENT {
        complete = false
      }
    }
    return complete && (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
  }
}
