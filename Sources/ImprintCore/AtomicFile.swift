// SPDX-License-Identifier: Apache-2.0
// Imprint: outputs are written to a temporary file beside the target and renamed on success, so a
// failure or a kill never leaves a partial file under the final name.

import Foundation
import Synchronization

/// Writes files atomically: a temporary file in the same folder, then `rename(2)`.
public enum AtomicFile {
  /// Whether `commit` flushes each file to the disk before renaming it (the default), or leaves
  /// that to one flush at the end of a bulk run (`withDeferredFlush(syncing:)`).
  ///
  /// Every write and close is checked either way (a full disk or a size limit fails there); the
  /// flush adds durability against a power cut, at 0.15 to 4 ms a file on this project's
  /// machines, which would double the time of a thousand QR codes.
  @TaskLocal public static var flushEachFile = true

  /// Runs a bulk job whose outputs all lie in `folder`, then flushes that folder's file system
  /// once (`syncfs`) and checks it: a write-back error (a disk that filled or failed after the
  /// writes were accepted) is reported instead of lost, which plain `sync` cannot do.
  ///
  /// - Throws: what `body` throws, or `FileError.unwritable` naming `folder` when the flush fails.
  public static func withDeferredFlush<Result>(
    syncing folder: String, _ body: () async throws -> Result
  ) async throws -> Result {
    let result = try await $flushEachFile.withValue(false) { try await body() }
    try flushFileSystem(of: folder)
    return result
  }

  /// glibc's `syncfs(2)`, which its Swift module does not export (it is declared only under
  /// `_GNU_SOURCE`): looked up once in the C library already loaded.
  private static let syncFileSystem: @convention(c) (Int32) -> Int32 = {
    guard let symbol = dlsym(nil, "syncfs") else {
      // Not reachable on glibc >= 2.14; `sync` flushes everything and reports nothing.
      return { _ in
        sync()
        return 0
      }
    }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
  }()

  /// Flushes the file system that holds `folder` and reports a write-back error.
  public static func flushFileSystem(of folder: String) throws(FileError) {
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw .unwritable(path: folder, reason: .system(errno))
    }
    defer { close(descriptor) }
    guard syncFileSystem(descriptor) == 0 else {
      throw .unwritable(path: folder, reason: .system(errno))
    }
  }

  /// Checks that `path` can be an output: not an existing directory, in an existing folder.
  ///
  /// An existing device, FIFO or socket is refused too: the rename would replace it with a
  /// regular file (`-o /dev/null` run as root replaced the system's /dev/null).
  ///
  /// - Throws: `FileError.isDirectory`, `FileError.notRegularFile` or `FileError.unwritable`.
  public static func checkWritable(_ path: String) throws(FileError) {
    var status = stat()
    if lstat(path, &status) == 0 {
      let kind = FileKind(mode: status.st_mode)
      if kind != .other && kind != .directory && kind != .symbolicLink {
        throw .notRegularFile(path: path, kind: kind)
      }
    }
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
          throw FileError.unwritable(path: path, reason: .system(errno))
        }
        do {
          try produce { (piece) throws(FileError) in
            try FileIO.writeAll(piece, to: descriptor, path: path)
          }
        } catch {
          close(descriptor)
          throw error
        }
        // `commit` syncs it: closing is checked here, syncing once is enough.
        try FileIO.close(descriptor, path: path)
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

  /// The hidden temporary names this type makes: `.NAME.tmp-HOST-PID-N`.
  private static let marker = ".tmp-"

  /// Removes the temporaries in `folder` that process `pid` of this host made: a process that
  /// was stopped (killed and reaped) before it could remove its own.
  public static func removeTemporaries(in folder: String, madeBy pid: pid_t) {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    let suffix = "\(marker)\(hostName)-\(pid)-"
    for name in names where name.hasPrefix(".") {
      guard let range = name.range(of: suffix, options: .backwards),
        !name[range.upperBound...].isEmpty, name[range.upperBound...].allSatisfy(\.isNumber)
      else { continue }
      unlink(folder.isEmpty ? name : folder + "/" + name)
    }
  }

  /// Removes the temporaries in `folder` that no live run can still be writing: those of this
  /// host whose process has ended, and those of any host older than `age` seconds (a run on
  /// another machine sharing the folder cannot be asked whether it lives).
  ///
  /// Two runs on one folder (the documented shard scale-out on shared storage) leave each
  /// other's temporaries alone.
  public static func removeStaleTemporaries(in folder: String, olderThan age: Double = 86_400) {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    let host = hostName
    for name in names where name.hasPrefix(".") {
      guard let range = name.range(of: marker, options: .backwards) else { continue }
      let parts = name[range.upperBound...].split(separator: "-")
      guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]) else { continue }
      let owner = parts[..<(parts.count - 2)].joined(separator: "-")
      let path = folder + "/" + name
      var stale: Bool
      if owner == host {
        stale = pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
      } else {
        var status = stat()
        stale =
          lstat(path, &status) == 0 && Double(time(nil) - status.st_mtim.tv_sec) > age
      }
      if stale { unlink(path) }
    }
  }

  /// This machine's name as temporaries carry it (no `/` or `-`-free guarantees needed: the
  /// PID and counter are read from the end).
  private static let hostName: String = {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
    let name = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let safe = name.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    return safe.isEmpty ? "host" : safe
  }()

  /// A temporary path beside `path` (a hidden name, unique in the process).
  ///
  /// It checks first that `path` can be written. Finish with `commit(_:to:)`, or remove it with `discard(_:)`.
  ///
  /// - Throws: `FileError.isDirectory` or `FileError.unwritable`.
  public static func temporaryPath(for path: String) throws(FileError) -> String {
    try checkWritable(path)
    let folder = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    return (folder.isEmpty ? "" : folder + "/")
      + ".\(name)\(marker)\(hostName)-\(getpid())-\(counter.next())"
  }

  /// Makes a finished temporary file durable (`fsync`, unless `flushEachFile` is off) and
  /// renames it to its final path (atomic on one filesystem), then syncs the folder.
  ///
  /// A write that failed without the writer noticing (delayed write-back on a full disk) fails
  /// here, before the output has its final name.
  ///
  /// - Throws: `FileError.unwritable`; the temporary file is removed.
  public static func commit(_ temporary: String, to path: String) throws(FileError) {
    if flushEachFile {
      let descriptor = open(temporary, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        let reason = FileError.Reason.system(errno)
        unlink(temporary)
        throw .unwritable(path: path, reason: reason)
      }
      do {
        try FileIO.syncAndClose(descriptor, path: path)
      } catch {
        unlink(temporary)
        throw error
      }
    }
    guard rename(temporary, path) == 0 else {
      let reason = FileError.Reason.system(errno)
      unlink(temporary)
      throw .unwritable(path: path, reason: reason)
    }
    if flushEachFile { FileIO.syncFolder(of: path) }
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
