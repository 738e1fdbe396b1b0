// SPDX-License-Identifier: Apache-2.0
// ImprintPDF: removes the repeated resource names cairo writes when a page paints the same
// image or form more than once (`/XObject << /x6 6 0 R /x6 6 0 R >>`).

import ImprintCore

/// Rewrites a PDF written by cairo without the duplicated keys in its dictionaries.
///
/// cairo 1.16–1.18 adds a page's (or form's) resource entry each time a source is painted, so a
/// sheet with nine cards that share a photo or a label names that XObject nine times in one
/// dictionary. PDF dictionaries must not repeat keys; most readers keep the last entry, but
/// libcupsfilters 2.2's pdftopdf drops such pages without a word (OpenPrinting/libcupsfilters
/// #230): on a CUPS print server those sheets would silently not print.
///
/// Only an entry whose key and value (`N G R`, a name, a number) repeat an earlier entry of the
/// same dictionary is removed, so the meaning of the file is unchanged; stream data is never
/// touched. Objects are found through the classic cross-reference table cairo writes, which is
/// rebuilt with the new offsets. A file of any other shape is left as it is.
public enum PDFDuplicateKeys {
  /// What to change: the entries to remove (sorted, disjoint), and where the table is.
  struct Plan {
    var removals: [Range<Int>]
    /// Where `xref` starts.
    var tableStart: Int
    /// Where `trailer` starts.
    var tableEnd: Int
    /// Where `startxref` starts.
    var startxrefKeyword: Int

    /// Hands the repaired file to `emit` a block at a time: the original without the removed
    /// entries, the table with moved offsets, the trailer, a new `startxref`.
    func write(read: (Range<Int>) -> [UInt8], emit: ([UInt8]) -> Void) {
      func copy(_ range: Range<Int>) {
        var position = range.lowerBound
        while position < range.upperBound {
          let block = read(position..<min(range.upperBound, position + (1 << 16)))
          guard !block.isEmpty else { return }  // unreadable: the caller knows
          emit(block)
          position += block.count
        }
      }
      var position = 0
      for removal in removals {
        copy(position..<removal.lowerBound)
        position = removal.upperBound
      }
      copy(position..<tableStart)
      movedTable(tableStart..<tableEnd, removals: removals, read: read, emit: emit)
      copy(tableEnd..<startxrefKeyword)
      let removed = removals.reduce(0) { $0 + $1.count }
      emit(Array("startxref\n\(tableStart - removed)\n%%EOF\n".utf8))
    }
  }

  /// The plan for the file (`count` bytes, read a range at a time with `read`), or nil when
  /// nothing repeats (or the file is not of the shape cairo writes).
  static func plan(count: Int, read: (Range<Int>) -> [UInt8]) -> Plan? {
    guard var xref = crossReference(count: count, read: read) else { return nil }
    var offsets = xref.offsets
    xref.offsets = []
    guard let first = offsets.first, let last = offsets.last, first > 0, last < xref.start else {
      return nil
    }
    offsets.append(xref.start)
    var removals: [Range<Int>] = []
    // The file is read in blocks of 256 KB, in order (objects sorted by offset), each object's
    // dictionary parsed where it lies in the block: few, large reads and allocations.
    let keyword = Array("stream".utf8)
    var block: [UInt8] = []
    var blockStart = 0
    for index in 0..<(offsets.count - 1) {
      // An object's dictionary comes first, before any stream data: up to `stream`.
      let start = offsets[index]
      let end = offsets[index + 1]
      var length = 4096
      while true {
        let windowEnd = min(end, start + length)
        if start < blockStart || windowEnd > blockStart + block.count {
          blockStart = start
          block = read(start..<min(end, start + max(length, 1 << 18)))
          guard block.count >= windowEnd - start else { return nil }
        }
        let from = start - blockStart
        let to = windowEnd - blockStart
        let found = block.withUnsafeBufferPointer { find(keyword, in: $0, from: from, to: to) }
        if found != nil || windowEnd == end {
          for removal in block.withUnsafeBufferPointer({
            duplicateEntries($0, from: from, to: found ?? to)
          }) {
            removals.append((removal.lowerBound + blockStart)..<(removal.upperBound + blockStart))
          }
          break
        }
        length *= 4
      }
    }
    offsets = []
    guard !removals.isEmpty else { return nil }
    // In file order, without the ones inside a removed entry (a repeated dictionary's own),
    // compacted in place.
    removals.sort { $0.lowerBound < $1.lowerBound }
    var kept = 0
    for index in removals.indices
    where kept == 0 || removals[index].lowerBound >= removals[kept - 1].upperBound {
      removals[kept] = removals[index]
      kept += 1
    }
    removals.removeLast(removals.count - kept)
    return Plan(
      removals: removals, tableStart: xref.start, tableEnd: xref.tableEnd,
      startxrefKeyword: xref.startxrefKeyword)
  }

