// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: JPEG files with hand-built JFIF and EXIF segments, so that a test knows
// every byte of the resolution a file states.

import ImprintGraphics

/// Builds JPEG marker segments by hand.
public enum JPEGBytes {
  /// A baseline JPEG of `width` × `height` grey pixels with every APPn segment removed (the
  /// encoder's JFIF header included): SOI, then `segments`, then the image's own segments.
  public static func jpeg(width: Int, height: Int, segments: [[UInt8]]) throws -> [UInt8] {
    let image = try RasterImage(width: width, height: height)
    let encoded = try image.jpeg()
    var rest: [UInt8] = []
    var offset = 2
    while offset + 4 <= encoded.count, encoded[offset] == 0xFF {
      let marker = encoded[offset + 1]
      let length = Int(encoded[offset + 2]) << 8 | Int(encoded[offset + 3])
      if marker == 0xDA {
        rest += encoded[offset...]
        break
      }
      if !(0xE0...0xEF).contains(marker) { rest += encoded[offset..<(offset + 2 + length)] }
      offset += 2 + length
    }
    return [0xFF, 0xD8] + segments.flatMap { $0 } + rest
  }

  /// A marker segment: FF, the marker, the length (payload + 2, big-endian), the payload.
  public static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
    let length = payload.count + 2
    return [0xFF, marker, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload
  }

  /// A JFIF APP0 with `units` (0 aspect only, 1 dpi, 2 dots per cm) and densities.
  public static func jfif(units: UInt8, x: Int, y: Int) -> [UInt8] {
    segment(
      0xE0,
      Array("JFIF\0".utf8) + [
        1, 1, units, UInt8(x >> 8), UInt8(x & 0xFF), UInt8(y >> 8),
        UInt8(y & 0xFF), 0, 0,
      ])
  }

  /// One IFD0 entry: tag, type (3 SHORT, 5 RATIONAL), and either a SHORT value or a
  /// rational (numerator, denominator) stored after the directory.
  public enum Entry {
    case short(tag: Int, value: Int)
    case rational(tag: Int, numerator: UInt32, denominator: UInt32)
    /// An entry written as given: tag, type, count, the raw 4-byte value field.
    case raw(tag: Int, type: Int, count: UInt32, value: UInt32)
  }

  /// An EXIF APP1 segment: `Exif\0\0`, a TIFF header in the byte order asked for, IFD0 at
  /// offset 8 with `entries`, then the rationals' 8 bytes each.
  public static func exif(little: Bool, entries: [Entry], ifdOffset: UInt32 = 8) -> [UInt8] {
    func u16(_ value: Int) -> [UInt8] {
      let bytes = [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)]
      return little ? bytes : bytes.reversed()
    }
    func u32(_ value: UInt32) -> [UInt8] {
      let bytes = (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) }
      return little ? bytes : bytes.reversed()
    }
    var tiff = (little ? Array("II".utf8) : Array("MM".utf8)) + u16(42) + u32(ifdOffset)
    let dataStart = 8 + 2 + entries.count * 12 + 4
    var data: [UInt8] = []
    tiff += u16(entries.count)
    for entry in entries {
      switch entry {
      case .short(let tag, let value):
        tiff += u16(tag) + u16(3) + u32(1) + u16(value) + [0, 0]
      case .rational(let tag, let numerator, let denominator):
        tiff += u16(tag) + u16(5) + u32(1) + u32(UInt32(dataStart + data.count))
        data += u32(numerator) + u32(denominator)
      case .raw(let tag, let type, let count, let value):
        tiff += u16(tag) + u16(type) + u32(count) + u32(value)
      }
    }
    tiff += u32(0) + data
    return segment(0xE1, Array("Exif\0\0".utf8) + tiff)
  }

  /// XResolution and YResolution `numerator/denominator`, and ResolutionUnit when given.
  public static func resolution(
    _ numerator: UInt32, _ denominator: UInt32 = 1, unit: Int? = 2, little: Bool = true
  ) -> [UInt8] {
    var entries: [Entry] = [
      .rational(tag: 0x011A, numerator: numerator, denominator: denominator),
      .rational(tag: 0x011B, numerator: numerator, denominator: denominator),
    ]
    if let unit { entries.append(.short(tag: 0x0128, value: unit)) }
    return exif(little: little, entries: entries)
  }
}
