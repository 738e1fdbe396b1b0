// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: the fonts (subset by HarfBuzz) and images of the PDFs Imprint writes itself.

internal import CPango
import Foundation
import ImprintPDF
import Synchronization

/// A font of a `DirectPDF`: the glyphs its pages used, with their text, embedded at the end as
/// a CID-keyed TrueType font (Type0, Identity-H) subset to those glyphs.
///
/// A glyph's code in the content streams (its CID) is given when a page first shows it: 1, 2,
/// 3 and so on (0 is glyph 0's). The subset numbers its glyphs in that order, so a code is its
/// glyph's id in the subset and the CIDToGIDMap is `/Identity`; only a subset made otherwise
/// (by hb-subset, or the whole font) needs a map, two bytes a code. Codes by glyph id in the
/// whole font needed one of two bytes for every glyph up to the highest used: 59 KB, nearly all
/// zeros, for one Hangul glyph of Droid Sans Fallback, whose deflating was a third of a served
/// card PDF's CPU.
final class DirectFont {
  /// `hb_face_t`, one reference owned.
  private let face: OpaquePointer
  /// `hb_font_t` at the font's own units, for advances and metrics.
  private let font: OpaquePointer
  private let unitsPerEm: Double
  /// The resource name's number (`/F<n>`) and the Type0 font's object.
  let number: Int
  let object: Int
  /// Each glyph's code, by glyph id; 0 while no page has shown it (and for glyph 0).
  ///
  /// The one table a glyph count long (two bytes a glyph, zeros): what else the font keeps is
  /// by code, as long as the glyphs used, since a served card PDF makes its fonts anew and Droid
  /// Sans Fallback has tens of thousands of glyphs.
  private var codes: [UInt16]
  /// The glyph of each code, in the order pages first showed them (code 0: glyph 0).
  private var glyphs: [UInt32] = [0]
  /// Each code's advance in thousandths of the font size (see `width(_:)`).
  private var widths: [Double] = []
  /// Each code's text (UTF-8), from the first cluster its glyph stood for alone, for ToUnicode.
  private var texts: [ArraySlice<CChar>?] = [nil]

  /// What tells one font file from another: its face's index, glyph count, units, length and
  /// `head` checksum (the whole file's, `checkSumAdjustment`).
  ///
  /// A PDF merges faces of one file into one font by it, and `characters` keeps answers by it
  /// for the whole process, across every font a server's templates name.
  struct FileKey: Hashable {
    let index: UInt32
    let glyphs: UInt32
    let unitsPerEm: UInt32
    let length: UInt32
    let checksum: UInt32

    init(_ face: OpaquePointer) {
      index = hb_face_get_index(face)
      glyphs = hb_face_get_glyph_count(face)
      unitsPerEm = hb_face_get_upem(face)
      let blob = hb_face_reference_blob(face)
      length = hb_blob_get_length(blob)
      hb_blob_destroy(blob)
      var sum: UInt32 = 0
      if let head = hb_face_reference_table(face, 0x6865_6164) {  // 'head'
        var count: UInt32 = 0
        if let data = hb_blob_get_data(head, &count), count >= 12 {
          for offset in 8..<12 { sum = sum << 8 | UInt32(UInt8(bitPattern: data[offset])) }
        }
        hb_blob_destroy(head)
      }
      checksum = sum
    }

    /// The key of the font file `bytes` (face 0); nil when HarfBuzz cannot read it.
    static func of(fontFile bytes: [UInt8]) -> FileKey? {
      withFace(ofFontFile: bytes) { FileKey($0) }
    }
  }

  let file: FileKey

  /// How fonts are subset.
  ///
  /// By this package's subsetter when it reads the font (the default), else by hb-subset, else
  /// not at all. Tests take the later paths on fonts the first reads.
  enum Subsetter: Sendable {
    case own, harfBuzz, wholeFont
  }
  @TaskLocal static var subsetter = Subsetter.own

