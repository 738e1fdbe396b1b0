// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: what Imprint reports about an upload (Sendable, Codable values).

import ImprintCore
import ImprintGraphics

/// The file types Imprint accepts, recognised from the content.
public enum DocumentType: String, Sendable, Codable {
  /// PDF (`%PDF-` within the first 1 KiB).
  case pdf
  /// JPEG image (one page).
  case jpeg
  /// PNG image (one page).
  case png
  /// HEIF image, HEIC from phones or AVIF (one page).
  case heif
  /// WebP image (one page; an animation's first frame).
  case webp
  /// TIFF image: one page a directory.
  case tiff
  /// GIF image (one page: the first frame).
  case gif
  /// Office documents, read as the PDF LibreOffice makes of them (`OfficeType` says which is
  /// which).
  case docx, doc, pptx, ppt, xlsx, xls, odt, odp, ods, odg, rtf

  /// The document type of an Office type.
  public init(_ office: OfficeType) {
    switch office {
    case .docx: self = .docx
    case .doc: self = .doc
    case .pptx: self = .pptx
    case .ppt: self = .ppt
    case .xlsx: self = .xlsx
    case .xls: self = .xls
    case .odt: self = .odt
    case .odp: self = .odp
    case .ods: self = .ods
    case .odg: self = .odg
    case .rtf: self = .rtf
    }
  }

  /// Sniffs the type from the first bytes, or nil.
  public init?(sniffing bytes: [UInt8]) {
    if let image = ImageType(sniffing: bytes) {
      self.init(image)
    } else if bytes.prefix(1024).firstRange(of: Array("%PDF-".utf8)) != nil {
      self = .pdf
    } else {
      return nil
    }
  }

  /// The document type of an image type.
  public init(_ image: ImageType) {
    switch image {
    case .jpeg: self = .jpeg
    case .png: self = .png
    case .heif: self = .heif
    case .webp: self = .webp
    case .tiff: self = .tiff
    case .gif: self = .gif
    }
  }
}

/// One page's size.
public struct PageSize: Sendable, Codable, Equatable {
  /// 1-based page number.
  public var page: Int
  /// Width in millimetres, as displayed (rotation applied), to 0.1 mm.
  public var widthMM: Double
  /// Height in millimetres, as displayed.
  public var heightMM: Double
  /// The standard size within ±2 mm, if any (`PaperSize.matching`: never a sheet stock only).
  public var paper: PaperSize?
  /// `portrait`, `landscape` or `square`.
  public var orientation: String

  /// Creates a page size from points.
  public init(page: Int, widthPoints: Double, heightPoints: Double) {
    self.page = page
    widthMM = (widthPoints / 72 * 25.4 * 10).rounded() / 10
    heightMM = (heightPoints / 72 * 25.4 * 10).rounded() / 10
    paper = PaperSize.matching(widthMM: widthMM, heightMM: heightMM)
    orientation =
      abs(widthMM - heightMM) < 0.5 ? "square" : widthMM > heightMM ? "landscape" : "portrait"
  }
}

/// A page's size written by the thousand (`imprint inspect --json` of a 2 415-page manual):
/// given to `JSONOutput` whole, as its synthesized `encode(to:)` writes it
/// (`PageSizeOutputTests` compares the two).
extension PageSize: JSONOutputValue {
  public func jsonOutput() throws -> OutputNode {
    var fields: [(key: String, value: OutputNode)] = [
      ("page", .number(page)), ("widthMM", try .number(widthMM)),
      ("heightMM", try .number(heightMM)), ("orientation", .string(orientation)),
    ]
    if let paper { fields.append(("paper", .string(paper.rawValue))) }
    return .object(OutputObject(fields))
  }
}

/// One page's colour verdict and ink estimate.
public struct PageColor: Sendable, Codable, Equatable {
  /// 1-based page number.
  public var page: Int
  /// Whether the page prints in colour under the rule.
  public var color: Bool
  /// Whether nothing at all is printed on the page.
  public var blank: Bool
  /// The share of the page's pixels whose chroma exceeds the tolerance, in per cent, to
  /// 0.0001 (a tenth of the default allowance).
  public var coloredAreaPercent: Double
  /// Ink coverage estimates in per cent of the page (naive RGB → CMYK with full black
  /// generation): cyan, magenta, yellow, black.
  public var cyan: Double
  /// Magenta coverage, per cent.
  public var magenta: Double
  /// Yellow coverage, per cent.
  public var yellow: Double
  /// Black coverage, per cent.
  public var black: Double
}

