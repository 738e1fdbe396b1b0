// SPDX-License-Identifier: Apache-2.0
// Imprint: reading whole input files and making output folders, with Imprint's errors.

import Foundation

/// Whole-file reads and output folders, shared by every command and the batch runner.
///
/// The rule (docs/reliability.md): every input file is read through `read(_:limit:)` or
/// `openForReading(_:)`, which refuse anything but a regular file (a FIFO would block, a device
/// never ends) without blocking on it, and refuse a file larger than the caller's limit before
/// reading it, naming the limit.
public enum FileIO {
  /// Size limits of the inputs Imprint reads whole, in bytes.
  public enum Limit {
    /// Small structured inputs: profiles, follow counts, templates, price lists, orders.
    public static let structured = 16 << 20
    /// Images read whole: card photos, template assets, the placeholder photo.
    public static let image = 64 << 20
    /// Uploaded documents (mapped, not held): the largest upload Imprint opens.
    public static let document = 2 << 30
    /// One line of a line-based input (a QR list, a manifest, a results file).
    public static let line = 1 << 20
  }

  /// Reads a whole regular file of at most `limit` bytes.
  ///
  /// - Throws: `FileError.notFound`, `.isDirectory`, `.notRegularFile`, `.tooLarge` or
  ///   `.unreadable`.
  public static func read(_ path: String, limit: Int) throws(FileError) -> [UInt8] {
    // Straight into the array with read(2): no intermediate Data (a 30 MB upload was copied
    // twice on its way to the parser).
    let (descriptor, status) = try openForReading(path)
    defer { Foundation.close(descriptor) }
    return try read(descriptor: descriptor, size: Int(status.st_size), path: path, limit: limit)
  }

  /// Who besides a file of secrets' owner may have it.
  public enum SecretAccess: Sendable {
    /// No one: mode `600` or `400`, as ssh asks of private keys (a printer's password).
    case ownerOnly
    /// Its group may read it, never change it: mode `640` or `440` too (a Kubernetes secret
    /// mounted with `defaultMode: 0440` for the pod's `fsGroup`, whose owner is root).
    case groupMayRead
  }

  /// Reads a whole regular file of secrets (a password, a token) of at most `limit` bytes,
  /// refused when others than `access` allows may read or change it: one rule for every
  /// secret a command is given in a file (`--password-file`, `--token-file`).
  ///
  /// - Parameters:
  ///   - path: the file.
  ///   - limit: the most bytes read.
  ///   - access: who besides its owner may have it.
  ///   - exposed: the caller's error for a file others may read or change, given the problem
  ///     in words: `its mode is 644; others than its owner may read or change it`.
  /// - Returns: the bytes.
  /// - Throws: `FileError` as `read(_:limit:)` throws it; `exposed`'s error.
  public static func readSecret<Failure: Error>(
    _ path: String, limit: Int, access: SecretAccess, exposed: (String) -> Failure
  ) throws -> [UInt8] {
    let (descriptor, status) = try openForReading(path)
    defer { Foundation.close(descriptor) }
    let refused: mode_t = access == .ownerOnly ? 0o077 : 0o037
    guard status.st_mode & refused == 0 else {
      let who =
        access == .ownerOnly
        ? "others than its owner may read or change it"
        : status.st_mode & 0o007 != 0
          ? "others than its owner and its group may read or change it" : "its group may change it"
      throw exposed("its mode is \(String(status.st_mode & 0o777, radix: 8)); \(who)")
    }
    return try read(descriptor: descriptor, size: Int(status.st_size), path: path, limit: limit)
  }

  /// Reads a file of secrets holding one value (a token, a signing key) as `readSecret` does
  /// and returns its text without the white space and line breaks around it.
  ///
  /// Bytes that are not UTF-8 become U+FFFD: the caller checks the value's alphabet and says
  /// what is wrong without showing it.
  ///
  /// - Parameters:
  ///   - path: the file.
  ///   - limit: the most bytes read.
  ///   - access: who besides its owner may have it.
  ///   - exposed: the caller's error for a file others may read or change (see `readSecret`).
  /// - Returns: the trimmed text.
  /// - Throws: `FileError` as `read(_:limit:)` throws it; `exposed`'s error.
  public static func readSecretLine<Failure: Error>(
    _ path: String, limit: Int, access: SecretAccess, exposed: (String) -> Failure
  ) throws -> String {
    let bytes = try readSecret(path, limit: limit, access: access, exposed: exposed)
    return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Reads the rest of an open regular file of `size` bytes (`fstat`'s), at most `limit`
  /// bytes, from its current offset: for a file opened otherwise (`ConfinedPath.openFile`).
  ///
  /// - Parameters:
  ///   - descriptor: the open file; the caller closes it.
  ///   - size: its size when opened.
  ///   - path: its name, for errors.
  ///   - limit: the most bytes read.
  /// - Returns: the bytes read.
  /// - Throws: `FileError.tooLarge` or `.unreadable`.
  public static func read(descriptor: Int32, size: Int, path: String, limit: Int)
    throws(FileError) -> [UInt8]
  {
    guard size <= limit else {
      throw .tooLarge(path: path, bytes: size, limit: limit)
    }
    var bytes: [UInt8] = []
    // One byte more than the size: the next read finds the end. A file that grows while read
    // stops at the limit.
    var chunk = min(max(size, 0), limit) + 1
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
        throw .unreadable(path: path, reason: .system(failure))
      }
      if got == 0 { return bytes }
      if bytes.isEmpty { bytes = part } else { bytes += part }
      guard bytes.count <= limit else { throw .tooLarge(path: path, bytes: nil, limit: limit) }
      chunk = min(max(chunk, 1 << 16), limit - bytes.count + 1)
    }
  }

