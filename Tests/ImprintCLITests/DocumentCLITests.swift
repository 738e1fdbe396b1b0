// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint inspect` and `imprint thumb` end to end through the worker sandbox.

import Foundation
import ImprintCLI
import ImprintTestSupport
import Testing

let documentFixtures = fixturesFolder + "/Documents/"

@Suite("imprint inspect and thumb", .liveHandlesChecked)
struct DocumentCLITests {
  @Test("inspect: text report, JSON with page sizes and colours, exit 1 when one file fails")
  func inspect() async throws {
    let text = await imprint(["inspect", "--colors", documentFixtures + "mixed.pdf"])
    #expect(text.code == 0, "\(text.stderr)")
    #expect(
      text.stdout.contains(
        "3 pages; A4 portrait, Letter landscape, A5 landscape; colour pages: 1 (2); blank: 3"))
    let json = await imprint([
      "inspect", "--json", documentFixtures + "mixed.pdf", documentFixtures + "cycle.pdf",
    ])
    #expect(json.code == 1)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let files = object?["files"] as? [[String: Any]]
    #expect(files?.map { $0["status"] as? String } == ["ok", "failed"])
    #expect((files?[1]["error"] as? [String: Any])?["code"] as? String == "pdf.pageTreeCycle")
    #expect(
      json.stderr.contains("error: pdf '\(documentFixtures)cycle.pdf' has a page tree that loops"))
  }

  @Test("inspect: the password opens an encrypted PDF; a wrong one is an error, not a crash")
  func password() async {
    let missing = await imprint(["inspect", documentFixtures + "encrypted.pdf"])
    #expect(missing.code == 1 && missing.stderr.contains("is encrypted\nhint: pass --password"))
    let wrong = await imprint(["inspect", "--password", "nope", documentFixtures + "encrypted.pdf"])
    #expect(wrong.code == 1 && wrong.stderr.contains("the password is wrong"))
    let right = await imprint([
      "inspect", "--password", "secret", documentFixtures + "encrypted.pdf",
    ])
    #expect(
      right.code == 0 && right.stdout.contains("3 pages") && right.stdout.contains("encrypted"))
  }

  @Test("thumb: one PNG per page in the folder, fitting the box")
  func thumbs() async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "thumb", "--pages", "all", "--size", "128", "-o", folder.path, documentFixtures + "mixed.pdf",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    #expect(folder.contents() == ["mixed-1.png", "mixed-2.png", "mixed-3.png"])
    for name in folder.contents() {
      let header = try #require(
        pngHeader([UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file(name))))))
      #expect(max(header.width, header.height) == 128)
    }
  }

  @Test("thumb as a freedesktop thumbnailer: INPUT OUTPUT with Thumb::URI and Thumb::MTime")
  func thumbnailer() async throws {
    let folder = TemporaryFolder()
    let output = folder.file("t.png")
    let run = await imprint([
      "thumb", "--freedesktop", "--size", "256", documentFixtures + "hyperlink.pdf", output,
    ])
    #expect(run.code == 0, "\(run.stderr)")
    let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: output)), as: UTF8.self)
    #expect(text.contains("Thumb::URI\0file://\(documentFixtures)hyperlink.pdf"))
    #expect(text.contains("Thumb::MTime\0"))
    let entry = try String(
      contentsOfFile: repositoryRoot + "/assets/imprint.thumbnailer", encoding: .utf8)
    #expect(entry.contains("Exec=imprint thumb --freedesktop --size %s %i %o"))
  }

  @Test("thumb: hostile files fail with their code and leave no file")
  func hostile() async {
    let folder = TemporaryFolder()
    for (name, message) in [
      ("html.pdf", "is not a PDF"), ("huge-page.pdf", "5080 x 5080 mm"),
      ("bomb.pdf", "expands to 1021 MB"),
    ] {
      let run = await imprint(["thumb", "-o", folder.path, documentFixtures + name])
      #expect(run.code == 1)
      #expect(run.stderr.contains(message), "\(run.stderr)")
    }
    #expect(folder.contents().isEmpty)
  }
}
