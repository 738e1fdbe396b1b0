// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: what an uploaded Office file is, from its bytes alone (never its name): the
// OOXML and ODF ZIP packages, the old binary formats in a Compound File, RTF, and the formats
// Imprint must tell apart to refuse them clearly (HWP, HWPX, password-protected OOXML).
//
// Pure byte parsing, yet here and not in ImprintCore: sniffing uploads is this module's
// capability (DocumentType's sniffing lives here too) and only the upload path needs it.

import ImprintCore

/// A document type LibreOffice converts to PDF.
public enum OfficeType: String, Sendable, Codable, CaseIterable {
  /// Word 2007 and later (OOXML WordprocessingML; templates and macro-enabled files too).
  case docx
  /// Word 97-2003 (a Compound File with a `WordDocument` stream).
  case doc
  /// PowerPoint 2007 and later (OOXML PresentationML).
  case pptx
  /// PowerPoint 97-2003 (a `PowerPoint Document` stream).
  case ppt
  /// Excel 2007 and later (OOXML SpreadsheetML).
  case xlsx
  /// Excel 97-2003 (a `Workbook` stream, or `Book` for Excel 5 and 95).
  case xls
  /// OpenDocument text (and its template).
  case odt
  /// OpenDocument presentation (and its template).
  case odp
  /// OpenDocument spreadsheet (and its template).
  case ods
  /// OpenDocument drawing (and its template).
  case odg
  /// Rich Text Format.
  case rtf
}

/// What a file's bytes say it is, among the formats an Office upload may be.
public enum OfficeSniff: Sendable, Hashable, Codable {
  /// A document LibreOffice converts.
  case office(OfficeType)
  /// A Hangul (HWP 5) document: a Compound File with a `FileHeader` stream that starts with
  /// "HWP Document File", and `HwpSummaryInformation`.
  case hwp
  /// A Hangul OWPML (HWPX) document: a ZIP whose `mimetype` is `application/hwp+zip`, or that
  /// holds `Contents/header.xml` and `version.xml`.
  case hwpx
  /// An OOXML document protected by a password: a Compound File holding `EncryptionInfo` and
  /// `EncryptedPackage`.
  case encryptedOffice
  /// A ZIP archive that is none of the above.
  case unknownZip
  /// A Compound File that is none of the above.
  case unknownCompound
  /// A ZIP archive whose central directory (the list of its entries, at its end) is missing or
  /// broken: most often a file cut short.
  case damagedZip
  /// A Compound File whose header, allocation table or root directory cannot be read.
  case damagedCompound

  /// What `document` is, from its bytes.
  ///
  /// Reads the ZIP central directory (and the `mimetype` entry's stored bytes) or the Compound
  /// File's header, FAT and root directory; inflates nothing. Linear in the file's size at
  /// most, whatever the bytes.
  ///
  /// - Returns: nil when the bytes are neither a ZIP archive, a Compound File nor RTF.
  public static func sniff(_ document: DocumentBytes) -> OfficeSniff? {
    document.withBuffer { sniff(LittleEndianBytes(buffer: $0)) }
  }

  /// What `bytes` are (see `sniff(_:)` for a `DocumentBytes`).
  ///
  /// - Returns: nil when the bytes are neither a ZIP archive, a Compound File nor RTF.
  public static func sniff(_ bytes: [UInt8]) -> OfficeSniff? {
    bytes.withUnsafeBufferPointer { sniff(LittleEndianBytes(buffer: $0)) }
  }