  /// The repaired bytes, or nil when nothing repeats.
  public static func repaired(_ pdf: [UInt8]) -> [UInt8]? {
    guard let plan = plan(count: pdf.count, read: { Array(pdf[$0]) }) else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(pdf.count)
    plan.write(read: { Array(pdf[$0]) }, emit: { output += $0 })
    return output
  }

  /// Repairs the file at `path` in place (atomically), reading it a range at a time and
  /// writing it piece by piece: memory does not grow with the file (a mapping would, in the
  /// pages a process is charged for).
  ///
  /// - Returns: whether the file changed.
  /// - Throws: `FileError` when it cannot be read or written.
  @discardableResult
  public static func repair(path: String) throws(FileError) -> Bool {
    let file = try RandomAccessFile(path: path)
    var failure: FileError?
    let read = { (range: Range<Int>) -> [UInt8] in
      do throws(FileError) {
        return try file.read(range)
      } catch {
        failure = failure ?? error
        return []
      }
    }
    let found = plan(count: file.count, read: read)
    if let failure { throw failure }
    guard let plan = found else { return false }
    try AtomicFile.write(to: path) { (write) throws(FileError) in
      plan.write(read: read) { block in
        guard failure == nil else { return }
        do throws(FileError) { try write(block) } catch { failure = error }
      }
      if let failure { throw failure }
    }
    return true
  }

  // MARK: - Cross-reference table

  /// The table at `range`, read a block at a time, with each in-use entry's offset moved up by
  /// the bytes of the `removals` (sorted, disjoint) before it.
  static func movedTable(
    _ range: Range<Int>, removals: [Range<Int>], read: (Range<Int>) -> [UInt8],
    emit: ([UInt8]) -> Void
  ) {
    // removed[k]: the bytes of the first k removals.
    var removed = [0]
    for removal in removals { removed.append(removed[removed.count - 1] + removal.count) }
    func moved(_ offset: Int) -> Int {
      var low = 0
      var high = removals.count
      while low < high {
        let middle = (low + high) / 2
        if removals[middle].lowerBound < offset { low = middle + 1 } else { high = middle }
      }
      return offset - removed[low]
    }
    var position = range.lowerBound
    var carry: [UInt8] = []
    while position < range.upperBound || !carry.isEmpty {
      let chunk =
        position < range.upperBound
        ? read(position..<min(range.upperBound, position + (1 << 16))) : []
      if chunk.isEmpty && position < range.upperBound { return }  // unreadable: the caller knows
      position += chunk.count
      var lines = carry + chunk
      // Whole lines only; the rest waits for the next block.
      let end =
        position < range.upperBound
        ? (lines.lastIndex(of: 10).map { $0 + 1 } ?? 0) : lines.count
      var start = 0
      while start < end {
        let lineEnd = (lines[start..<end].firstIndex(of: 10) ?? (end - 1)) + 1
        // An entry: `oooooooooo ggggg n` and its end of line, 20 bytes in all.
        if lineEnd - start == 20, lines[start + 17] == UInt8(ascii: "n") {
          let digits = Array(String(moved(entryOffset(lines, at: start))).utf8)
          for index in 0..<10 {
            lines[start + index] =
              index < 10 - digits.count ? 48 : digits[index - (10 - digits.count)]
          }
        }
        start = lineEnd
      }
      emit(Array(lines[0..<end]))
      carry = Array(lines[end...])
      if position >= range.upperBound && end == lines.count { carry = [] }
    }
  }

