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
    try ConfinedPath.resolve(
      path, root: root, absolute: explicitRoot ? .insideRoot : .refused, what: "order file")
  }

  /// The folder an order's files are relative to unless the caller names one: the order's own.
  ///
  /// - Parameter orderPath: the order's path.
  /// - Returns: the order's folder (`.` for an order in the working directory).
  public static func filesRoot(ofOrderAt orderPath: String) -> String {
    let folder = (orderPath as NSString).deletingLastPathComponent
    return folder.isEmpty ? "." : folder
  }

  /// The paths every file of the order is read from, confined to `root` (see
  /// `filePath(_:root:explicitRoot:)`), in the order's order.
  ///
  /// Every path is resolved before any file is opened: one path that leads out refuses the
  /// order.
  ///
  /// - Parameters:
  ///   - root: the folder the files are confined to.
  ///   - explicitRoot: whether the caller chose `root` (absolute paths inside it are accepted).
  /// - Returns: one path per file.
  /// - Throws: `FileError.escapesFolder`, or `.notFound` for an empty path.
  public func filePaths(root: String, explicitRoot: Bool = false) throws(FileError) -> [String] {
    try files.map { (file) throws(FileError) in
      try Order.filePath(file.path, root: root, explicitRoot: explicitRoot)
    }
  }
}
