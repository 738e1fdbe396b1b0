// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: small Compound Files ([MS-CFB] version 3, 512-byte sectors) written by
// the tests themselves, for formats no producer here makes (HWP 5, password-protected OOXML),
// with a layout fixed enough that a test can break one chain on purpose.

/// Compound Files of streams at their root, in version 3 with 512-byte sectors.
///
/// The layout:
/// - the header; sector 0, the FAT (one sector: files of up to 128 sectors);
/// - sectors 1..., the directory (the root entry, then the streams in the order given, four
///   entries a sector);
/// - then, when any stream is shorter than 4096 bytes, one mini FAT sector and the mini
///   stream's sectors (the root's chain): such streams are stored in 64-byte mini sectors;
/// - then each stream of 4096 bytes or more, in whole sectors, in the order given.
public enum CompoundFileBytes {
  /// The end of a chain, a FAT sector, a free sector, no entry ([MS-CFB] 2.1).
  public static let endOfChain: UInt32 = 0xFFFF_FFFE
  static let fatSector: UInt32 = 0xFFFF_FFFD
  static let free: UInt32 = 0xFFFF_FFFF

  /// A Compound File holding `streams` (name, bytes) at its root.
  public static func make(_ streams: [(name: String, data: [UInt8])]) -> [UInt8] {
    let small = streams.filter { $0.data.count < 4096 }
    var fat: [UInt32] = [fatSector]
    /// Appends a chain of `count` sectors to the FAT and returns its first sector.
    func chain(_ count: Int) -> UInt32 {
      guard count > 0 else { return endOfChain }
      let first = fat.count
      for index in 0..<count {
        fat.append(index == count - 1 ? endOfChain : UInt32(first + index + 1))
      }
      return UInt32(first)
    }
    let directoryStart = chain((streams.count + 1 + 3) / 4)
    // The mini stream: each small stream in whole 64-byte mini sectors.
    var miniFAT: [UInt32] = []
    var miniStream: [UInt8] = []
    var starts: [UInt32] = []
    for stream in streams where stream.data.count < 4096 {
      let count = (stream.data.count + 63) / 64
      let first = miniFAT.count
      for index in 0..<count {
        miniFAT.append(index == count - 1 ? endOfChain : UInt32(first + index + 1))
      }
      miniStream += stream.data + Array(repeating: 0, count: count * 64 - stream.data.count)
      starts.append(count == 0 ? endOfChain : UInt32(first))
    }
    precondition(miniFAT.count <= 128, "one mini FAT sector")
    let miniFATStart = chain(small.isEmpty ? 0 : 1)
    let miniStreamStart = chain((miniStream.count + 511) / 512)
    var body: [UInt8] = []
    var smallIndex = 0
    var entries: [[UInt8]] = []
    for stream in streams {
      let start: UInt32
      if stream.data.count < 4096 {
        start = starts[smallIndex]
        smallIndex += 1
      } else {
        start = chain((stream.data.count + 511) / 512)
        body += padded(stream.data)
      }
      entries.append(
        entry(stream.name, type: 2, start: start, size: UInt64(stream.data.count)))
    }
    precondition(fat.count <= 128, "one FAT sector")
    // The root's children as a binary search tree, ordered as [MS-CFB] 2.6.4 orders names.
    let order = streams.indices.sorted {
      let (a, b) = (streams[$0].name.utf16.count, streams[$1].name.utf16.count)
      return a != b ? a < b : streams[$0].name.uppercased() < streams[$1].name.uppercased()
    }
    func tree(_ slice: ArraySlice<Int>) -> UInt32 {
      guard !slice.isEmpty else { return free }
      let middle = slice.startIndex + slice.count / 2
      let id = order[middle] + 1
      let left = tree(slice[slice.startIndex..<middle])
      let right = tree(slice[(middle + 1)...])
      entries[id - 1].replaceSubrange(68..<76, with: le32(left) + le32(right))
      return UInt32(id)
    }
    let child = tree(order[...])
    let root = entry(
      "Root Entry", type: 5, start: miniStreamStart, size: UInt64(miniStream.count), child: child)
    var directory = ([root] + entries).flatMap { $0 }
    while directory.count % 512 != 0 { directory += entry("", type: 0, start: 0, size: 0) }

    var header: [UInt8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1] + zeros(16)
    header += le16(0x3E) + le16(3) + le16(0xFFFE) + le16(9) + le16(6) + zeros(6)
    header += le32(0) + le32(1) + le32(directoryStart) + le32(0) + le32(4096)
    header += le32(miniFATStart) + le32(small.isEmpty ? 0 : 1) + le32(endOfChain) + le32(0)
    header += le32(0) + Array(repeating: 0xFF, count: 108 * 4)
    let fatBytes = padded((fat + Array(repeating: free, count: 128 - fat.count)).flatMap(le32))
    let miniFATBytes =
      small.isEmpty
      ? [] : (miniFAT + Array(repeating: free, count: 128 - miniFAT.count)).flatMap(le32)
    return header + fatBytes + directory + miniFATBytes + padded(miniStream) + body
  }

  /// Sets the FAT's entry for `sector` in a file `make` wrote (its FAT is sector 0).
  public static func setFAT(_ bytes: inout [UInt8], sector: Int, to next: UInt32) {
    bytes.replaceSubrange(512 + 4 * sector..<516 + 4 * sector, with: le32(next))
  }

  /// A directory entry of 128 bytes.
  static func entry(
    _ name: String, type: UInt8, start: UInt32, size: UInt64, child: UInt32 = free
  ) -> [UInt8] {
    let units = Array(name.utf16.prefix(31))
    var bytes = units.flatMap { le16($0) } + zeros(64 - 2 * units.count)
    bytes += le16(UInt16(units.isEmpty ? 0 : 2 * units.count + 2)) + [type, 1]
    bytes += le32(free) + le32(free) + le32(child) + zeros(16 + 4 + 16)
    return bytes + le32(start) + le32(UInt32(truncatingIfNeeded: size))
      + le32(UInt32(truncatingIfNeeded: size >> 32))
  }

  static func padded(_ bytes: [UInt8]) -> [UInt8] {
    bytes + zeros((512 - bytes.count % 512) % 512)
  }

  static func zeros(_ count: Int) -> [UInt8] { Array(repeating: 0, count: count) }
  static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
  static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
}
