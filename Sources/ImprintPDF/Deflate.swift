// SPDX-License-Identifier: Apache-2.0
// ImprintPDF: raw deflate with zlib, which this module owns, for other modules' files (PNG).

internal import CImprintInflate

/// zlib's deflate, lent to the modules that depend on this one (ImprintGraphics' PNG files).
package enum Deflate {
  /// Deflates `input` as one raw deflate stream (RFC 1951: no zlib header, no checksum; the
  /// caller frames it).
  ///
  /// - Parameters:
  ///   - input: the bytes, read until this returns.
  ///   - level: zlib's level, 0-9.
  /// - Returns: the deflated bytes, or nil when zlib cannot start (a level out of range, no
  ///   memory).
  package static func raw(_ input: UnsafeRawBufferPointer, level: Int) -> [UInt8]? {
    guard (0...9).contains(level) else { return nil }
    let capacity = CImprintInflate_deflate_bound(input.count)
    var failed = false
    let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
      let written = CImprintInflate_deflate_raw(
        input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, Int32(level),
        buffer.baseAddress, capacity)
      failed = written < 0
      initialized = max(0, written)
    }
    return failed ? nil : output
  }
}