  init(face: OpaquePointer, file: FileKey, number: Int, object: Int) {
    self.file = file
    self.face = hb_face_reference(face)
    guard let font = hb_font_create(face) else {
      preconditionFailure("hb_font_create returned NULL")
    }
    self.font = font
    unitsPerEm = Double(max(1, hb_face_get_upem(face)))
    let count = Int(min(hb_face_get_glyph_count(face), 65_536))
    codes = [UInt16](repeating: 0, count: count)
    self.number = number
    self.object = object
    widths = [advance(0)]
  }

  deinit {
    hb_font_destroy(font)
    hb_face_destroy(face)
  }

  /// The advance of code `code`'s glyph in thousandths of the font size (the font's own,
  /// unhinted: what a PDF reader takes from `/W`).
  func width(_ code: UInt16) -> Double { widths[Int(code)] }

  /// Glyph `glyph`'s advance as `/W` writes it: a reader places the next glyph by this width,
  /// and the content's TJ adjustments are reckoned from the same number.
  private func advance(_ glyph: UInt32) -> Double {
    (Double(hb_font_get_glyph_h_advance(font, glyph)) * 1000 / unitsPerEm).rounded()
  }

  /// The code a page shows `glyph` by, given at its first use (0 for glyph 0 and for an id the
  /// font does not have, which a reader draws as glyph 0).
  func use(_ glyph: UInt32) -> UInt16 {
    guard glyph != 0, Int(glyph) < codes.count else { return 0 }
    let known = codes[Int(glyph)]
    if known != 0 { return known }
    // At most 65,535 glyphs besides glyph 0 (the count is capped at 65,536).
    let code = UInt16(glyphs.count)
    codes[Int(glyph)] = code
    glyphs.append(glyph)
    widths.append(advance(glyph))
    texts.append(nil)
    return code
  }

