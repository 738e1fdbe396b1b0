// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: the batch's own files: outputs written through a buffer with every write checked
// and renamed into place at the end, and file digests streamed a chunk at a time.

import Foundation
import ImprintCore
import ImprintQR

/// A file written piece by piece, atomically, every write checked.
///
/// It goes into a hidden temporary beside the final path through a 64 KiB buffer and is
/// renamed into place by `commit()`. A failed write (a full disk) throws, and `discard()` (or
/// the end of the object) leaves no file.
///
/// Not Sendable: one writer belongs to one task.
final class AtomicOutput {
  /// The final path.
  let path: String
  private let temporary: String
  private var descriptor: Int32
  private var buffer: [UInt8] = []

  /// Creates the temporary for `path`.
  ///
  /// - Throws: `FileError.isDirectory` or `FileError.unwritable`.
  init(path: String) throws(FileError) {
    self.path = path
    temporary = try AtomicFile.temporaryPath(for: path)
    descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw .unwritable(path: path, reason: .system(errno))
    }
    buffer.reserveCapacity(1 << 16)
  }

  deinit { discard() }

  /// Appends `bytes`.
  ///
  /// - Throws: `FileError.unwritable` when writing fails (the file is then unusable).
  func write(_ bytes: some Sequence<UInt8>) throws(FileError) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= 1 << 16 { try flush() }
  }

  /// Appends `text` as UTF-8.
  func write(_ text: String) throws(FileError) { try write(text.utf8) }

  private func flush() throws(FileError) {
    guard descriptor >= 0 else {
      throw .unwritable(path: path, reason: "the file was already closed")
    }
    defer { buffer.removeAll(keepingCapacity: true) }
    try FileIO.writeAll(buffer, to: descriptor, path: path)
  }

  /// Writes what is buffered, syncs, closes and renames the file into place.
  ///
  /// - Throws: `FileError.unwritable`; the temporary is removed.
  func commit() throws(FileError) {
    do {
      try flush()
      let open = descriptor
      descriptor = -1
      try FileIO.close(open, path: path)
      try AtomicFile.commit(temporary, to: path)
    } catch {
      discard()
      throw error
    }
  }

  /// Removes the temporary (nothing happens after `commit()`).
  func discard() {
    if descriptor >= 0 {
      close(descriptor)
      descriptor = -1
      AtomicFile.discard(temporary)
    }
  }
}

/// `error`, naming `path` where it names `temporary`, the hidden file that becomes `path`: a
/// full disk met while writing is reported for the file that was asked for.
func namingFinal(_ error: any Error, temporary: String?, path: String) -> any Error {
  if case .unwritable(let named, let reason) = error as? FileError, named == temporary {
    return FileError.unwritable(path: path, reason: reason)
  }
  return error
}

/// Digests of input files, streamed: memory holds one chunk, whatever the file's size.
enum FileDigest {
  /// The chunk hashed at a time.
  static let chunk = 1 << 20

  /// SHA-256 of the SHA-256 digests of each MiB of the regular file `path` and of its length.
  ///
  /// - Throws: `FileError` (`file.notRegular` for a FIFO or a device, never blocking on it).
  static func of(_ path: String) throws(FileError) -> [UInt8] {
    let (descriptor, _) = try FileIO.openForReading(path)
    defer { close(descriptor) }
    var digests: [UInt8] = []
    var total = 0
    var block = [UInt8](repeating: 0, count: chunk)
    while true {
      // A whole chunk (short reads are joined), so the digest does not depend on read sizes.
      var filled = 0
      while filled < chunk {
        let got = block.withUnsafeMutableBytes { space in
          read(descriptor, space.baseAddress.map { $0 + filled }, chunk - filled)
        }
        if got < 0 && errno == EINTR { continue }
        guard got >= 0 else {
          throw .unreadable(path: path, reason: .system(errno))
        }
        if got == 0 { break }
        filled += got
      }
      if filled > 0 {
        digests += SHA256.hash(block[0..<filled])
        total += filled
      }
      if filled < chunk { break }
    }
    digests += Array(String(total).utf8)
    return SHA256.hash(digests)
  }

  /// `of(path)` as lowercase hex.
  static func hex(_ path: String) throws(FileError) -> String {
    hex(try of(path))
  }

  /// `bytes` as lowercase hex.
  static func hex(_ bytes: [UInt8]) -> String {
    SHA256.hex(bytes)
  }
}
