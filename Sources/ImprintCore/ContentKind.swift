// SPDX-License-Identifier: Apache-2.0
// ImprintCore: what a file's first bytes look like, named without quoting them. An error about an
// unsupported file says "it looks like a GIF image" or "it looks like text", never the bytes
// themselves: a file's contents may be private (a password file, a key) and end up in a log.

/// A description of a file's kind, from its first bytes, for error messages.
public enum ContentKind {
  /// Magic numbers of common formats people upload by mistake or that Imprint does not read.
  private static let signatures: [(bytes: [UInt8], offset: Int, name: String)] = [
    (Array("%PDF-".utf8), 0, "a PDF document"),
    ([0xFF, 0xD8, 0xFF], 0, "a JPEG image"),
    ([0x89, 0x50, 0x4E, 0x47], 0, "a PNG image"),
    (Array("GIF8".utf8), 0, "a GIF image"),
    (Array("WEBP".utf8), 8, "a WebP image"),
    ([0x49, 0x49, 0x2A, 0x00], 0, "a TIFF image"),
    ([0x4D, 0x4D, 0x00, 0x2A], 0, "a TIFF image"),
    (Array("ftypheic".utf8), 4, "a HEIC image"),
    (Array("ftypheix".utf8), 4, "a HEIC image"),
    (Array("ftypmif1".utf8), 4, "a HEIF image"),
    (Array("ftypavif".utf8), 4, "an AVIF image"),
    (Array("BM".utf8), 0, "a BMP image"),
    (Array("PK".utf8) + [0x03, 0x04], 0, "a ZIP archive (or an Office document)"),
    ([0xD0, 0xCF, 0x11, 0xE0], 0, "an old Office document"),
    (Array("{\\rtf".utf8), 0, "an RTF document"),
    (Array("%!PS".utf8), 0, "a PostScript file"),
    ([0x1F, 0x8B], 0, "a gzip archive"),
    ([0x7F, 0x45, 0x4C, 0x46], 0, "a program (ELF)"),
  ]

  /// "nothing: it is empty", "a GIF image", "text", "HTML" or "unrecognised binary data".
  public static func describe(_ bytes: some Collection<UInt8>) -> String {
    let head = Array(bytes.prefix(512))
    if head.isEmpty { return "nothing: it is empty" }
    for signature in signatures {
      let end = signature.offset + signature.bytes.count
      if head.count >= end, Array(head[signature.offset..<end]) == signature.bytes {
        return signature.name
      }
    }
    if head.contains(0) { return "unrecognised binary data" }
    // The prefix may end inside a multi-byte character: allow up to three bytes cut off.
    let text = (0...min(3, head.count - 1)).lazy.compactMap {
      String(validating: head.dropLast($0), as: UTF8.self)
    }.first
    guard let text else { return "unrecognised binary data" }
    let lowered = text.lowercased().drop { $0.isWhitespace }
    if lowered.hasPrefix("<!doctype html") || lowered.hasPrefix("<html") { return "an HTML page" }
    if lowered.hasPrefix("<?xml") || lowered.hasPrefix("<svg") { return "XML (an SVG image?)" }
    if lowered.hasPrefix("{") || lowered.hasPrefix("[") { return "JSON or other text" }
    let controls = text.unicodeScalars.filter {
      $0.value < 32 && $0 != "\n" && $0 != "\r" && $0 != "\t"
    }
    return controls.isEmpty ? "text" : "unrecognised binary data"
  }
}
