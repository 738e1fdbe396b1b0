// SPDX-License-Identifier: Apache-2.0
// ImprintCore: the SHA-256 of a file, streamed and bounded.

import Foundation

extension SHA256 {
  /// The SHA-256 digest of the regular file at `path`, read in 64 KiB blocks (memory holds one
  /// block, whatever the file's size), as lowercase hex.
  ///
  /// - Parameters:
  ///   - path: the file.
  ///   - limit: the largest file read, in bytes (`FileIO.Limit.document` for uploads).
  /// - Returns: 64 lowercase hex digits.
  /// - Throws: `FileError.notFound`, `.isDirectory`, `.notRegularFile` (a FIFO or a device,
  ///   never blocking on it), `.tooLarge` (past `limit`, before reading, or grown past it
  ///   while read) or `.unreadable`.
  public static func hex(ofFile path: String, limit: Int) throws(FileError) -> String {
    let (descriptor, status) = try FileIO.openForReading(path)
    defer { close(descriptor) }
    guard Int(status.st_size) <= limit else {
      throw .tooLarge(path: path, bytes: Int(status.st_size), limit: limit)
    }
    var digest = SHA256()
    var total = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { throw .unreadable(path: path, reason: .system(errno)) }
      if count == 0 { break }
      total += count
      guard total <= limit else { throw .tooLarge(path: path, bytes: nil, limit: limit) }
      buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
    return hex(digest.finish())
  }

  /// `bytes` as lowercase hex (two digits a byte).
  public static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
