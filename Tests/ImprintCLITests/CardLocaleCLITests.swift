// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint card --locale` and a batch manifest's `locale`: the labels in the
// language (read back with pdftotext), unknown and untranslated locales refused with their
// codes and no file.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintCLI

@Suite("Cards in the user's language, from the command line", .liveHandlesChecked)
struct CardLocaleCLITests {
  static let samples = repositoryRoot + "/assets/samples"
  static let profile = samples + "/profiles/harbor-lamp.json"

  @Test("--locale ko prints the Korean labels and date; the template's default stays English")
  func korean() async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "card", Self.profile, "--locale", "ko", "-o", folder.file("ko.pdf"), "--follow-counts",
      Self.samples + "/profiles/harbor-lamp.follow.json",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    let text = try runTool("pdftotext", [folder.file("ko.pdf"), "-"]).stdout
    for expected in ["Steem 회원", "회원증", "2017년 3월 가입", "평판", "팔로워", "2,381", "계정 #1284467"] {
      #expect(text.contains(expected), "\(expected) in \(text)")
    }
    let english = await imprint(["card", Self.profile, "-o", folder.file("en.pdf")])
    #expect(english.code == 0)
    let plain = try runTool("pdftotext", [folder.file("en.pdf"), "-"]).stdout
    #expect(plain.contains("Joined March 2017") && plain.contains("IDENTITY CARD"))
  }

  @Test(
    "an unknown or untranslated locale fails with exit 1 and a hint, before any card is written",
    arguments: [
      ("xx", "locale 'xx' is not a language Imprint has data for"),
      ("sw", "template 'classic' has no strings for locale 'sw'"),
    ])
  func refused(locale: String, message: String) async throws {
    // Like an unknown template, a run-level error: on standard error, --json or not (the code
    // is the library's, checked in CardLocaleTests).
    let folder = TemporaryFolder()
    for json in [false, true] {
      let run = await imprint(
        ["card", Self.profile, "--locale", locale, "-o", folder.file("card.pdf")]
          + (json ? ["--json"] : []))
      #expect(run.code == 1)
      #expect(run.stderr.hasPrefix("error: " + message), "\(run.stderr)")
      #expect(run.stderr.contains("\nhint: "))
      #expect(folder.contents().isEmpty)
    }
  }

  @Test("a manifest line's locale, else batch --locale, sets the card's language; a bad one fails")
  func batch() async throws {
    let folder = TemporaryFolder()
    let lines = [
      #"{"id":"es","kind":"card","profile":"\#(Self.profile)","locale":"es"}"#,
      #"{"id":"xx","kind":"card","profile":"\#(Self.profile)","locale":"xx"}"#,
      #"{"id":"n","kind":"card","profile":"\#(Self.profile)","locale":5}"#,
      #"{"id":"en","kind":"card","profile":"\#(Self.profile)"}"#,
    ]
    try Data(lines.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1)
    let records = try results(folder.file("out/results.jsonl"))
    #expect(records.map { $0["status"] as? String } == ["ok", "failed", "failed", "ok"])
    let codes = records.map { ($0["error"] as? [String: Any])?["code"] as? String }
    #expect(codes == [nil, "card.unknownLocale", "batch.invalidField", nil])
    let spanish = try runTool("pdftotext", [folder.file("out/cards/es.pdf"), "-"]).stdout
    #expect(spanish.contains("MIEMBRO DE Steem") && spanish.contains("Se unió en marzo de 2017"))
    let english = try runTool("pdftotext", [folder.file("out/cards/en.pdf"), "-"]).stdout
    #expect(english.contains("Steem MEMBER"))
    // --locale sets the lines that name none; a line's own wins; an unknown one fails the run.
    let korean = await imprint([
      "batch", folder.file("m.jsonl"), "-o", folder.file("ko"), "-q", "--locale", "ko",
    ])
    #expect(korean.code == 1)
    let koreanCard = try runTool("pdftotext", [folder.file("ko/cards/en.pdf"), "-"]).stdout
    #expect(koreanCard.contains("Steem 회원"), "\(koreanCard)")
    let stillSpanish = try runTool("pdftotext", [folder.file("ko/cards/es.pdf"), "-"]).stdout
    #expect(stillSpanish.contains("MIEMBRO DE Steem"))
    let unknown = await imprint([
      "batch", folder.file("m.jsonl"), "-o", folder.file("xx"), "-q", "--locale", "xx",
    ])
    #expect(unknown.code == 1)
    #expect(unknown.stderr.hasPrefix("error: locale 'xx' is not a language"), "\(unknown.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("xx/cards")))
  }
}
