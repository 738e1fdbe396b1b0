// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: a ZIP archive's central directory (PKWARE APPNOTE 6.3.10, sections 4.3.6,
// 4.3.12 and 4.3.14-16), read to learn its entries' names and to see a stored entry's bytes.
// Nothing is inflated and nothing is extracted: a name with `..` or a leading `/` is only a name.

/// One entry of a ZIP archive's central directory.
struct ZipEntry {
  /// The name's bytes as the directory holds them (UTF-8 or CP437: only compared here).
  let name: Slice<UnsafeBufferPointer<UInt8>>
  /// The compression method: 0 stored, 8 deflated.
  let method: UInt16
  /// The entry's data size in the archive, in bytes.
  let compressedSize: Int
  /// Where the entry's local file header starts.
  let localHeaderOffset: Int
}

/// The central directory of a ZIP archive, walked with every offset and count checked.
enum ZipDirectory {
  /// The most entries read; an archive declaring more is refused.
  static let maximumEntries = 100_000
  /// How far from the end the end-of-central-directory record may start: its 22 bytes and the
  /// longest comment (65 535 bytes).
  static let endRecordSearch = 22 + 65_535

  private static let endSignature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
  private static let zip64LocatorSignature: [UInt8] = [0x50, 0x4B, 0x06, 0x07]
  private static let zip64EndSignature: [UInt8] = [0x50, 0x4B, 0x06, 0x06]
  private static let entrySignature: [UInt8] = [0x50, 0x4B, 0x01, 0x02]
  private static let localSignature: [UInt8] = [0x50, 0x4B, 0x03, 0x04]

  /// Where the central directory lies and how many entries it declares.
  struct Location {
    /// The directory's first byte.
    let offset: Int
    /// The directory's length, in bytes.
    let size: Int
    /// The number of entries.
    let entries: Int
  }

  /// Calls `body` with each entry of the archive's central directory, in order.
  ///
  /// - Returns: false when the directory cannot be read whole (no end record, a directory
  ///   outside the file or overlapping its end record, more than `maximumEntries` entries, an
  ///   archive split over disks, an entry that does not fit); `body` may have seen some entries.
  static func forEachEntry(in bytes: LittleEndianBytes, _ body: (ZipEntry) -> Void) -> Bool {
    guard let location = locate(in: bytes) else { return false }
    let end = location.offset + location.size
    var at = location.offset
    for _ in 0..<location.entries {
      guard bytes.matches(entrySignature, at: at), at <= end - 46,
        let method = bytes.u16(at + 10), let size32 = bytes.u32(at + 20),
        let uncompressed32 = bytes.u32(at + 24), let nameLength = bytes.u16(at + 28),
        let extraLength = bytes.u16(at + 30), let commentLength = bytes.u16(at + 32),
        let offset32 = bytes.u32(at + 42)
      else { return false }
      let length = 46 + Int(nameLength) + Int(extraLength) + Int(commentLength)
      guard length <= end - at, let name = bytes.bytes(at + 46, length: Int(nameLength)) else {
        return false
      }
      let extra = at + 46 + Int(nameLength)
      guard
        let (size, offset) = zip64Fields(
          in: bytes, extra: extra..<extra + Int(extraLength), uncompressed: uncompressed32,
          compressed: size32, offset: offset32)
      else { return false }
      body(ZipEntry(name: name, method: method, compressedSize: size, localHeaderOffset: offset))
      at += length
    }
    return true
  }

  /// The bytes of `entry` when it is stored (not compressed) and at most `limit` bytes long,
  /// read through its local file header; nil otherwise.
  static func storedData(of entry: ZipEntry, in bytes: LittleEndianBytes, limit: Int)
    -> Slice<UnsafeBufferPointer<UInt8>>?
  {
    let header = entry.localHeaderOffset
    guard entry.method == 0, entry.compressedSize <= limit,
      bytes.matches(localSignature, at: header), let nameLength = bytes.u16(header + 26),
      let extraLength = bytes.u16(header + 28)
    else { return nil }
    return bytes.bytes(
      header + 30 + Int(nameLength) + Int(extraLength), length: entry.compressedSize)
  }