  /// Whether `glyph` can stand for `bytes` (UTF-8) in ToUnicode.
  ///
  /// True when it does already, or has no text yet and takes this one. False: its text is another (a matra or a ligature part
  /// met in another cluster first), or it is the glyph of none of the cluster's several
  /// characters (an ellipsis standing for the text it cut, a ligature), and the cluster needs
  /// its own text (`/ActualText`) as cairo gives it.
  func claim(_ glyph: UInt32, text bytes: ArraySlice<CChar>) -> Bool {
    let code = Int(use(glyph))
    if let known = texts[code] { return known.elementsEqual(bytes) }
    let scalars = String(decoding: bytes.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      .unicodeScalars
    if scalars.count > 1, !scalars.contains(where: { nominal($0.value) == glyph }) { return false }
    texts[code] = bytes
    return true
  }

  /// The glyph the font's character map gives `scalar`, if any.
  private func nominal(_ scalar: UInt32) -> UInt32? {
    var glyph: hb_codepoint_t = 0
    return hb_font_get_nominal_glyph(font, scalar, &glyph) != 0 ? glyph : nil
  }

  /// Text for the glyphs that no cluster gave any (a hyphen Pango adds at a break, an
  /// ellipsis, glyphs only ever drawn inside a cluster of several): the character the font's
  /// map sends to each, the lowest when several do.
  ///
  /// Each answer is kept for the process (`characters`), by font file and glyph.
  private func unmappedText() {
    func give(_ code: Int, _ character: Unicode.Scalar) {
      texts[code] = ArraySlice(String(Character(character)).utf8.map { CChar(bitPattern: $0) })
    }
    // Glyph 0 is in no character map: only a cluster's text can be its.
    let missing = texts.indices.dropFirst().filter { texts[$0] == nil }
    guard !missing.isEmpty else { return }
    let known = Self.characters.withLock { $0[file] } ?? [:]
    var unknown: [UInt32: Int] = [:]
    for code in missing {
      switch known[glyphs[code]] {
      case .some(.some(let character)): give(code, character)
      case .some(.none): continue
      case .none: unknown[glyphs[code]] = code
      }
    }
    guard !unknown.isEmpty, let unicodes = hb_set_create() else { return }
    defer { hb_set_destroy(unicodes) }
    var found: [UInt32: Unicode.Scalar?] = [:]
    hb_face_collect_unicodes(face, unicodes)
    var scalar = UInt32.max  // HB_SET_VALUE_INVALID: start before the first
    while found.count < unknown.count, hb_set_next(unicodes, &scalar) != 0 {
      guard let glyph = nominal(scalar), let code = unknown[glyph], found[glyph] == nil,
        let character = Unicode.Scalar(scalar)
      else { continue }
      give(code, character)
      found[glyph] = character
    }
    // The whole map walked: the rest have no character.
    for glyph in unknown.keys where found[glyph] == nil { found.updateValue(nil, forKey: glyph) }
    Self.characters.withLock { characters in
      if characters.count >= 256 { characters = [:] }
      characters[file, default: [:]].merge(found) { kept, _ in kept }
    }
  }

  /// The character the font file's map sends to a glyph (the lowest when several do; nil:
  /// none), for glyphs no cluster gave text, once found.
  ///
  /// Finding one walks the map in order; for a glyph no character maps to (an Arabic
  /// positional form, a ligature), all of it: most of Droid Sans Fallback's tens of thousands
  /// of characters, 7 % of a served card PDF's CPU when done for every PDF. At most a glyph
  /// count of entries a font file, and 256 files.
  static let characters = Mutex<[FileKey: [UInt32: Unicode.Scalar?]]>([:])

  /// Writes the Type0 font, its CIDFont, descriptor, font file, CIDToGIDMap and ToUnicode.
  func write(to file: PDFFileWriter) {
    let name = postScriptName()
    let subset = Subset(face: face, glyphs: glyphs)
    let tagged = Self.tag(name: name, glyphs: glyphs) + "+" + name
    // Each code's glyph in the font file written: the subset's own numbering (the codes' order
    // when this package's subsetter made it), or the whole font's ids.
    let renumbered = subset.mapping.map { Dictionary($0, uniquingKeysWith: { first, _ in first }) }
    let targets = glyphs.map { glyph in renumbered.map { $0[glyph] ?? 0 } ?? glyph }
    let identity = targets.enumerated().allSatisfy { UInt32($0.offset) == $0.element }
    let cidFont = file.reserve()
    let descriptor = file.reserve()
    let fontFile = file.reserve()
    let toUnicode = file.reserve()
    let cidToGID = identity ? nil : file.reserve()

    file.object(object) { out in
      out.put("<</Type /Font /Subtype /Type0 /BaseFont /")
      out.append(contentsOf: Array(tagged.utf8))
      out.put("/Encoding/Identity-H/DescendantFonts[")
      out.reference(cidFont)
      out.put("]/ToUnicode ")
      out.reference(toUnicode)
      out.put(">>")
    }
    file.object(cidFont) { out in
      out.put("<</Type /Font /Subtype /CIDFontType2 /BaseFont /")
      out.append(contentsOf: Array(tagged.utf8))
      out.put("/CIDSystemInfo<</Registry(Adobe)/Ordering(Identity)/Supplement 0>>/FontDescriptor ")
      out.reference(descriptor)
      // Every code from 0 up, one run of widths.
      out.put("/W[0[")
      for (code, width) in widths.enumerated() {
        if code > 0 { out.put(" ") }
        out.put(width)
      }
      out.put("]]/CIDToGIDMap")
      if let cidToGID {
        out.put(" ")
        out.reference(cidToGID)
      } else {
        out.put("/Identity")
      }
      out.put(">>")
    }
    file.object(descriptor) { out in
      let box = boundingBox()
      let scale = 1000 / unitsPerEm
      out.put("<</Type /FontDescriptor /FontName /")
      out.append(contentsOf: Array(tagged.utf8))
      // 4: symbolic (glyphs outside the standard Latin set).
      out.put("/Flags 4/FontBBox[")
      out.numbers(box.0 * scale, box.1 * scale, box.2 * scale)
      out.put(box.3 * scale)
      out.put("]/ItalicAngle 0/Ascent ")
      out.put(metric(HB_OT_METRICS_TAG_HORIZONTAL_ASCENDER) * scale)
      out.put("/Descent ")
      out.put(metric(HB_OT_METRICS_TAG_HORIZONTAL_DESCENDER) * scale)
      out.put("/CapHeight ")
      out.put(metric(HB_OT_METRICS_TAG_CAP_HEIGHT) * scale)
      out.put("/StemV 80/FontFile2 ")
      out.reference(fontFile)
      out.put(">>")
    }
    file.stream(fontFile, data: subset.bytes, level: Self.level(subset.bytes)) { out in
      out.put("/Length1 ")
      out.put(subset.bytes.count)
    }
    if let cidToGID {
      // Each code's glyph, two bytes a code (a composite's components kept beyond the codes
      // need none).
      var map: [UInt8] = []
      map.reserveCapacity(2 * targets.count)
      for target in targets {
        map.append(UInt8(target >> 8 & 0xFF))
        map.append(UInt8(target & 0xFF))
      }
      file.stream(cidToGID, data: map, level: Self.level(map))
    }
    let cmap = toUnicodeCMap()
    file.stream(toUnicode, data: cmap, level: Self.level(cmap))
  }

  /// The deflate level of a font's streams: libdeflate's fastest (1) under 16 KB, the file's
  /// (nil) above.
  ///
  /// A served card PDF's four fonts are a few kilobytes each (DejaVu Sans 4.4 KB, Droid Sans
  /// Fallback 2.2 KB for three Hangul syllables) and their ToUnicode maps under 1 KB; deflating
  /// them at level 6 was a sixth of its CPU. The sample card's eight streams, mean of 500 runs
  /// each (2026-12-07): 236 µs at level 6, 146 µs at level 1, 211 bytes (1 %) more. A batch's
  /// fonts, written once a file and larger, keep the file's level.
  static func level(_ data: [UInt8]) -> Int? { data.count < 16_384 ? 1 : nil }

  private func toUnicodeCMap() -> [UInt8] {
    var out: [UInt8] = []
    out.put(
      """
      /CIDInit/ProcSet findresource begin
      12 dict begin
      begincmap
      /CIDSystemInfo<</Registry(Adobe)/Ordering(UCS)/Supplement 0>>def
      /CMapName/Adobe-Identity-UCS def
      /CMapType 2 def
      1 begincodespacerange
      <0000><FFFF>
      endcodespacerange

      """)
    unmappedText()
    let mapped = texts.indices.filter { texts[$0]?.isEmpty == false }
    var start = 0
    while start < mapped.count {
      let block = mapped[start..<min(mapped.count, start + 100)]
      out.put(block.count)
      out.put(" beginbfchar\n")
      for code in block {
        out.put("<")
        PDFSyntax.appendHex(UInt16(truncatingIfNeeded: code), to: &out)
        out.put("><")
        let bytes = (texts[code] ?? []).map { UInt8(bitPattern: $0) }
        for unit in String(decoding: bytes, as: UTF8.self).utf16 {
          PDFSyntax.appendHex(unit, to: &out)
        }
        out.put(">\n")
      }
      out.put("endbfchar\n")
      start += 100
    }
    out.put("endcmap\nCMapName currentdict/CMap defineresource pop\nend\nend\n")
    return out
  }

  /// The font's PostScript name, reduced to what a PDF name holds plainly.
  private func postScriptName() -> String {
    var length: UInt32 = 128
    var buffer = [CChar](repeating: 0, count: 128)
    hb_ot_name_get_utf8(face, hb_ot_name_id_t(6), nil, &length, &buffer)
    let name = String(
      decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self
    )
    .unicodeScalars.filter {
      $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
    }
    let plain = String(String.UnicodeScalarView(name))
    return plain.isEmpty ? "Font\(number)" : plain
  }

  /// Six capital letters from the name and the glyphs: a subset's tag (PDF 32000 9.6.4), the
  /// same for the same subset.
  private static func tag(name: String, glyphs: [UInt32]) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    func mix(_ byte: UInt8) {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    for byte in name.utf8 { mix(byte) }
    for glyph in glyphs { withUnsafeBytes(of: glyph.littleEndian) { for byte in $0 { mix(byte) } } }
    var letters = ""
    for _ in 0..<6 {
      letters.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "A") + UInt8(hash % 26)))
      hash /= 26
    }
    return letters
  }

  /// `head`'s xMin, yMin, xMax, yMax in font units.
  private func boundingBox() -> (Double, Double, Double, Double) {
    let tag = UInt32(0x6865_6164)  // 'head'
    guard let blob = hb_face_reference_table(face, tag) else { return (0, 0, 0, 0) }
    defer { hb_blob_destroy(blob) }
    var length: UInt32 = 0
    guard let data = hb_blob_get_data(blob, &length), length >= 44 else {
      return (0, -200, 1000, 900)
    }
    func value(_ offset: Int) -> Double {
      let high = UInt16(UInt8(bitPattern: data[offset]))
      let low = UInt16(UInt8(bitPattern: data[offset + 1]))
      return Double(Int16(bitPattern: high << 8 | low))
    }
    return (value(36), value(38), value(40), value(42))
  }

  private func metric(_ tag: hb_ot_metrics_tag_t) -> Double {
    var position: Int32 = 0
    hb_ot_metrics_get_position_with_fallback(font, tag, &position)
    return Double(position)
  }
}

