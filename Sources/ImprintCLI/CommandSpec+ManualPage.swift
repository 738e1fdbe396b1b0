// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: man(7) pages generated from the command specs (`imprint manpages DIR`).

import Foundation
import ImprintCore

extension OptionSpec {
  /// The default the option's help states (`(default 8)`, `(default: from -o, else text)`,
  /// `png (default) or jpeg`), if it states one.
  var documentedDefault: String? {
    if let marker = help.range(of: " (default)") {
      let word = help[..<marker.lowerBound].split(separator: " ").last
      return word.map(String.init)
    }
    guard let start = help.range(of: "(default") else { return nil }
    var rest = help[start.upperBound...]
    if rest.first == ":" { rest = rest.dropFirst() }
    guard rest.first == " " else { return nil }
    let text = rest.dropFirst().prefix { $0 != ")" && $0 != ";" }
    return text.isEmpty ? nil : String(text)
  }

  /// What values the option takes, in words: `an integer from 1 to 64`, `one of L, M, Q, H`, a
  /// file's or folder's path; nil for a flag or free text.
  var valueRange: String? {
    switch kind {
    case .flag, .text: return nil
    case .file: return "a file's path"
    case .directory: return "a folder's path"
    case .integer(let range): return "an integer from \(range.lowerBound) to \(range.upperBound)"
    case .number(let range):
      return
        "a number from \(Formatting.number(range.lowerBound)) to "
        + "\(Formatting.number(range.upperBound))"
    case .choice(let choices): return "one of " + choices.joined(separator: ", ")
    }
  }

  /// `-o, --output <file>` (`--json` for a flag).
  var synopsis: String {
    var text = short.map { "-\($0), " } ?? ""
    text += "--\(name)"
    if let value { text += " \(value)" }
    return text
  }
}

extension CommandSpec {
  /// The man page's name for a command path: `imprint`, `imprint-batch-merge`.
  static func manualPageName(_ path: [String]) -> String {
    (["imprint"] + path).joined(separator: "-")
  }

  /// Every man page of the command tree: `imprint.1` and `imprint-<path>.1` for each command
  /// and subcommand, as file name and roff text, in the order of the specs.
  func manualPages(version: String) -> [(file: String, text: String)] {
    allCommands().map { path, spec in
      (Self.manualPageName(path) + ".1", spec.manualPage(path: path, version: version, root: self))
    }
  }

  /// The man(7) page of this command at `path` (its bytes depend only on the spec and
  /// `version`: no date).
  func manualPage(path: [String], version: String, root: CommandSpec) -> String {
    let name = Self.manualPageName(path)
    var page = Roff()
    // No date: the page's bytes are the spec's and the version's (the name is letters and -).
    page.request(
      ".TH \"\(name.uppercased())\" 1 \"\" \(Roff.quoted("imprint \(version)")) \"Imprint Manual\"")
    page.request(".SH NAME")
    page.text("\(name) - \(abstract.hasSuffix(".") ? String(abstract.dropLast()) : abstract)")
    page.request(".SH SYNOPSIS")
    page.raw(synopsisRoff(path: path))
    page.request(".SH DESCRIPTION")
    page.text(abstract)
    for paragraph in discussion.split(separator: "\n") where !paragraph.isEmpty {
      page.request(".PP")
      page.text(String(paragraph))
    }
    if !arguments.isEmpty {
      page.request(".SH ARGUMENTS")
      for argument in arguments {
        page.request(".TP")
        page.raw(
          "\\fI" + Roff.escaped(argument.name) + "\\fR" + (argument.variadic ? " ..." : "")
            + (argument.optional ? " (optional)" : ""))
        page.text(argument.help)
        if let values = argument.kind.valueWords {
          page.request(".br")
          page.text("Values: \(values).")
        }
      }
    }
    page.request(".SH OPTIONS")
    for option in options {
      page.request(".TP")
      var tag = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
      tag += "\\fB" + Roff.escaped("--\(option.name)") + "\\fR"
      if let value = option.value { tag += " \\fI" + Roff.escaped(value) + "\\fR" }
      page.raw(tag)
      page.text(option.help)
      var facts: [String] = []
      if let range = option.valueRange { facts.append("Takes \(range).") }
      if let value = option.documentedDefault { facts.append("Default: \(value).") }
      if !facts.isEmpty {
        page.request(".br")
        page.text(facts.joined(separator: " "))
      }
    }
    if !subcommands.isEmpty {
      page.request(".SH COMMANDS")
      for subcommand in subcommands {
        page.request(".TP")
        page.raw("\\fB" + Roff.escaped(subcommand.name) + "\\fR")
        page.text(
          subcommand.abstract + " See "
            + "\(Self.manualPageName(path + [subcommand.name]))(1).")
      }
    }
    page.request(".SH EXIT STATUS")
    for (code, meaning) in exitStatuses(path: path) {
      page.request(".TP")
      page.raw("\(code)")
      page.text(meaning)
    }
    page.request(".SH SEE ALSO")
    // The root names every page; a command its parent (the root: imprint(1)) and subcommands.
    let related =
      path.isEmpty
      ? root.allCommands().map(\.path).filter { !$0.isEmpty }
      : [Array(path.dropLast())] + subcommands.map { path + [$0.name] }
    page.text(related.map { "\(Self.manualPageName($0))(1)" }.joined(separator: ", "))
    return page.output
  }