  /// The central directory's place from the end record (and its ZIP64 record when the end
  /// record's fields are saturated and a ZIP64 locator precedes it); nil when it is not inside
  /// the file before the end record, or declares too many entries.
  static func locate(in bytes: LittleEndianBytes) -> Location? {
    guard let record = endRecord(in: bytes), let disk = bytes.u16(record + 4),
      let directoryDisk = bytes.u16(record + 6), let entries16 = bytes.u16(record + 10),
      let size32 = bytes.u32(record + 12), let offset32 = bytes.u32(record + 16)
    else { return nil }
    var entries = Int(entries16)
    var size = Int(size32)
    var offset = Int(offset32)
    var limit = record
    let saturated = entries16 == 0xFFFF || size32 == 0xFFFF_FFFF || offset32 == 0xFFFF_FFFF
    if saturated, record >= 20, bytes.matches(zip64LocatorSignature, at: record - 20) {
      // ZIP64: the locator names the ZIP64 end record, which holds 64-bit fields.
      guard let recordOffset = bytes.u64(record - 12).flatMap({ Int(exactly: $0) }),
        recordOffset <= record - 20 - 56, bytes.matches(zip64EndSignature, at: recordOffset),
        let disk64 = bytes.u32(recordOffset + 16),
        let directoryDisk64 = bytes.u32(recordOffset + 20),
        disk64 == 0, directoryDisk64 == 0,
        let entries64 = bytes.u64(recordOffset + 32).flatMap({ Int(exactly: $0) }),
        let size64 = bytes.u64(recordOffset + 40).flatMap({ Int(exactly: $0) }),
        let offset64 = bytes.u64(recordOffset + 48).flatMap({ Int(exactly: $0) })
      else { return nil }
      (entries, size, offset, limit) = (entries64, size64, offset64, recordOffset)
    } else if disk != 0 || directoryDisk != 0 {
      return nil  // split over disks: LibreOffice reads no such archive either
    }
    // Every entry takes at least 46 bytes, so the count is checked against the size too.
    guard entries <= maximumEntries, offset <= limit, size <= limit - offset,
      entries <= size / 46
    else { return nil }
    return Location(offset: offset, size: size, entries: entries)
  }

  /// The offset of the end-of-central-directory record: the last signature within
  /// `endRecordSearch` bytes of the end whose comment fits inside the file.
  private static func endRecord(in bytes: LittleEndianBytes) -> Int? {
    guard bytes.count >= 22 else { return nil }
    let lowest = max(0, bytes.count - endRecordSearch)
    var at = bytes.count - 22
    while at >= lowest {
      if bytes.buffer[at] == 0x50, bytes.matches(endSignature, at: at),
        let comment = bytes.u16(at + 20), Int(comment) <= bytes.count - 22 - at
      {
        return at
      }
      at -= 1
    }
    return nil
  }

  /// An entry's compressed size and local header offset, from the ZIP64 extended information
  /// (extra field 0x0001) where the 32-bit fields are saturated; nil when a saturated field's
  /// 64-bit value is missing or does not fit an Int.
  private static func zip64Fields(
    in bytes: LittleEndianBytes, extra: Range<Int>, uncompressed: UInt32, compressed: UInt32,
    offset: UInt32
  ) -> (size: Int, offset: Int)? {
    let saturated: UInt32 = 0xFFFF_FFFF
    guard compressed == saturated || offset == saturated else {
      return (Int(compressed), Int(offset))
    }
    var at = extra.lowerBound
    while at <= extra.upperBound - 4, let tag = bytes.u16(at), let length = bytes.u16(at + 2) {
      let data = at + 4
      guard Int(length) <= extra.upperBound - data else { return nil }
      if tag == 1 {
        // The 64-bit values present are those whose 32-bit field is saturated, in this order.
        var field = data
        let fieldEnd = data + Int(length)
        func wide(_ value: UInt32) -> Int? {
          guard value == saturated else { return Int(value) }
          guard field <= fieldEnd - 8, let read = bytes.u64(field).flatMap({ Int(exactly: $0) })
          else { return nil }
          field += 8
          return read
        }
        guard wide(uncompressed) != nil, let size = wide(compressed), let start = wide(offset)
        else { return nil }
        return (size, start)
      }
      at = data + Int(length)
    }
    return nil
  }
}
