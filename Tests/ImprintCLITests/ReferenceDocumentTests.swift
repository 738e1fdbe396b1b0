// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: docs/cli.md against what the command specs make, and the root help.

import Foundation
import ImprintService
import ImprintTestSupport
import Testing

@testable import ImprintCLI

@Suite("The CLI reference and the root help", .liveHandlesChecked)
struct ReferenceDocumentTests {
  @Test("docs/cli.md is what 'imprint help --markdown' makes from the specs")
  func cliReference() async throws {
    let run = await imprint(["help", "--markdown"])
    #expect(run.code == 0 && run.stderr.isEmpty)
    let path = repositoryRoot + "/docs/cli.md"
    let committed = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    if ProcessInfo.processInfo.environment["IMPRINT_RECORD_GOLDENS"] != nil {
      try run.stdout.write(toFile: path, atomically: true, encoding: .utf8)
      Issue.record("recorded new docs/cli.md; re-run")
      return
    }
    #expect(
      committed == run.stdout,
      """
      docs/cli.md differs from 'imprint help --markdown'; regenerate it with \
      IMPRINT_RECORD_GOLDENS=1 (or imprint help --markdown > docs/cli.md)
      """)
    for (path, spec) in allCommandSpecs {
      #expect(run.stdout.contains("## " + (["imprint"] + path).joined(separator: " ") + "\n"))
      for option in spec.options {
        #expect(
          run.stdout.contains("`\(option.synopsis.replacingOccurrences(of: "|", with: "\\|"))`"))
      }
    }
  }

  @Test("imprint help and imprint --help list manpages and completion with their short help")
  func rootHelp() async {
    for arguments in [["help"], ["--help"]] {
      let run = await imprint(arguments)
      #expect(run.code == 0)
      #expect(run.stdout.contains("  manpages                    Write the man pages"))
      #expect(run.stdout.contains("  completion                  Print a completion script"))
    }
    let manpages = await imprint(["manpages", "--help"])
    #expect(manpages.code == 0 && manpages.stdout.contains("USAGE: imprint manpages"))
  }

  @Test("the default an option's help states, as the man pages and docs/cli.md show it")
  func defaults() throws {
    #expect(QRCommand.Key.module.spec.documentedDefault == "8")
    #expect(QRCommand.Key.format.spec.documentedDefault == "from -o, else text")
    let listen = try #require(ServiceSetting.named("listen"))
    #expect(OptionKey<String>(listen).spec.documentedDefault == "127.0.0.1:8080")
    #expect(DocumentCommands.Key.format.spec.documentedDefault == "png")
    #expect(BatchCommand.Key.duplex.spec.documentedDefault == "long-edge")
    #expect(QRCommand.Key.size.spec.documentedDefault == nil)
  }
}
