// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: the resolution a JPEG states (its JFIF density, else its EXIF resolution),
// and the one defensive reader of a JPEG's EXIF IFD0 (resolution and orientation).

extension ImageDecoder {
  /// Resolutions outside this range (dots per inch) are taken as unstated: a density of 1 is
  /// an aspect ratio written in the wrong units, 65 535 a placeholder.
  public static let plausibleDPI: ClosedRange<Double> = 10...10_000

  /// The horizontal resolution of a JPEG in dots per inch, nil when it states none.
  ///
  /// First the JFIF density (APP0), when its units are dots per inch or per centimetre and
  /// both densities are within `plausibleDPI`; else the EXIF resolution (APP1, IFD0's
  /// XResolution, YResolution and ResolutionUnit, either byte order), when the unit is the
  /// inch or the centimetre (the inch when the tag is absent, as EXIF says) and both are
  /// within `plausibleDPI`. Hostile bytes (offsets outside the segment, zero denominators,
  /// truncated entries) make a source unstated, never a trap.
  ///
  /// - Parameter bytes: the JPEG file.
  /// - Returns: dots per inch, or nil.
  public static func jpegDPI(_ bytes: [UInt8]) -> Double? {
    var jfif: Double?
    var exif: Double?
    var sawExif = false
    forEachSegment(bytes) { marker, start, end in
      if marker == 0xE0, jfif == nil, end - start >= 12,
        Array(bytes[start..<(start + 5)]) == Array("JFIF\0".utf8)
      {
        let units = bytes[start + 7]
        let x = Double(Int(bytes[start + 8]) << 8 | Int(bytes[start + 9]))
        let y = Double(Int(bytes[start + 10]) << 8 | Int(bytes[start + 11]))
        let scale = units == 1 ? 1 : units == 2 ? 2.54 : 0
        if scale > 0, plausibleDPI.contains(x * scale), plausibleDPI.contains(y * scale) {
          jfif = x * scale
        }
      }
      if marker == 0xE1, !sawExif, EXIFDirectory.isEXIF(bytes, segment: start..<end) {
        // The first EXIF segment is the one (as for the orientation).
        sawExif = true
        exif = EXIFDirectory(bytes, segment: start..<end)?.dpi
      }
      return jfif == nil
    }
    return jfif ?? exif
  }

  /// Calls `body` with each marker segment's marker and payload range (after the length)
  /// until the image data starts or `body` returns false; stops at anything that is not a
  /// segment.
  static func forEachSegment(_ bytes: [UInt8], _ body: (UInt8, Int, Int) -> Bool) {
    var offset = 2
    while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
      let marker = bytes[offset + 1]
      if marker == 0xDA || marker == 0xD9 { return }
      let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
      guard length >= 2 else { return }
      let end = min(bytes.count, offset + 2 + length)
      if !body(marker, offset + 4, end) { return }
      offset += 2 + length
    }
  }
}

/// IFD0 of a JPEG's EXIF segment (`Exif\0\0` and a TIFF header), read without trusting it:
/// every offset is checked against the segment, IFD0 alone is read (no link is followed, so
/// no loop), at most 256 entries.
struct EXIFDirectory {
  private let bytes: [UInt8]
  /// The TIFF header's offset (offsets count from it) and the segment's end.
  private let base: Int
  private let end: Int
  private let little: Bool
  /// IFD0's offset in `bytes` and its entry count.
  private let directory: Int
  private let count: Int

  /// Whether the APP1 payload at `segment` starts as an EXIF segment does (`Exif\0\0`).
  static func isEXIF(_ bytes: [UInt8], segment: Range<Int>) -> Bool {
    segment.lowerBound >= 0 && segment.upperBound <= bytes.count && segment.count >= 6
      && Array(bytes[segment.lowerBound..<(segment.lowerBound + 6)]) == Array("Exif\0\0".utf8)
  }

  /// Reads the header of the EXIF segment at `segment` (the APP1 payload).
  ///
  /// Nil when it is not one or its IFD0 lies outside it. The byte order is little-endian for
  /// `II`, else big-endian.
  init?(_ bytes: [UInt8], segment: Range<Int>) {
    let base = segment.lowerBound + 6
    guard Self.isEXIF(bytes, segment: segment), base + 8 <= segment.upperBound else {
      return nil
    }
    self.bytes = bytes
    self.base = base
    end = segment.upperBound
    little = bytes[base] == 0x49
    guard let offset = Self.u32(bytes, base + 4, end: end, little: little) else { return nil }
    directory = base + offset
    guard let count = Self.u16(bytes, directory, end: end, little: little) else { return nil }
    self.count = min(count, 256)
  }

  private static func u16(_ bytes: [UInt8], _ at: Int, end: Int, little: Bool) -> Int? {
    guard at >= 0, at <= end - 2 else { return nil }
    let (a, b) = (Int(bytes[at]), Int(bytes[at + 1]))
    return little ? a | b << 8 : a << 8 | b
  }

  private static func u32(_ bytes: [UInt8], _ at: Int, end: Int, little: Bool) -> Int? {
    guard let a = u16(bytes, at, end: end, little: little),
      let b = u16(bytes, at + 2, end: end, little: little)
    else { return nil }
    return little ? a | b << 16 : a << 16 | b
  }

  /// The entry of `tag`: its type and the offset of its 4-byte value field.
  private func entry(_ tag: Int) -> (type: Int, value: Int)? {
    for index in 0..<count {
      let at = directory + 2 + index * 12
      guard let found = Self.u16(bytes, at, end: end, little: little) else { return nil }
      if found == tag, let type = Self.u16(bytes, at + 2, end: end, little: little) {
        return (type, at + 8)
      }
    }
    return nil
  }

  /// A SHORT tag's first value.
  func short(_ tag: Int) -> Int? {
    guard let (type, value) = entry(tag), type == 3 else { return nil }
    return Self.u16(bytes, value, end: end, little: little)
  }

  /// A RATIONAL tag's first value (its 8 bytes at the offset the entry gives), nil for a zero
  /// denominator.
  func rational(_ tag: Int) -> Double? {
    guard let (type, value) = entry(tag), type == 5,
      let offset = Self.u32(bytes, value, end: end, little: little),
      let numerator = Self.u32(bytes, base + offset, end: end, little: little),
      let denominator = Self.u32(bytes, base + offset + 4, end: end, little: little),
      denominator != 0
    else { return nil }
    return Double(numerator) / Double(denominator)
  }

  /// The orientation (1-8), nil when absent or out of range.
  var orientation: Int? {
    guard let entry = entry(0x0112),
      let value = Self.u16(bytes, entry.value, end: end, little: little), (1...8).contains(value)
    else { return nil }
    return value
  }

  /// XResolution in dots per inch, by ResolutionUnit (2 inch, the default; 3 centimetre),
  /// when it and YResolution (if given) are within `ImageDecoder.plausibleDPI`.
  var dpi: Double? {
    let unit = short(0x0128) ?? 2
    let scale = unit == 2 ? 1 : unit == 3 ? 2.54 : 0
    guard scale > 0, let x = rational(0x011A).map({ $0 * scale }),
      ImageDecoder.plausibleDPI.contains(x)
    else { return nil }
    if let y = rational(0x011B).map({ $0 * scale }), !ImageDecoder.plausibleDPI.contains(y) {
      return nil
    }
    return x
  }
}
