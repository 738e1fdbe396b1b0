// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: Office uploads recognised by their bytes, never their names: files made
// by their real producers (python-docx, python-pptx, openpyxl, odfpy, LibreOffice), HWP and
// encrypted OOXML Compound Files written here (read back by olefile), HWPX zips, and hostile
// archives and Compound Files that must neither trap nor take long.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintTestSupport
import Testing

/// LibreOffice's launcher (Debian's libreoffice-core-nogui).
let soffice = "/usr/lib/libreoffice/program/soffice"

/// Writes OOXML with python-docx, python-pptx and openpyxl, and ODF with odfpy, into a folder:
/// `sample.docx`, `sample.pptx`, `sample.xlsx`, `odfpy.odt`, `odfpy.ods`, `odfpy.odp`,
/// `odfpy.odg`.
private let producerScript = pythonFixture("office_producers.py")

/// Runs the producers into `folder`.
private func makeProducerFiles(in folder: TemporaryFolder) throws {
  let made = try runTool("python3", ["-c", producerScript, folder.path])
  try #require(made.status == 0, "\(made.stderr)")
}

/// Converts `file` in `folder` to `format` with LibreOffice (a private profile, so that no other
/// LibreOffice running on the machine is reached); returns the new file's path.
private func convert(_ file: String, to format: String, in folder: TemporaryFolder) throws
  -> String
{
  let output = folder.file("converted-" + format)
  let run = try runMeasured(
    [
      soffice, "-env:UserInstallation=file://" + folder.file("profile-" + format), "--headless",
      "--convert-to", format, "--outdir", output, folder.file(file),
    ], timeout: 120)
  let name = (file as NSString).deletingPathExtension + "." + format
  try #require(run.status == 0, "soffice: \(run.stderr)")
  let path = output + "/" + name
  try #require(FileManager.default.fileExists(atPath: path), "soffice made no \(name)")
  return path
}

/// The bytes of the file at `path`.
private func contents(_ path: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Makes a file of `type` with its real producer in `folder`; returns its path.
private func made(_ type: OfficeType, in folder: TemporaryFolder) throws -> String {
  try makeProducerFiles(in: folder)
  switch type {
  case .docx, .pptx, .xlsx: return folder.file("sample." + type.rawValue)
  case .odt, .ods, .odp, .odg: return folder.file("odfpy." + type.rawValue)
  case .doc, .rtf: return try convert("sample.docx", to: type.rawValue, in: folder)
  case .xls: return try convert("sample.xlsx", to: "xls", in: folder)
  case .ppt: return try convert("sample.pptx", to: "ppt", in: folder)
  }
}

/// A zip written by Python's zipfile: `entries` (name, text, stored) in order.
private func pythonZip(_ entries: [(String, String, Bool)], in folder: TemporaryFolder) throws
  -> [UInt8]
{
  let script = pythonFixture("zip_entries.py")
  let list = try JSONSerialization.data(withJSONObject: entries.map { [$0.0, $0.1, $0.2] })
  let path = folder.file("made.zip")
  let run = try runTool("python3", ["-c", script, path, String(decoding: list, as: UTF8.self)])
  try #require(run.status == 0, "\(run.stderr)")
  return try contents(path)
}

/// The streams, and their first bytes, that olefile reads in a Compound File.
private func oleStreams(_ bytes: [UInt8], in folder: TemporaryFolder) throws -> [String: String] {
  let path = folder.file("ole.bin")
  try Data(bytes).write(to: URL(fileURLWithPath: path))
  let script = pythonFixture("ole_streams.py")
  let run = try runTool("python3", ["-c", script, path])
  try #require(run.status == 0, "\(run.stderr)")
  return try JSONDecoder().decode([String: String].self, from: Data(run.stdoutBytes))
}

/// A HWP 5 document's streams: its `FileHeader` (the signature, then zeros where the version and
/// flags go), the summary, and the preview text.
private func hwpStreams(header: String = "HWP Document File", headerSize: Int = 256)
  -> [(name: String, data: [UInt8])]
{
  let signature = Array(header.utf8)
  return [
    ("FileHeader", signature + Array(repeating: 0, count: headerSize - signature.count)),
    ("\u{5}HwpSummaryInformation", Array(repeating: 0x11, count: 300)),
    ("PrvText", Array("Imprint".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })),
  ]
}

