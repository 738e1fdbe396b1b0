// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the completion scripts made from the command specs, run by bash, zsh and fish.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintCLI

/// The completion script of `shell`, written to a file of a new temporary folder: the folder and
/// the script's path.
func completionScript(_ shell: String) async throws -> (TemporaryFolder, String) {
  let folder = TemporaryFolder()
  let run = await imprint(["completion", shell])
  #expect(run.code == 0 && run.stderr.isEmpty)
  let path = folder.file("imprint.\(shell)")
  try run.stdout.write(toFile: path, atomically: true, encoding: .utf8)
  return (folder, path)
}

/// What to ask a shell's completion: the words typed, the last one being completed.
struct CompletionQuery {
  let words: [String]
  /// What must be offered.
  let expected: [String]
  /// Whether nothing else may be offered (options and choices; a command's arguments may be
  /// offered beside its subcommands).
  var exact = true

  /// Whether `offered` answers the query.
  func isAnswered(by offered: [String]) -> Bool {
    exact ? Set(offered) == Set(expected) : Set(offered).isSuperset(of: expected)
  }
}

/// For every command: its subcommands (an empty word after the path), its options (after
/// `-`, before and after an argument), and each choice option's values (after the option).
func completionQueries() -> [CompletionQuery] {
  var queries: [CompletionQuery] = []
  for (path, spec) in allCommandSpecs {
    let words = ["imprint"] + path
    if !spec.subcommands.isEmpty {
      queries.append(
        CompletionQuery(words: words + [""], expected: spec.subcommands.map(\.name), exact: false))
    }
    queries.append(
      CompletionQuery(words: words + ["-"], expected: spec.options.flatMap(typedNames)))
    if !spec.arguments.isEmpty {
      // Options may follow the arguments (imprint card me.json -o me.pdf).
      queries.append(
        CompletionQuery(
          words: words + ["argument", "-"], expected: spec.options.flatMap(typedNames)))
    }
    for option in spec.options {
      if case .choice(let values) = option.kind {
        queries.append(CompletionQuery(words: words + ["--\(option.name)", ""], expected: values))
      }
    }
  }
  return queries
}

/// Shell words quoted for bash, zsh and fish alike (single quotes; no quote inside).
func shellQuoted(_ word: String) -> String {
  precondition(!word.contains("'"), "quote in \(word)")
  return "'\(word)'"
}

/// Splits a driver's output into the answers of each query, `### N` before each.
func answers(_ output: String, count: Int) -> [[String]] {
  var result = [[String]](repeating: [], count: count)
  var current = -1
  for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
    if line.hasPrefix("### ") {
      // A numbered query's answer, or (-1) one the test reads itself.
      current = Int(line.dropFirst(4)) ?? -1
    } else if current >= 0, !line.isEmpty {
      result[current].append(String(line))
    }
  }
  return result
}

@Suite("Shell completions from the command specs", .liveHandlesChecked)
struct CompletionTests {
  @Test("bash offers every command, subcommand, option and choice, and files for paths")
  func bash() async throws {
    let (folder, script) = try await completionScript("bash")
    let queries = completionQueries()
    var driver = "source \(shellQuoted(script))\n"
    for (index, query) in queries.enumerated() {
      driver += "COMP_WORDS=(\(query.words.map(shellQuoted).joined(separator: " ")))\n"
      driver += "COMP_CWORD=\(query.words.count - 1)\n"
      driver += "_imprint\necho '### \(index)'\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
    }
    try FileManager.default.createDirectory(
      atPath: folder.file("files/sub"), withIntermediateDirectories: true)
    try "x".write(toFile: folder.file("files/order.json"), atomically: true, encoding: .utf8)
    let prefix = folder.file("files/")
    driver += """
      COMP_WORDS=(imprint quote --prices \(shellQuoted(prefix))); COMP_CWORD=3; _imprint
      echo '### files'; printf '%s\\n' "${COMPREPLY[@]}"
      COMP_WORDS=(imprint quote --files-root \(shellQuoted(prefix))); COMP_CWORD=3; _imprint
      echo '### dirs'; printf '%s\\n' "${COMPREPLY[@]}"
      COMP_WORDS=(imprint batch merge -o out --layout=A); COMP_CWORD=5; _imprint
      echo '### inline'; printf '%s\\n' "${COMPREPLY[@]}"
      COMP_WORDS=(imprint qr --level H -); COMP_CWORD=4; _imprint
      echo '### after-value'; printf '%s\\n' "${COMPREPLY[@]}"

      """
    let run = try runTool("bash", ["--norc", "-c", driver])
    #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    let got = answers(run.stdout, count: queries.count)
    for (index, query) in queries.enumerated() {
      #expect(query.isAnswered(by: got[index]), "\(query.words): \(got[index])")
    }
    let tail = try run.stdout[#require(run.stdout.range(of: "### files")).lowerBound...]
    // Files (and folders, to go into) for a file's path; only folders for a folder's.
    #expect(tail.contains("### files\n\(prefix)order.json\n\(prefix)sub\n### dirs\n"))
    #expect(tail.contains("### dirs\n\(prefix)sub\n### inline"))
    #expect(tail.contains("\n--layout=A4\n") && tail.contains("\n--layout=A3\n"))
    #expect(tail.contains("### after-value\n--eth\n"))
  }

  @Test("fish offers every command, subcommand, option and choice")
  func fish() async throws {
    let (folder, script) = try await completionScript("fish")
    defer { withExtendedLifetime(folder) {} }
    let queries = completionQueries()
    var driver = "source \(shellQuoted(script))\n"
    for (index, query) in queries.enumerated() {
      // fish completes the command line as typed; an empty last word is a trailing space.
      let line = query.words.joined(separator: " ")
      driver += "echo '### \(index)'\ncomplete -C \(shellQuoted(line))\n"
    }
    let run = try runTool("fish", ["--no-config", "-c", driver])
    #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    let got = answers(run.stdout, count: queries.count).map { lines in
      Set(lines.map { String($0.prefix { $0 != "\t" }) })
    }
    for (index, query) in queries.enumerated() {
      #expect(got[index].isSuperset(of: query.expected), "\(query.words): \(got[index])")
    }
    let level = try runTool(
      "fish", ["--no-config", "-c", "source \(shellQuoted(script)); complete -C 'imprint qr --le'"])
    #expect(level.stdout == "--level\tError correction (default M).\n")
  }