  /// The usage line: the command in bold, then its other words.
  private func synopsisRoff(path: [String]) -> String {
    let usage = usageLine(path: path)
    let command = (["imprint"] + path).joined(separator: " ")
    let rest = String(usage.dropFirst(command.count).trimmingPrefix(" "))
    return "\\fB" + Roff.escaped(command) + "\\fR" + (rest.isEmpty ? "" : " " + Roff.escaped(rest))
  }

  /// The exit statuses of the command (house style; `imprint serve` adds 3).
  func exitStatuses(path: [String]) -> [(Int32, String)] {
    var statuses: [(Int32, String)] = [
      (ImprintCLI.success, "Success."),
      (
        ImprintCLI.failure,
        "The input was understood but the work failed (validation, rendering, I/O, a failed job)."
      ),
      (
        ImprintCLI.usage,
        "Usage error: an unknown command or option, a missing or malformed value."
      ),
    ]
    if path == ["serve"] {
      statuses.append(
        (
          ImprintCLI.stopIncomplete,
          "A stop left work stuck past --drain-timeout and its margin (service.stopIncomplete)."
        ))
    }
    return statuses
  }
}

extension OptionKind {
  /// The words a value must be one of, listed (`bash, zsh, fish`), for a choice.
  var valueWords: String? {
    guard case .choice(let words) = self else { return nil }
    return words.joined(separator: ", ")
  }
}

/// roff source built line by line: requests, escaped text, raw lines.
private struct Roff {
  private(set) var output = ""

  /// A request line (`.SH NAME`), written as it is.
  mutating func request(_ line: String) { output += line + "\n" }

  /// A line of roff written as it is (already escaped).
  mutating func raw(_ line: String) { output += line + "\n" }

  /// One line of text, escaped (see `escaped`): roff fills it into the paragraph.
  mutating func text(_ text: String) {
    output += Self.escaped(text) + "\n"
  }

  /// `"text"` as one macro argument.
  static func quoted(_ text: String) -> String {
    "\"" + escaped(text).replacingOccurrences(of: "\"", with: "\\(dq") + "\""
  }

  /// Text safe in roff: backslashes, minus signs and non-ASCII characters escaped, and a
  /// leading `.` or `'` guarded.
  static func escaped(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": result += "\\e"
      case "-": result += "\\-"
      case "\n", "\t": result += " "
      case _ where scalar.value < 0x20: continue
      case _ where scalar.value > 0x7E:
        result += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
      default: result.unicodeScalars.append(scalar)
      }
    }
    if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
    return result
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
