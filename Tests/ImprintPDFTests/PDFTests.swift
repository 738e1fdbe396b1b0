// SPDX-License-Identifier: Apache-2.0
// ImprintPDFTests: the hand-written PDF reader and rewriter (no C library but zlib).

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintPDF

@Suite("Duplicate-key repair", .liveHandlesChecked)
struct PDFDuplicateKeysTests {
  @Test("repeats inside a repeated entry, a string value, a comment: the table is rebuilt")
  func handBuilt() throws {
    let objects = [
      "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 % kids\n>>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Resources << /X << /a 1 0 R /a 1 0 R >>"
        + " /X << /a 1 0 R /a 1 0 R >> /Y (s) /Y (s) /Z 1 /Z 2 >> >>",
    ]
    var file = "%PDF-1.5\n"
    var offsets: [Int] = []
    for (index, object) in objects.enumerated() {
      offsets.append(file.utf8.count)
      file += "\(index + 1) 0 obj\n\(object)\nendobj\n"
    }
    let table = file.utf8.count
    file += "xref\n0 4\n0000000000 65535 f \n"
    for offset in offsets { file += String(format: "%010d 00000 n \n", offset) }
    file += "trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n\(table)\n%%EOF\n"
    let fixed = try #require(PDFDuplicateKeys.repaired(Array(file.utf8)))
    let text = String(decoding: fixed, as: UTF8.self)
    #expect(text.contains("/Resources << /X << /a 1 0 R >> /Y (s) /Z 1 /Z 2 >> >>"))
    let folder = TemporaryFolder()
    try Data(fixed).write(to: URL(fileURLWithPath: folder.file("fixed.pdf")))
    let check = try runTool("qpdf", ["--check", folder.file("fixed.pdf")])
    // Only /Z still repeats: its values differ, and which one a reader takes is not ours to say.
    let warnings = (check.stdout + check.stderr).split(separator: "\n").filter {
      $0.contains("duplicated key")
    }
    #expect(warnings.count == 1 && warnings[0].contains("/Z"), "\(warnings)")
    #expect(!check.stdout.contains("ERROR") && !check.stderr.contains("xref"))
    #expect(PDFDuplicateKeys.repaired(Array("not a pdf".utf8)) == nil)
    #expect(PDFDuplicateKeys.repaired([]) == nil)
  }
}

@Suite("The quick page-tree reader", .liveHandlesChecked)
struct QuickPageTreeTests {
  @Test(
    "survives 400 damaged copies of each file: flipped bytes, cut ends (nil or a consistent walk)",
    arguments: ["mixed.pdf", "objstreams.pdf", "cycle.pdf", "countlies.pdf", "bomb.pdf"])
  func damaged(name: String) throws {
    let original = try mappedDocumentFixture(name).array
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(original.count)
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(state >> 33) % max(1, bound)
    }
    for round in 0..<400 {
      var bytes = original
      for _ in 0..<(1 + next(8)) {
        // Digits and delimiters are the bytes a parser trips on.
        let alphabet = Array("0123456789 /<>[]()RnfobjstreamxrefK\n-.".utf8) + [0, 0xFF]
        bytes[next(bytes.count)] = alphabet[next(alphabet.count)]
      }
      if round % 4 == 0 { bytes = Array(bytes.prefix(next(bytes.count) + 1)) }
      let walked = DocumentBytes(copying: bytes).withBuffer {
        QuickPageTree.walk($0, imagePages: [1])
      }
      if case .pages(let count, _, _, _, _, let sizes)? = walked {
        #expect(count == sizes.count)
      }
    }
  }

  @Test("object streams, an xref stream with the Up predictor, inherited and rotated boxes")
  func objectStreams() throws {
    guard
      case .pages(let count, let declared, _, _, _, let sizes)? = try mappedDocumentFixture(
        "objstreams.pdf"
      ).withBuffer({
        QuickPageTree.walk($0, imagePages: [])
      })
    else {
      Issue.record("objstreams.pdf was not read")
      return
    }
    #expect(count == 3 && declared == 3)
    #expect(
      sizes == [
        Size(width: 595.28, height: 841.89), Size(width: 792, height: 612),
        Size(width: 595.28, height: 419.53),
      ])
  }
}
