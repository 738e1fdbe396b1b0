// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: bounds-checked little-endian reads over a file's bytes, for the Office
// sniffer's ZIP and Compound File readers. Every read past the end, or at an offset no Int
// holds, is nil: hostile offsets and lengths never trap.

/// A file's bytes read as little-endian integers and byte runs, each read checked.
struct LittleEndianBytes {
  /// The bytes, valid while the caller keeps their owner alive.
  let buffer: UnsafeBufferPointer<UInt8>

  /// The number of bytes.
  var count: Int { buffer.count }

  /// Whether `length` bytes from `offset` lie inside the file.
  func contains(_ offset: Int, length: Int) -> Bool {
    offset >= 0 && length >= 0 && offset <= count && length <= count - offset
  }

  /// The byte at `offset`, or nil past the end.
  func u8(_ offset: Int) -> UInt8? {
    contains(offset, length: 1) ? buffer[offset] : nil
  }

  /// The 16-bit integer at `offset`, or nil past the end.
  func u16(_ offset: Int) -> UInt16? {
    guard contains(offset, length: 2) else { return nil }
    return UInt16(buffer[offset]) | UInt16(buffer[offset + 1]) << 8
  }

  /// The 32-bit integer at `offset`, or nil past the end.
  func u32(_ offset: Int) -> UInt32? {
    guard contains(offset, length: 4) else { return nil }
    var value: UInt32 = 0
    for index in (0..<4).reversed() { value = value << 8 | UInt32(buffer[offset + index]) }
    return value
  }

  /// The 64-bit integer at `offset`, or nil past the end.
  func u64(_ offset: Int) -> UInt64? {
    guard contains(offset, length: 8) else { return nil }
    var value: UInt64 = 0
    for index in (0..<8).reversed() { value = value << 8 | UInt64(buffer[offset + index]) }
    return value
  }

  /// The `length` bytes at `offset`, or nil when they do not all lie inside the file.
  func bytes(_ offset: Int, length: Int) -> Slice<UnsafeBufferPointer<UInt8>>? {
    contains(offset, length: length) ? buffer[offset..<offset + length] : nil
  }

  /// Whether the bytes at `offset` are `expected`.
  func matches(_ expected: [UInt8], at offset: Int) -> Bool {
    bytes(offset, length: expected.count)?.elementsEqual(expected) ?? false
  }
}
