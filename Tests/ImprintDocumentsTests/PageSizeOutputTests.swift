// SPDX-License-Identifier: Apache-2.0
// A page's size given to JSONOutput whole (`PageSize: JSONOutputValue`): the bytes its
// synthesized encode(to:) gives Foundation's JSONEncoder, for every paper size, orientation and
// rounding, alone, in a document's report and in a worker's runs.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite struct PageSizeOutputTests {
  private func foundation(_ value: some Encodable, pretty: Bool, compact: Bool = false) throws
    -> String
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting =
      pretty
      ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      : [.sortedKeys, .withoutEscapingSlashes]
    if compact { encoder.userInfo[DocumentInfo.compactPageSizes] = true }
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  /// Sizes in points: every paper size both ways, squares, odd sizes, tenths that round.
  private var sizes: [PageSize] {
    var points: [(Double, Double)] = PaperSize.allCases.flatMap { paper in
      let width = paper.millimetres.width / 25.4 * 72
      let height = paper.millimetres.height / 25.4 * 72
      return [(width, height), (height, width), (width + 2, height - 2)]
    }
    points += [(612, 612), (100, 100.5), (0.3, 0.2), (14_400, 14_400), (595.3, 841.9), (1, 99_999)]
    // Odd sizes from a fixed sequence: tenths of a millimetre that round either way.
    var random = SeededGenerator(state: 0x2026_1206)
    for _ in 0..<400 {
      let state = random.next()
      let width = Double(state >> 40) / Double(1 << 24) * 3000 + 1
      let height = Double((state >> 16) & 0xFF_FFFF) / Double(1 << 24) * 3000 + 1
      points.append((width, height))
    }
    return points.enumerated().map { index, size in
      PageSize(page: index + 1, widthPoints: size.0, heightPoints: size.1)
    }
  }

  @Test func aPageAsItsEncodableWritesIt() throws {
    let sizes = self.sizes
    #expect(sizes.contains { $0.paper == nil } && sizes.contains { $0.orientation == "square" })
    let matched = PaperSize.allCases.filter { paper in
      PaperSize.matching(widthMM: paper.millimetres.width, heightMM: paper.millimetres.height)
        == paper
    }
    #expect(!matched.isEmpty && Set(sizes.compactMap(\.paper)) == Set(matched))
    for size in sizes {
      #expect(JSONOutput.line(size) == (try foundation(size, pretty: false)))
      #expect(JSONOutput.pretty([size]) == (try foundation([size], pretty: true)) + "\n")
    }
  }

  @Test func aDocumentsReportAsJSONEncoderWritesIt() throws {
    let sizes = self.sizes
    let info = DocumentInfo(
      file: "a/b \"c\".pdf", type: .pdf, pages: sizes.count, pageSizes: sizes, encrypted: false,
      printAllowed: true,
      colors: [
        PageColor(
          page: 1, color: true, blank: false, coloredAreaPercent: 0.0013, cyan: 1.5,
          magenta: 0, yellow: 12.25, black: 3)
      ])
    #expect(JSONOutput.pretty(info) == (try foundation(info, pretty: true)) + "\n")
    #expect(JSONOutput.line(info) == (try foundation(info, pretty: false)))
    // A worker's answer: runs of sizes, each run's size through the same path.
    let runs = DocumentInfo(
      file: "r.pdf", type: .pdf, pages: 6,
      pageSizes: (1...6).map {
        PageSize(page: $0, widthPoints: $0 < 4 ? 612 : 842, heightPoints: 792)
      },
      encrypted: true, printAllowed: false)
    let line = JSONOutput.line(runs, flags: [DocumentInfo.compactPageSizes])
    #expect(line == (try foundation(runs, pretty: false, compact: true)))
    #expect(line.contains("\"pageSizeRuns\""))
    #expect(try JSONDecoder().decode(DocumentInfo.self, from: Data(line.utf8)) == runs)
  }
}
