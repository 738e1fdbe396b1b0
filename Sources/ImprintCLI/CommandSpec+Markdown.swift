// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: the command-line reference in Markdown (`imprint help --markdown`, docs/cli.md).

import Foundation

extension CommandSpec {
  /// The reference of this command at `path` and its subcommands, in Markdown: for the root,
  /// the whole command line (docs/cli.md).
  func markdownReference(path: [String], version: String) -> String {
    var text = ""
    if path.isEmpty {
      text += """
        # imprint command-line reference

        Generated from the command specs by `imprint help --markdown` (imprint \(version)); \
        do not edit: a test fails when this file differs from what the specs make. The same \
        specs make `imprint help`, the man pages (`imprint manpages DIR`) and the shell \
        completions (`imprint completion bash|zsh|fish`).

        Options take their value as `--option value` or `--option=value`; `--` ends the \
        options. Every command takes `--verbose` and `--help`.

        ## Exit status

        | Code | Meaning |
        | --- | --- |

        """
      for (code, meaning) in exitStatuses(path: ["serve"]) {
        let only = code == ImprintCLI.stopIncomplete ? " `imprint serve` only." : ""
        text += "| \(code) | \(Self.cell(meaning))\(only) |\n"
      }
      text += "\n## Commands\n\n"
      for (commandPath, spec) in allCommands(path: path) where !commandPath.isEmpty {
        let name = (["imprint"] + commandPath).joined(separator: " ")
        text += "- [`\(name)`](#\(Self.anchor(name))): \(Self.prose(spec.abstract))\n"
      }
      text += "\n"
    }
    for (commandPath, spec) in allCommands(path: path) {
      text += spec.markdownSection(path: commandPath)
    }
    return text
  }

  /// One command's section: abstract, usage, discussion, arguments, options, subcommands.
  private func markdownSection(path: [String]) -> String {
    let name = (["imprint"] + path).joined(separator: " ")
    var text = "## \(name)\n\n\(Self.prose(abstract))\n\n```\n\(usageLine(path: path))\n```\n\n"
    for paragraph in discussion.split(separator: "\n") where !paragraph.isEmpty {
      text += Self.prose(String(paragraph)) + "\n\n"
    }
    if !arguments.isEmpty {
      text += "| Argument | Description |\n| --- | --- |\n"
      for argument in arguments {
        var description = argument.help
        if argument.optional { description += " Optional." }
        if argument.variadic { description += " One or more." }
        if let values = argument.kind.valueWords { description += " Values: \(values)." }
        text += "| `<\(argument.name)>` | \(Self.cell(Self.prose(description))) |\n"
      }
      text += "\n"
    }
    text += "| Option | Takes | Default | Description |\n| --- | --- | --- | --- |\n"
    for option in options {
      text +=
        "| `\(Self.cell(option.synopsis))` | \(Self.cell(option.valueRange ?? "")) | "
        + "\(Self.cell(Self.prose(option.documentedDefault ?? ""))) | \(Self.cell(Self.prose(option.help))) |\n"
    }
    text += "\n"
    if !subcommands.isEmpty {
      text += "| Subcommand | Description |\n| --- | --- |\n"
      for subcommand in subcommands {
        let full = (["imprint"] + path + [subcommand.name]).joined(separator: " ")
        text +=
          "| [`\(subcommand.name)`](#\(Self.anchor(full))) | \(Self.cell(Self.prose(subcommand.abstract))) |\n"
      }
      text += "\n"
    }
    return text
  }

  /// A table cell: `|` escaped.
  private static func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|")
  }

  /// Prose: `<` and `*` escaped, so that `<account>.jpg` is not read as HTML nor `*` as
  /// emphasis.
  private static func prose(_ text: String) -> String {
    text.replacingOccurrences(of: "<", with: "\\<").replacingOccurrences(of: "*", with: "\\*")
  }

  /// GitHub's anchor of a heading: `imprint batch merge` -> `imprint-batch-merge`.
  private static func anchor(_ heading: String) -> String {
    heading.lowercased().replacingOccurrences(of: " ", with: "-")
  }
}
