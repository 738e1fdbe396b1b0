// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: Office documents converted by LibreOffice in office workers. Files come
// from their real producers (python-docx, python-pptx, openpyxl, odfpy, msoffcrypto-tool:
// Tests/Fixtures/Office/make-office.py); the PDFs are read back with poppler (pdfinfo,
// pdftotext). Nothing is fetched (a canary server sees no request, where plain soffice fetches
// the same file's linked picture), no macro runs (where LibreOffice with macros allowed runs the
// same file's), the limits end a conversion and the next one works, and so does an office
// killed between files.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

/// One converter for the suite: each office worker takes a second or two to start.
private let converter: OfficeConverter = {
  do {
    return try OfficeConverter()
  } catch {
    preconditionFailure("no scratch folder for the office converter: \(error)")
  }
}()

/// Whether LibreOffice with macros allowed runs the macro of `path` that writes `marker`.
///
/// `soffice --headless FILE` opens the file as a person would who set macro security to low
/// (a profile of its own with MacroSecurityLevel 0). Waits up to a minute for `marker`, then
/// kills that LibreOffice, which would keep the document open.
///
/// Not `soffice --convert-to`: a conversion loads the file hidden and gives no
/// MacroExecutionMode, that is NEVER_EXECUTE, so it runs no document macro whatever the profile
/// says; and a hidden load fires no document event (OnLoad included) even with
/// ALWAYS_EXECUTE_NO_WARN (both seen with LibreOffice 7.4).
func macroRuns(opening path: String, marker: String, in folder: TemporaryFolder) throws -> Bool {
  let profile = folder.file("macros-allowed")
  try FileManager.default.createDirectory(
    atPath: profile + "/user", withIntermediateDirectories: true)
  try Data(lowMacroSecurity.utf8).write(
    to: URL(fileURLWithPath: profile + "/user/registrymodifications.xcu"))
  let office = try spawnInGroup(
    [
      "/usr/lib/libreoffice/program/soffice", "-env:UserInstallation=file://" + profile,
      "--headless", "--norestore", path,
    ], stdin: "/dev/null", stdout: folder.file("macros-allowed.out"),
    stderr: folder.file("macros-allowed.err"))
  defer {
    kill(-office, SIGKILL)
    var status: Int32 = 0
    while waitpid(office, &status, 0) < 0 && errno == EINTR {}
  }
  let deadline = Date().addingTimeInterval(Sanitizer.seconds(60.0))
  while Date() < deadline {
    if FileManager.default.fileExists(atPath: marker) { return true }
    usleep(50_000)
  }
  return false
}

/// A LibreOffice profile's settings with macro security low: every macro runs, unasked.
private let lowMacroSecurity = """
  <?xml version="1.0" encoding="UTF-8"?>
  <oor:items xmlns:oor="http://openoffice.org/2001/registry">
  <item oor:path="/org.openoffice.Office.Common/Security/Scripting">\
  <prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>0</value></prop></item>
  </oor:items>

  """

/// The `soffice.bin` processes whose command line holds `text` (from /proc/PID/cmdline).
func offices(mentioning text: String) -> [pid_t] {
  let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  return names.compactMap { pid_t($0) }.filter { pid in
    guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else {
      return false
    }
    let arguments = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    return arguments.first?.hasSuffix("/soffice.bin") == true
      && arguments.contains { $0.contains(text) }
  }
}

/// Runs the office worker `script` on `profile` with `requests` (one JSON line each) as its
/// standard input, from a shell whose parent is runMeasured's measuring parent (`--parent
/// $PPID`: the worker serves only the process that started it).
private func runOfficeWorker(
  _ script: String, profile: String, requests: [String], in folder: TemporaryFolder
) throws -> MeasuredRun {
  try Data((requests.joined(separator: "\n") + "\n").utf8).write(
    to: URL(fileURLWithPath: folder.file("requests")))
  return try runMeasured(
    [
      "/bin/sh", "-c", #"exec /usr/bin/python3 -I "$0" --profile "$1" --parent $PPID"#,
      script, profile,
    ], stdinPath: folder.file("requests"), timeout: 120)
}

