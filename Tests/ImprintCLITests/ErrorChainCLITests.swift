// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: --verbose prints an error's causes (stderr, and "causes" in JSON); without it
// the output is what it always was.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("--verbose shows the causes of an error")
struct ErrorChainCLITests {
  static let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path

  @Test("a write past the size limit: the errno is the cause, shown only with --verbose")
  func sizeLimitChain() throws {
    let folder = TemporaryFolder()
    let output = folder.file("a.png")
    let arguments = ["--fsize=200", Self.binary, "qr", address, "--size", "60", "-o", output]
    let plain = try runTool("prlimit", arguments)
    #expect(plain.status == 1)
    let expected =
      "error: cannot write '\(output)' (\(String(cString: strerror(EFBIG))))\n"
      + "hint: the file is larger than this process may write (ulimit -f) or the file system holds\n"
    #expect(plain.stderr == expected)
    for flag in ["--verbose", "-v"] {
      let verbose = try runTool("prlimit", arguments + [flag])
      #expect(verbose.status == 1)
      #expect(
        verbose.stderr == expected + "  cause: system.EFBIG: \(String(cString: strerror(EFBIG)))\n")
    }
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("bulk QR past the size limit: a cause line after each failed line, causes in its JSON")
  func bulkSizeLimitChain() throws {
    let folder = TemporaryFolder()
    let input = folder.file("payloads.txt")
    try Data("one\ntwo\n".utf8).write(to: URL(fileURLWithPath: input))
    let arguments = [
      "--fsize=200", Self.binary, "qr", "--input", input, "--size", "60", "--output-dir",
      folder.file("codes"), "-q", "--json",
    ]
    let plain = try runTool("prlimit", arguments)
    #expect(plain.status == 1)
    #expect(!plain.stderr.contains("cause:") && !plain.stdout.contains("causes"))
    let verbose = try runTool("prlimit", arguments + ["--verbose"])
    #expect(verbose.status == 1)
    let lines = verbose.stderr.split(separator: "\n").map(String.init)
    for (index, line) in lines.enumerated() where line.hasPrefix("error: ") {
      #expect(lines[index + 1] == "  cause: system.EFBIG: \(String(cString: strerror(EFBIG)))")
    }
    #expect(lines.filter { $0.hasPrefix("error: ") }.count == 2, "\(verbose.stderr)")
    // The JSON is the plain run's with a "causes" list in each error.
    struct Document: Decodable {
      struct Result: Decodable { var error: ErrorRecord? }
      var results: [Result]
    }
    let document = try JSONDecoder().decode(Document.self, from: Data(verbose.stdout.utf8))
    #expect(document.results.count == 2)
    for result in document.results {
      #expect(result.error?.code == "file.unwritable")
      #expect(result.error?.causes?.map(\.code) == ["system.EFBIG"])
    }
    let before = try JSONDecoder().decode(Document.self, from: Data(plain.stdout.utf8))
    #expect(before.results.allSatisfy { $0.error?.causes == nil && $0.error != nil })
  }

  @Test("every command accepts --verbose and -v; an error without causes prints no cause line")
  func everyCommandAcceptsVerbose() async throws {
    let folder = TemporaryFolder()
    for flag in ["--verbose", "-v"] {
      let list = await imprint(["templates", "list", flag])
      #expect(list.code == 0 && list.stdout.contains("classic"), "\(list.stderr)")
      let qr = await imprint(["qr", "x", "-o", folder.file("x.png"), flag])
      #expect(qr.code == 0 && qr.stderr.isEmpty, "\(qr.stderr)")
      // file.notFound has no cause: the same two lines as without --verbose.
      let missing = folder.file("missing.pdf")
      let plain = await imprint(["inspect", missing])
      let verbose = await imprint(["inspect", missing, flag])
      #expect(plain.code == 1 && verbose.code == 1)
      #expect(verbose.stderr == plain.stderr && !verbose.stderr.contains("cause:"))
      let usage = await imprint(["qr", flag])
      #expect(usage.code == 2 && usage.stderr.hasPrefix("error: missing argument <payload>"))
    }
  }
}