  struct CrossReference {
    /// Where `xref` starts.
    var start: Int
    /// Where the table ends (the `trailer` keyword).
    var tableEnd: Int
    /// Where `startxref` starts.
    var startxrefKeyword: Int
    /// The offsets of the objects in use, in file order.
    var offsets: [Int]
  }

  /// The classic table `startxref` points at, with 20-byte entries; nil for anything else
  /// (cross-reference streams, incremental updates).
  static func crossReference(count: Int, read: (Range<Int>) -> [UInt8]) -> CrossReference? {
    let tailStart = max(0, count - 1024)
    let tail = read(tailStart..<count)
    let found = tail.withUnsafeBufferPointer { bytes -> (keyword: Int, start: Int)? in
      guard
        let keyword = QuickPageTree.lastIndex(
          of: Array("startxref".utf8), in: bytes, from: max(0, bytes.count - 64))
      else { return nil }
      var parser = QuickPageTree.Parser(bytes, at: keyword + 9)
      guard case .integer(let start)? = parser.value() else { return nil }
      return (keyword, start)
    }
    guard let (keyword, start) = found, start >= 0, start < tailStart + keyword else { return nil }
    let table = read(start..<(tailStart + keyword))
    var offsets: [Int] = []
    guard
      let end = forEachEntry(
        table,
        { position, inUse in
          if inUse { offsets.append(entryOffset(table, at: position)) }
        })
    else { return nil }
    // A single table (no /Prev: no incremental update).
    let previous = table.withUnsafeBufferPointer {
      find(Array("/Prev".utf8), in: $0, from: end, to: $0.count)
    }
    guard previous == nil else { return nil }
    offsets.sort()
    return CrossReference(
      start: start, tableEnd: start + end, startxrefKeyword: tailStart + keyword,
      offsets: offsets)
  }

  /// Calls `body` with the position of every entry of `table` (which starts with `xref`) and
  /// whether it is in use; returns where `trailer` starts, or nil when the table is not a
  /// classic one with 20-byte entries.
  static func forEachEntry(_ table: [UInt8], _ body: (Int, Bool) -> Void) -> Int? {
    table.withUnsafeBufferPointer { pdf -> Int? in
      guard pdf.count >= 4, Array(pdf[0..<4]) == Array("xref".utf8) else { return nil }
      var parser = QuickPageTree.Parser(pdf, at: 4)
      while !parser.keyword("trailer") {
        // A subsection: its first object number and count, the end of the line, then `count`
        // entries of exactly 20 bytes.
        guard case .integer? = parser.value(), case .integer(let count)? = parser.value(),
          count >= 0
        else { return nil }
        var cursor = parser.index
        while cursor < pdf.count, pdf[cursor] == UInt8(ascii: " ") { cursor += 1 }
        if cursor < pdf.count, pdf[cursor] == UInt8(ascii: "\r") { cursor += 1 }
        guard cursor < pdf.count, pdf[cursor] == UInt8(ascii: "\n") else { return nil }
        cursor += 1
        guard cursor + 20 * count <= pdf.count else { return nil }
        for _ in 0..<count {
          // `oooooooooo ggggg n` and an end of line: fixed columns.
          guard (0..<10).allSatisfy({ isDigit(pdf[cursor + $0]) }), pdf[cursor + 10] == 32,
            (11..<16).allSatisfy({ isDigit(pdf[cursor + $0]) }), pdf[cursor + 16] == 32
          else { return nil }
          switch pdf[cursor + 17] {
          case UInt8(ascii: "n"): body(cursor, true)
          case UInt8(ascii: "f"): body(cursor, false)
          default: return nil
          }
          cursor += 20
        }
        parser.index = cursor
      }
      return parser.index - 7  // where `trailer` starts
    }
  }