  private static let zipSignature: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
  private static let emptyZipSignature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
  private static let rtfSignature = Array(#"{\rtf"#.utf8)

  private static func sniff(_ bytes: LittleEndianBytes) -> OfficeSniff? {
    if bytes.matches(zipSignature, at: 0) || bytes.matches(emptyZipSignature, at: 0) {
      return zip(bytes)
    }
    if bytes.matches(CompoundFile.signature, at: 0) { return compound(bytes) }
    if bytes.matches(rtfSignature, at: 0) { return .office(.rtf) }
    return nil
  }

  // MARK: ZIP packages

  /// The `mimetype` entries of ODF ([ODF 1.3] part 2, 3.3) and HWPX, with what each means.
  private static let mimeTypes: [(bytes: [UInt8], sniff: OfficeSniff)] = {
    let odf: [(String, OfficeType)] = [
      ("text", .odt), ("presentation", .odp), ("spreadsheet", .ods), ("graphics", .odg),
    ]
    let prefix = "application/vnd.oasis.opendocument."
    return odf.flatMap { name, type in
      [
        (Array((prefix + name).utf8), .office(type)),
        (Array((prefix + name + "-template").utf8), .office(type)),
      ]
    } + [(Array("application/hwp+zip".utf8), .hwpx)]
  }()

  /// The names that tell ZIP packages apart, compared without regard to ASCII case (OPC part
  /// names are case-insensitive) except `mimetype`, which ODF spells exactly.
  private enum Name: CaseIterable {
    case contentTypes, wordDocument, presentation, workbook, hwpxHeader, hwpxVersion

    var text: String {
      switch self {
      case .contentTypes: "[Content_Types].xml"
      case .wordDocument: "word/document.xml"
      case .presentation: "ppt/presentation.xml"
      case .workbook: "xl/workbook.xml"
      case .hwpxHeader: "Contents/header.xml"
      case .hwpxVersion: "version.xml"
      }
    }
  }

  /// The folders of OOXML's main parts.
  private static let ooxmlFolders: [(String, OfficeType)] = [
    ("word/", .docx), ("ppt/", .pptx), ("xl/", .xlsx),
  ]

  /// What a walk of a ZIP's central directory saw.
  private struct ZipFacts {
    var names: Set<Name> = []
    /// OOXML folders holding any part: `word/`, `ppt/`, `xl/` (a main part by another name).
    var folders: Set<OfficeType> = []
    /// What the first `mimetype` entry says, when it is stored and known.
    var mimeType: OfficeSniff?
    var sawMimeType = false

    mutating func note(_ entry: ZipEntry, in bytes: LittleEndianBytes) {
      let name = entry.name
      if !sawMimeType, name.elementsEqual("mimetype".utf8) {
        sawMimeType = true
        let data = ZipDirectory.storedData(of: entry, in: bytes, limit: 64)
        mimeType = data.flatMap { data in
          OfficeSniff.mimeTypes.first { $0.bytes.elementsEqual(data) }?.sniff
        }
      }
      for candidate in Name.allCases where equalIgnoringCase(name, candidate.text) {
        names.insert(candidate)
      }
      for (folder, type) in OfficeSniff.ooxmlFolders
      where name.count > folder.utf8.count
        && equalIgnoringCase(name.prefix(folder.utf8.count), folder)
      {
        folders.insert(type)
      }
    }

    /// The verdict: the `mimetype` entry first, then HWPX's parts, then OOXML's main parts
    /// (under `[Content_Types].xml`), then OOXML's folders.
    var verdict: OfficeSniff {
      if let mimeType { return mimeType }
      if names.contains(.hwpxHeader) && names.contains(.hwpxVersion) { return .hwpx }
      guard names.contains(.contentTypes) else { return .unknownZip }
      if names.contains(.wordDocument) { return .office(.docx) }
      if names.contains(.presentation) { return .office(.pptx) }
      if names.contains(.workbook) { return .office(.xlsx) }
      for type in [OfficeType.docx, .pptx, .xlsx] where folders.contains(type) {
        return .office(type)
      }
      return .unknownZip
    }
  }

  /// Whether `bytes` spell `text` (ASCII), letters compared without regard to case.
  private static func equalIgnoringCase(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ text: String)
    -> Bool
  {
    bytes.elementsEqual(text.utf8) { lowercased($0) == lowercased($1) }
  }

  private static func lowercased(_ byte: UInt8) -> UInt8 {
    (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
  }

  private static func zip(_ bytes: LittleEndianBytes) -> OfficeSniff {
    var facts = ZipFacts()
    guard ZipDirectory.forEachEntry(in: bytes, { facts.note($0, in: bytes) }) else {
      return .damagedZip
    }
    return facts.verdict
  }

  // MARK: Compound Files

  private static let hwpSignature = Array("HWP Document File".utf8)

  private static func compound(_ bytes: LittleEndianBytes) -> OfficeSniff {
    guard let file = CompoundFile(bytes), let (root, children) = file.rootEntries() else {
      return .damagedCompound
    }
    // The root's streams by name, compared without regard to case as [MS-CFB] 2.6.4 does;
    // the first of two alike.
    let streams = Dictionary(
      children.filter { $0.type == 2 }.map { ($0.name.lowercased(), $0) },
      uniquingKeysWith: { first, _ in first })
    func stream(_ name: String) -> CompoundFile.Entry? { streams[name.lowercased()] }
    if stream("EncryptionInfo") != nil && stream("EncryptedPackage") != nil {
      return .encryptedOffice
    }
    // HWP 5 names its summary "\u{5}HwpSummaryInformation", as OLE names property sets.
    if let header = stream("FileHeader"),
      stream("\u{5}HwpSummaryInformation") != nil || stream("HwpSummaryInformation") != nil,
      file.prefix(of: header, root: root, length: hwpSignature.count)?.elementsEqual(
        hwpSignature) == true
    {
      return .hwp
    }
    if stream("WordDocument") != nil { return .office(.doc) }
    if stream("Workbook") != nil || stream("Book") != nil { return .office(.xls) }
    if stream("PowerPoint Document") != nil { return .office(.ppt) }
    return .unknownCompound
  }
}