@Suite("Office documents sniffed by their content", .liveHandlesChecked)
struct OfficeTypeTests {
  @Test(
    "each type made by its producer is sniffed from its bytes, whatever its name",
    arguments: OfficeType.allCases)
  func producers(type: OfficeType) throws {
    let folder = TemporaryFolder()
    let path = try made(type, in: folder)
    #expect(OfficeSniff.sniff(try contents(path)) == .office(type))
    // The name says nothing: the same bytes named otherwise, mapped as an upload is.
    for name in ["upload.pdf", "upload.txt", "upload", "upload.xlsx"] {
      try FileManager.default.copyItem(atPath: path, toPath: folder.file(name))
      #expect(OfficeSniff.sniff(try DocumentBytes(mapping: folder.file(name))) == .office(type))
    }
  }

  @Test("ODF written by LibreOffice, and its templates, are their types")
  func libreOfficeODF() throws {
    let folder = TemporaryFolder()
    try makeProducerFiles(in: folder)
    let cases: [(String, String, OfficeType)] = [
      ("sample.docx", "odt", .odt), ("sample.xlsx", "ods", .ods), ("sample.pptx", "odp", .odp),
      ("sample.docx", "ott", .odt), ("sample.xlsx", "ots", .ods),
    ]
    for (source, format, type) in cases {
      let bytes = try contents(try convert(source, to: format, in: folder))
      #expect(OfficeSniff.sniff(bytes) == .office(type), "\(format)")
    }
  }

