// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: hostile PDFs and PNG headers written by the tests themselves, in the
// style of Tests/Fixtures/Documents/make_fixtures.py (every structural property known).

import Foundation

/// Minimal hand-written PDFs and PNGs for hostile-input tests.
public enum HostileDocuments {
  /// A PDF of `pages`, each a content stream and its page dictionary's other entries
  /// (`/MediaBox`, `/Resources`...), after the `shared` objects they refer to (numbered from 3:
  /// the catalog is object 1, the page tree 2).
  public static func pdf(pages: [(content: String, entries: String)], shared: [String] = [])
    -> [UInt8]
  {
    var objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""] + shared
    var kids: [Int] = []
    for page in pages {
      objects.append(stream(page.content))
      objects.append(
        "<< /Type /Page /Parent 2 0 R \(page.entries) /Contents \(objects.count) 0 R >>")
      kids.append(objects.count)
    }
    objects[1] =
      "<< /Type /Pages /Kids [\(kids.map { "\($0) 0 R" }.joined(separator: " "))] "
      + "/Count \(kids.count) >>"
    return pdf(objects)
  }

  /// A PDF of `objects` (object 1 is the root), with a correct cross-reference table.
  public static func pdf(_ objects: [String]) -> [UInt8] {
    pdf(bytes: objects.map { Array($0.utf8) })
  }

  /// A PDF of `objects` given as bytes (streams of binary data such as JPEGs), object 1 the
  /// root, with a correct cross-reference table.
  public static func pdf(bytes objects: [[UInt8]]) -> [UInt8] {
    var out = Array("%PDF-1.4\n".utf8)
    var offsets: [Int] = []
    for (index, body) in objects.enumerated() {
      offsets.append(out.count)
      out += Array("\(index + 1) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
    }
    let xref = out.count
    var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
    for offset in offsets {
      table += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
    }
    table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
    return out + Array(table.utf8)
  }

  /// A stream object holding `data`.
  public static func stream(_ data: String, _ extra: String = "") -> String {
    "<< /Length \(data.utf8.count) \(extra)>>\nstream\n\(data)\nendstream"
  }

  /// A one-page PDF whose page has `/MediaBox [box]` and `extra` entries, under a root whose
  /// `/Count` is `count`.
  public static func onePage(box: String, extra: String = "", count: String = "1") -> [UInt8] {
    pdf([
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count \(count) >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [\(box)] \(extra) /Contents 4 0 R >>",
      stream("0 g 10 10 100 100 re f"),
    ])
  }

  /// `pages` A4 pages, quick to draw except page `slow`, which draws a form that draws
  /// itself ten times over nine levels (10^8 fills from a file of a few kilobytes): it runs
  /// into any CPU or time limit.
  public static func cpuBomb(pages: Int, slow: Int) -> [UInt8] {
    // 1 catalog, 2 pages, 3..<3+pages page objects, then one content per page, then forms.
    let firstContent = 3 + pages
    let firstForm = firstContent + pages
    var objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    let kids = (0..<pages).map { "\(3 + $0) 0 R" }.joined(separator: " ")
    objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
    for page in 1...pages {
      let resources = page == slow ? "/Resources << /XObject << /F \(firstForm) 0 R >> >>" : ""
      objects.append(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] \(resources) "
          + "/Contents \(firstContent + page - 1) 0 R >>")
    }
    for page in 1...pages {
      objects.append(stream(page == slow ? "/F Do" : "0 g 10 10 100 100 re f"))
    }
    let levels = 9
    for level in 0..<levels {
      let form = "/Type /XObject /Subtype /Form /BBox [0 0 595 842]"
      if level == levels - 1 {
        objects.append(stream("0.5 g 0 0 10 10 re f", form))
      } else {
        objects.append(
          stream(
            Array(repeating: "/F Do", count: 10).joined(separator: " "),
            form + " /Resources << /XObject << /F \(firstForm + level + 1) 0 R >> >>"))
      }
    }
    return pdf(objects)
  }

  /// The first bytes of a PNG whose header claims `width` × `height` (CRCs not computed:
  /// enough for a header reader, which must refuse it before any decoder runs).
  public static func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
    func be32(_ value: UInt32) -> [UInt8] {
      [
        UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF),
        UInt8(value & 0xFF),
      ]
    }
    let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    let ihdr = be32(13) + Array("IHDR".utf8) + be32(width) + be32(height) + [8, 2, 0, 0, 0]
    return signature + ihdr + be32(0) + be32(0) + Array("IEND".utf8) + be32(0)
  }

  /// Writes `bytes` to `path`.
  public static func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }
}
