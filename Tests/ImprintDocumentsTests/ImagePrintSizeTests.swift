// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: an image upload's print size from the resolution it states (the JFIF
// density, else EXIF, else 96 dpi), as inspect reports it and as the PDF made to print it is.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite("Image print size from its resolution", .liveHandlesChecked)
struct ImagePrintSizeTests {
  /// A 1000 × 872 photo's segments, and the resolution its print size must follow.
  static let cases: [(segments: [[UInt8]], dpi: Double, what: String)] = [
    ([JPEGBytes.resolution(300)], 300, "EXIF only, 300 dpi"),
    ([JPEGBytes.resolution(300, little: false)], 300, "EXIF only, big-endian"),
    ([JPEGBytes.jfif(units: 1, x: 150, y: 150)], 150, "JFIF only, 150 dpi"),
    (
      [JPEGBytes.jfif(units: 1, x: 150, y: 150), JPEGBytes.resolution(300)], 150,
      "both: JFIF wins"
    ),
    ([JPEGBytes.jfif(units: 0, x: 1, y: 1), JPEGBytes.resolution(300)], 300, "JFIF aspect, EXIF"),
    ([], 96, "none: 96 dpi"),
    ([JPEGBytes.resolution(300, 0)], 96, "EXIF with a zero denominator: 96 dpi"),
  ]

  @Test(
    "inspect's millimetres and the print PDF's points follow the stated resolution",
    arguments: cases.indices.map { ($0, cases[$0].what) })
  func sized(index: Int, what: String) async throws {
    let row = Self.cases[index]
    let folder = TemporaryFolder()
    let path = folder.file("photo.jpg")
    let bytes = try JPEGBytes.jpeg(width: 1000, height: 872, segments: row.segments)
    try HostileDocuments.write(bytes, to: path)
    let info = try await DocumentSandbox(executable: worker).inspect(path: path, file: "photo.jpg")
    let size = try #require(info.pageSizes.first)
    // Millimetres to 0.1 as inspect gives them: 1000 px at 300 dpi is 84.7 mm, at 96 264.6.
    #expect(size.widthMM == (1000 / row.dpi * 254).rounded() / 10, "\(what)")
    #expect(size.heightMM == (872 / row.dpi * 254).rounded() / 10, "\(what)")
    // The PDF an image is printed from (before it is fitted to the paper), read by pdfinfo.
    let pdf = try PageImposer.pdf(ofImage: bytes, file: "photo.jpg")
    try HostileDocuments.write(pdf, to: folder.file("photo.pdf"))
    let points = try #require(try pdfInfo(folder.file("photo.pdf"))["Page size"])
    let expected = [1000 / row.dpi * 72, 872 / row.dpi * 72]
    let found = points.split(separator: " ").compactMap { Double($0) }
    #expect(
      found.count == 2 && zip(found, expected).allSatisfy { abs($0 - $1) < 0.01 }, "\(points)")
  }
}
