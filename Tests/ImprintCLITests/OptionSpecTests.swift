// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: every option of every command spec parses and reads back through a key, and
// a key the command does not declare stops the program.

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintHTTP
import ImprintPrinting
import ImprintQR
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

/// A service's configuration with `settings` applied, as text (`dump`), to compare.
private func configuration(_ settings: ServiceSettings) throws -> String {
  var configuration = ServiceConfiguration(
    listen: try ListenAddress(parsing: "127.0.0.1:0"), workerExecutable: "/bin/true",
    placeholder: (bytes: [], source: "none"))
  try configuration.apply(settings)
  var text = ""
  dump(configuration, to: &text)
  return text
}

/// A source that gives nothing (flags off, or all on with `flagsOn`) and records each option
/// read, with the kind it is read as.
struct RecordingSource: OptionSource {
  var reads: [(name: OptionName, kind: OptionKind)] = []
  /// What every flag reads as.
  var flagsOn = false

  mutating func text(_ name: OptionName) -> String? {
    reads.append((name, .text))
    return nil
  }
  mutating func decimalText(_ name: OptionName) -> String? { text(name) }
  mutating func integerText(_ name: OptionName) -> String? { text(name) }
  mutating func flag(_ name: OptionName) -> Bool {
    reads.append((name, .flag))
    return flagsOn
  }
  mutating func integer(_ name: OptionName, in range: ClosedRange<Int>) -> Int? {
    reads.append((name, .integer(range)))
    return nil
  }
  mutating func number(_ name: OptionName, in range: ClosedRange<Double>) -> Double? {
    reads.append((name, .number(range)))
    return nil
  }
  mutating func choice(_ name: OptionName, _ choices: [String]) -> String? {
    reads.append((name, .choice(choices)))
    return nil
  }
  mutating func color(_ name: OptionName) -> Color? { text(name) == nil ? nil : .black }
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

