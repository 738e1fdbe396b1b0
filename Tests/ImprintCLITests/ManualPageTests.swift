// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the man pages made from the command specs, rendered by groff and man.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintCLI

/// The long and short names of an option, as typed.
func typedNames(_ option: OptionSpec) -> [String] {
  ["--\(option.name)"] + (option.short.map { ["-\($0)"] } ?? [])
}

@Suite("Man pages from the command specs", .liveHandlesChecked)
struct ManualPageTests {
  @Test("imprint manpages writes imprint.1 and one page per command and subcommand")
  func pages() async throws {
    let folder = TemporaryFolder()
    let run = await imprint(["manpages", folder.file("man")])
    #expect(run.code == 0, "\(run.stderr)")
    #expect(run.stdout.isEmpty)
    let written = try FileManager.default.contentsOfDirectory(atPath: folder.file("man")).sorted()
    let expected = allCommandSpecs.map { CommandSpec.manualPageName($0.path) + ".1" }.sorted()
    #expect(written == expected)
    #expect(written.contains("imprint.1") && written.contains("imprint-batch-merge.1"))
    #expect(written.contains("imprint-templates-list.1") && written.contains("imprint-qr.1"))
    #expect(run.stderr == "manpages: \(expected.count) pages written to \(folder.file("man"))\n")
    // The bytes are the specs' and the version's only: a second run writes the same.
    let again = await imprint(["manpages", "--quiet", folder.file("again")])
    #expect(again.code == 0 && again.stderr.isEmpty)
    for name in written {
      let first = try Data(contentsOf: URL(fileURLWithPath: folder.file("man/\(name)")))
      let second = try Data(contentsOf: URL(fileURLWithPath: folder.file("again/\(name)")))
      #expect(first == second, "\(name)")
      // The .TH line's date is empty.
      #expect(String(decoding: first, as: UTF8.self).contains("\" 1 \"\" \"imprint "), "\(name)")
    }
  }

  @Test(
    "each page renders with groff -ww and man -l without a warning and names every option",
    arguments: allCommandSpecs.map(\.path))
  func renders(path: [String]) throws {
    let spec = try #require(allCommandSpecs.first { $0.path == path }?.spec)
    let folder = TemporaryFolder()
    let name = CommandSpec.manualPageName(path) + ".1"
    let page = spec.manualPage(path: path, version: ImprintCLI.version, root: ImprintCLI.root)
    try page.write(toFile: folder.file(name), atomically: true, encoding: .utf8)
    #expect(page.hasPrefix(".TH \"\(CommandSpec.manualPageName(path).uppercased())\" 1 \"\" "))
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"] {
      #expect(page.contains("\n.SH \(section)\n"), "\(name): \(section)")
    }
    // Wide lines and no hyphenation, so that each option stands whole in the text.
    let groff = try runTool(
      "groff", ["-man", "-Tutf8", "-ww", "-rLL=300n", "-rHY=0", "-P-cbou", folder.file(name)])
    #expect(groff.status == 0)
    #expect(groff.stderr.isEmpty, "\(name): \(groff.stderr)")
    let text = groff.stdout
    for option in spec.options {
      for typed in typedNames(option) {
        #expect(text.contains(typed), "\(name) lacks \(typed)")
      }
      if let value = option.value { #expect(text.contains(value), "\(name): \(value)") }
      if let range = option.valueRange { #expect(text.contains(range), "\(name): \(range)") }
      let help = option.help.split(separator: " ").joined(separator: " ")
      #expect(
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(help),
        "\(name): help of --\(option.name)")
    }
    for subcommand in spec.subcommands {
      #expect(text.contains(CommandSpec.manualPageName(path + [subcommand.name]) + "(1)"))
    }
    let man = try runTool(
      "/usr/bin/env", ["MANWIDTH=100", "MAN_KEEP_FORMATTING=0", "man", "-l", folder.file(name)])
    #expect(man.status == 0)
    #expect(man.stderr.isEmpty, "\(name): \(man.stderr)")
    // man makes bold by overstriking (X backspace X): the text without it.
    var plain: [Character] = []
    for character in man.stdout {
      if character == "\u{8}" { _ = plain.popLast() } else { plain.append(character) }
    }
    #expect(String(plain).contains("\nEXIT STATUS\n"))
    #expect(String(plain).contains("imprint \(ImprintCLI.version)"))
  }

  @Test("imprint manpages needs a folder: a usage error without one")
  func usage() async {
    let run = await imprint(["manpages"])
    #expect(run.code == 2)
    #expect(run.stderr.hasPrefix("error: missing argument <dir>\n"))
  }
}
