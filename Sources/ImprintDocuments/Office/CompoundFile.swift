// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: a Compound File Binary ([MS-CFB]: old Office documents, HWP 5, encrypted
// OOXML), read far enough to name the streams at its root and see a stream's first bytes.
// Every chain of sectors is walked at most once per sector of the file and stops at a sector
// seen before, so a loop in the FAT, the DIFAT or the directory costs linear time at most.

/// The header, DIFAT and FAT of a Compound File, and its root's directory entries.
struct CompoundFile {
  /// The file's first eight bytes.
  static let signature: [UInt8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]

  /// The end of a sector chain (ENDOFCHAIN).
  private static let endOfChain: UInt32 = 0xFFFF_FFFE
  /// No directory entry (NOSTREAM).
  private static let noStream: UInt32 = 0xFFFF_FFFF
  /// The header's DIFAT entries: the first 109 FAT sectors.
  private static let headerDIFAT = 109

  /// One directory entry: a storage or a stream.
  struct Entry {
    /// The name, up to 31 UTF-16 code units.
    let name: String
    /// 1 storage, 2 stream, 5 the root storage.
    let type: UInt8
    /// The first sector of its data (the mini stream's, for the root).
    let start: UInt32
    /// Its data's length, in bytes.
    let size: UInt64
    /// The entry before it in its storage's tree (NOSTREAM when none).
    let left: UInt32
    /// The entry after it in its storage's tree.
    let right: UInt32
    /// The root of the tree of its own children, for a storage.
    let child: UInt32
  }

  private let bytes: LittleEndianBytes
  private let sectorShift: Int
  private let majorVersion: UInt16
  private let miniSectorShift: UInt16
  private let miniStreamCutoff: UInt32
  private let firstDirectorySector: UInt32
  /// The sectors in the file after the header (the last one may be cut short).
  private let sectorCount: Int
  /// The FAT's sectors, from the header's DIFAT and the DIFAT chain.
  private let fatSectors: [UInt32]

  /// Reads the header and the DIFAT; nil when the file is not a Compound File or its sector
  /// size is not 512 or 4096 bytes.
  init?(_ bytes: LittleEndianBytes) {
    guard bytes.matches(Self.signature, at: 0), bytes.count >= 512,
      bytes.u16(28) == 0xFFFE, let version = bytes.u16(26), let shift = bytes.u16(30),
      shift == 9 || shift == 12, let miniShift = bytes.u16(32),
      let fatCount = bytes.u32(44), let directory = bytes.u32(48),
      let cutoff = bytes.u32(56), let firstDIFAT = bytes.u32(68)
    else { return nil }
    self.bytes = bytes
    sectorShift = Int(shift)
    majorVersion = version
    miniSectorShift = miniShift
    miniStreamCutoff = cutoff
    firstDirectorySector = directory
    let sectorSize = 1 << sectorShift
    sectorCount = max(0, (bytes.count - 1) >> sectorShift)  // all whole or partial sectors
    // The header holds the first 109 FAT sector numbers; each DIFAT sector holds more, and the
    // next DIFAT sector's number last.
    var fat: [UInt32] = []
    let wanted = Int(fatCount)
    for index in 0..<min(wanted, Self.headerDIFAT) {
      guard let sector = bytes.u32(76 + 4 * index) else { return nil }
      fat.append(sector)
    }
    var seen = SectorSet(count: sectorCount)
    var difat = firstDIFAT
    let perSector = sectorSize / 4 - 1
    while fat.count < wanted, Int(difat) < sectorCount, seen.insert(difat) {
      let base = (Int(difat) + 1) << sectorShift
      for index in 0..<min(perSector, wanted - fat.count) {
        guard let sector = bytes.u32(base + 4 * index) else { break }
        fat.append(sector)
      }
      guard let next = bytes.u32(base + 4 * perSector) else { break }
      difat = next
    }
    fatSectors = fat
  }

  /// The entries at the root storage's level (not inside other storages), and the root entry;
  /// nil when the directory's first entry is not a root.
  func rootEntries() -> (root: Entry, children: [Entry])? {
    let directory = chain(from: firstDirectorySector)
    let perSector = (1 << sectorShift) / 128
    let entryCount = directory.count * perSector
    func entry(_ id: UInt32) -> Entry? {
      guard Int(id) < entryCount else { return nil }
      let sector = directory[Int(id) / perSector]
      return self.entry(at: ((Int(sector) + 1) << sectorShift) + (Int(id) % perSector) * 128)
    }
    guard let root = entry(0), root.type == 5 else { return nil }
    // The root's children form a tree through their left and right siblings.
    var children: [Entry] = []
    var seen = SectorSet(count: entryCount)
    var pending = [root.child]
    while let id = pending.popLast() {
      guard id != Self.noStream, Int(id) < entryCount, seen.insert(id), let child = entry(id)
      else { continue }
      children.append(child)
      pending.append(child.left)
      pending.append(child.right)
    }
    return (root, children)
  }

