// SPDX-License-Identifier: Apache-2.0
// Imprint: reading whole input files and making output folders, with Imprint's errors.

import Foundation

/// Whole-file reads and output folders, shared by every command and the batch runner.
public enum FileIO {
  /// Reads a whole file.
  ///
  /// - Throws: `FileError.notFound`, `.isDirectory` or `.unreadable`.
  public static func read(_ path: String) throws(FileError) -> [UInt8] {
    // Straight into the array with read(2): no intermediate Data (a 30 MB upload was copied
    // twice on its way to the parser).
    let (descriptor, status) = try openForReading(path)
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = max(Int(status.st_size), 0) + 1  // one byte more: the next read finds the end
    while true {
      var got = 0
      var failure: Int32 = 0
      let part = [UInt8](unsafeUninitializedCapacity: chunk) { buffer, count in
        repeat {
          got = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
          failure = got < 0 ? errno : 0
        } while failure == EINTR
        count = max(got, 0)
      }
      guard got >= 0 else {
        throw .unreadable(path: path, reason: String(cString: strerror(failure)))
      }
      if got == 0 { return bytes }
      if bytes.isEmpty { bytes = part } else { bytes += part }
      chunk = max(chunk, 1 << 16)
    }
  }

  /// Opens a file that must not be a folder, with its status.
  ///
  /// - Returns: the descriptor (the caller closes it) and `fstat`'s answer.
  /// - Throws: `FileError.notFound`, `.isDirectory` or `.unreadable`.
  public static func openForReading(_ path: String) throws(FileError) -> (Int32, stat) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT || code == ENOTDIR { throw .notFound(path: path) }
      throw .unreadable(path: path, reason: String(cString: strerror(code)))
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      let code = errno
      close(descriptor)
      throw .unreadable(path: path, reason: String(cString: strerror(code)))
    }
    if status.st_mode & S_IFMT == S_IFDIR {
      close(descriptor)
      throw .isDirectory(path: path)
    }
    return (descriptor, status)
  }

  /// Writes all of `bytes` to an open descriptor, retrying interrupted and short writes.
  ///
  /// - Throws: `FileError.unwritable` naming `path`.
  public static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String)
    throws(FileError)
  {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes {
        Foundation.write(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset)
      }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        throw .unwritable(path: path, reason: String(cString: strerror(errno)))
      }
      offset += written
    }
  }

  /// Writes `bytes` to `path` in place, not atomically: only for files a reader can afford to
  /// find cut short (a resume hint that fails to decode is ignored), where the temporary file
  /// and rename of `AtomicFile` would double the cost.
  ///
  /// - Throws: `FileError.unwritable`.
  public static func overwrite(_ bytes: [UInt8], to path: String) throws(FileError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw .unwritable(path: path, reason: String(cString: strerror(errno)))
    }
    defer { close(descriptor) }
    try writeAll(bytes, to: descriptor, path: path)
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

/// A file read at any offset (`pread`), a range at a time: for files too large to hold, or to
/// map without the pages counting against the process.
///
/// Owns one descriptor; closed with the object. Not for concurrent use.
public final class RandomAccessFile {
  private let descriptor: Int32
  /// The file's name, for errors.
  public let path: String
  /// Its size in bytes when opened.
  public let count: Int

  /// Opens `path`.
  ///
  /// - Throws: `FileError.notFound`, `.isDirectory` or `.unreadable`.
  public init(path: String) throws(FileError) {
    let (descriptor, status) = try FileIO.openForReading(path)
    self.descriptor = descriptor
    self.path = path
    count = Int(status.st_size)
  }

  deinit { close(descriptor) }

  /// The bytes of `range`.
  ///
  /// - Throws: `FileError.unreadable` when the file is shorter than `range` or a read fails.
  public func read(_ range: Range<Int>) throws(FileError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: range.count)
    var done = 0
    while done < range.count {
      let result = bytes.withUnsafeMutableBytes { buffer in
        pread(
          descriptor, buffer.baseAddress.map { $0 + done }, range.count - done,
          off_t(range.lowerBound + done))
      }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        throw .unreadable(
          path: path,
          reason: result < 0
            ? String(cString: strerror(errno)) : "it ended at byte \(range.lowerBound + done)")
      }
      done += result
    }
    return bytes
  }
}
