// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the quick page-tree reader (ImprintPDF) against libqpdf's walk.

import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintDocuments
@testable import ImprintPDF

@Suite("The quick page-tree reader, checked against qpdf", .liveHandlesChecked)
struct QuickPageTreeTests {
  @Test(
    "reads well-formed files exactly as qpdf walks them",
    arguments: ["mixed.pdf", "hyperlink.pdf", "objstreams.pdf", "huge-page.pdf", "bomb.pdf"])
  func agreesWithQPDF(name: String) throws {
    let bytes = try mappedDocumentFixture(name)
    let quick = bytes.withBuffer { QuickPageTree.walk($0, imagePages: [1]) }
    #expect(quick != nil, "\(name) should not need qpdf")
    #expect(quick == PageTreeWalk.walkWithQPDF(bytes, password: nil, imagePages: [1]))
  }

  @Test(
    "leaves damaged, encrypted and lying files to qpdf, or agrees with it",
    arguments: [
      "brokenxref.pdf", "truncated.pdf", "encrypted.pdf", "noprint.pdf", "cycle.pdf",
      "countlies.pdf", "zeropages.pdf", "html.pdf", "empty.pdf",
    ])
  func defers(name: String) throws {
    let bytes = try mappedDocumentFixture(name)
    // The walk takes the quick answer only when it agrees with /Count; otherwise it is qpdf's.
    let walked = PageTreeWalk.walk(bytes, password: nil, imagePages: [1])
    #expect(walked == PageTreeWalk.walkWithQPDF(bytes, password: nil, imagePages: [1]))
    if ["brokenxref.pdf", "encrypted.pdf", "noprint.pdf", "cycle.pdf"].contains(name) {
      #expect(bytes.withBuffer { QuickPageTree.walk($0, imagePages: [1]) } == nil)
    }
  }
}
