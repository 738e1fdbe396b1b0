// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint completion bash|zsh|fish`: the completion script made from the command
// specs, for packages to install.

import Foundation
import ImprintCore

enum CompletionCommand {
  static let spec = CommandSpec(
    name: "completion",
    abstract: "Print a completion script for bash, zsh or fish.",
    discussion: """
      Prints on standard output the script that completes imprint's commands, subcommands, \
      options, the values of options that take one of a list, and file and folder names where \
      a path is expected. Install it as /usr/share/bash-completion/completions/imprint \
      (bash), /usr/share/zsh/vendor-completions/_imprint (zsh) or \
      /usr/share/fish/vendor_completions.d/imprint.fish (fish), or load it in a running \
      shell: source <(imprint completion bash).
      """,
    arguments: [
      ArgumentSpec(
        "shell", "bash, zsh or fish.", kind: .choice(CompletionShell.allCases.map(\.rawValue)))
    ]
  ) { arguments, console in
    let name = arguments.positionals[0]
    guard let shell = CompletionShell(rawValue: name) else {
      // The three choices, listed; no "did you mean": 'tcsh' is not a misspelt 'bash'.
      throw UsageError(
        message: "unknown shell '\(SafeText.escaped(name))'; expected "
          + CompletionShell.allCases.map(\.rawValue).joined(separator: ", "))
    }
    console.stdout.write(
      ImprintCLI.root.completionScript(for: shell, version: ImprintCLI.version))
    return ImprintCLI.success
  }
}
