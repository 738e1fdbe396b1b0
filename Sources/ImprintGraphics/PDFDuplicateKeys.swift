// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: removes the repeated resource names cairo writes when a page paints the same
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
  /// A byte range of the original, or replacement bytes.
  enum Piece {
    case original(Range<Int>)
    case bytes([UInt8])
  }

  /// The repaired file as pieces of `pdf`, or nil when nothing repeats (or the file is not of
  /// the shape cairo writes).
  static func pieces(_ pdf: UnsafeBufferPointer<UInt8>) -> [Piece]? {
    guard let xref = crossReference(pdf) else { return nil }
    var offsets = xref.entries.filter(\.inUse).map(\.offset).sorted()
    guard let first = offsets.first, let last = offsets.last, first > 0, last < xref.start else {
      return nil
    }
    offsets.append(xref.start)
    var removals: [Range<Int>] = []
    for index in 0..<(offsets.count - 1) {
      let start = offsets[index]
      let end = offsets[index + 1]
      let dictionaryEnd = find(Array("stream".utf8), in: pdf, from: start, to: end) ?? end
      removals += duplicateEntries(pdf, from: start, to: dictionaryEnd)
    }
    guard !removals.isEmpty else { return nil }
    // In file order, without the ones inside a removed entry (a repeated dictionary's own).
    removals.sort { $0.lowerBound < $1.lowerBound }
    var disjoint: [Range<Int>] = []
    for removal in removals where removal.lowerBound >= (disjoint.last?.upperBound ?? 0) {
      disjoint.append(removal)
    }
    removals = disjoint
    // Copy everything but the removed ranges, and map every object's new offset.
    var pieces: [Piece] = []
    var moved: [Int: Int] = [:]  // old offset -> new offset
    var shift = 0
    var position = 0
    var removalIndex = 0
    for offset in offsets.dropLast() {
      while removalIndex < removals.count, removals[removalIndex].lowerBound < offset {
        let removal = removals[removalIndex]
        pieces.append(.original(position..<removal.lowerBound))
        shift += removal.count
        position = removal.upperBound
        removalIndex += 1
      }
      moved[offset] = offset - shift
    }
    while removalIndex < removals.count {
      let removal = removals[removalIndex]
      pieces.append(.original(position..<removal.lowerBound))
      shift += removal.count
      position = removal.upperBound
      removalIndex += 1
    }
    pieces.append(.original(position..<xref.start))
    // The new table: same subsections and entries, new offsets.
    var table = Array("xref\n".utf8)
    for section in xref.sections {
      table += Array("\(section.first) \(section.count)\n".utf8)
      for entry in xref.entries[section.entries] {
        let offset = entry.inUse ? (moved[entry.offset] ?? entry.offset) : entry.offset
        let digits = String(offset)
        let generation = String(entry.generation)
        table += Array(
          (String(repeating: "0", count: max(0, 10 - digits.count)) + digits + " "
            + String(repeating: "0", count: max(0, 5 - generation.count)) + generation
            + (entry.inUse ? " n \n" : " f \n")).utf8)
      }
    }
    pieces.append(.bytes(table))
    pieces.append(.original(xref.tableEnd..<xref.startxrefKeyword))
    pieces.append(.bytes(Array("startxref\n\(xref.start - shift)\n%%EOF\n".utf8)))
    return pieces
  }

  /// The repaired bytes, or nil when nothing repeats.
  public static func repaired(_ pdf: [UInt8]) -> [UInt8]? {
    pdf.withUnsafeBufferPointer { buffer -> [UInt8]? in
      guard let pieces = pieces(buffer) else { return nil }
      var output: [UInt8] = []
      output.reserveCapacity(buffer.count)
      for piece in pieces {
        switch piece {
        case .original(let range): output += buffer[range]
        case .bytes(let bytes): output += bytes
        }
      }
      return output
    }
  }

  /// Repairs the file at `path` in place (atomically), reading it mapped and writing it as a
  /// stream of pieces: memory does not grow with the file.
  ///
  /// - Returns: whether the file changed.
  /// - Throws: `FileError` when it cannot be read or written.
  @discardableResult
  public static func repair(path: String) throws(FileError) -> Bool {
    let mapped = try DocumentBytes(mapping: path)
    guard let pieces = pieces(mapped.buffer) else { return false }
    try AtomicFile.write(to: path) { (write) throws(FileError) in
      for piece in pieces {
        switch piece {
        case .original(let range):
          try write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: mapped.buffer[range])))
        case .bytes(let bytes):
          let pointer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
          defer { pointer.deallocate() }
          pointer.copyBytes(from: bytes)
          try write(UnsafeRawBufferPointer(pointer))
        }
      }
    }
    return true
  }

  // MARK: - Cross-reference table

  struct Entry {
    var offset: Int
    var generation: Int
    var inUse: Bool
  }

  struct CrossReference {
    /// Where `xref` starts.
    var start: Int
    /// Where the table ends (the `trailer` keyword).
    var tableEnd: Int
    /// Where `startxref` starts.
    var startxrefKeyword: Int
    var sections: [(first: Int, count: Int, entries: Range<Int>)]
    var entries: [Entry]
  }

  /// The classic table `startxref` points at, with 20-byte entries; nil for anything else
  /// (cross-reference streams, incremental updates).
  static func crossReference(_ pdf: UnsafeBufferPointer<UInt8>) -> CrossReference? {
    let tail = max(0, pdf.count - 64)
    guard let keyword = findLast(Array("startxref".utf8), in: pdf, from: tail) else { return nil }
    var cursor = keyword + 9
    skipSpace(pdf, &cursor)
    guard let start = integer(pdf, &cursor), start >= 0, start + 5 <= pdf.count,
      Array(pdf[start..<start + 4]) == Array("xref".utf8)
    else { return nil }
    cursor = start + 4
    var sections: [(first: Int, count: Int, entries: Range<Int>)] = []
    var entries: [Entry] = []
    while true {
      skipSpace(pdf, &cursor)
      guard cursor < pdf.count else { return nil }
      if pdf[cursor] == UInt8(ascii: "t") { break }  // trailer
      guard let first = integer(pdf, &cursor) else { return nil }
      skipSpace(pdf, &cursor)
      guard let count = integer(pdf, &cursor), count >= 0 else { return nil }
      // The line ends; then `count` entries of exactly 20 bytes.
      while cursor < pdf.count, pdf[cursor] == UInt8(ascii: " ") { cursor += 1 }
      if cursor < pdf.count, pdf[cursor] == UInt8(ascii: "\r") { cursor += 1 }
      guard cursor < pdf.count, pdf[cursor] == UInt8(ascii: "\n") else { return nil }
      cursor += 1
      guard cursor + 20 * count <= pdf.count else { return nil }
      let firstEntry = entries.count
      for _ in 0..<count {
        var field = cursor
        guard let offset = integer(pdf, &field) else { return nil }
        field += 1
        guard let generation = integer(pdf, &field), field + 1 < pdf.count else { return nil }
        let kind = pdf[field + 1]
        guard kind == UInt8(ascii: "n") || kind == UInt8(ascii: "f") else { return nil }
        entries.append(
          Entry(offset: offset, generation: generation, inUse: kind == UInt8(ascii: "n")))
        cursor += 20
      }
      sections.append((first, count, firstEntry..<entries.count))
    }
    guard Array(pdf[cursor..<min(pdf.count, cursor + 7)]) == Array("trailer".utf8),
      keyword > cursor
    else { return nil }
    // Only the in-use entries are objects; a single table (no /Prev: no incremental update).
    guard find(Array("/Prev".utf8), in: pdf, from: cursor, to: keyword) == nil else { return nil }
    return CrossReference(
      start: start, tableEnd: cursor, startxrefKeyword: keyword, sections: sections,
      entries: entries)
  }

  // MARK: - Dictionaries

  /// The byte ranges of entries that repeat an earlier entry (same key, same value) of the same
  /// dictionary, in the object between `start` and `end` (up to its stream data).
  static func duplicateEntries(_ pdf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int)
    -> [Range<Int>]
  {
    var parser = DictionaryParser(pdf: pdf, end: end)
    parser.cursor = start
    // `N G obj`, then the object: only a dictionary has entries.
    for _ in 0..<3 {
      parser.skipSpace()
      parser.skipToken()
    }
    parser.skipSpace()
    guard parser.at("<<") else { return [] }
    _ = parser.dictionary()
    return parser.removals
  }

  /// Just enough of PDF's syntax to walk dictionaries and find repeated entries.
  struct DictionaryParser {
    let pdf: UnsafeBufferPointer<UInt8>
    let end: Int
    var cursor = 0
    var removals: [Range<Int>] = []

    func at(_ text: StaticString) -> Bool {
      let count = text.utf8CodeUnitCount
      guard cursor + count <= end else { return false }
      for index in 0..<count where pdf[cursor + index] != text.utf8Start[index] { return false }
      return true
    }

    mutating func skipSpace() {
      while cursor < end {
        if isSpace(pdf[cursor]) {
          cursor += 1
        } else if pdf[cursor] == UInt8(ascii: "%") {
          while cursor < end, pdf[cursor] != 10, pdf[cursor] != 13 { cursor += 1 }
        } else {
          return
        }
      }
    }

    /// A regular token (a number, a keyword, or a name's characters after its slash).
    mutating func skipToken() {
      while cursor < end, !isDelimiterOrSpace(pdf[cursor]) { cursor += 1 }
    }

    /// A dictionary at `cursor` (on `<<`); false when its syntax is not understood (then the
    /// removals found so far still stand: each is a complete, repeated entry).
    mutating func dictionary() -> Bool {
      cursor += 2
      var seen: [[UInt8]: [UInt8]] = [:]
      while true {
        let entryStart = cursor
        skipSpace()
        if at(">>") {
          cursor += 2
          return true
        }
        guard cursor < end, pdf[cursor] == UInt8(ascii: "/") else { return false }
        let nameStart = cursor
        cursor += 1
        skipToken()
        let name = Array(pdf[nameStart..<cursor])
        skipSpace()
        let valueStart = cursor
        guard value() else { return false }
        let value = Array(pdf[valueStart..<cursor])
        if let earlier = seen[name] {
          if earlier == value { removals.append(entryStart..<cursor) }
        } else {
          seen[name] = value
        }
      }
    }

    /// One value at `cursor`.
    mutating func value() -> Bool {
      guard cursor < end else { return false }
      let byte = pdf[cursor]
      if at("<<") { return dictionary() }
      switch byte {
      case UInt8(ascii: "<"):
        while cursor < end, pdf[cursor] != UInt8(ascii: ">") { cursor += 1 }
        guard cursor < end else { return false }
        cursor += 1
      case UInt8(ascii: "["):
        guard let close = skipArray(pdf, from: cursor, to: end) else { return false }
        cursor = close
      case UInt8(ascii: "("):
        guard let close = skipString(pdf, from: cursor, to: end) else { return false }
        cursor = close
      case UInt8(ascii: "/"):
        cursor += 1
        skipToken()
      case UInt8(ascii: ">"), UInt8(ascii: "]"), UInt8(ascii: ")"), UInt8(ascii: "{"),
        UInt8(ascii: "}"):
        return false
      default:
        let tokenStart = cursor
        skipToken()
        guard cursor > tokenStart else { return false }
        // `N G R`: an object number, a generation and R make one value.
        if pdf[tokenStart..<cursor].allSatisfy(isDigit) {
          let afterNumber = cursor
          skipSpace()
          let generationStart = cursor
          skipToken()
          if cursor > generationStart, pdf[generationStart..<cursor].allSatisfy(isDigit) {
            skipSpace()
            if at("R"), cursor + 1 >= end || isDelimiterOrSpace(pdf[cursor + 1]) {
              cursor += 1
              return true
            }
          }
          cursor = afterNumber
        }
      }
      return true
    }
  }

  // MARK: - Bytes

  static func isSpace(_ byte: UInt8) -> Bool {
    byte == 32 || byte == 10 || byte == 13 || byte == 9 || byte == 12 || byte == 0
  }

  static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

  static func isDelimiterOrSpace(_ byte: UInt8) -> Bool {
    isSpace(byte) || "()<>[]{}/%".utf8.contains(byte)
  }

  static func skipSpace(_ pdf: UnsafeBufferPointer<UInt8>, _ cursor: inout Int) {
    while cursor < pdf.count, isSpace(pdf[cursor]) { cursor += 1 }
  }

  static func integer(_ pdf: UnsafeBufferPointer<UInt8>, _ cursor: inout Int) -> Int? {
    var value = 0
    let start = cursor
    while cursor < pdf.count, isDigit(pdf[cursor]), cursor - start < 18 {
      value = value * 10 + Int(pdf[cursor] - 48)
      cursor += 1
    }
    return cursor > start ? value : nil
  }

  static func skipArray(_ pdf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
    var depth = 0
    var cursor = start
    while cursor < end {
      switch pdf[cursor] {
      case UInt8(ascii: "["): depth += 1
      case UInt8(ascii: "]"):
        depth -= 1
        if depth == 0 { return cursor + 1 }
      case UInt8(ascii: "("):
        guard let close = skipString(pdf, from: cursor, to: end) else { return nil }
        cursor = close
        continue
      default: break
      }
      cursor += 1
    }
    return nil
  }

  static func skipString(_ pdf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
    var depth = 0
    var cursor = start
    while cursor < end {
      switch pdf[cursor] {
      case UInt8(ascii: "\\"): cursor += 1
      case UInt8(ascii: "("): depth += 1
      case UInt8(ascii: ")"):
        depth -= 1
        if depth == 0 { return cursor + 1 }
      default: break
      }
      cursor += 1
    }
    return nil
  }

  static func find(
    _ needle: [UInt8], in pdf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int
  )
    -> Int?
  {
    guard let first = needle.first, end - start >= needle.count else { return nil }
    var cursor = start
    while cursor + needle.count <= end {
      if pdf[cursor] == first {
        var match = true
        for index in 1..<needle.count where pdf[cursor + index] != needle[index] {
          match = false
          break
        }
        if match { return cursor }
      }
      cursor += 1
    }
    return nil
  }

  static func findLast(_ needle: [UInt8], in pdf: UnsafeBufferPointer<UInt8>, from start: Int)
    -> Int?
  {
    var cursor = pdf.count - needle.count
    while cursor >= start {
      if Array(pdf[cursor..<cursor + needle.count]) == needle { return cursor }
      cursor -= 1
    }
    return nil
  }
}
