// SPDX-License-Identifier: Apache-2.0
// ImprintPDF: a growing byte buffer for content streams, appended to without an array's checks.

import Glibc

/// Bytes appended one short piece at a time (a content stream's operators and numbers), in
/// memory this buffer owns.
///
/// Why not `[UInt8]`: appending a few bytes to an array checks its uniqueness and capacity and
/// goes through the generic sequence copy, ~100 instructions an append; a card's page makes
/// some 350 appends (callgrind, 1000 card fronts: 45 K instructions a card). Here an append is
/// a capacity check and a copy. Not Sendable: one content stream's, one thread at a time.
package final class PDFBuffer {
  private var base: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  /// The number of bytes appended.
  package private(set) var count = 0

  /// An empty buffer with room for `capacity` bytes before it grows.
  package init(capacity: Int = 256) {
    self.capacity = max(16, capacity)
    base = .allocate(capacity: self.capacity)
  }

  deinit { base.deallocate() }

  /// Whether nothing was appended (since the last `removeAll`).
  package var isEmpty: Bool { count == 0 }

  /// The bytes appended, copied into an array.
  package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

  /// Forgets the bytes, keeping the memory.
  package func removeAll() { count = 0 }

  @inline(__always) package func append(_ byte: UInt8) {
    if count == capacity { grow(to: count + 1) }
    base[count] = byte
    count += 1
  }

  @inline(__always) package func append(_ bytes: UnsafeRawBufferPointer) {
    guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
    if capacity - count < bytes.count { grow(to: count + bytes.count) }
    memcpy(base + count, source, bytes.count)
    count += bytes.count
  }

  package func append(contentsOf bytes: [UInt8]) {
    bytes.withUnsafeBytes { append($0) }
  }

  package func append(contentsOf other: PDFBuffer) {
    append(UnsafeRawBufferPointer(start: other.base, count: other.count))
  }

  @inline(__always) package func put(_ text: StaticString) {
    text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
  }

  @inline(__always) package func put(_ value: Double) {
    PDFSyntax.format(value) { append($0) }
  }

  @inline(__always) package func put(_ value: Int) {
    PDFSyntax.format(value) { append($0) }
  }

  /// Four upper-case hex digits.
  @inline(__always) package func putHex(_ value: UInt16) {
    PDFSyntax.formatHex(value) { append($0) }
  }

  /// Numbers separated by spaces, followed by a space.
  package func numbers(_ values: Double...) {
    for value in values {
      put(value)
      append(UInt8(ascii: " "))
    }
  }

  /// Makes room for at least `needed` bytes, at least doubling.
  private func grow(to needed: Int) {
    let larger = max(needed, capacity * 2)
    let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
    moved.update(from: base, count: count)
    base.deallocate()
    base = moved
    capacity = larger
  }
}
