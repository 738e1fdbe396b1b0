// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: help and usage text, generated from the command specs.

extension CommandSpec {
  /// `imprint qr [<options>] <payload>`.
  func usageLine(path: [String]) -> String {
    var words = ["imprint"] + path
    if !subcommands.isEmpty && arguments.isEmpty {
      words.append("<subcommand>")
    }
    if options.count > CommandSpec.commonOptions.count { words.append("[<options>]") }
    for argument in arguments {
      var word = "<\(argument.name)>" + (argument.variadic ? " ..." : "")
      if argument.optional { word = "[\(word)]" }
      words.append(word)
    }
    return words.joined(separator: " ")
  }

  /// The full help text of `imprint <path> --help`.
  func helpText(path: [String]) -> String {
    var text = "OVERVIEW: \(abstract)\n\n"
    if !discussion.isEmpty { text += wrap(discussion, width: 80) + "\n\n" }
    text += "USAGE: \(usageLine(path: path))\n"
    if !arguments.isEmpty {
      text += "\nARGUMENTS:\n"
      for argument in arguments { text += row("<\(argument.name)>", argument.help) }
    }
    text += "\nOPTIONS:\n"
    for option in options {
      var left = option.short.map { "-\($0), " } ?? ""
      left += "--\(option.name)"
      if let value = option.value { left += " \(value)" }
      text += row(left, option.help)
    }
    if !subcommands.isEmpty {
      text += "\nSUBCOMMANDS:\n"
      for subcommand in subcommands { text += row(subcommand.name, subcommand.abstract) }
    }
    text += "\nSee 'imprint help <command>' for detailed help.\n"
    return text
  }
}

/// One help row: the left column padded to 28 characters, then the help (wrapped at 100).
private func row(_ left: String, _ help: String) -> String {
  let indent = String(repeating: " ", count: 30)
  var lines: [String] = []
  var current = ""
  for word in help.split(separator: " ") {
    if current.count + word.count + 1 > 70, !current.isEmpty {
      lines.append(current)
      current = ""
    }
    current += (current.isEmpty ? "" : " ") + word
  }
  if !current.isEmpty { lines.append(current) }
  let head = "  " + left
  var text: String
  if head.count <= 28 {
    text = head + String(repeating: " ", count: 30 - head.count) + (lines.first ?? "") + "\n"
  } else {
    text = head + "\n" + indent + (lines.first ?? "") + "\n"
  }
  for line in lines.dropFirst() { text += indent + line + "\n" }
  return text
}

/// Wraps each paragraph of `text` at `width` columns, breaking between words.
private func wrap(_ text: String, width: Int) -> String {
  text.split(separator: "\n", omittingEmptySubsequences: false).map { paragraph in
    var lines: [String] = []
    var current = ""
    for word in paragraph.split(separator: " ") {
      if !current.isEmpty && current.count + 1 + word.count > width {
        lines.append(current)
        current = ""
      }
      current += (current.isEmpty ? "" : " ") + word
    }
    lines.append(current)
    return lines.joined(separator: "\n")
  }.joined(separator: "\n")
}