  @Test("HWP 5: FileHeader starting with its signature and the summary, in the mini stream or not")
  func hwp() throws {
    let folder = TemporaryFolder()
    let small = CompoundFileBytes.make(hwpStreams())
    let large = CompoundFileBytes.make(hwpStreams(headerSize: 5000))
    // The files are real Compound Files: olefile reads the streams and their first bytes.
    for bytes in [small, large] {
      let streams = try oleStreams(bytes, in: folder)
      #expect(Set(streams.keys) == ["FileHeader", "\u{5}HwpSummaryInformation", "PrvText"])
      #expect(streams["FileHeader"] == "HWP Document File")
      #expect(OfficeSniff.sniff(bytes) == .hwp)
    }
    // The summary's name without its leading U+0005 is accepted too.
    var renamed = hwpStreams()
    renamed[1].name = "HwpSummaryInformation"
    #expect(OfficeSniff.sniff(CompoundFileBytes.make(renamed)) == .hwp)
    // Another signature, or no summary: a Compound File of some other kind.
    #expect(
      OfficeSniff.sniff(CompoundFileBytes.make(hwpStreams(header: "HWP Document Fil!")))
        == .unknownCompound)
    #expect(
      OfficeSniff.sniff(CompoundFileBytes.make([hwpStreams()[0], hwpStreams()[2]]))
        == .unknownCompound)
  }

  @Test("a password-protected OOXML file: EncryptionInfo and EncryptedPackage")
  func encrypted() throws {
    let folder = TemporaryFolder()
    let bytes = CompoundFileBytes.make([
      ("EncryptionInfo", [4, 0, 4, 0, 0x40, 0, 0, 0] + Array(repeating: 7, count: 600)),
      ("EncryptedPackage", Array(repeating: 0x5A, count: 9000)),
    ])
    #expect(Set(try oleStreams(bytes, in: folder).keys) == ["EncryptionInfo", "EncryptedPackage"])
    #expect(OfficeSniff.sniff(bytes) == .encryptedOffice)
    // Either alone is not enough; the names compare without regard to case, as in [MS-CFB].
    #expect(
      OfficeSniff.sniff(CompoundFileBytes.make([("EncryptionInfo", [1])])) == .unknownCompound)
    #expect(
      OfficeSniff.sniff(
        CompoundFileBytes.make([("ENCRYPTIONINFO", [1]), ("encryptedpackage", [2])]))
        == .encryptedOffice)
  }

  @Test("old Office names decide: WordDocument, Workbook or Book, PowerPoint Document")
  func compoundNames() {
    let cases: [(String, OfficeSniff)] = [
      ("WordDocument", .office(.doc)), ("Workbook", .office(.xls)), ("Book", .office(.xls)),
      ("PowerPoint Document", .office(.ppt)), ("Contents", .unknownCompound),
    ]
    for (name, expected) in cases {
      let bytes = CompoundFileBytes.make([("\u{5}SummaryInformation", [0]), (name, [1, 2, 3])])
      #expect(OfficeSniff.sniff(bytes) == expected, "\(name)")
    }
  }

  @Test("HWPX: its stored mimetype, or Contents/header.xml with version.xml")
  func hwpx() throws {
    let folder = TemporaryFolder()
    let parts = [
      ("version.xml", "<version/>", false), ("Contents/header.xml", "<head/>", false),
      ("Contents/section0.xml", "<sec/>", false),
    ]
    let withType = try pythonZip([("mimetype", "application/hwp+zip", true)] + parts, in: folder)
    #expect(OfficeSniff.sniff(withType) == .hwpx)
    #expect(OfficeSniff.sniff(try pythonZip(parts, in: folder)) == .hwpx)
    // The mimetype alone decides; the parts without version.xml do not.
    #expect(
      OfficeSniff.sniff(try pythonZip([("mimetype", "application/hwp+zip", true)], in: folder))
        == .hwpx)
    #expect(OfficeSniff.sniff(try pythonZip(Array(parts.dropFirst()), in: folder)) == .unknownZip)
  }

  @Test("ODF's mimetype must be stored; content.xml and a manifest alone are an unknown zip")
  func odfMimeType() throws {
    let folder = TemporaryFolder()
    let body = [("content.xml", "<c/>", false), ("META-INF/manifest.xml", "<m/>", false)]
    let type = "application/vnd.oasis.opendocument.spreadsheet"
    #expect(
      OfficeSniff.sniff(try pythonZip([("mimetype", type, true)] + body, in: folder))
        == .office(.ods))
    #expect(
      OfficeSniff.sniff(try pythonZip([("mimetype", type, false)] + body, in: folder))
        == .unknownZip)
    #expect(OfficeSniff.sniff(try pythonZip(body, in: folder)) == .unknownZip)
    #expect(
      OfficeSniff.sniff(try pythonZip([("mimetype", type + "x", true)] + body, in: folder))
        == .unknownZip)
  }

  @Test("OOXML needs [Content_Types].xml and a main part; other zips are unknown")
  func otherZips() throws {
    let folder = TemporaryFolder()
    var generator = SeededGenerator(state: 31)
    let random = (0..<20).map { index in
      let letters = (0..<8).map { _ in UInt8.random(in: 97...122, using: &generator) }
      let name = "dir\(index)/" + String(decoding: letters, as: UTF8.self) + ".bin"
      return (name, "\(generator.next())", false)
    }
    #expect(OfficeSniff.sniff(try pythonZip(random, in: folder)) == .unknownZip)
    let types = ("[Content_Types].xml", "<Types/>", false)
    #expect(
      OfficeSniff.sniff(try pythonZip([("word/document.xml", "<w/>", false)], in: folder))
        == .unknownZip)
    #expect(
      OfficeSniff.sniff(try pythonZip([types, ("xl/workbook.xml", "<w/>", false)], in: folder))
        == .office(.xlsx))
    // A main part by another name: its folder decides; part names ignore case (OPC).
    #expect(
      OfficeSniff.sniff(try pythonZip([types, ("ppt/slides/slide1.xml", "", false)], in: folder))
        == .office(.pptx))
    #expect(
      OfficeSniff.sniff(try pythonZip([types, ("Word/Document.xml", "", false)], in: folder))
        == .office(.docx))
    // The empty zip.
    #expect(
      OfficeSniff.sniff([0x50, 0x4B, 0x05, 0x06] + Array(repeating: 0, count: 18)) == .unknownZip)
  }

  @Test("text, PDFs, images and nothing are none of these; RTF is its signature")
  func notOffice() throws {
    let folder = TemporaryFolder()
    let text = folder.file("prices.xlsx")
    try Data("name,price\npen,2\n".utf8).write(to: URL(fileURLWithPath: text))
    #expect(OfficeSniff.sniff(try DocumentBytes(mapping: text)) == nil)
    #expect(OfficeSniff.sniff([]) == nil)
    #expect(OfficeSniff.sniff(Array("%PDF-1.7\n".utf8)) == nil)
    #expect(OfficeSniff.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == nil)
    #expect(OfficeSniff.sniff([0x50, 0x4B, 0x03]) == nil)
    #expect(OfficeSniff.sniff(Array(#"{\rtf1\ansi Imprint}"#.utf8)) == .office(.rtf))
    #expect(OfficeSniff.sniff(Array(#" {\rtf1}"#.utf8)) == nil)
  }
}

