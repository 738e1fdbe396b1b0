// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: parses argv against a CommandSpec (`--opt value`, `--opt=value`, `-o value`, `--`).

extension CommandSpec {
  /// Parses `arguments` (the words after the command path).
  ///
  /// - Throws: `UsageError` for an unknown option (with a suggestion), a missing value, a flag
  ///   given a value, a missing argument or an extra one.
  func parse(_ arguments: [String], path: [String]) throws(UsageError) -> ParsedArguments {
    var parsed = ParsedArguments(path: path, options: options)
    var index = 0
    var onlyPositionals = false
    func option(named name: String) throws(UsageError) -> OptionSpec {
      if let spec = options.first(where: { $0.name == name }) { return spec }
      var message = "unknown option '--\(name)'"
      if let suggestion = closest(to: name, in: options.map(\.name)) {
        message += ". Did you mean '--\(suggestion)'?"
      }
      throw UsageError(message: message)
    }
    while index < arguments.count {
      let word = arguments[index]
      index += 1
      if onlyPositionals || word == "-" || !word.hasPrefix("-") {
        parsed.positionals.append(word)
        continue
      }
      if word == "--" {
        onlyPositionals = true
        continue
      }
      var spec: OptionSpec
      var inline: String?
      if word.hasPrefix("--") {
        let body = word.dropFirst(2)
        if let equals = body.firstIndex(of: "=") {
          spec = try option(named: String(body[..<equals]))
          inline = String(body[body.index(after: equals)...])
        } else {
          spec = try option(named: String(body))
        }
      } else {
        let letters = Array(word.dropFirst())
        guard letters.count == 1, let found = options.first(where: { $0.short == letters[0] })
        else {
          if Double(word) != nil {
            // A negative number is a value, not an option.
            parsed.positionals.append(word)
            continue
          }
          throw UsageError(message: "unknown option '\(word)'")
        }
        spec = found
      }
      if spec.kind == .flag {
        if inline != nil {
          throw UsageError(message: "option '--\(spec.name)' takes no value")
        }
        parsed.record(flag: spec)
        continue
      }
      let value: String
      if let inline {
        value = inline
      } else if index < arguments.count {
        value = arguments[index]
        index += 1
      } else {
        throw UsageError(message: "option '--\(spec.name)' needs a value \(spec.value ?? "")")
      }
      parsed.record(value, for: spec)
    }
    if parsed.flag(CommandSpec.help) { return parsed }
    let required = self.arguments.filter { !$0.optional }
    if parsed.positionals.count < required.count {
      let missing = required[parsed.positionals.count]
      throw UsageError(message: "missing argument <\(missing.name)>")
    }
    if !(self.arguments.last?.variadic ?? false), parsed.positionals.count > self.arguments.count {
      throw UsageError(message: "unexpected argument '\(parsed.positionals[self.arguments.count])'")
    }
    return parsed
  }
}