  @Test("serve's options are its settings, declared once; the worker limits are theirs")
  func serveSettings() throws {
    let options = ServeCommand.spec.options.map(\.name)
    #expect(
      options == ["config"] + ServiceSetting.all.map(\.option) + ["verbose", "help"])
    for setting in ServiceSetting.all {
      let option = try #require(ServeCommand.spec.options.first { $0.name == setting.option })
      #expect(option.help == setting.help)
      #expect(option.short == setting.short)
    }
    #expect(DocumentCommands.Key.cpuLimit.spec == OptionKey<Int>(ServiceSetting.cpuLimit).spec)
    #expect(
      DocumentCommands.Key.memoryLimit.spec == OptionKey<Int>(ServiceSetting.memoryLimit).spec)
    #expect(DocumentCommands.Key.timeout.spec == OptionKey<Double>(ServiceSetting.timeout).spec)
  }

  @Test(
    "imprint qr, card and thumb declare each option the library reads, by its name and kind",
    arguments: ["qr", "card", "thumb"])
  func capabilityOptions(command: String) throws {
    var source = RecordingSource()
    let (spec, names): (CommandSpec, [OptionName])
    switch command {
    case "qr":
      (spec, names) = (QRCommand.spec, QROption.allCases.map(\.names))
      _ = try QRSettings.read(kind: .text, from: &source)
    case "card":
      (spec, names) = (CardCommand.spec, CardOption.allCases.map(\.names))
      _ = try CardOptions.read(from: &source, defaultFaces: [.front])
    default:
      (spec, names) = (DocumentCommands.thumb, ThumbnailOption.allCases.map(\.names))
      #expect(try ThumbnailOptions.read(from: &source) == ThumbnailOptions())
    }
    #expect(Set(source.reads.map(\.name)) == Set(names))
    for (name, kind) in source.reads {
      let option = spec.options.first { $0.name == name.flag }
      #expect(option?.kind == kind, "--\(name.flag)")
    }
  }

  @Test(
    "imprint prepare, quote and inspect declare the library's tables: names, kinds, help",
    arguments: ["prepare", "quote", "inspect"])
  func tableOptions(command: String) throws {
    // What each command offers of each table, read as the command reads it.
    var source = RecordingSource(flagsOn: true)
    let (spec, entries): (CommandSpec, [OptionEntry])
    switch command {
    case "prepare":
      let quoting: [QuoteOption] = [.prices, .filesRoot]
      (spec, entries) = (
        PrepareCommand.spec,
        quoting.map(\.entry) + PrepareOption.allCases.map(\.entry)
      )
      _ = try QuoteRequest.read(from: &source, offering: quoting)
      _ = try PrepareRequest.read(from: &source)
    case "quote":
      (spec, entries) = (QuoteCommand.spec, QuoteOption.commandLine.map(\.entry))
      _ = try QuoteRequest.read(from: &source, offering: QuoteOption.commandLine)
    default:
      (spec, entries) = (DocumentCommands.inspect, InspectOption.commandLine.map(\.entry))
      _ = try InspectRequest.read(from: &source, offering: InspectOption.commandLine)
    }
    // The library reads what the command offers, each once.
    #expect(source.reads.map(\.name) == entries.map(\.names))
    for entry in entries {
      let declared = spec.options.first { $0.name == entry.names.flag }
      #expect(declared == OptionKey<Any>(entry).spec, "--\(entry.names.flag)")
    }
    for (name, kind) in source.reads {
      let declared = try #require(spec.options.first { $0.name == name.flag }?.kind)
      // Text is read as the command declares it: a word, a file or a folder.
      let texts: [OptionKind] = [.text, .file, .directory]
      #expect(declared == kind || (kind == .text && texts.contains(declared)), "--\(name.flag)")
    }
  }

  @Test("a table's command-line name is its key in kebab case; its help states the default")
  func tableNames() {
    #expect(PrepareOption.previewSize.names == OptionName(flag: "preview-size", key: "previewSize"))
    #expect(QuoteOption.filesRoot.names.flag == "files-root")
    #expect(InspectOption.colorMinArea.names.flag == "color-min-area")
    #expect(PrepareOption.previewSize.entry.help.contains("(default 400)"))
    #expect(PrepareOption.waitTimeout.entry.help.contains("(default 300)"))
    #expect(InspectOption.colorTolerance.entry.help.contains("(default 8)"))
    // A manifest's print item takes every option but the credentials (the batch's own).
    #expect(PrepareOption.manifest == PrepareOption.allCases.filter { $0 != .passwordFile })
  }

  @Test("ServiceConfiguration.apply takes every number and flag of serve's settings")
  func serveApply() throws {
    for setting in ServiceSetting.all {
      var settings = ServiceSettings()
      switch setting.value {
      // The access log's destination is the caller's (`imprint serve` writes it).
      case .flag(let field) where setting.key != "accessLog": settings[keyPath: field] = true
      case .integer(let field, let range): settings[keyPath: field] = range.upperBound
      case .number(let field, let range): settings[keyPath: field] = range.upperBound
      default: continue
      }
      #expect(try configuration(settings) != configuration(ServiceSettings()), "\(setting.key)")
    }
  }

  @Test("the default each serve setting's help states is the configuration's own")
  func serveDefaults() throws {
    var checked = 0
    for setting in ServiceSetting.all {
      // The number the help states first ("33554432, 32 MiB", "1; 0: none"); none for a
      // default that is not a number ("all cores").
      guard let stated = OptionKey<Any>(setting).spec.documentedDefault else { continue }
      let digits = stated.prefix { $0.isNumber || $0 == "." }
      guard let number = Double(digits),
        [nil, ",", ";"].contains(stated.dropFirst(digits.count).first)
      else { continue }
      var settings = ServiceSettings()
      switch setting.value {
      case .integer(let field, _): settings[keyPath: field] = Int(number)
      case .number(let field, _): settings[keyPath: field] = number
      default: continue
      }
      #expect(
        try configuration(settings) == configuration(ServiceSettings()),
        "--\(setting.option): \(stated)")
      checked += 1
    }
    #expect(checked >= 15)
  }

  @Test("serve's command line sets each setting's field, the file's value otherwise kept")
  func serveParsing() throws {
    for setting in ServiceSetting.all {
      let option = OptionKey<Any>(setting).spec
      var words = ["--\(option.name)"]
      if option.kind != .flag { words.append(sampleValue(option)) }
      let parsed = try ServeCommand.spec.parse(words, path: ["serve"])
      var settings = ServiceSettings()
      try setting.read(parsed, into: &settings)
      #expect(settings != ServiceSettings(), "--\(option.name)")
      var untouched = ServiceSettings()
      try setting.read(try ServeCommand.spec.parse([], path: ["serve"]), into: &untouched)
      #expect(untouched == ServiceSettings(), "--\(option.name)")
    }
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
