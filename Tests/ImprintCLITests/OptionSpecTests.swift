// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: every option of every command spec parses and reads back through a key, and
// a key the command does not declare stops the program.

import Foundation
import ImprintService
import ImprintTestSupport
import Testing

@testable import ImprintCLI

/// Every command of `imprint`, with its path.
let allCommandSpecs = ImprintCLI.root.allCommands()

/// A value the option accepts (the lower end of a range, the first choice, a word).
func sampleValue(_ option: OptionSpec) -> String {
  switch option.kind {
  case .flag: ""
  case .text: "word"
  case .file: "some/file"
  case .directory: "some/dir"
  case .integer(let range): String(range.lowerBound)
  case .number(let range): String(range.lowerBound)
  case .choice(let words): words[0]
  }
}

/// The words a command needs besides its options (one per required argument).
func requiredArguments(_ spec: CommandSpec) -> [String] {
  spec.arguments.filter { !$0.optional }.map { _ in "argument" }
}

@Suite("Command specs: options declared once, read through their keys")
struct OptionSpecTests {
  @Test(
    "every option of every command parses in each form and reads back through its key",
    arguments: allCommandSpecs.map(\.path))
  func everyOption(path: [String]) throws {
    let spec = try #require(allCommandSpecs.first { $0.path == path }?.spec)
    for option in spec.options {
      var forms = [["--\(option.name)"]]
      if let short = option.short { forms.append(["-\(short)"]) }
      let value = sampleValue(option)
      if option.kind != .flag {
        forms = forms.map { $0 + [value] } + [["--\(option.name)=\(value)"]]
      }
      for form in forms {
        let parsed = try spec.parse(form + requiredArguments(spec), path: path)
        switch option.kind {
        case .flag:
          #expect(parsed.flag(OptionKey<Bool>(spec: option)), "\(form)")
        case .text, .file, .directory:
          #expect(parsed.value(OptionKey<String>(spec: option)) == value, "\(form)")
        case .integer:
          #expect(try parsed.int(OptionKey<Int>(spec: option)) == Int(value), "\(form)")
        case .number:
          #expect(try parsed.double(OptionKey<Double>(spec: option)) == Double(value), "\(form)")
        case .choice:
          #expect(try parsed.choice(OptionKey<Choice>(spec: option)) == value, "\(form)")
        }
      }
    }
  }

  @Test("each command's options have distinct names and short forms, only -o -q -v -h -j")
  func distinctNames() {
    for (path, spec) in allCommandSpecs {
      let names = spec.options.map(\.name)
      #expect(Set(names).count == names.count, "imprint \(path): \(names)")
      let shorts = spec.options.compactMap(\.short)
      #expect(Set(shorts).count == shorts.count, "imprint \(path): \(shorts)")
      #expect(shorts.allSatisfy { "oqvhj".contains($0) }, "imprint \(path): \(shorts)")
      for option in spec.options {
        #expect((option.value == nil) == (option.kind == .flag), "--\(option.name)")
      }
    }
  }

  @Test("a value out of an option's range is a usage error naming the option")
  func ranges() async {
    let run = await imprint(["thumb", "--size", "15", "a.pdf", "-o", "x"])
    #expect(run.code == 2)
    #expect(run.stderr.contains("option '--size' expects an integer from 16 to 2048; got '15'"))
  }

  @Test("serve's worker limits are the service's ranges")
  func serveLimits() {
    #expect(DocumentCommands.Key.cpuLimit.spec.kind == .integer(ServiceSettings.Range.cpuLimit))
    #expect(
      DocumentCommands.Key.memoryLimit.spec.kind == .integer(ServiceSettings.Range.memoryLimit))
    #expect(DocumentCommands.Key.timeout.spec.kind == .number(ServiceSettings.Range.timeout))
  }

  @Test("reading a key the command does not declare stops the program")
  func undeclaredKeyTraps() async {
    await #expect(processExitsWith: .failure) {
      let parsed = try QRCommand.spec.parse(["x"], path: ["qr"])
      _ = parsed.value(PrepareCommand.Key.printer)
    }
    await #expect(processExitsWith: .failure) {
      // Declared under the same name, read as another kind.
      let parsed = try QRCommand.spec.parse(["x"], path: ["qr"])
      _ = try parsed.int(DocumentCommands.Key.jobs.renamed)
    }
  }
}

extension OptionKey where Value == Int {
  /// The same option with another range: not what `qr` declares.
  fileprivate var renamed: Self {
    Self(
      spec: OptionSpec(
        name: spec.name, short: spec.short, value: spec.value, help: spec.help,
        kind: .integer(0...1)))
  }
}
