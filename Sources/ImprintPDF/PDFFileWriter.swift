// SPDX-License-Identifier: Apache-2.0
// ImprintPDF: a PDF file written object by object, streams compressed with libdeflate: the file
// layer of ImprintGraphics' own PDF writer (cards).

internal import CImprintInflate

/// Numbers and strings as a PDF writes them, appended to a byte buffer.
package enum PDFSyntax {
  /// Appends `value` in decimal, at most four decimals, without an exponent or trailing zeros
  /// (`12`, `-0.5`, `3.1416`); values beyond ±10^12 are clamped (a PDF reader's limit is far
  /// lower, and nothing Imprint draws comes near it), NaN written as 0.
  package static func append(_ value: Double, to out: inout [UInt8]) {
    format(value) { out.append(contentsOf: $0) }
  }

  /// Appends `value` in decimal.
  package static func append(_ value: Int, to out: inout [UInt8]) {
    format(value) { out.append(contentsOf: $0) }
  }

  /// Gives `emit` the bytes of `value` as `append(_:to:)` writes it (Double).
  ///
  /// Written backwards into a buffer on the stack and handed on at once: a byte appended at a
  /// time checked the array's uniqueness and capacity for each (a number cost ~380
  /// instructions; a card's page writes over a hundred).
  @inline(__always) package static func format(
    _ value: Double, _ emit: (UnsafeRawBufferPointer) -> Void
  ) {
    guard value.isFinite else {
      withUnsafeBytes(of: UInt8(ascii: "0")) { emit($0) }
      return
    }
    let clamped = min(max(value, -1e12), 1e12)
    let scaled = Int64((clamped * 10_000).rounded())
    let whole = scaled.magnitude / 10_000
    var fraction = scaled.magnitude % 10_000
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var index = buffer.count
      if fraction != 0 {
        var digits = 4
        while fraction % 10 == 0 {
          fraction /= 10
          digits -= 1
        }
        for _ in 0..<digits {
          index -= 1
          buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction % 10)
          fraction /= 10
        }
        index -= 1
        buffer[index] = UInt8(ascii: ".")
      }
      prependDigits(of: whole, to: buffer, at: &index)
      if scaled < 0 {
        index -= 1
        buffer[index] = UInt8(ascii: "-")
      }
      emit(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[index...]))
    }
  }

  /// Gives `emit` the decimal bytes of `value`.
  @inline(__always) package static func format(
    _ value: Int, _ emit: (UnsafeRawBufferPointer) -> Void
  ) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var index = buffer.count
      prependDigits(of: UInt64(value.magnitude), to: buffer, at: &index)
      if value < 0 {
        index -= 1
        buffer[index] = UInt8(ascii: "-")
      }
      emit(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[index...]))
    }
  }

  /// Writes the decimal digits of `value` into `buffer` before `index`, moving it back.
  private static func prependDigits(
    of value: UInt64, to buffer: UnsafeMutableBufferPointer<UInt8>, at index: inout Int
  ) {
    var rest = value
    repeat {
      index -= 1
      buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
      rest /= 10
    } while rest > 0
  }

  /// Appends `text` as a PDF text string: a literal string `(...)` (parentheses and
  /// backslashes escaped) when it is printable ASCII, else UTF-16BE with a byte-order mark in
  /// hex (`<FEFF...>`).
  package static func appendText(_ text: String, to out: inout [UInt8]) {
    if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) {
      out.append(UInt8(ascii: "("))
      for byte in text.utf8 {
        if byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")") || byte == UInt8(ascii: "\\") {
          out.append(UInt8(ascii: "\\"))
        }
        out.append(byte)
      }
      out.append(UInt8(ascii: ")"))
      return
    }
    out.append(contentsOf: Array("<FEFF".utf8))
    for unit in text.utf16 { appendHex(unit, to: &out) }
    out.append(UInt8(ascii: ">"))
  }

  /// Appends `value` as four upper-case hex digits.
  package static func appendHex(_ value: UInt16, to out: inout [UInt8]) {
    formatHex(value) { out.append(contentsOf: $0) }
  }

  /// Gives `emit` the four upper-case hex digits of `value`, at once (see `format` for Double).
  @inline(__always) package static func formatHex(
    _ value: UInt16, _ emit: (UnsafeRawBufferPointer) -> Void
  ) {
    func digit(_ nibble: UInt16) -> UInt8 {
      let low = UInt8(truncatingIfNeeded: nibble & 0xF)
      return low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "A") - 10 + low
    }
    let digits = (digit(value >> 12), digit(value >> 8), digit(value >> 4), digit(value))
    withUnsafeBytes(of: digits) { emit($0) }
  }
}