  /// The first `length` bytes of `stream`, from the mini stream (held in `root`'s chain) when it
  /// is shorter than the cutoff; nil when they cannot be read.
  ///
  /// `length` is at most 64 bytes, so the bytes lie in the stream's first (mini) sector, which
  /// is its start: no chain of the mini FAT needs to be followed.
  func prefix(of stream: Entry, root: Entry, length: Int) -> Slice<UnsafeBufferPointer<UInt8>>? {
    precondition(length <= 64, "only a stream's first mini sector is read")
    guard size(of: stream) >= UInt64(length) else { return nil }
    if size(of: stream) >= UInt64(miniStreamCutoff) {
      guard Int(stream.start) < sectorCount else { return nil }
      return bytes.bytes((Int(stream.start) + 1) << sectorShift, length: length)
    }
    // The mini stream: 64-byte sectors inside the root's chain of regular sectors.
    guard miniSectorShift == 6 else { return nil }
    let position = Int(stream.start) << 6
    guard UInt64(position + length) <= size(of: root) else { return nil }
    let index = position >> sectorShift
    let sectors = chain(from: root.start, limit: index + 1)
    guard sectors.count == index + 1, let sector = sectors.last else { return nil }
    let inSector = position - (index << sectorShift)
    return bytes.bytes(((Int(sector) + 1) << sectorShift) + inSector, length: length)
  }

  /// A stream's size: version 3 files may leave garbage in the high 32 bits ([MS-CFB] 2.6.3).
  private func size(of entry: Entry) -> UInt64 {
    majorVersion == 3 ? entry.size & 0xFFFF_FFFF : entry.size
  }

  /// The directory entry of 128 bytes at `offset`; nil when it does not lie inside the file.
  private func entry(at offset: Int) -> Entry? {
    guard let nameLength = bytes.u16(offset + 64), let type = bytes.u8(offset + 66),
      let left = bytes.u32(offset + 68), let right = bytes.u32(offset + 72),
      let child = bytes.u32(offset + 76), let start = bytes.u32(offset + 116),
      let size = bytes.u64(offset + 120), let raw = bytes.bytes(offset, length: 64)
    else { return nil }
    // The length counts the terminating NUL; a hostile one is cut to the 32 units there are.
    let units = min(max(Int(nameLength) / 2 - 1, 0), 31)
    let codeUnits = (0..<units).map {
      UInt16(raw[raw.startIndex + 2 * $0]) | UInt16(raw[raw.startIndex + 2 * $0 + 1]) << 8
    }
    return Entry(
      name: String(decoding: codeUnits, as: UTF16.self), type: type, start: start, size: size,
      left: left, right: right, child: child)
  }

  /// The sectors of the chain from `start`, in order, at most `limit` of them: until the end of
  /// the chain, a sector outside the file, a FAT entry that cannot be read, or a sector seen
  /// before (a loop).
  private func chain(from start: UInt32, limit: Int = Int.max) -> [UInt32] {
    var sectors: [UInt32] = []
    var seen = SectorSet(count: sectorCount)
    var sector = start
    while sector != Self.endOfChain, sectors.count < limit, Int(sector) < sectorCount,
      seen.insert(sector)
    {
      sectors.append(sector)
      guard let next = next(sector) else { break }
      sector = next
    }
    return sectors
  }

  /// The FAT's entry for `sector`: the next sector of its chain.
  private func next(_ sector: UInt32) -> UInt32? {
    let perSector = (1 << sectorShift) / 4
    let index = Int(sector) / perSector
    guard index < fatSectors.count, Int(fatSectors[index]) < sectorCount else { return nil }
    let base = (Int(fatSectors[index]) + 1) << sectorShift
    return bytes.u32(base + 4 * (Int(sector) % perSector))
  }
}

/// A set of sector (or entry) numbers below a bound, one bit each.
private struct SectorSet {
  private var words: [UInt64]
  private let count: Int

  init(count: Int) {
    self.count = count
    words = Array(repeating: 0, count: (count + 63) / 64)
  }

  /// Adds `number`; false when it is already there or not below the bound.
  mutating func insert(_ number: UInt32) -> Bool {
    let value = Int(number)
    guard value < count else { return false }
    let mask: UInt64 = 1 << UInt64(value % 64)
    guard words[value / 64] & mask == 0 else { return false }
    words[value / 64] |= mask
    return true
  }
}
