// SPDX-License-Identifier: Apache-2.0
// Imprint: reading whole input files and making output folders, with Imprint's errors.

import Foundation

/// Whole-file reads and output folders, shared by every command and the batch runner.
public enum FileIO {
  /// Reads a whole file.
  ///
  /// - Throws: `FileError.notFound`, `.isDirectory` or `.unreadable`.
  public static func read(_ path: String) throws(FileError) -> [UInt8] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .notFound(path: path)
    }
    if isDirectory.boolValue { throw .isDirectory(path: path) }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw .unreadable(path: path, reason: "permission denied or read error")
    }
    return [UInt8](data)
  }

  /// Creates `path` (and parents) unless it is already a folder.
  ///
  /// - Throws: `FileError.unwritable` when it exists as a file or cannot be created.
  public static func makeFolder(_ path: String) throws(FileError) {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
      guard isDirectory.boolValue else {
        throw .unwritable(path: path, reason: "it is a file; a folder was expected")
      }
      return
    }
    do {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
      throw .unwritable(path: path, reason: "cannot create the folder")
    }
  }
}