/// A PDF file written one object at a time into a buffer that its owner drains (to memory or a
/// file) as it goes: a header, numbered objects, streams (compressed with libdeflate), and at
/// the end the cross-reference table and trailer.
///
/// Objects are numbered by `reserve()` and may be written in any order; every reserved number
/// must be written before `finish`. Not Sendable: one document's writer, one thread at a time.
package final class PDFFileWriter {
  /// The bytes written and not yet drained.
  private var buffer: [UInt8] = []
  /// How many bytes were drained before `buffer`'s first.
  private var drained = 0
  /// Each object's offset in the file (index: number); -1 while reserved, unwritten.
  private var offsets: [Int] = [0]
  /// The deflate level of compressed streams (libdeflate's 1-12).
  private let level: Int

  /// Starts a file with the header of PDF `version` (`"1.5"`).
  package init(version: String = "1.5", level: Int = 6) {
    self.level = level
    buffer.reserveCapacity(1 << 16)
    buffer.append(contentsOf: Array("%PDF-\(version)\n%".utf8))
    // Four bytes above 127: the file is binary (PDF 32000 7.5.2).
    buffer.append(contentsOf: [0xE2, 0xE3, 0xCF, 0xD3, 0x0A])
  }

  /// The file's length so far.
  package var position: Int { drained + buffer.count }

  /// How many bytes wait to be drained.
  package var pending: Int { buffer.count }

  /// Hands over the bytes written since the last drain.
  package func drain() -> [UInt8] {
    let bytes = buffer
    drained += bytes.count
    buffer.removeAll(keepingCapacity: true)
    return bytes
  }

  /// A new object number, to be written later with `object` or `stream`.
  package func reserve() -> Int {
    offsets.append(-1)
    return offsets.count - 1
  }

  /// Writes object `number`: `body` appends its value (a dictionary, an array, a number).
  package func object(_ number: Int, _ body: (inout [UInt8]) -> Void) {
    begin(number)
    body(&buffer)
    buffer.append(contentsOf: Self.endObject)
  }

  /// Writes object `number` as a stream of `data`, deflated when `compress` (and smaller so),
  /// its dictionary holding `/Length`, `/Filter` and what `entries` appends (`/Type /XObject
  /// ...`, each entry starting with a space or slash), at `level` (nil: the file's).
  package func stream(
    _ number: Int, data: [UInt8], compress: Bool = true, level: Int? = nil,
    entries: (inout [UInt8]) -> Void = { _ in }
  ) {
    let packed = compress ? Self.deflate(data, level: level ?? self.level) : nil
    begin(number)
    buffer.append(contentsOf: Array("<</Length ".utf8))
    PDFSyntax.append((packed ?? data).count, to: &buffer)
    if packed != nil { buffer.append(contentsOf: Array("/Filter/FlateDecode".utf8)) }
    entries(&buffer)
    buffer.append(contentsOf: Array(">>\nstream\n".utf8))
    buffer.append(contentsOf: packed ?? data)
    buffer.append(contentsOf: Array("\nendstream".utf8))
    buffer.append(contentsOf: Self.endObject)
  }

  /// Writes the cross-reference table and the trailer naming `root` (the catalog) and `info`.
  ///
  /// - Returns: false when a reserved object was never written (the file would be broken).
  package func finish(root: Int, info: Int?) -> Bool {
    guard !offsets.dropFirst().contains(-1) else { return false }
    let start = position
    buffer.append(contentsOf: Array("xref\n0 ".utf8))
    PDFSyntax.append(offsets.count, to: &buffer)
    buffer.append(contentsOf: Array("\n0000000000 65535 f \n".utf8))
    for offset in offsets.dropFirst() {
      var digits: [UInt8] = []
      PDFSyntax.append(offset, to: &digits)
      buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, 10 - digits.count)))
      buffer.append(contentsOf: digits)
      buffer.append(contentsOf: Array(" 00000 n \n".utf8))
    }
    buffer.append(contentsOf: Array("trailer\n<</Size ".utf8))
    PDFSyntax.append(offsets.count, to: &buffer)
    buffer.append(contentsOf: Array("/Root ".utf8))
    PDFSyntax.append(root, to: &buffer)
    buffer.append(contentsOf: Array(" 0 R".utf8))
    if let info {
      buffer.append(contentsOf: Array("/Info ".utf8))
      PDFSyntax.append(info, to: &buffer)
      buffer.append(contentsOf: Array(" 0 R".utf8))
    }
    buffer.append(contentsOf: Array(">>\nstartxref\n".utf8))
    PDFSyntax.append(start, to: &buffer)
    buffer.append(contentsOf: Array("\n%%EOF\n".utf8))
    return true
  }

  private static let endObject = Array("\nendobj\n".utf8)

  private func begin(_ number: Int) {
    precondition(
      offsets.indices.contains(number) && offsets[number] == -1, "an object written twice")
    offsets[number] = position
    PDFSyntax.append(number, to: &buffer)
    buffer.append(contentsOf: Array(" 0 obj\n".utf8))
  }

  /// `data` as one zlib stream (FlateDecode) by libdeflate at `level`, or nil when that is not
  /// smaller than the data itself (or libdeflate cannot start).
  package static func deflate(_ data: [UInt8], level: Int) -> [UInt8]? {
    guard !data.isEmpty else { return nil }
    let capacity = CImprintInflate_zlib_bound(data.count)
    var written = -1
    let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, initialized in
      written = data.withUnsafeBufferPointer {
        CImprintInflate_zlib_compress(
          $0.baseAddress, $0.count, Int32(level), out.baseAddress, capacity)
      }
      initialized = max(0, written)
    }
    return written > 0 && written < data.count ? output : nil
  }
}