/// The 32-bit little-endian integer at `offset`.
private func le32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
  (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
}

/// `bytes` with the 32-bit little-endian `value` written at `offset` (or 16 bits, `width` 2).
private func patched(_ bytes: [UInt8], at offset: Int, _ value: UInt32, width: Int = 4) -> [UInt8] {
  var bytes = bytes
  for index in 0..<width { bytes[offset + index] = UInt8(value >> (8 * index) & 0xFF) }
  return bytes
}

/// Sniffs `bytes`.
///
/// Every walk in the sniffer is bounded by the file's size (each chain and
/// directory is read at most once: loops end there), which the cases below exercise; how long
/// they take is not asserted (tests hold no timings: the fuzz target and the benchmarks
/// watch speed).
private func sniffQuickly(_ bytes: [UInt8]) -> OfficeSniff? {
  OfficeSniff.sniff(bytes)
}

@Suite("Hostile Office files: no trap, damage told apart", .liveHandlesChecked)
struct HostileOfficeTests {
  @Test("a docx and a doc cut at 200 lengths: the whole file's type or damaged, never a trap")
  func truncated() throws {
    let folder = TemporaryFolder()
    try makeProducerFiles(in: folder)
    let docx = try contents(folder.file("sample.docx"))
    let doc = try contents(try convert("sample.docx", to: "doc", in: folder))
    // A ZIP keeps its directory at its end: cut anywhere, it is damaged. A Compound File keeps
    // its header first: cut after its directory, a stream's entry may still be read (its type),
    // or the directory read short of it (unknown).
    let cases: [([UInt8], OfficeType, Set<OfficeSniff>, Int)] = [
      (docx, .docx, [.damagedZip], 4),
      (doc, .doc, [.damagedCompound, .unknownCompound], 8),
    ]
    for (bytes, type, cut, signature) in cases {
      #expect(OfficeSniff.sniff(bytes) == .office(type))
      var seen: Set<OfficeSniff?> = []
      for step in 0..<200 {
        let length = bytes.count * step / 200
        let verdict = sniffQuickly(Array(bytes.prefix(length)))
        seen.insert(verdict)
        if length < signature {
          #expect(verdict == nil)
        } else {
          #expect(
            verdict == .office(type) || verdict.map(cut.contains) == true, "cut at \(length)")
        }
      }
      #expect(seen.contains(type == .docx ? .damagedZip : .damagedCompound))
    }
  }

  @Test("a loop in the root's mini stream chain: the FileHeader is not read, so not HWP")
  func miniStreamLoop() {
    // The summary first, so that FileHeader starts at 640 bytes: in the mini stream's second
    // sector, which only the chain leads to.
    let summary = ("\u{5}HwpSummaryInformation", [UInt8](repeating: 0x11, count: 600))
    let bytes = CompoundFileBytes.make([summary, hwpStreams()[0]])
    #expect(OfficeSniff.sniff(bytes) == .hwp)
    let rootStart = Int(le32(bytes, 1024 + 116))
    var looped = bytes
    CompoundFileBytes.setFAT(&looped, sector: rootStart, to: UInt32(rootStart))
    #expect(sniffQuickly(looped) == .unknownCompound)
  }

  @Test("a directory chain that loops ends there; what was read before stands")
  func directoryLoop() {
    // Five entries: the root, A, B and C in directory sector 1, WordDocument in sector 2; the
    // root's tree is C, with B on its left and WordDocument on its right.
    let bytes = CompoundFileBytes.make([("A", [1]), ("B", [2]), ("C", [3]), ("WordDocument", [4])])
    #expect(OfficeSniff.sniff(bytes) == .office(.doc))
    var looped = bytes
    CompoundFileBytes.setFAT(&looped, sector: 2, to: 1)
    #expect(sniffQuickly(looped) == .office(.doc))
    // Sector 1 leads to itself: sector 2, and WordDocument, are never reached.
    CompoundFileBytes.setFAT(&looped, sector: 1, to: 1)
    #expect(sniffQuickly(looped) == .unknownCompound)
  }

  @Test("hostile Compound File headers: sector shift 30, 2^32 - 1 FAT sectors, a looping DIFAT")
  func compoundHeaders() {
    let bytes = CompoundFileBytes.make(hwpStreams())
    #expect(sniffQuickly(patched(bytes, at: 30, 30, width: 2)) == .damagedCompound)
    #expect(sniffQuickly(patched(bytes, at: 30, 12, width: 2)) == .damagedCompound)
    #expect(sniffQuickly(patched(bytes, at: 28, 0xFEFF, width: 2)) == .damagedCompound)
    #expect(sniffQuickly(Array(bytes.prefix(511))) == .damagedCompound)
    // A DIFAT sector (added at the end) whose every entry, and next sector, is itself.
    let extra = (bytes.count - 512) / 512
    let difat = bytes + (0..<128).flatMap { _ in (0..<4).map { UInt8(extra >> (8 * $0) & 0xFF) } }
    var hostile = patched(patched(difat, at: 44, 0xFFFF_FFFF), at: 68, UInt32(extra))
    #expect(sniffQuickly(hostile) == .hwp)
    // The first directory sector past the end, then the FAT's own sector.
    hostile = patched(bytes, at: 48, 0xFFFF_FFF0)
    #expect(sniffQuickly(hostile) == .damagedCompound)
    hostile = patched(bytes, at: 48, 0)
    #expect(sniffQuickly(hostile) == .damagedCompound)
    // Names 65 535 bytes long and links to entries that do not exist.
    hostile = patched(patched(bytes, at: 1024 + 128 + 64, 0xFFFF, width: 2), at: 1024 + 76, 9999)
    #expect(sniffQuickly(hostile) == .unknownCompound)
  }

  @Test("hostile zips: a directory past the end, 0xFFFF entries in a tiny file, ZIP64 lies")
  func zipDirectories() throws {
    let folder = TemporaryFolder()
    let zip = try pythonZip([("mimetype", "application/hwp+zip", true)], in: folder)
    #expect(OfficeSniff.sniff(zip) == .hwpx)
    let end = zip.count - 22
    #expect(sniffQuickly(patched(zip, at: end + 16, UInt32(zip.count + 100))) == .damagedZip)
    #expect(sniffQuickly(patched(zip, at: end + 12, 0xFFFF_FFF0)) == .damagedZip)
    #expect(sniffQuickly(patched(zip, at: end + 4, 1, width: 2)) == .damagedZip)
    // The entry's local header offset past the end: the mimetype cannot be read.
    let entry = Int(le32(zip, end + 16))
    #expect(sniffQuickly(patched(zip, at: entry + 42, 0x7FFF_FFFF)) == .unknownZip)
    // A comment longer than what follows the record.
    #expect(sniffQuickly(patched(zip, at: end + 20, 100, width: 2)) == .damagedZip)
    // 65 535 entries, a 4 GiB directory at 0, in a 60-byte file.
    let tiny: [UInt8] =
      [0x50, 0x4B, 0x03, 0x04] + Array(repeating: 0, count: 34)
      + [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]
      + [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0]
    #expect(sniffQuickly(tiny) == .damagedZip)
    // The same with a ZIP64 locator that points at itself, then past the end.
    let locator: [UInt8] = [0x50, 0x4B, 0x06, 0x07, 0, 0, 0, 0] + Array(repeating: 0, count: 12)
    let zip64 = Array(tiny.prefix(38)) + locator + Array(tiny.suffix(22))
    #expect(sniffQuickly(zip64) == .damagedZip)
    #expect(sniffQuickly(patched(zip64, at: 38 + 8, 0xFFFF_FF00)) == .damagedZip)
  }

  @Test("1000 seeded cases: random bytes after each signature, and real files with bytes changed")
  func randomBytes() throws {
    let folder = TemporaryFolder()
    let zip = try pythonZip(
      [
        ("mimetype", "application/vnd.oasis.opendocument.text", true),
        ("content.xml", "<c/>", false),
      ], in: folder)
    let compound = CompoundFileBytes.make(hwpStreams())
    let signatures: [[UInt8]] = [
      [0x50, 0x4B, 0x03, 0x04], [0x50, 0x4B, 0x05, 0x06],
      CompoundFileBytes.make([]).prefix(512)
        .map { $0 }, Array(#"{\rtf"#.utf8),
    ]
    var generator = SeededGenerator(state: 2024)
    for index in 0..<1000 {
      var bytes: [UInt8]
      switch index % 3 {
      case 0:
        // A signature (or a whole Compound File header), then up to 8 KiB of noise.
        let noise = (0..<Int.random(in: 0...8192, using: &generator)).map { _ in
          UInt8.random(in: 0...255, using: &generator)
        }
        bytes = signatures[index / 3 % signatures.count] + noise
      default:
        // A real file with up to 16 bytes changed after its signature.
        bytes = index % 3 == 1 ? zip : compound
        for _ in 0..<Int.random(in: 1...16, using: &generator) {
          bytes[Int.random(in: 8..<bytes.count, using: &generator)] = UInt8.random(
            in: 0...255, using: &generator)
        }
      }
      #expect(sniffQuickly(bytes) != nil, "case \(index)")
    }
  }

  @Test("100 000 entries are read; 100 001 are refused", arguments: [false, true])
  func manyEntries(zip64: Bool) {
    let counts = zip64 ? [100_000, 100_001] : [65_535]
    for count in counts {
      let verdict = sniffQuickly(handZip(entries: count, zip64: zip64))
      #expect(verdict == (count <= 100_000 ? .hwpx : .damagedZip), "\(count) entries")
    }
  }
}

