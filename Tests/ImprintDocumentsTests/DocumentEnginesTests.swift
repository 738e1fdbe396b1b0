// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: poppler, poppler-glib and qpdf live in libImprintDocumentEngines.so,
// which `imprint` loads when a run first reads a document: what the executable links (readelf),
// what a card run and a document run open (strace), and a missing or foreign library.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("The document engines, a library of their own", .liveHandlesChecked)
struct DocumentEnginesTests {
  static let samples = repositoryRoot + "/assets/samples/"
  static let engines = Bundle.main.bundleURL.appendingPathComponent(
    "libImprintDocumentEngines.so"
  ).path
  static let documentLibraries = ["libpoppler.so", "libpoppler-glib.so", "libqpdf.so"]

  /// The libraries `imprint ARGUMENTS` opened (strace, every process it started), and how many
  /// times each was opened.
  static func openedLibraries(_ arguments: [String]) throws
    -> (status: Int32, opened: [String: Int], stderr: String)
  {
    let folder = TemporaryFolder()
    let log = folder.file("strace.log")
    let run = try runTool(
      "strace",
      ["-f", "-qq", "-e", "trace=openat", "-e", "status=successful", "-o", log, worker]
        + arguments)
    var opened: [String: Int] = [:]
    for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
      guard let start = line.range(of: "\""), let end = line[start.upperBound...].range(of: "\"")
      else { continue }
      let path = line[start.upperBound..<end.lowerBound]
      guard path.hasSuffix(".so") || path.contains(".so.") else { continue }
      opened[String(path.split(separator: "/").last ?? ""), default: 0] += 1
    }
    return (run.status, opened, run.stderr)
  }

  @Test("imprint links neither poppler nor qpdf; the library does")
  func linked() throws {
    func needed(_ file: String) throws -> [String] {
      let dynamic = try runTool("readelf", ["-d", file])
      #expect(dynamic.status == 0, "\(dynamic.stderr)")
      return dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map {
        String($0.split(separator: "[").last?.dropLast() ?? "")
      }
    }
    let executable = try needed(worker)
    #expect(executable.contains { $0.hasPrefix("libcairo.so") })
    for library in Self.documentLibraries {
      #expect(!executable.contains { $0.hasPrefix(library) }, "\(library) in \(executable)")
    }
    let engines = try needed(Self.engines)
    for library in Self.documentLibraries {
      #expect(engines.contains { $0.hasPrefix(library) }, "\(library) not in \(engines)")
    }
    // C and C++ alone: no Swift runtime, which an installation without the toolchain lacks.
    #expect(!engines.contains { $0.hasPrefix("libswift") }, "\(engines)")
    let symbols = try runTool("nm", ["-D", "--undefined-only", Self.engines])
    #expect(symbols.status == 0 && !symbols.stdout.contains("swift_"), "\(symbols.stdout)")
  }

  @Test("a card run never opens poppler or qpdf; a document run opens the library once")
  func opened() throws {
    let folder = TemporaryFolder()
    let card = try Self.openedLibraries([
      "card", Self.samples + "profiles/harbor-lamp.json", "--photo",
      Self.samples + "photos/harbor-lamp.jpg", "-o", folder.file("card.pdf"),
    ])
    #expect(card.status == 0, "\(card.stderr)")
    #expect(card.opened["libcairo.so.2"] != nil, "\(card.opened)")
    for library in Self.documentLibraries + ["libImprintDocumentEngines.so"] {
      #expect(!card.opened.keys.contains { $0.hasPrefix(library) }, "\(library) opened")
    }
    // Two documents, two workers forked after the library was loaded: it is opened once, by
    // the parent, and poppler with it.
    let inspect = try Self.openedLibraries([
      "inspect", Self.samples + "documents/handout.pdf",
      Self.samples + "documents/course-notes.pdf",
    ])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(inspect.opened["libImprintDocumentEngines.so"] == 1, "\(inspect.opened)")
    #expect(inspect.opened.keys.contains { $0.hasPrefix("libpoppler.so") })
    #expect(inspect.opened.keys.contains { $0.hasPrefix("libqpdf.so") })
  }

  @Test(
    "without the library, or with another, a document names the paths tried; cards still work",
    arguments: [
      (
        "/nonexistent/libImprintDocumentEngines.so",
        "/nonexistent/libImprintDocumentEngines.so: no such file"
      ),
      (
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/lib/x86_64-linux-gnu/libz.so.1: no ImprintDocumentEngines_table in it"
      ),
      (repositoryRoot + "/README.md", "README.md: "),
    ])
  func missing(library: String, said: String) throws {
    let environment = "IMPRINT_ENGINES=" + library
    let document = try runTool(
      "env", [environment, worker, "inspect", "--json", Self.samples + "documents/handout.pdf"])
    #expect(document.status == 1)
    #expect(document.stdout.contains("\"document.workerCrashed\""), "\(document.stdout)")
    #expect(document.stdout.contains("document engines"), "\(document.stdout)")
    #expect(document.stdout.contains(said), "\(document.stdout)")
    let folder = TemporaryFolder()
    let card = try runTool(
      "env",
      [
        environment, worker, "card", Self.samples + "profiles/harbor-lamp.json", "-o",
        folder.file("card.png"),
      ])
    #expect(card.status == 0, "\(card.stderr)")
    // A PNG a side: card-front.png, card-back.png.
    #expect(FileManager.default.fileExists(atPath: folder.file("card-front.png")))
  }
}