/// A font subset by HarfBuzz to some glyphs: the font file, and each old glyph's new id; or the
/// whole font with ids unchanged when HarfBuzz cannot subset it.
private struct Subset {
  let bytes: [UInt8]
  /// Old glyph id to new, nil when `bytes` is the whole font.
  let mapping: [(UInt32, UInt32)]?

  init(face: OpaquePointer, glyphs: [UInt32]) {
    let from = DirectFont.subsetter
    if from == .own, let own = TrueTypeSubset(face: face, glyphs: glyphs) {
      bytes = own.bytes
      mapping = own.mapping
    } else if from != .wholeFont, let made = Self.subset(face, glyphs) {
      self = made
    } else {
      bytes = Self.bytes(of: hb_face_reference_blob(face))
      mapping = nil
    }
  }

  private init(bytes: [UInt8], mapping: [(UInt32, UInt32)]) {
    self.bytes = bytes
    self.mapping = mapping
  }

  private static func subset(_ face: OpaquePointer, _ glyphs: [UInt32]) -> Subset? {
    guard let input = hb_subset_input_create_or_fail() else { return nil }
    defer { hb_subset_input_destroy(input) }
    let set = hb_subset_input_glyph_set(input)
    for glyph in glyphs { hb_set_add(set, glyph) }
    // Hinting is for screens at small sizes, which PDF readers do not use; the layout tables
    // are for shaping, done already.
    hb_subset_input_set_flags(input, HB_SUBSET_FLAGS_NO_HINTING.rawValue)
    let drop = hb_subset_input_set(input, HB_SUBSET_SETS_DROP_TABLE_TAG)
    for tag in ["GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH", "DSIG", "kern"] {
      hb_set_add(drop, tag.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }
    guard let plan = hb_subset_plan_create_or_fail(face, input) else { return nil }
    defer { hb_subset_plan_destroy(plan) }
    guard let map = hb_subset_plan_old_to_new_glyph_mapping(plan),
      let subset = hb_subset_plan_execute_or_fail(plan)
    else { return nil }
    defer { hb_face_destroy(subset) }
    var mapping: [(UInt32, UInt32)] = []
    for glyph in glyphs {
      let new = hb_map_get(map, glyph)
      if new != UInt32.max { mapping.append((glyph, new)) }
    }
    let bytes = Self.bytes(of: hb_face_reference_blob(subset))
    return bytes.isEmpty ? nil : Subset(bytes: bytes, mapping: mapping)
  }

  private static func bytes(of blob: OpaquePointer?) -> [UInt8] {
    guard let blob else { return [] }
    defer { hb_blob_destroy(blob) }
    var length: UInt32 = 0
    guard let data = hb_blob_get_data(blob, &length) else { return [] }
    return data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
      Array(UnsafeBufferPointer(start: $0, count: Int(length)))
    }
  }
}