  @Test("zsh reads the script, and its function offers every command, option and choice")
  func zsh() async throws {
    let (folder, script) = try await completionScript("zsh")
    defer { withExtendedLifetime(folder) {} }
    let syntax = try runTool("zsh", ["-n", script])
    #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax.stderr)")
    let queries = completionQueries()
    // compadd and _files stand in for the completion system: they print what is offered.
    var driver = """
      compadd() {
        local seen=0 word
        for word in "$@"; do
          if (( seen )); then print -r -- "$word"; elif [[ $word == -- ]]; then seen=1; fi
        done
      }
      _files() { print -r -- "(files $*)"; }
      compset() { return 1; }
      source \(shellQuoted(script))

      """
    for (index, query) in queries.enumerated() {
      driver += "words=(\(query.words.map(shellQuoted).joined(separator: " ")))\n"
      driver += "CURRENT=\(query.words.count)\necho '### \(index)'\n_imprint\n"
    }
    driver += """
      words=(imprint card --photo ''); CURRENT=4; echo '### photo'; _imprint
      words=(imprint card --photo-cache ''); CURRENT=4; echo '### cache'; _imprint
      words=(imprint inspect ''); CURRENT=3; echo '### argument'; _imprint
      """
    let run = try runTool("zsh", ["-f", "-c", driver])
    #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    let got = answers(run.stdout, count: queries.count)
    for (index, query) in queries.enumerated() {
      #expect(query.isAnswered(by: got[index]), "\(query.words): \(got[index])")
    }
    #expect(
      run.stdout.hasSuffix(
        "### photo\n(files )\n### cache\n(files -/)\n### argument\n(files )\n"))
  }

  @Test("zsh's own completion system, pressing Tab in a terminal, offers the same")
  func zshInTerminal() async throws {
    let (folder, script) = try await completionScript("zsh")
    // compinit finds the script as _imprint in a folder of fpath, as installed.
    try FileManager.default.createDirectory(
      atPath: folder.file("functions"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: script, toPath: folder.file("functions/_imprint"))
    try FileManager.default.createDirectory(
      atPath: folder.file("files/sub"), withIntermediateDirectories: true)
    try "x".write(toFile: folder.file("files/order.json"), atomically: true, encoding: .utf8)
    let queries = completionQueries()
    let lines =
      queries.map { $0.words.joined(separator: " ") } + [
        "imprint quote --prices \(folder.file("files/"))",
        "imprint quote --files-root \(folder.file("files/"))",
      ]
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: folder.file("queries"), atomically: true, encoding: .utf8)
    let run = try runTool(
      "timeout",
      [
        "300", "zsh", "-f", repositoryRoot + "/Tests/Fixtures/Shells/zsh-complete.zsh",
        folder.file("functions"), folder.file("queries"),
      ])
    #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    let got = answers(run.stdout, count: lines.count)
    for (index, query) in queries.enumerated() {
      #expect(query.isAnswered(by: got[index]), "\(query.words): \(got[index])")
    }
    #expect(Set(got[queries.count]).isSuperset(of: ["order.json", "sub"]))
    #expect(got[queries.count + 1].contains("sub"))
  }

  @Test("imprint completion takes bash, zsh or fish; another shell is a usage error")
  func usage() async {
    let run = await imprint(["completion", "tcsh"])
    #expect(run.code == 2)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.hasPrefix("error: unknown shell 'tcsh'; expected bash, zsh, fish\n"))
    #expect(run.stderr.contains("usage: imprint completion <shell>\n"))
    let none = await imprint(["completion"])
    #expect(none.code == 2 && none.stderr.hasPrefix("error: missing argument <shell>\n"))
  }
}