  /// The 10-digit offset of the table entry at `position`.
  static func entryOffset(_ table: [UInt8], at position: Int) -> Int {
    var value = 0
    for index in position..<(position + 10) { value = value * 10 + Int(table[index] &- 48) }
    return value
  }

  // MARK: - Dictionaries

  /// The byte ranges of entries that repeat an earlier entry (same key, same value) of the same
  /// dictionary, in the object between `start` and `end` (up to its stream data).
  ///
  /// PDF's syntax is read by `QuickPageTree.Parser`, the page-tree reader's tokenizer.
  static func duplicateEntries(_ pdf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int)
    -> [Range<Int>]
  {
    var parser = QuickPageTree.Parser(UnsafeBufferPointer(rebasing: pdf[..<end]), at: start)
    // `N G obj`, then the object: only a dictionary has entries.
    guard parser.skipValue(), parser.skipValue(), parser.keyword("obj") else { return [] }
    parser.skipSpace()
    var removals: [Range<Int>] = []
    if opensDictionary(parser) { _ = dictionary(&parser, removals: &removals) }
    return removals
  }

  private static func opensDictionary(_ parser: QuickPageTree.Parser) -> Bool {
    parser.index + 1 < parser.data.count && parser.data[parser.index] == UInt8(ascii: "<")
      && parser.data[parser.index + 1] == UInt8(ascii: "<")
  }

  /// Walks the dictionary at `parser` (on `<<`), nested ones too, adding the ranges of repeated
  /// entries to `removals`; false when its syntax is not understood (the removals found so far
  /// still stand: each is a complete, repeated entry).
  private static func dictionary(
    _ parser: inout QuickPageTree.Parser, removals: inout [Range<Int>]
  ) -> Bool {
    let data = parser.data
    /// Whether two ranges hold the same bytes.
    func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
      guard a.count == b.count else { return false }
      for offset in 0..<a.count where data[a.lowerBound + offset] != data[b.lowerBound + offset] {
        return false
      }
      return true
    }
    parser.index += 2
    // Dictionaries here are small: the entries seen are compared in place, one by one (a
    // dictionary of more than 512 entries is walked but not repaired).
    var seen: [Entry] = []
    while true {
      let entryStart = parser.index
      parser.skipSpace()
      guard parser.index + 1 < data.count else { return false }
      if data[parser.index] == UInt8(ascii: ">"), data[parser.index + 1] == UInt8(ascii: ">") {
        parser.index += 2
        return true
      }
      let nameStart = parser.index
      // The name is skipped, not built: its bytes are compared where they lie.
      guard data[nameStart] == UInt8(ascii: "/"), parser.skipValue() else { return false }
      let name = nameStart..<parser.index
      parser.skipSpace()
      let valueStart = parser.index
      let understood =
        opensDictionary(parser)
        ? dictionary(&parser, removals: &removals) : parser.skipValue()
      guard understood else { return false }
      let value = valueStart..<parser.index
      if let earlier = seen.first(where: { same($0.name, name) }) {
        if same(earlier.value, value) { removals.append(entryStart..<parser.index) }
      } else if seen.count < 512 {
        seen.append(Entry(name: name, value: value))
      }
    }
  }

  /// A dictionary entry: where its name and its value lie.
  private struct Entry {
    var name: Range<Int>
    var value: Range<Int>
  }

  // MARK: - Bytes

  static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

  /// Where `needle` first occurs in `pdf[start..<end]`.
  static func find(
    _ needle: [UInt8], in pdf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int
  ) -> Int? {
    // A plain loop: the generic `firstRange(of:)` on a buffer slice was a quarter of a repair.
    guard let first = needle.first else { return nil }
    var cursor = start
    while cursor + needle.count <= end {
      if pdf[cursor] == first
        && (1..<needle.count).allSatisfy({ pdf[cursor + $0] == needle[$0] })
      {
        return cursor
      }
      cursor += 1
    }
    return nil
  }
}
