// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: messages about a refused file never quote its contents; a page box the quick
// reader cannot read is never reported as Letter; a named resource folder that is not there is
// an error, not an empty list.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Messages and resource folders under hostile input", .liveHandlesChecked)
struct MessageReliabilityTests {
  static let secret = "root:x:0:0:SECRET-TOKEN-4711:/root:/bin/bash\n"

  @Test("a text, HTML or unknown file given as a document or a photo is named by kind, not quoted")
  func unsupportedNotQuoted() async throws {
    let folder = TemporaryFolder()
    let cases: [(String, String, String)] = [
      ("passwd.pdf", Self.secret, "it looks like text"),
      ("page.pdf", "<!DOCTYPE html><p>SECRET-TOKEN-4711</p>", "it looks like an HTML page"),
      // (A GIF is an image Imprint reads now: its header is read as one; BMP is not.)
      ("scan.pdf", "BM SECRET-TOKEN-4711", "it looks like a BMP image"),
      ("blob.pdf", "\u{1}\u{2}\u{0}SECRET-TOKEN-4711", "it looks like unrecognised binary data"),
    ]
    for (name, contents, kind) in cases {
      let path = folder.file(name)
      try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
      let inspect = await imprint(["inspect", path])
      #expect(inspect.code == 1, "\(name): \(inspect.stderr)")
      #expect(inspect.stderr.contains("document.unsupportedType") || inspect.stderr.contains(kind))
      #expect(inspect.stderr.contains(kind), "\(name): \(inspect.stderr)")
      let json = await imprint(["inspect", "--json", path])
      for run in [inspect, json] {
        #expect(!run.stderr.contains("SECRET") && !run.stdout.contains("SECRET"), "\(name)")
        #expect(!run.stderr.contains("root:x") && !run.stdout.contains("root:x"), "\(name)")
      }
    }
    // The same file as a card's photo: the image decoder's message names the kind too.
    let photo = folder.file("photo.jpg")
    try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: photo))
    let profile = repositoryRoot + "/assets/samples/profiles/sora-park.json"
    let card = await imprint([
      "card", profile, "--photo", photo, "-o", folder.file("card.pdf"),
    ])
    #expect(card.code == 1, "\(card.stderr)")
    #expect(card.stderr.contains("it looks like text"), "\(card.stderr)")
    #expect(!card.stderr.contains("SECRET") && !card.stderr.contains("root:x"), "\(card.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("card.pdf")))
  }

  @Test(
    "a page box of 400 digits, or one too large, is refused as too large, never read as Letter",
    arguments: [
      "0 0 \(String(repeating: "9", count: 400)) 792",
      "0 0 \(String(repeating: "9", count: 400)).5 792",
      "0 0 612 \(String(repeating: "9", count: 30))",
      "0 0 9000000 842",
    ])
  func hugeBox(box: String) async throws {
    let folder = TemporaryFolder()
    let path = folder.file("big.pdf")
    try Data(HostileDocuments.onePage(box: box)).write(to: URL(fileURLWithPath: path))
    let run = await imprint(["inspect", "--json", path])
    #expect(run.code == 1, "\(run.stdout)")
    #expect(run.stdout.contains("pdf.pageTooLarge"), "\(run.stdout)")
    #expect(!run.stdout.contains("Letter") && !run.stdout.contains("letter"))
    let thumb = await imprint(["thumb", "-o", folder.file("out"), path])
    #expect(thumb.code == 1)
    let thumbnails =
      (try? FileManager.default.contentsOfDirectory(atPath: folder.file("out"))) ?? []
    #expect(thumbnails.isEmpty, "\(thumbnails)")
  }

  @Test("ordinary and malformed boxes read as poppler reads them: pdfinfo agrees")
  func ordinaryBoxes() async throws {
    let folder = TemporaryFolder()
    for (box, expected) in [
      ("0 0 595 842", "A4"), ("0 0 612", "Letter"), ("0 0 842 595", "A4 landscape"),
      ("0 0 /x 842", "Letter"),
    ] {
      let path = folder.file("p.pdf")
      try Data(HostileDocuments.onePage(box: box)).write(to: URL(fileURLWithPath: path))
      let run = await imprint(["inspect", path])
      #expect(run.code == 0 && run.stdout.contains(expected), "\(box): \(run.stdout)\(run.stderr)")
      let info = try runTool("pdfinfo", [path]).stdout
      let popplerSize = expected.hasPrefix("A4") ? "(A4)" : "(letter)"
      #expect(info.contains(popplerSize), "\(box): pdfinfo says \(info)")
    }
  }

  @Test("a templates or assets folder named but missing is an error, never an empty list")
  func missingFolders() async throws {
    let list = await imprint(["templates", "list", "--templates", "/nonexistent/designs"])
    #expect(list.code == 1 && list.stdout.isEmpty)
    #expect(list.stderr.contains("/nonexistent/designs"), "\(list.stderr)")
    let card = await imprint(["card", "--templates", "/nonexistent/designs", "x.json"])
    #expect(card.code == 1)
    #expect(card.stderr.contains("/nonexistent/designs"), "\(card.stderr)")
    // Through the environment, as a deployment sets it.
    let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path
    for (setting, arguments) in [
      ("IMPRINT_TEMPLATES=/nonexistent/designs", ["templates", "list"]),
      ("IMPRINT_ASSETS=/nonexistent/assets", ["demo", "-o", TemporaryFolder().file("demo")]),
    ] {
      let run = try runTool("/usr/bin/env", [setting, binary] + arguments)
      #expect(run.status == 1, "\(setting): \(run.stdout)")
      #expect(run.stderr.contains("/nonexistent/"), "\(setting): \(run.stderr)")
    }
    let good = await imprint(["templates", "list"])
    #expect(good.code == 0 && good.stdout.contains("classic"))
  }
}