/// The colour rule, which a shop may tune.
///
/// The default is a colour printer's own counter's: in auto colour mode office devices count
/// a page as colour when they put down any colour toner, so any visible colour (one blue
/// hyperlink, a coloured bullet) makes a page colour, beyond a noise allowance. A pixel is
/// coloured when max(R,G,B) − min(R,G,B) exceeds `chromaTolerance` (so grey anti-aliasing and
/// faint tints next to grey stay monochrome). A page is colour when more than
/// `minimumAreaPercent` of its pixels are coloured (the allowance: on A4 at 50 dpi, 2 of its
/// 241 605 pixels stay monochrome, 3 make it colour; 0 makes any coloured pixel count).
/// Pages are analysed at `dpi`, capped at 2 500 px.
public struct ColorRule: Sendable, Codable, Equatable {
  /// Chroma tolerance, 0-255 (default 8).
  public var chromaTolerance = 8
  /// Coloured area in per cent of the page that a colour page exceeds (default 0.001).
  public var minimumAreaPercent = 0.001
  /// Analysis resolution (default 50 dpi).
  public var dpi = 50.0

  /// The default rule.
  public init() {}
}

/// What `inspect` reports about one file.
public struct DocumentInfo: Sendable, Codable, Equatable {
  /// The file's name as given.
  public var file: String
  /// The type, from the content.
  public var type: DocumentType
  /// The number of pages that will print.
  public var pages: Int
  /// Each page's size.
  public var pageSizes: [PageSize]
  /// Whether the PDF is protected by a password.
  public var encrypted: Bool
  /// Whether printing is permitted.
  public var printAllowed: Bool
  /// Per-page colour verdicts, when asked for.
  public var colors: [PageColor]?
  /// For an Office document: the conversion whose PDF was counted (its SHA-256 names the
  /// exact pages; the page count comes from LibreOffice's layout, not from the file).
  public var conversion: OfficeConversion?
}

extension DocumentInfo {
  enum CodingKeys: String, CodingKey {
    case file, type, pages, pageSizes, encrypted, printAllowed, colors, conversion
    /// The page sizes as runs of equal sizes (`SizeRun`), between a worker and its parent.
    case pageSizeRuns
  }

  /// Set to `true` in an encoder's `userInfo` to write `pageSizes` as runs of pages of one size.
  ///
  /// A document worker answers its parent so: a 2 415-page manual is one run, where each page
  /// as its own object took a fifth of `imprint inspect`'s CPU to encode and decode again.
  /// Decoding reads either form; every other output lists each page.
  static let compactPageSizes: CodingUserInfoKey = {
    guard let key = CodingUserInfoKey(rawValue: "imprint.compactPageSizes") else {
      preconditionFailure("a non-empty raw value always makes a key")
    }
    return key
  }()

  /// `count` consecutive pages of `size` from `size.page` on.
  struct SizeRun: Codable {
    var size: PageSize
    var count: Int
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    file = try container.decode(String.self, forKey: .file)
    type = try container.decode(DocumentType.self, forKey: .type)
    pages = try container.decode(Int.self, forKey: .pages)
    if let runs = try container.decodeIfPresent([SizeRun].self, forKey: .pageSizeRuns) {
      pageSizes = []
      for run in runs {
        guard run.count >= 1, run.count <= pages else {
          throw DecodingError.dataCorruptedError(
            forKey: .pageSizeRuns, in: container, debugDescription: "a run of \(run.count) pages")
        }
        for offset in 0..<run.count {
          var size = run.size
          size.page += offset
          pageSizes.append(size)
        }
      }
    } else {
      pageSizes = try container.decode([PageSize].self, forKey: .pageSizes)
    }
    encrypted = try container.decode(Bool.self, forKey: .encrypted)
    printAllowed = try container.decode(Bool.self, forKey: .printAllowed)
    colors = try container.decodeIfPresent([PageColor].self, forKey: .colors)
    conversion = try container.decodeIfPresent(OfficeConversion.self, forKey: .conversion)
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(file, forKey: .file)
    try container.encode(type, forKey: .type)
    try container.encode(pages, forKey: .pages)
    if encoder.userInfo[Self.compactPageSizes] as? Bool == true {
      var runs: [SizeRun] = []
      for size in pageSizes {
        var next = runs.last?.size
        next?.page += runs.last?.count ?? 0
        if next == size {
          runs[runs.count - 1].count += 1
        } else {
          runs.append(SizeRun(size: size, count: 1))
        }
      }
      try container.encode(runs, forKey: .pageSizeRuns)
    } else {
      try container.encode(pageSizes, forKey: .pageSizes)
    }
    try container.encode(encrypted, forKey: .encrypted)
    try container.encode(printAllowed, forKey: .printAllowed)
    try container.encodeIfPresent(colors, forKey: .colors)
    try container.encodeIfPresent(conversion, forKey: .conversion)
  }
}