/// Image XObjects: a JPEG file as it is (DCTDecode), other pixels deflated, with their
/// transparency as a soft mask.
enum DirectImage {
  /// Writes `bitmap` as an image object (and its mask); returns the image's object.
  static func write(_ bitmap: Bitmap, smooth: Bool, to file: PDFFileWriter) -> Int {
    let object = file.reserve()
    if let jpeg = bitmap.jpeg, let info = JPEGInfo(jpeg), info.width == bitmap.width,
      info.height == bitmap.height
    {
      file.stream(object, data: jpeg, compress: false) { out in
        entries(
          &out, width: info.width, height: info.height, gray: info.components == 1, smooth: smooth)
        out.put("/Filter/DCTDecode")
      }
      return object
    }
    let count = bitmap.width * bitmap.height
    var gray = true
    var colour = [UInt8](repeating: 0, count: count * 3)
    var alpha = bitmap.hasAlpha ? [UInt8](repeating: 0, count: count) : []
    bitmap.pixels.withUnsafeBufferPointer { pixels in
      for index in 0..<count {
        var b = Int(pixels[4 * index])
        var g = Int(pixels[4 * index + 1])
        var r = Int(pixels[4 * index + 2])
        if bitmap.hasAlpha {
          let a = Int(pixels[4 * index + 3])
          alpha[index] = UInt8(a)
          if a > 0 && a < 255 {
            // Premultiplied: back to the colour itself, rounded.
            r = min(255, (r * 255 + a / 2) / a)
            g = min(255, (g * 255 + a / 2) / a)
            b = min(255, (b * 255 + a / 2) / a)
          }
        }
        colour[3 * index] = UInt8(r)
        colour[3 * index + 1] = UInt8(g)
        colour[3 * index + 2] = UInt8(b)
        if r != g || g != b { gray = false }
      }
    }
    var bits = 8
    if gray {
      colour = (0..<count).map { colour[3 * $0] }
      if colour.allSatisfy({ $0 == 0 || $0 == 255 }) {
        // Black and white only (a code drawn a pixel a module): a bit a pixel, rows padded to
        // a byte.
        bits = 1
        let rowBytes = (bitmap.width + 7) / 8
        var packed = [UInt8](repeating: 0, count: rowBytes * bitmap.height)
        for y in 0..<bitmap.height {
          for x in 0..<bitmap.width where colour[y * bitmap.width + x] != 0 {
            packed[y * rowBytes + x / 8] |= 0x80 >> UInt8(x % 8)
          }
        }
        colour = packed
      }
    }
    var mask: Int?
    if bitmap.hasAlpha {
      let made = file.reserve()
      file.stream(made, data: alpha) { out in
        entries(&out, width: bitmap.width, height: bitmap.height, gray: true, smooth: smooth)
      }
      mask = made
    }
    file.stream(object, data: colour) { out in
      entries(
        &out, width: bitmap.width, height: bitmap.height, gray: gray, smooth: smooth, bits: bits)
      if let mask {
        out.put("/SMask ")
        out.reference(mask)
      }
    }
    return object
  }

