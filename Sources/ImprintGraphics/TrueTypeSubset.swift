// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: a TrueType (glyf) font cut down to some glyphs for a PDF, in the time the
// glyphs take: the card PDF writer's subsetter.
//
// Why not HarfBuzz's hb-subset alone: it costs about 1.6 ms for Droid Sans Fallback whatever the
// glyphs (it works through the whole font's tables), paid by every card PDF the service
// answers; cairo's subsetter, which this replaces, read only the glyphs used. hb-subset stays
// for what this does not read (CFF outlines, a damaged font).

internal import CPango

/// A glyf-outline TrueType font reduced to `glyphs`, the components of composite ones and
/// glyph 0.
///
/// Without hinting: the tables a PDF reader needs of an embedded CIDFontType2 font (head, hhea,
/// hmtx, maxp, loca, glyf, post). Glyph 0 stays 0, the glyphs asked for are 1, 2, 3... in the
/// order asked, and components not asked for follow in the order of their old ids.
struct TrueTypeSubset {
  /// The font file.
  let bytes: [UInt8]
  /// Each old glyph id kept and its new one.
  let mapping: [(UInt32, UInt32)]

  /// Cuts `face` down to `glyphs`; nil when it is not a glyf font or a table is damaged.
  init?(face: OpaquePointer, glyphs: [UInt32]) {
    // The large tables are read where HarfBuzz keeps them (the font file's mapping), never
    // copied: a subset costs what its glyphs do.
    let tables = FontTables(face)
    guard let head = tables.copy("head"), let hhea = tables.copy("hhea"),
      let maxp = tables.copy("maxp"), let hmtx = tables.view("hmtx"),
      let loca = tables.view("loca"),
      let glyf = tables.view("glyf")
    else { return nil }
    self.init(
      head: head, hhea: hhea, maxp: maxp, hmtx: hmtx, loca: loca, glyf: glyf,
      post: tables.copy("post", prefix: 32), os2: tables.copy("OS/2"), glyphs: glyphs)
  }

  /// Cuts the font file `bytes` (face 0) down to `glyphs`; nil as `init(face:glyphs:)`.
  init?(fontFile bytes: [UInt8], glyphs: [UInt32]) {
    guard let made = withFace(ofFontFile: bytes, { TrueTypeSubset(face: $0, glyphs: glyphs) })
    else { return nil }
    self = made
  }

  private init?(
    head: [UInt8], hhea: [UInt8], maxp: [UInt8], hmtx: FontTables.View, loca: FontTables.View,
    glyf: FontTables.View, post: [UInt8]?, os2: [UInt8]?, glyphs: [UInt32]
  ) {
    var head = head
    var hhea = hhea
    var maxp = maxp
    guard head.count >= 54, hhea.count >= 36, maxp.count >= 6 else { return nil }
    let count = Int(read16(maxp, 4))
    let longOffsets = read16(head, 50) != 0
    let metrics = Int(read16(hhea, 34))
    guard count > 0, metrics > 0, metrics <= count,
      loca.count >= (count + 1) * (longOffsets ? 4 : 2),
      hmtx.count >= metrics * 4 + (count - metrics) * 2
    else { return nil }
    /// The glyph's bytes in glyf, nil when the table is damaged.
    func outline(_ glyph: Int) -> ArraySlice<UInt8>? {
      let start = longOffsets ? Int(read32(loca, glyph * 4)) : Int(read16(loca, glyph * 2)) * 2
      let end =
        longOffsets ? Int(read32(loca, glyph * 4 + 4)) : Int(read16(loca, glyph * 2 + 2)) * 2
      guard start <= end, end <= glyf.count else { return nil }
      return glyf.slice(start..<end)
    }

    // The glyphs kept: those asked for, glyph 0, and every composite's components.
    var kept = Set([0] + glyphs.map(Int.init).filter { $0 < count })
    var work = Array(kept)
    while let glyph = work.popLast() {
      guard let data = outline(glyph) else { return nil }
      for component in Self.components(data) ?? [] where component < count {
        if kept.insert(component).inserted { work.append(component) }
      }
    }
    // Glyph 0, those asked for in their order (once each), then the components they brought.
    var order = [0]
    var placed: Set<Int> = [0]
    for glyph in glyphs.map(Int.init) where glyph < count && placed.insert(glyph).inserted {
      order.append(glyph)
    }
    order += kept.subtracting(placed).sorted()
    var newID = [Int: Int]()
    for (index, glyph) in order.enumerated() { newID[glyph] = index }

    var newGlyf: [UInt8] = []
    var newLoca: [UInt8] = []
    var newHmtx: [UInt8] = []
    for glyph in order {
      append32(&newLoca, UInt32(newGlyf.count))
      guard let data = outline(glyph) else { return nil }
      guard let stripped = Self.withoutInstructions(data, renumber: { newID[$0] ?? 0 }) else {
        return nil
      }
      newGlyf += stripped
      while newGlyf.count % 4 != 0 { newGlyf.append(0) }
      let advance = glyph < metrics ? read16(hmtx, glyph * 4) : read16(hmtx, (metrics - 1) * 4)
      let bearing =
        glyph < metrics
        ? read16(hmtx, glyph * 4 + 2) : read16(hmtx, metrics * 4 + (glyph - metrics) * 2)
      append16(&newHmtx, advance)
      append16(&newHmtx, bearing)
    }
    append32(&newLoca, UInt32(newGlyf.count))

    write16(&head, 50, 1)  // long loca offsets
    write32(&head, 8, 0)  // checkSumAdjustment, set below
    write16(&hhea, 34, UInt16(order.count))
    write16(&maxp, 4, UInt16(order.count))
    // post version 3: no glyph names.
    var post = post.map { Array($0.prefix(32)) } ?? []
    if post.count < 32 { post = [UInt8](repeating: 0, count: 32) }
    write32(&post, 0, 0x0003_0000)
    var tables: [(String, [UInt8])] = [
      ("glyf", newGlyf), ("head", head), ("hhea", hhea), ("hmtx", newHmtx), ("loca", newLoca),
      ("maxp", maxp), ("post", post),
    ]
    // OS/2 carries the weight and metrics some readers look up; it is small.
    if let os2 { tables.append(("OS/2", os2)) }
    tables.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
    var file = Self.assemble(tables)
    // head's checkSumAdjustment makes the whole file sum to 0xB1B0AFBA.
    if let headOffset = Self.offset(of: "head", in: file) {
      write32(&file, headOffset + 8, 0xB1B0_AFBA &- Self.checksum(file[...]))
    }
    bytes = file
    mapping = order.map { (UInt32($0), UInt32(newID[$0] ?? 0)) }
  }