@Suite("Office documents converted by LibreOffice", .serialized, .tags(.slow), .skippedWhenQuick)
struct OfficeConverterTests {
  /// Converts `path` and returns the conversion and the PDF's text (pdftotext).
  func convert(_ path: String, password: String? = nil, in folder: TemporaryFolder) throws
    -> (OfficeConversion, String, String)
  {
    let output = folder.file("converted-\(UUID().uuidString.prefix(8)).pdf")
    let conversion = try converter.convert(
      path, file: (path as NSString).lastPathComponent, password: password, to: output)
    let text = try runTool("pdftotext", ["-layout", output, "-"])
    #expect(text.status == 0)
    #expect(try pdfInfo(output)["Pages"] == "\(conversion.pages)")
    return (conversion, text.stdout, output)
  }

  @Test("a Word document's pages, words and scripts survive the conversion")
  func word() throws {
    let folder = TemporaryFolder()
    let (conversion, text, _) = try convert(
      try officeFixture("docx-pages", ["5"], in: folder), in: folder)
    #expect(conversion.application == "writer")
    #expect(conversion.pages == 5)
    for page in 1...5 { #expect(text.contains("Page \(page) ")) }
    #expect(text.contains("안녕하세요"))
    // pdftotext may give right-to-left text in either order.
    #expect(text.contains("مرحبا") || text.contains("ابحرم"), "\(text)")
  }

  @Test("a hidden slide and the speaker notes do not print")
  func presentation() throws {
    let folder = TemporaryFolder()
    let (conversion, text, _) = try convert(
      try officeFixture("pptx-hidden", ["4", "3"], in: folder), in: folder)
    #expect(conversion.application == "impress")
    #expect(conversion.pages == 3)
    for slide in [1, 2, 4] { #expect(text.contains("Slide \(slide)")) }
    #expect(!text.contains("Slide 3"))
    #expect(!text.contains("speaker note"))
  }

  @Test("a sheet prints its print area, not the cells outside it")
  func printArea() throws {
    let folder = TemporaryFolder()
    let (conversion, text, _) = try convert(
      try officeFixture("xlsx-print-area", ["150"], in: folder), in: folder)
    #expect(conversion.pages == 1)
    #expect(text.contains("row 10"))
    #expect(!text.contains("row 11") && !text.contains("row 150"))
  }

  @Test("a deck without slides has no pages: nothing to print or price")
  func emptyDeck() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("pptx-empty", in: folder)
    #expect {
      _ = try convert(path, in: folder)
    } throws: { error in
      guard case .noPages = error as? DocumentError else { return false }
      return true
    }
    // The same office converts the next deck.
    let (next, _, _) = try convert(
      try officeFixture("pptx-hidden", ["2", "1"], in: folder), in: folder)
    #expect(next.pages == 1)
  }

  @Test("a spreadsheet and an OpenDocument text convert")
  func sheetAndODF() throws {
    let folder = TemporaryFolder()
    let (sheet, sheetText, _) = try convert(
      try officeFixture("xlsx-rows", ["150"], in: folder), in: folder)
    #expect(sheet.application == "calc")
    #expect(sheet.pages >= 2)
    #expect(sheetText.contains("row 1") && sheetText.contains("row 150"))
    let (odt, odtText, _) = try convert(
      try officeFixture("odt-pages", ["3"], in: folder), in: folder)
    #expect(odt.application == "writer")
    #expect(odt.pages == 3)
    #expect(odtText.contains("Page 3 imprint"))
  }

