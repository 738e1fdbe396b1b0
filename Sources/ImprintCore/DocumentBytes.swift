// SPDX-License-Identifier: Apache-2.0
// Imprint: a document's bytes at a fixed address, copied from memory or mapped from a file.

import Foundation

/// A document's bytes at a fixed address for as long as anything holds them: a private copy of
/// bytes an upload arrived in, or a read-only mapping of a file.
///
/// A mapped file is read page by page as parsers touch it: a first-page thumbnail of a 30 MB
/// manual reads a small part of it, and the parsers (poppler, qpdf, the quick page-tree reader)
/// share the one mapping instead of each holding a copy. Immutable; released when the last
/// holder lets go. (A mapped file that another program truncates while it is read ends the
/// process with SIGBUS; uploads are read in sandboxed workers, where that is one file's error.)
public final class DocumentBytes: @unchecked Sendable {
  /// The bytes, valid while this object lives (see `withBuffer`).
  public let buffer: UnsafeBufferPointer<UInt8>
  private let mapped: Bool

  /// A private copy of `bytes`.
  public init(copying bytes: [UInt8]) {
    buffer = bytes.withUnsafeBufferPointer { Self.copy($0) }
    mapped = false
  }

  /// A private copy of `bytes`, a buffer another library owns.
  public init(copying bytes: UnsafeBufferPointer<UInt8>) {
    buffer = Self.copy(bytes)
    mapped = false
  }

  private static func copy(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, bytes.count))
    _ = storage.initialize(from: bytes)
    return UnsafeBufferPointer(rebasing: storage[..<bytes.count])
  }

  /// The regular file at `path`, mapped read-only.
  ///
  /// - Throws: `FileError.notFound`, `.isDirectory`, `.notRegularFile`, `.tooLarge` (over
  ///   `FileIO.Limit.document`) or `.unreadable`.
  public init(mapping path: String) throws(FileError) {
    let (descriptor, status) = try FileIO.openForReading(path)
    defer { close(descriptor) }
    guard Int(status.st_size) <= FileIO.Limit.document else {
      throw .tooLarge(path: path, bytes: Int(status.st_size), limit: FileIO.Limit.document)
    }
    guard status.st_size > 0 else {
      // mmap needs content: an empty file is an empty buffer.
      buffer = UnsafeBufferPointer(
        rebasing: UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1)[..<0])
      mapped = false
      return
    }
    let length = Int(status.st_size)
    guard let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0),
      address != MAP_FAILED
    else {
      throw .unreadable(path: path, reason: .system(errno))
    }
    buffer = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: length)
    mapped = true
  }

  deinit {
    if mapped {
      munmap(UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count)
    } else {
      UnsafeMutableBufferPointer(mutating: buffer).deallocate()
    }
  }

  /// Calls `body` with the bytes, keeping them alive until it returns.
  public func withBuffer<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
    -> Result
  {
    try withExtendedLifetime(self) { try body(buffer) }
  }

  /// The number of bytes.
  public var count: Int { buffer.count }

  /// A copy of the bytes as an array (for small files such as photos).
  public var array: [UInt8] { Array(buffer) }
}