/// Little-endian bytes of `value`, `width` bytes wide.
private func le(_ value: Int, _ width: Int) -> [UInt8] {
  (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

/// A zip written here of `entries` entries: first `mimetype`, stored, holding
/// `application/hwp+zip`, then empty entries named `a`; its end records are ZIP64's when `zip64`.
private func handZip(entries: Int, zip64: Bool) -> [UInt8] {
  let name = Array("mimetype".utf8)
  let data = Array("application/hwp+zip".utf8)
  // Local header: signature, version, flags, method 0, time, date, CRC, sizes, name length.
  let local =
    [0x50, 0x4B, 0x03, 0x04] + le(20, 2) + le(0, 12) + le(data.count, 4) + le(data.count, 4)
    + le(name.count, 2) + le(0, 2) + name + data
  // Central header: the same, then the extra and comment lengths, disk, attributes, offset 0.
  func central(_ name: [UInt8], size: Int) -> [UInt8] {
    [0x50, 0x4B, 0x01, 0x02] + le(20, 2) + le(20, 2) + le(0, 12) + le(size, 4) + le(size, 4)
      + le(name.count, 2) + le(0, 12) + le(0, 4) + name
  }
  var directory = central(name, size: data.count)
  let other = central([0x61], size: 0)
  directory.reserveCapacity(directory.count + entries * other.count)
  for _ in 1..<entries { directory += other }
  let directoryOffset = local.count
  var end: [UInt8] = []
  if zip64 {
    let record = local.count + directory.count
    end += [0x50, 0x4B, 0x06, 0x06] + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 8)
    end += le(entries, 8) + le(entries, 8) + le(directory.count, 8) + le(directoryOffset, 8)
    end += [0x50, 0x4B, 0x06, 0x07] + le(0, 4) + le(record, 8) + le(1, 4)
    end += [0x50, 0x4B, 0x05, 0x06] + le(0, 4) + le(0xFFFF, 2) + le(0xFFFF, 2)
    end += le(0xFFFF_FFFF, 4) + le(0xFFFF_FFFF, 4) + le(0, 2)
  } else {
    end += [0x50, 0x4B, 0x05, 0x06] + le(0, 4) + le(entries, 2) + le(entries, 2)
    end += le(directory.count, 4) + le(directoryOffset, 4) + le(0, 2)
  }
  return local + directory + end
}