  @Test("the same file converts to the same bytes, named by their SHA-256")
  func deterministic() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("docx-pages", ["2"], in: folder)
    let (first, _, firstPDF) = try convert(path, in: folder)
    let (second, _, secondPDF) = try convert(path, in: folder)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: firstPDF))
    #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: secondPDF))))
    #expect(first == second)
    let digest = SHA256.hash(Array(bytes)).map { String(format: "%02x", $0) }.joined()
    #expect(first.pdfSHA256 == digest)
    // No date is left in the file: the bytes do not say when they were made.
    #expect(try pdfInfo(firstPDF)["CreationDate"] == nil)
  }

  @Test("a password-protected document: refused without its password, converted with it")
  func encrypted() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("docx-encrypted", ["s3cret"], in: folder)
    for (password, given) in [(nil, false), ("wrong", true)] as [(String?, Bool)] {
      #expect {
        _ = try convert(path, password: password, in: folder)
      } throws: { error in
        guard case .officeEncrypted(_, let passwordGiven) = error as? DocumentError else {
          return false
        }
        return passwordGiven == given && (error as? DocumentError)?.code == "document.encrypted"
      }
    }
    let (conversion, text, _) = try convert(path, password: "s3cret", in: folder)
    #expect(conversion.pages == 2)
    #expect(text.contains("Page 2 "))
  }

  @Test("a linked picture is not fetched, where soffice --convert-to fetches it")
  func nothingFetched() throws {
    let folder = TemporaryFolder()
    let canary = try PhotoServer(folder: folder, photo: fixturesFolder + "/Images/rotated.jpg")
    defer { canary.stop() }
    let path = try officeFixture("docx-linked", [canary.url("/photo.jpg")], in: folder)
    let (conversion, _, _) = try convert(path, in: folder)
    #expect(conversion.pages == 1)
    #expect(canary.requests.isEmpty, "\(canary.requests)")
    // The same file through plain LibreOffice: the picture is fetched, so the file does link it.
    let plain = try runTool(
      "/usr/lib/libreoffice/program/soffice",
      [
        "-env:UserInstallation=file://" + folder.file("plain-profile"), "--headless",
        "--convert-to", "pdf", "--outdir", folder.file("plain"), path,
      ])
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(canary.requests.contains("/photo.jpg"), "\(canary.requests)")
  }

  @Test("a document macro bound to the load event does not run, where LibreOffice runs it")
  func noMacro() throws {
    let folder = TemporaryFolder()
    let marker = folder.file("macro-ran")
    let path = try officeFixture("odt-macro", [marker], in: folder)
    let (conversion, text, _) = try convert(path, in: folder)
    #expect(conversion.pages == 1)
    #expect(text.contains("A document with a macro."))
    #expect(!FileManager.default.fileExists(atPath: marker))
    // The same file opened by LibreOffice with macros allowed: the macro runs, so the file does
    // bind one to its load event.
    #expect(try macroRuns(opening: path, marker: marker, in: folder))
  }

  @Test("a cell calling a document macro does not run it, where LibreOffice runs it")
  func noMacroInCell() throws {
    // A hidden load, as the worker's, fires no document event, but Calc calls a cell's macro
    // function while it computes the cell: only the worker's macro settings stop this one.
    let folder = TemporaryFolder()
    let marker = folder.file("macro-ran")
    let path = try officeFixture("ods-macro", [marker], in: folder)
    let (conversion, text, _) = try convert(path, in: folder)
    #expect(conversion.application == "calc")
    #expect(text.contains("A sheet with a macro."))
    // The function's value, had it run.
    #expect(!text.contains("7"), "\(text)")
    #expect(!FileManager.default.fileExists(atPath: marker))
    #expect(try macroRuns(opening: path, marker: marker, in: folder))
  }

  /// `soffice --convert-to FORMAT` of `path` into a folder of its own; the file it made.
  func plainSoffice(_ path: String, to format: String, in folder: TemporaryFolder) throws
    -> String
  {
    let output = folder.file("soffice-\(format)-\(UUID().uuidString.prefix(8))")
    let run = try runMeasured(
      [
        "/usr/lib/libreoffice/program/soffice",
        "-env:UserInstallation=file://" + folder.file("soffice-profile"), "--headless",
        "--convert-to", format, "--outdir", output, path,
      ], timeout: 120)
    try #require(run.status == 0, "soffice --convert-to \(format): \(run.stderr)")
    let made = try #require(try FileManager.default.contentsOfDirectory(atPath: output).first)
    return output + "/" + made
  }

  @Test("fonts Word files name and Debian lacks are drawn with their stand-ins of that style")
  func fontStandIns() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("docx-fonts", in: folder)
    func fonts(_ pdf: String) throws -> Set<String> {
      let listing = try runTool("pdffonts", [pdf]).stdout.split(separator: "\n").dropFirst(2)
      // "ABCDEF+Name ..." -> "Name": the subset's tag dropped.
      return Set(
        listing.compactMap { line in
          line.split(separator: " ").first.map { String($0.split(separator: "+").last ?? $0) }
        })
    }
    let (_, text, pdf) = try convert(path, in: folder)
    let drawn = try fonts(pdf)
    // Verdana: DejaVu Sans; MS Mincho: IPA Mincho; Malgun Gothic: NanumGothic; Batang:
    // NanumMyeongjo; Traditional Arabic: Noto Naskh Arabic.
    for font in [
      "DejaVuSans", "IPAMincho", "NanumGothic", "NanumMyeongjo", "NotoNaskhArabic-Regular",
    ] {
      #expect(drawn.contains(font), "\(drawn)")
    }
    #expect(text.contains("Verdana imprint") && text.contains("바탕 안녕하세요"))
    // Plain LibreOffice picks others for some (its own table, then fontconfig's defaults).
    let plain = try fonts(try plainSoffice(path, to: "pdf", in: folder))
    #expect(
      !plain.contains("NanumMyeongjo") && !plain.contains("NotoNaskhArabic-Regular"), "\(plain)")
  }

  @Test("a Word file's endnotes print after its text on its last page, as Word prints them")
  func endnotes() throws {
    let folder = TemporaryFolder()
    let docx = try officeFixture("docx-endnote", ["3", "endnote imprint"], in: folder)
    // Plain LibreOffice 7.4 gives a Word file's endnotes a page of their own: one page more
    // than Word prints (and than a shop should charge).
    #expect(try pdfInfo(try plainSoffice(docx, to: "pdf", in: folder))["Pages"] == "4")
    // The same Word file as RTF and DOC (saved by LibreOffice), and as LibreOffice's own ODT.
    let rtf = try plainSoffice(docx, to: "rtf", in: folder)
    let doc = try plainSoffice(docx, to: "doc", in: folder)
    let odt = try plainSoffice(docx, to: "odt", in: folder)
    for path in [docx, rtf, doc] {
      let (conversion, _, pdf) = try convert(path, in: folder)
      #expect(conversion.pages == 3, "\(path)")
      let last = try runTool("pdftotext", ["-f", "3", "-l", "3", pdf, "-"]).stdout
      #expect(last.contains("Page 3 ") && last.contains("endnote imprint"), "\(path): \(last)")
      let before = try runTool("pdftotext", ["-f", "1", "-l", "2", pdf, "-"]).stdout
      #expect(!before.contains("endnote imprint"))
    }
    // An OpenDocument file prints as LibreOffice, its producer, lays it out: its endnotes on a
    // page of their own.
    let (own, ownText, _) = try convert(odt, in: folder)
    #expect(own.pages == 4)
    #expect(
      "\(own.pages)" == (try pdfInfo(try plainSoffice(odt, to: "pdf", in: folder))["Pages"]))
    #expect(ownText.contains("endnote imprint"))
  }

  @Test("a Word file with comments converts, the comments left out, and the next file too")
  func comments() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("docx-comment", ["a private remark"], in: folder)
    let (conversion, text, _) = try convert(path, in: folder)
    #expect(conversion.pages == 1 && conversion.application == "writer")
    #expect(text.contains("Commented text"))
    #expect(!text.contains("a private remark"))
    // The office that ended on it is replaced for the next file.
    let (next, nextText, _) = try convert(
      try officeFixture("docx-pages", ["2"], in: folder), in: folder)
    #expect(next.pages == 2 && nextText.contains("Page 2 "))
  }

  @Test("an error the office worker did not foresee is answered, and the worker ends")
  func unforeseen() throws {
    let folder = TemporaryFolder()
    let script = try #require(OfficeConverter.scriptPath)
    let docx = try officeFixture("docx-pages", ["1"], in: folder)
    // A wall time that is a word: the worker reads it as a number and fails. Before, it
    // printed a traceback and exited without an answer; the request after it is not read.
    let requests = [
      #"{"input":"\#(docx)","output":"\#(folder.file("a.pdf"))","seconds":"soon"}"#,
      #"{"input":"\#(docx)","output":"\#(folder.file("b.pdf"))"}"#,
    ]
    let run = try runOfficeWorker(
      script, profile: folder.file("profile"), requests: requests, in: folder)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(!run.stderr.contains("Traceback"), "\(run.stderr)")
    let answers = run.stdout.split(separator: "\n")
    #expect(answers.count == 1, "\(run.stdout)")
    let answer =
      try JSONSerialization.jsonObject(with: Data((answers.first ?? "").utf8)) as? [String: Any]
    #expect(answer?["status"] as? String == "failed")
    #expect(answer?["code"] as? String == "workerFailed")
    #expect(answer?["detail"] as? String == "ValueError")
    #expect(!FileManager.default.fileExists(atPath: folder.file("a.pdf")))
    #expect(!FileManager.default.fileExists(atPath: folder.file("b.pdf")))
    // Its office went with it, and the office's temporary files.
    #expect(offices(mentioning: folder.file("profile")).isEmpty)
    let temporary =
      (try? FileManager.default.contentsOfDirectory(atPath: folder.file("profile/tmp")))
    #expect(temporary?.isEmpty ?? true, "\(String(describing: temporary))")
  }

  @Test("an office that cannot start is answered officeDidNotStart, not a traceback")
  func officeDidNotStart() throws {
    let folder = TemporaryFolder()
    let script = try #require(OfficeConverter.scriptPath)
    // The profile's folder cannot be made: a file stands where its parent should be.
    try Data("a file".utf8).write(to: URL(fileURLWithPath: folder.file("taken")))
    let docx = try officeFixture("docx-pages", ["1"], in: folder)
    let run = try runOfficeWorker(
      script, profile: folder.file("taken/profile"),
      requests: [#"{"input":"\#(docx)","output":"\#(folder.file("a.pdf"))"}"#], in: folder)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(!run.stderr.contains("Traceback"), "\(run.stderr)")
    let answer =
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    #expect(answer?["code"] as? String == "officeDidNotStart", "\(run.stdout)")
    #expect(answer?["detail"] as? String == "NotADirectoryError", "\(run.stdout)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("a.pdf")))
  }

  @Test("past a limit the conversion ends with its error, and the next file converts")
  func limits() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("docx-pages", ["5"], in: folder)
    let small = try OfficeConverter(limits: OfficeLimits(memoryMB: 64))
    defer { small.stop() }
    #expect {
      try small.convert(path, file: "five.docx", to: folder.file("small.pdf"))
    } throws: { error in
      (error as? DocumentError)?.code == "document.memoryLimit"
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("small.pdf")))
    // The worker killed at the limit is replaced: the next file gets its own verdict.
    #expect {
      try small.convert(path, file: "five.docx", to: folder.file("small.pdf"))
    } throws: { error in
      (error as? DocumentError)?.code == "document.memoryLimit"
    }
    let few = try OfficeConverter(limits: OfficeLimits(maximumPages: 3))
    defer { few.stop() }
    #expect {
      try few.convert(path, file: "five.docx", to: folder.file("few.pdf"))
    } throws: { error in
      guard case .tooManyPages(_, 5, 3) = error as? DocumentError else { return false }
      return true
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("few.pdf")))
    // The same worker slot converts the next file within its limits.
    let two = try officeFixture("docx-pages", ["2"], in: folder)
    #expect(try few.convert(two, file: "two.docx", to: folder.file("two.pdf")).pages == 2)
  }

  @Test("past the wall time the conversion ends with document.timeout, and the next file converts")
  func wallTime() throws {
    let folder = TemporaryFolder()
    // LibreOffice lays out 5000 pages in some 9 s here (4000: 6 s; one page: 0.2 s).
    let slow = try officeFixture("odt-pages", ["5000"], in: folder)
    let one = try officeFixture("odt-pages", ["1"], in: folder)
    // Three seconds: a page fits in them even on a loaded machine (one second did not, once,
    // with the whole suite running), 5000 pages never do.
    let quick = try OfficeConverter(limits: OfficeLimits(seconds: 3))
    defer { quick.stop() }
    // A page fits in the limit (and the office is started, which the limit does not count).
    #expect(try quick.convert(one, file: "one.odt", to: folder.file("one.pdf")).pages == 1)
    let started = Date()
    #expect {
      try quick.convert(slow, file: "slow.odt", to: folder.file("slow.pdf"))
    } throws: { error in
      guard case .timeout(let file, let seconds) = error as? DocumentError else { return false }
      return file == "slow.odt" && seconds == 3
    }
    // Ended by the worker's watchdog at the limit, not by the converter's own at 93 s.
    #expect(Date().timeIntervalSince(started) < Sanitizer.seconds(30.0))
    #expect(!FileManager.default.fileExists(atPath: folder.file("slow.pdf")))
    // The killed office's worker is replaced: the next file converts.
    #expect(try quick.convert(one, file: "one.odt", to: folder.file("again.pdf")).pages == 1)
  }

  @Test(
    "an office killed between files: the next file converts from the command line, then a new office"
  )
  func officeKilled() throws {
    let folder = TemporaryFolder()
    let path = try officeFixture("docx-pages", ["2"], in: folder)
    let own = try OfficeConverter()
    defer { own.stop() }
    #expect(try own.convert(path, file: "two.docx", to: folder.file("first.pdf")).pages == 2)
    // The converter's office: the one soffice.bin whose profile is in its scratch folder.
    let scratch = (own.scratchFolder as NSString).lastPathComponent
    let running = offices(mentioning: scratch)
    try #require(running.count == 1, "\(running)")
    let office = running[0]
    kill(office, SIGKILL)
    // Gone or a zombie before the next request, so that the request meets a dead office.
    let deadline = Date().addingTimeInterval(10)
    while ProcessTree.state(of: office).map({ $0 != "Z" }) == true, Date() < deadline {
      usleep(10_000)
    }
    // The file that meets the dead office still converts: once more, from the command line
    // (a file whose loading ends the office, a Word file with comments, needs that way), and
    // the worker ends after it.
    #expect(try own.convert(path, file: "two.docx", to: folder.file("second.pdf")).pages == 2)
    // The same bytes as the warm office's: the same export settings, and what changes from run
    // to run (dates, /ID, LibreOffice's /DocChecksum) removed by libqpdf.
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: folder.file("second.pdf")))
        == Data(contentsOf: URL(fileURLWithPath: folder.file("first.pdf"))))
    // A new worker with a new office converts the next file.
    #expect(try own.convert(path, file: "two.docx", to: folder.file("third.pdf")).pages == 2)
    let now = offices(mentioning: scratch)
    #expect(now.count == 1 && !now.contains(office), "\(now)")
  }
}