  /// The glyph ids a composite glyph's components name; nil for a simple (or empty) glyph.
  private static func components(_ data: ArraySlice<UInt8>) -> [Int]? {
    let glyph = Array(data)
    guard glyph.count >= 10, Int16(bitPattern: read16(glyph, 0)) < 0 else { return nil }
    var found: [Int] = []
    var index = 10
    while index + 4 <= glyph.count {
      let flags = read16(glyph, index)
      found.append(Int(read16(glyph, index + 2)))
      index += 4 + componentTail(flags)
      if flags & 0x0020 == 0 { break }  // MORE_COMPONENTS
    }
    return found
  }

  /// The bytes after a component's flags and glyph id: its arguments and transform.
  private static func componentTail(_ flags: UInt16) -> Int {
    var length = flags & 0x0001 != 0 ? 4 : 2  // ARG_1_AND_2_ARE_WORDS
    if flags & 0x0008 != 0 {
      length += 2  // WE_HAVE_A_SCALE
    } else if flags & 0x0040 != 0 {
      length += 4  // WE_HAVE_AN_X_AND_Y_SCALE
    } else if flags & 0x0080 != 0 {
      length += 8  // WE_HAVE_A_TWO_BY_TWO
    }
    return length
  }

  /// `data` without its hinting instructions, a composite's components renumbered; nil when
  /// the glyph is damaged.
  private static func withoutInstructions(
    _ data: ArraySlice<UInt8>, renumber: (Int) -> Int
  ) -> [UInt8]? {
    var glyph = Array(data)
    guard glyph.count >= 10 else { return glyph.isEmpty ? [] : nil }
    let contours = Int16(bitPattern: read16(glyph, 0))
    if contours >= 0 {
      // Header, end points, instruction length and instructions, then flags and points.
      let lengthAt = 10 + 2 * Int(contours)
      guard lengthAt + 2 <= glyph.count else { return nil }
      let instructions = Int(read16(glyph, lengthAt))
      guard lengthAt + 2 + instructions <= glyph.count else { return nil }
      write16(&glyph, lengthAt, 0)
      glyph.removeSubrange((lengthAt + 2)..<(lengthAt + 2 + instructions))
      return glyph
    }
    var index = 10
    while index + 4 <= glyph.count {
      var flags = read16(glyph, index)
      write16(&glyph, index + 2, UInt16(renumber(Int(read16(glyph, index + 2)))))
      let next = index + 4 + componentTail(flags)
      guard next <= glyph.count else { return nil }
      if flags & 0x0020 == 0 {
        // The last component: instructions, if any, follow it.
        flags &= ~0x0100  // WE_HAVE_INSTRUCTIONS
        write16(&glyph, index, flags)
        return Array(glyph[..<next])
      }
      index = next
    }
    return nil
  }

