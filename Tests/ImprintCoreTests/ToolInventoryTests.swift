// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: every tool and Python module the tests call is installed by scripts/bootstrap,
// that is, provided by a line of the test set in scripts/packages.txt.

import Foundation
import ImprintTestSupport
import Testing

/// What the tests run from outside: commands and Python modules, each with where it is called.
struct ToolUse: Hashable {
  enum Kind: String { case tool, module }
  let kind: Kind
  let name: String
  let place: String
}

/// The test set of scripts/packages.txt: the commands and Python modules its packages provide.
func testPackages() throws -> (tools: [String: String], modules: [String: String]) {
  let list = try String(
    contentsOfFile: repositoryRoot + "/scripts/packages.txt", encoding: .utf8)
  var tools: [String: String] = [:]
  var modules: [String: String] = [:]
  for line in list.split(separator: "\n") where !line.hasPrefix("#") {
    let words = line.split(separator: " ").map(String.init)
    guard words.count >= 3, words[0] == "test" else { continue }
    for item in words.dropFirst(3) {
      if item.hasPrefix("py:") {
        modules[String(item.dropFirst(3))] = words[2]
      } else {
        tools[item] = words[2]
      }
    }
  }
  return (tools, modules)
}

/// Scans Swift sources for the ways tests call outside programs: `runTool("x"`, a `Process`'s
/// `executableURL` (through `/usr/bin/env`, the first literal of its `arguments`), and Python:
/// `import`/`from` lines in string literals, and `-m` modules; or, when `python`, a Python file
/// (Tests/Fixtures/Python) for its `import`/`from` lines.
func toolUses(in text: String, file: String, python: Bool = false) -> Set<ToolUse> {
  var uses: Set<ToolUse> = []
  let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  func add(_ kind: ToolUse.Kind, _ name: String, _ line: Int) {
    let base = kind == .tool ? (name as NSString).lastPathComponent : name
    let top = kind == .module ? String(base.prefix { $0 != "." }) : base
    uses.insert(ToolUse(kind: kind, name: top, place: "\(file):\(line + 1)"))
  }
  func literals(_ pattern: String, in line: String) -> [String] {
    guard let regex = try? NSRegularExpression(pattern: pattern) else {
      preconditionFailure("bad pattern \(pattern)")
    }
    let range = NSRange(line.startIndex..., in: line)
    return regex.matches(in: line, range: range).compactMap { match in
      Range(match.range(at: 1), in: line).map { String(line[$0]) }
    }
  }
  // `VAR=value` words that env takes before the command.
  let settings = #"(?:"[A-Za-z_][A-Za-z0-9_]*=[^"]*",\s*)*"#
  let command = #""([^"=\-][^"=]*)""#
  // Processes started through env: their `arguments` begin with the command.
  let envProcesses = Set(
    lines.flatMap {
      literals(#"(\w+)\.executableURL\s*=\s*URL\(fileURLWithPath:\s*"/usr/bin/env"\)"#, in: $0)
    })
  var inBlock = python
  for (index, line) in lines.enumerated() {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    if !python && trimmed.contains("\"\"\"") {
      inBlock.toggle()
      continue
    }
    // Python: `import a, b` alone on a line (or as a whole literal), or `from a import b`.
    let imports = #"import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*"#
    let from = #"from\s+([A-Za-z_][\w.]*)\s+import\s"#
    let python =
      inBlock
      ? [#"^\s*"# + imports + "$", #"^\s*"# + from] : [#"""# + imports + #"""#, #"""# + from]
    for pattern in python {
      for list in literals(pattern, in: line) {
        for name in list.split(separator: ",") {
          add(.module, name.trimmingCharacters(in: .whitespaces), index)
        }
      }
    }
    if inBlock { continue }
    // A call's first argument may be on the next line: `runTool(` then `"gs",`.
    let joined =
      line.hasSuffix("runTool(") && index + 1 < lines.count ? line + lines[index + 1] : line
    for tool in literals(#"runTool\(\s*"([^"]+)""#, in: joined) { add(.tool, tool, index) }
    for tool in literals(#"runTool\(\s*"/usr/bin/env",\s*\[\s*"# + settings + command, in: joined) {
      add(.tool, tool, index)
    }
    for tool in literals(#"executableURL\s*=\s*URL\(fileURLWithPath:\s*"([^"]+)""#, in: line) {
      add(.tool, tool, index)
    }
    for process in envProcesses {
      for tool in literals(process + #"\.arguments\s*=\s*\[\s*"# + settings + command, in: line) {
        add(.tool, tool, index)
      }
    }
    for module in literals(#""-m",\s*"([\w.]+)""#, in: line) { add(.module, module, index) }
  }
  return uses
}

@Suite("Tool inventory", .liveHandlesChecked)
struct ToolInventoryTests {
  /// Every use in Tests/**/*.swift but this file (whose patterns are not calls), and every
  /// module the tests' Python helpers (Tests/Fixtures/Python/*.py) import.
  static func allUses() throws -> Set<ToolUse> {
    let tests = repositoryRoot + "/Tests"
    let own = (#filePath as NSString).lastPathComponent
    guard let walker = FileManager.default.enumerator(atPath: tests) else { return [] }
    var uses: Set<ToolUse> = []
    for case let path as String in walker
    where (path.hasSuffix(".swift") && (path as NSString).lastPathComponent != own)
      || (path.hasPrefix("Fixtures/Python/") && path.hasSuffix(".py"))
    {
      let text = try String(contentsOfFile: tests + "/" + path, encoding: .utf8)
      uses.formUnion(toolUses(in: text, file: "Tests/" + path, python: path.hasSuffix(".py")))
    }
    return uses
  }

  @Test("every tool and Python module the tests call comes from a package of the test set")
  func everyToolIsListed() throws {
    let (tools, modules) = try testPackages()
    let uses = try Self.allUses()
    let found = Set(uses.filter { $0.kind == .tool }.map(\.name))
    let imported = Set(uses.filter { $0.kind == .module }.map(\.name))
    // The scan must see the tools and modules known to be used, or it checks nothing.
    for known in ["pdfinfo", "pdftoppm", "zbarimg", "qpdf", "gs", "rsvg-convert", "python3"] {
      #expect(found.contains(known), "the scan of Tests/ did not find '\(known)'")
    }
    for known in ["zxingcpp", "PIL", "http", "docx"] {
      #expect(imported.contains(known), "the scan of Tests/ did not find module '\(known)'")
    }
    for use in uses.sorted(by: { $0.place < $1.place }) {
      let provided = use.kind == .tool ? tools[use.name] : modules[use.name]
      #expect(
        provided != nil,
        """
        \(use.place) calls \(use.kind.rawValue) '\(use.name)', which no package of the test set \
        in scripts/packages.txt provides: add it there (and scripts/bootstrap installs it)
        """)
    }
  }

  @Test("the scan finds calls split over lines, through env, in Process arguments and in Python")
  func scanner() {
    let source = """
      let a = try runTool(
        "gs", ["-q"])
      let b = try runTool("/usr/bin/qpdf", ["--check"])
      let c = try runTool("/usr/bin/env", ["LANG=C", "pdfinfo", path])
      server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      server.arguments = ["python3", "-u", "-m", "http.server", "0"]
      let code = \"\"\"
        import sys, zxingcpp
        from PIL import Image
        \"\"\"
      _ = try runTool("python3", ["-c", "import numpy"])
      _ = try runTool(binary, ["qr"])
      """
    let uses = toolUses(in: source, file: "T.swift")
    #expect(
      Set(uses.filter { $0.kind == .tool }.map(\.name))
        == ["gs", "qpdf", "env", "pdfinfo", "python3"])
    #expect(
      Set(uses.filter { $0.kind == .module }.map(\.name))
        == ["http", "sys", "zxingcpp", "PIL", "numpy"])
    #expect(uses.contains(ToolUse(kind: .tool, name: "gs", place: "T.swift:1")))
  }

  @Test("a tool missing from the list is reported: the check is not vacuous")
  func missingToolFails() throws {
    let (tools, _) = try testPackages()
    let uses = toolUses(in: #"_ = try runTool("frobnicate", [])"#, file: "T.swift")
    #expect(uses.count == 1)
    #expect(uses.allSatisfy { tools[$0.name] == nil })
    #expect(tools["qpdf"] == "qpdf" && tools["pdfinfo"] == "poppler-utils")
  }
}