@Suite("Full disks: every output checked, a hint that fits the cause", .liveHandlesChecked)
struct FullDiskHintTests {
  static let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path

  @Test(
    "a write past the size limit fails with its path and the size-limit hint, nothing left",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
  func singleAndBulkQR() throws {
    let folder = TemporaryFolder()
    let single = try runTool(
      "prlimit",
      ["--fsize=200", Self.binary, "qr", address, "--size", "60", "-o", folder.file("a.png")])
    #expect(single.status == 1, "\(single.stderr)")
    #expect(
      single.stderr.contains("a.png") && single.stderr.contains("ulimit -f"), "\(single.stderr)")
    let input = folder.file("payloads.txt")
    try Data((1...40).map { "payload number \($0)\n" }.joined().utf8).write(
      to: URL(fileURLWithPath: input))
    let bulk = try runTool(
      "prlimit",
      [
        "--fsize=300", Self.binary, "qr", "--input", input, "--size", "60", "--output-dir",
        folder.file("codes"), "-q",
      ])
    #expect(bulk.status == 1, "\(bulk.stderr)")
    #expect(bulk.stderr.contains("ulimit -f"), "\(bulk.stderr)")
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.file("codes"))
    // Every code that was written is whole (zbarimg reads it); no temporary is left.
    #expect(left.allSatisfy { !$0.hasPrefix(".") }, "\(left)")
    for name in left {
      let decoded = try runTool("zbarimg", ["-q", "--raw", folder.file("codes/\(name)")])
      #expect(decoded.status == 0 && decoded.stdout.hasPrefix("payload number"), "\(name)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("a.png")))
  }

  @Test("the hint follows the errno: full disk, quota, size limit, read-only disk, anything else")
  func hints() {
    func hint(_ code: Int32) -> String? {
      FileError.unwritable(path: "x", reason: .system(code)).hint
    }
    #expect(hint(ENOSPC)?.contains("free space") == true)
    #expect(hint(EDQUOT)?.contains("quota") == true)
    #expect(hint(EFBIG)?.contains("ulimit -f") == true)
    #expect(hint(EROFS)?.contains("read-only") == true)
    #expect(hint(EACCES) == "check that the folder exists and is writable")
    // The errno decides, not the text: the same words without an errno get the general hint,
    // and Imprint's own words with an errno behind them get the errno's.
    let text = String(cString: strerror(ENOSPC))
    #expect(
      FileError.unwritable(path: "x", reason: .init(text)).hint
        == "check that the folder exists and is writable")
    #expect(
      FileError.unwritable(path: "x", reason: .init("cannot create the folder", errno: EROFS))
        .hint?.contains("read-only") == true)
    // The message is unchanged: the system's text in parentheses.
    #expect(
      FileError.unwritable(path: "x", reason: .system(ENOSPC)).message
        == "cannot write 'x' (\(text))")
  }

  @Test("a bulk run's single flush at its end reports a folder it cannot flush")
  func flushChecked() async throws {
    await #expect(throws: FileError.self) {
      try await AtomicFile.withDeferredFlush(syncing: "/nonexistent/folder") { () }
    }
    let folder = TemporaryFolder()
    let value = try await AtomicFile.withDeferredFlush(syncing: folder.path) {
      #expect(AtomicFile.flushEachFile == false)
      return 7
    }
    #expect(value == 7 && AtomicFile.flushEachFile)
  }
}
