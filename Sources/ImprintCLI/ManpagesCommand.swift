// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint manpages DIR`: the man pages made from the command specs, for packages to
// install.

import Foundation
import ImprintCore

enum ManpagesCommand {
  /// The options of `imprint manpages`.
  enum Key {
    static let quiet = OptionKey.flag("quiet", short: "q", "Print no summary.")
  }

  static let spec = CommandSpec(
    name: "manpages",
    abstract: "Write the man pages: imprint.1 and one per command.",
    discussion: """
      Writes DIR/imprint.1 and DIR/imprint-COMMAND.1 for every command and subcommand \
      (imprint-batch-merge.1, ...), in man(7) format, made from the same specs as the help \
      text: every option with its value, range, default and help. The bytes depend only on \
      the specs and the version (no date). DIR is created when missing; pages already there \
      are replaced. A summary goes to standard error unless --quiet.
      """,
    arguments: [ArgumentSpec("dir", "The folder to write the pages to.", kind: .directory)],
    options: [Key.quiet]
  ) { arguments, console in
    let folder = arguments.positionals[0]
    try FileIO.makeFolder(folder)
    let pages = ImprintCLI.root.manualPages(version: ImprintCLI.version)
    for page in pages {
      try AtomicFile.write(Array(page.text.utf8), to: folder + "/" + page.file)
    }
    if !arguments.flag(Key.quiet) {
      console.stderr.write(
        "manpages: \(pages.count) pages written to \(SafeText.escaped(folder))\n")
    }
    return ImprintCLI.success
  }
}