  /// Opens a regular file for reading, with its status, without ever blocking.
  ///
  /// The file is opened non-blocking (opening a FIFO for reading would wait for a writer) and
  /// refused unless `fstat` says it is a regular file.
  ///
  /// - Returns: the descriptor (the caller closes it) and `fstat`'s answer.
  /// - Throws: `FileError.notFound`, `.isDirectory`, `.notRegularFile` or `.unreadable`.
  public static func openForReading(_ path: String) throws(FileError) -> (Int32, stat) {
    let (descriptor, status) = try openAnyForReading(path)
    let kind = status.st_mode & S_IFMT
    guard kind == S_IFREG else {
      Foundation.close(descriptor)
      if kind == S_IFDIR { throw .isDirectory(path: path) }
      throw .notRegularFile(path: path, kind: FileKind(mode: status.st_mode))
    }
    return (descriptor, status)
  }

  /// Opens `path` for reading whatever it is (non-blocking at open, blocking afterwards), for
  /// readers that bound what they read themselves (`LineReader`).
  ///
  /// - Throws: `FileError.notFound` or `.unreadable`.
  static func openAnyForReading(_ path: String) throws(FileError) -> (Int32, stat) {
    guard !path.utf8.contains(0) else { throw .notFound(path: path) }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT || code == ENOTDIR { throw .notFound(path: path) }
      throw .unreadable(path: path, reason: .system(code))
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      let code = errno
      Foundation.close(descriptor)
      throw .unreadable(path: path, reason: .system(code))
    }
    // Reads block again from here on: a regular file never would, and a pipe's reader wants to
    // wait for its writer.
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
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
        throw .unwritable(path: path, reason: .system(errno))
      }
      offset += written
    }
  }

  /// Closes a descriptor written to, reporting what `close` reports (some filesystems report
  /// a failed write only there).
  ///
  /// - Throws: `FileError.unwritable` naming `path`.
  public static func close(_ descriptor: Int32, path: String) throws(FileError) {
    // No retry on EINTR: on Linux the descriptor is released either way.
    if Foundation.close(descriptor) != 0 && errno != EINTR {
      throw .unwritable(path: path, reason: .system(errno))
    }
  }

  /// Flushes a descriptor to the disk and closes it: a full disk or an I/O error met by any
  /// earlier write through this file is reported here.
  ///
  /// - Throws: `FileError.unwritable` naming `path`.
  public static func syncAndClose(_ descriptor: Int32, path: String) throws(FileError) {
    var result: Int32
    repeat { result = fsync(descriptor) } while result != 0 && errno == EINTR
    // EINVAL: a file that cannot be synced (a pipe, some special filesystems); nothing to flush.
    if result != 0 && errno != EINVAL {
      let reason = FileError.Reason.system(errno)
      Foundation.close(descriptor)
      throw .unwritable(path: path, reason: reason)
    }
    try close(descriptor, path: path)
  }

  /// Syncs the folder holding `path` so a rename into it survives a power cut; best effort
  /// (nothing is lost when a filesystem cannot sync folders).
  public static func syncFolder(of path: String) {
    let folder = (path as NSString).deletingLastPathComponent
    let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    Foundation.close(descriptor)
  }

  /// Writes `bytes` to `path` in place, not atomically: only for files a reader can afford to
  /// find cut short (a resume hint that fails to decode is ignored), where the temporary file
  /// and rename of `AtomicFile` would double the cost.
  ///
  /// - Throws: `FileError.unwritable`.
  public static func overwrite(_ bytes: [UInt8], to path: String) throws(FileError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw .unwritable(path: path, reason: .system(errno))
    }
    do {
      try writeAll(bytes, to: descriptor, path: path)
    } catch {
      Foundation.close(descriptor)
      throw error
    }
    try close(descriptor, path: path)
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
      throw .unwritable(
        path: path, reason: .init("cannot create the folder", errno: posixCode(of: error)))
    }
  }

  /// The POSIX error number behind a Foundation error, when it has one.
  private static func posixCode(of error: any Error) -> Int32? {
    let error = error as NSError
    if error.domain == NSPOSIXErrorDomain { return Int32(error.code) }
    guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain
    else { return nil }
    return Int32(underlying.code)
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

  deinit { Foundation.close(descriptor) }

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
            ? .system(errno) : FileError.Reason("it ended at byte \(range.lowerBound + done)"))
      }
      done += result
    }
    return bytes
  }
}