  private static func entries(
    _ out: inout [UInt8], width: Int, height: Int, gray: Bool, smooth: Bool, bits: Int = 8
  ) {
    out.put("/Type /XObject /Subtype /Image /Width ")
    out.put(width)
    out.put("/Height ")
    out.put(height)
    out.put(gray ? "/ColorSpace/DeviceGray" : "/ColorSpace/DeviceRGB")
    out.put(bits == 1 ? "/BitsPerComponent 1" : "/BitsPerComponent 8")
    if smooth { out.put("/Interpolate true") }
  }
}

/// What a PDF needs of a JPEG file: its size and colour components, from its frame header;
/// nil for what a PDF reader may not take as it is (other than 8 bits, CMYK, no frame).
private struct JPEGInfo {
  let width: Int
  let height: Int
  let components: Int

  init?(_ jpeg: [UInt8]) {
    guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
    var index = 2
    while index + 9 < jpeg.count {
      guard jpeg[index] == 0xFF else { return nil }
      let marker = jpeg[index + 1]
      if marker == 0xFF {
        index += 1
        continue
      }
      let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
      // SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC).
      if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
        let precision = jpeg[index + 4]
        height = Int(jpeg[index + 5]) << 8 | Int(jpeg[index + 6])
        width = Int(jpeg[index + 7]) << 8 | Int(jpeg[index + 8])
        components = Int(jpeg[index + 9])
        guard precision == 8, components == 1 || components == 3, width > 0, height > 0 else {
          return nil
        }
        return
      }
      index += 2 + length
    }
    return nil
  }
}
