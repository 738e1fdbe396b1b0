// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: --verbose prints an error's causes (stderr, and "causes" in JSON); without it
// the output is what it always was.

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics
import ImprintQR
import ImprintTestSupport
import Testing

@Suite("--verbose shows the causes of an error", .liveHandlesChecked)
struct ErrorChainCLITests {
  static let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path

  @Test(
    "a write past the size limit: the errno is the cause, shown only with --verbose",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
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

  @Test(
    "bulk QR past the size limit: a cause line after each failed line, causes in its JSON",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
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

  /// A copy of the sample photo cut in half: its header reads, its data ends early.
  static func truncatedPhoto(in folder: TemporaryFolder) throws -> String {
    let bytes = try Data(
      contentsOf: URL(fileURLWithPath: samplesFolder + "/photos/harbor-lamp.jpg"))
    let path = folder.file("half.jpg")
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
    return path
  }

  static let profile = samplesFolder + "/profiles/sora-park.json"

  @Test(
    "card: a photo's hint is its image error's (damaged, too large, not an image), no file left",
    arguments: [
      (
        "text.jpg", Array("just some words\n".utf8), "image.unsupportedType",
        "convert the image to one of those formats"
      ),
      (
        "huge.png", HostileDocuments.pngHeader(width: 20_000, height: 20_000), "image.tooLarge",
        "scale the image down"
      ),
      (
        "cut.png", Array(HostileDocuments.pngHeader(width: 10, height: 10).prefix(30)),
        "image.damaged", "export the image again"
      ),
    ])
  func cardPhotoHints(name: String, bytes: [UInt8], cause: String, hint: String) async throws {
    let folder = TemporaryFolder()
    let photo = folder.file(name)
    try Data(bytes).write(to: URL(fileURLWithPath: photo))
    let output = folder.file("c.pdf")
    let run = await imprint(["card", Self.profile, "--photo", photo, "-o", output, "-v"])
    #expect(run.code == 1)
    #expect(run.stderr.hasPrefix("error: photo '\(photo)' cannot be used ("), "\(run.stderr)")
    #expect(run.stderr.contains("\nhint: \(hint)\n"), "\(run.stderr)")
    #expect(run.stderr.contains("  cause: \(cause): "), "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("card: a truncated photo is card.photo caused by image.damaged; plain output unchanged")
  func cardPhotoChain() async throws {
    let folder = TemporaryFolder()
    let photo = try Self.truncatedPhoto(in: folder)
    let image =
      "image '\(photo)' is damaged or truncated (libjpeg: Premature end of JPEG file)"
    let arguments = ["card", Self.profile, "--photo", photo, "-o", folder.file("c.pdf")]
    let plain = await imprint(arguments)
    #expect(plain.code == 1)
    // Today's output, byte for byte.
    #expect(
      plain.stderr
        == "error: photo '\(photo)' cannot be used (\(image))\nhint: export the image again\n")
    let verbose = await imprint(arguments + ["--verbose"])
    #expect(verbose.code == 1)
    #expect(verbose.stderr == plain.stderr + "  cause: image.damaged: \(image)\n")
    #expect(!FileManager.default.fileExists(atPath: folder.file("c.pdf")))
    // --json: the same error with a "causes" list under --verbose only.
    let json = await imprint(arguments + ["--json"])
    let verboseJSON = await imprint(arguments + ["--json", "-v"])
    #expect(!json.stdout.contains("causes") && json.stdout.contains("card.photo"))
    struct Document: Decodable {
      struct Card: Decodable { var error: ErrorRecord? }
      var cards: [Card]
    }
    let record = try #require(
      try JSONDecoder().decode(Document.self, from: Data(verboseJSON.stdout.utf8)).cards.first?
        .error)
    #expect(record.code == "card.photo")
    #expect(record.causes?.map(\.code) == ["image.damaged"])
    #expect(record.causes?.first?.message == image)
    // The library keeps the image's error itself, not its text.
    let error = CardError.photo(
      source: photo, reason: image, cause: .damaged(source: photo, reason: "x"))
    #expect((error.underlying as? ImageError)?.code == "image.damaged")
  }

  @Test("batch: a card job's causes go into results.jsonl under --verbose only")
  func batchPhotoChain() async throws {
    let folder = TemporaryFolder()
    let photo = try Self.truncatedPhoto(in: folder)
    let manifest = folder.file("m.jsonl")
    let line = #"{"id":"a","kind":"card","profile":"\#(Self.profile)","photo":"\#(photo)"}"#
    #expect(FileManager.default.createFile(atPath: manifest, contents: Data((line + "\n").utf8)))
    func result(_ extra: [String], _ name: String) async throws -> (Run, String) {
      let run = await imprint(["batch", manifest, "-o", folder.file(name), "-q"] + extra)
      return (
        run, try String(contentsOfFile: folder.file(name + "/results.jsonl"), encoding: .utf8)
      )
    }
    let (plain, plainResults) = try await result([], "plain")
    let (verbose, verboseResults) = try await result(["--verbose"], "verbose")
    #expect(plain.code == 1 && verbose.code == 1)
    #expect(plain.stderr.isEmpty && verbose.stderr.isEmpty)
    #expect(plainResults.contains(#""code":"card.photo""#) && !plainResults.contains("causes"))
    let record = try JSONDecoder().decode(
      JobRecord.self, from: Data(verboseResults.split(separator: "\n")[0].utf8))
    #expect(record.status == "failed" && record.error?.code == "card.photo")
    #expect(record.error?.causes?.map(\.code) == ["image.damaged"])
    // Without the causes, the verbose run's record is the plain one's (but for timings).
    let plainRecord = try JSONDecoder().decode(
      JobRecord.self, from: Data(plainResults.split(separator: "\n")[0].utf8))
    var stripped = record.error
    stripped?.causes = nil
    #expect(stripped == plainRecord.error)
  }

  /// The part of a results line these tests read.
  struct JobRecord: Decodable {
    var status: String
    var error: ErrorRecord?
  }

  @Test(
    "thumb: a write the worker cannot finish keeps its errno across the process boundary",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
  func thumbWorkerChain() throws {
    let folder = TemporaryFolder()
    let output = folder.file("t.png")
    let arguments = [
      "--fsize=2000", Self.binary, "thumb", fixturesFolder + "/Documents/mixed.pdf", output,
      "--size", "512",
    ]
    let plain = try runTool("prlimit", arguments)
    let expected =
      "error: cannot write '\(output)' (\(String(cString: strerror(EFBIG))))\n"
      + "hint: the file is larger than this process may write (ulimit -f) or the file system holds\n"
    #expect(plain.status == 1 && plain.stderr == expected, "\(plain.stderr)")
    let verbose = try runTool("prlimit", arguments + ["-v"])
    #expect(verbose.status == 1)
    #expect(
      verbose.stderr == expected + "  cause: system.EFBIG: \(String(cString: strerror(EFBIG)))\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  @Test("card: a profile that is not JSON is profile.notJSON caused by the JSON reader's error")
  func profileChain() async throws {
    let folder = TemporaryFolder()
    let profile = folder.file("p.json")
    #expect(FileManager.default.createFile(atPath: profile, contents: Data(#"{"name": }"#.utf8)))
    let arguments = ["card", profile, "-o", folder.file("c.pdf")]
    let plain = await imprint(arguments)
    let verbose = await imprint(arguments + ["-v"])
    #expect(plain.code == 1 && verbose.code == 1)
    #expect(!plain.stderr.contains("cause:"))
    let extra = verbose.stderr.dropFirst(plain.stderr.count)
    #expect(verbose.stderr.hasPrefix(plain.stderr))
    #expect(extra.hasPrefix("  cause: json.syntax: '\(profile)' line 1, column 10: "), "\(extra)")
    #expect(extra.split(separator: "\n").count == 1)
  }

  @Test(
    "batch merge: an over-long result line is batch.resultUnreadable caused by file.lineTooLong")
  func mergeChain() async throws {
    let folder = TemporaryFolder()
    let manifest = folder.file("m.jsonl")
    let lines = (0..<4).map { #"{"id":"q\#($0)","kind":"qr","payload":"p\#($0)"}"# }
    #expect(
      FileManager.default.createFile(
        atPath: manifest, contents: Data((lines.joined(separator: "\n") + "\n").utf8)))
    for variant in ["plain", "verbose"] {
      let shared = folder.file(variant)
      for index in 0..<2 {
        let run = await imprint(["batch", manifest, "-o", shared, "--shard", "\(index)/2", "-q"])
        #expect(run.code == 0, "\(run.stderr)")
      }
      let file = shared + "/results-1-of-2.jsonl"
      var results = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
      results[0] = Substring(String(repeating: "x", count: 1_100_000))
      #expect(
        FileManager.default.createFile(
          atPath: file, contents: Data((results.joined(separator: "\n") + "\n").utf8)))
    }
    let plain = await imprint(["batch", "merge", manifest, "-o", folder.file("plain"), "-q"])
    let verbose = await imprint([
      "batch", "merge", manifest, "-o", folder.file("verbose"), "-q", "-v",
    ])
    #expect(plain.code == 1 && verbose.code == 1)
    let plainResults = try String(
      contentsOfFile: folder.file("plain/results.jsonl"), encoding: .utf8)
    let verboseResults = try String(
      contentsOfFile: folder.file("verbose/results.jsonl"), encoding: .utf8)
    #expect(plainResults.contains("batch.resultUnreadable") && !plainResults.contains("causes"))
    let failed = try verboseResults.split(separator: "\n").map {
      try JSONDecoder().decode(JobRecord.self, from: Data($0.utf8))
    }.filter { $0.status == "failed" }
    #expect(failed.count == 1)
    #expect(failed.first?.error?.code == "batch.resultUnreadable")
    #expect(failed.first?.error?.causes?.map(\.code) == ["file.lineTooLong"])
  }

  @Test("libqrencode's errno is the cause of qr.encode")
  func qrEncodeCause() {
    let error = QRError.encode(reason: String(cString: strerror(ENOMEM)), errno: ENOMEM)
    #expect(
      error.message
        == "cannot encode the QR symbol (libqrencode: \(String(cString: strerror(ENOMEM))))")
    #expect((error.underlying as? SystemError)?.code == "system.ENOMEM")
    #expect(QRError.encode(reason: "empty payload").underlying == nil)
  }
}
