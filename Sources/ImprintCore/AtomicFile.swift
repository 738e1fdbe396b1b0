// SPDX-License-Identifier: Apache-2.0
// Imprint: outputs are written to a temporary file beside the target and renamed on success, so a
// failure or a kill never leaves a partial file under the final name.

import Foundation
import Synchronization

/// Writes files atomically: a temporary file in the same folder, then `rename(2)`.
public enum AtomicFile {
  /// Checks that `path` can be an output: not an existing directory, in an existing folder.
  ///
  /// - Throws: `FileError.isDirectory` or `FileError.unwritable`.
  public static func checkWritable(_ path: String) throws(FileError) {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      isDirectory.boolValue
    {
      throw .isDirectory(path: path)
    }
    let folder = (path as NSString).deletingLastPathComponent
    let parent = folder.isEmpty ? "." : folder
    guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory),
      isDirectory.boolValue
    else {
      throw .unwritable(path: path, reason: "folder '\(parent)' does not exist")
    }
  }

  /// Writes `bytes` to `path` atomically.
  ///
  /// - Throws: `FileError.isDirectory` or `FileError.unwritable`, leaving no file behind.
  public static func write(_ bytes: some Collection<UInt8>, to path: String) throws(FileError) {
    let array = Array(bytes)
    try write(to: path) { (write) throws(FileError) in try write(array) }
  }

  /// Writes the file `produce` gives piece by piece to `path` atomically: memory holds one
  /// piece at a time.
  ///
  /// - Parameters:
  ///   - path: the final path.
  ///   - produce: calls the function it is given with each piece, in order.
  /// - Throws: `FileError.isDirectory` or `FileError.unwritable`, leaving no file behind.
  public static func write(
    to path: String,
    pieces produce: (_ write: ([UInt8]) throws(FileError) -> Void) throws(FileError) -> Void
  ) throws(FileError) {
    do {
      try write(to: path) { temporary in
        // POSIX calls: FileManager.createFile would write a second temporary and rename again.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
          throw FileError.unwritable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        try produce { (piece) throws(FileError) in
          try FileIO.writeAll(piece, to: descriptor, path: path)
        }
      }
    } catch let error as FileError {
      throw error
    } catch {
      preconditionFailure("the body only throws FileError")
    }
  }

  /// Lets `body` write a temporary file, then renames it to `path`; removes it on failure.
  ///
  /// - Parameters:
  ///   - path: the final path.
  ///   - body: writes the complete file at the temporary path it is given.
  /// - Throws: `FileError.isDirectory`, `FileError.unwritable`, or what `body` throws, unchanged.
  public static func write(to path: String, _ body: (String) throws -> Void) throws {
    let temporary = try temporaryPath(for: path)
    do {
      try body(temporary)
    } catch {
      unlink(temporary)
      throw error
    }
    try commit(temporary, to: path)
  }

  /// A temporary path beside `path` (a hidden name, unique in the process).
  ///
  /// It checks first that `path` can be written. Finish with `commit(_:to:)`, or remove it with `discard(_:)`.
  ///
  /// - Throws: `FileError.isDirectory` or `FileError.unwritable`.
  public static func temporaryPath(for path: String) throws(FileError) -> String {
    try checkWritable(path)
    let folder = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    return (folder.isEmpty ? "" : folder + "/") + ".\(name).tmp-\(getpid())-\(counter.next())"
  }

  /// Renames a finished temporary file to its final path (atomic on one filesystem).
  ///
  /// - Throws: `FileError.unwritable`; the temporary file is removed.
  public static func commit(_ temporary: String, to path: String) throws(FileError) {
    guard rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw .unwritable(path: path, reason: reason)
    }
  }

  /// Removes a temporary file that will not be committed.
  public static func discard(_ temporary: String) { unlink(temporary) }

  private static let counter = Counter()
}

/// A process-wide counter that makes temporary names unique across threads.
private final class Counter: Sendable {
  private let value = Mutex(0)
  func next() -> Int {
    value.withLock {
      $0 += 1
      return $0
    }
  }
}