  /// An sfnt file of `tables` (sorted by tag): the directory, then each table padded to 4.
  private static func assemble(_ tables: [(String, [UInt8])]) -> [UInt8] {
    var file: [UInt8] = []
    append32(&file, 0x0001_0000)
    let count = tables.count
    var power = 1
    var exponent = 0
    while power * 2 <= count {
      power *= 2
      exponent += 1
    }
    append16(&file, UInt16(count))
    append16(&file, UInt16(power * 16))
    append16(&file, UInt16(exponent))
    append16(&file, UInt16(count * 16 - power * 16))
    var offset = 12 + 16 * count
    for (tag, data) in tables {
      file += Array(tag.utf8)
      append32(&file, checksum(data[...]))
      append32(&file, UInt32(offset))
      append32(&file, UInt32(data.count))
      offset += (data.count + 3) & ~3
    }
    for (_, data) in tables {
      file += data
      while file.count % 4 != 0 { file.append(0) }
    }
    return file
  }

  private static func offset(of tag: String, in file: [UInt8]) -> Int? {
    let count = Int(read16(file, 4))
    for index in 0..<count {
      let record = 12 + 16 * index
      guard record + 16 <= file.count else { return nil }
      if Array(file[record..<(record + 4)]) == Array(tag.utf8) {
        return Int(read32(file, record + 8))
      }
    }
    return nil
  }

  /// The sum of the data's big-endian 32-bit words, the last padded with zeros.
  private static func checksum(_ data: ArraySlice<UInt8>) -> UInt32 {
    var sum: UInt32 = 0
    var index = data.startIndex
    while index < data.endIndex {
      var word: UInt32 = 0
      for byte in 0..<4 {
        word <<= 8
        if index + byte < data.endIndex { word |= UInt32(data[index + byte]) }
      }
      sum = sum &+ word
      index += 4
    }
    return sum
  }
}

/// `body` given a HarfBuzz face of the font file `bytes` (face 0), alive for the call; nil when
/// HarfBuzz cannot make one.
func withFace<Result>(ofFontFile bytes: [UInt8], _ body: (OpaquePointer) -> Result?) -> Result? {
  bytes.withUnsafeBufferPointer { buffer in
    guard
      let blob = buffer.baseAddress.flatMap({ base in
        base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
          hb_blob_create($0, UInt32(buffer.count), HB_MEMORY_MODE_READONLY, nil, nil)
        }
      })
    else { return nil }
    defer { hb_blob_destroy(blob) }
    guard let face = hb_face_create(blob, 0) else { return nil }
    defer { hb_face_destroy(face) }
    return body(face)
  }
}

/// A face's tables as HarfBuzz holds them, kept alive while this is.
private final class FontTables {
  /// A table's bytes in place.
  struct View {
    let base: UnsafePointer<UInt8>
    let count: Int

    subscript(index: Int) -> UInt8 { base[index] }

    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
      Array(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))[...]
    }
  }

  private let face: OpaquePointer
  private var blobs: [OpaquePointer] = []

  init(_ face: OpaquePointer) { self.face = face }

  deinit { for blob in blobs { hb_blob_destroy(blob) } }

  func view(_ tag: String) -> View? {
    let value = tag.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard let blob = hb_face_reference_table(face, value) else { return nil }
    blobs.append(blob)
    var length: UInt32 = 0
    guard let data = hb_blob_get_data(blob, &length), length > 0 else { return nil }
    return data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
      View(base: UnsafePointer($0), count: Int(length))
    }
  }

  /// The table's bytes, or its first `prefix` (post's 32-byte header without its glyph names,
  /// tens of kilobytes in a large font).
  func copy(_ tag: String, prefix: Int = .max) -> [UInt8]? {
    view(tag).map { Array(UnsafeBufferPointer(start: $0.base, count: min(prefix, $0.count))) }
  }
}

private func read16(_ bytes: FontTables.View, _ offset: Int) -> UInt16 {
  guard offset + 2 <= bytes.count else { return 0 }
  return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
}

private func read32(_ bytes: FontTables.View, _ offset: Int) -> UInt32 {
  guard offset + 4 <= bytes.count else { return 0 }
  return UInt32(read16(bytes, offset)) << 16 | UInt32(read16(bytes, offset + 2))
}

private func read16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
  guard offset + 2 <= bytes.count else { return 0 }
  return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
}

private func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
  guard offset + 4 <= bytes.count else { return 0 }
  return UInt32(read16(bytes, offset)) << 16 | UInt32(read16(bytes, offset + 2))
}

private func write16(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt16) {
  guard offset + 2 <= bytes.count else { return }
  bytes[offset] = UInt8(value >> 8)
  bytes[offset + 1] = UInt8(value & 0xFF)
}

private func write32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
  write16(&bytes, offset, UInt16(value >> 16))
  write16(&bytes, offset + 2, UInt16(value & 0xFFFF))
}

private func append16(_ bytes: inout [UInt8], _ value: UInt16) {
  bytes.append(UInt8(value >> 8))
  bytes.append(UInt8(value & 0xFF))
}

private func append32(_ bytes: inout [UInt8], _ value: UInt32) {
  append16(&bytes, UInt16(value >> 16))
  append16(&bytes, UInt16(value & 0xFFFF))
}
