// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint convert` as a user runs it: the PDF written, the same bytes for the
// same file, two processes on one cache at once, and its refusals with their exit codes.

import Foundation
import ImprintCore
import ImprintTestSupport
import Synchronization
import Testing

/// Runs `imprint ARGUMENTS` with `XDG_CACHE_HOME` set to `cache`, waiting for it.
private func convert(_ arguments: [String], cache: String, engines: String? = nil) throws -> (
  status: Int32, stdout: String, stderr: String
) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: imprintExecutable)
  process.arguments = ["convert"] + arguments
  var environment = ProcessInfo.processInfo.environment
  environment["XDG_CACHE_HOME"] = cache
  if let engines { environment["IMPRINT_ENGINES"] = engines }
  process.environment = environment
  let out = CloseOnExecPipe()
  let err = CloseOnExecPipe()
  process.standardOutput = out.fileHandleForWriting
  process.standardError = err.fileHandleForWriting
  try process.run()
  out.closeWriteEnd()
  err.closeWriteEnd()
  let stdout = out.fileHandleForReading.readDataToEndOfFile()
  let stderr = err.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (
    process.terminationStatus, String(decoding: stdout, as: UTF8.self),
    String(decoding: stderr, as: UTF8.self)
  )
}

@Suite("imprint convert", .serialized, .tags(.slow), .skippedWhenQuick)
struct ConvertCLITests {
  @Test("without its document engines, an office file is refused naming them; no PDF, exit 1")
  func withoutEngines() throws {
    let folder = TemporaryFolder()
    let docx = try officeFixture("docx-pages", ["2"], in: folder)
    let output = folder.file("out.pdf")
    let missing = folder.file("nowhere/libImprintDocumentEngines.so")
    let result = try convert(
      ["--json", docx, output], cache: folder.file("cache"), engines: missing)
    #expect(result.status == 1, "\(result)")
    #expect(result.stdout.contains("\"document.workerCrashed\""), "\(result.stdout)")
    #expect(result.stdout.contains(missing + ": no such file"), "\(result.stdout)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("two processes convert one file at once on one cache: the same PDF, one entry")
  func concurrent() throws {
    let folder = TemporaryFolder()
    let docx = try officeFixture("docx-pages", ["3"], in: folder)
    let cache = folder.file("cache")
    let results = Mutex<[(status: Int32, stdout: String, stderr: String)?]>([nil, nil])
    DispatchQueue.concurrentPerform(iterations: 2) { index in
      let result = try? convert([docx, folder.file("out-\(index).pdf")], cache: cache)
      results.withLock { $0[index] = result }
    }
    for result in results.withLock({ $0 }) {
      #expect(result?.status == 0, "\(String(describing: result))")
      #expect(result?.stdout.contains("DOCX, 3 pages") == true)
    }
    let first = try Data(contentsOf: URL(fileURLWithPath: folder.file("out-0.pdf")))
    #expect(first == (try Data(contentsOf: URL(fileURLWithPath: folder.file("out-1.pdf")))))
    #expect(try pdfInfo(folder.file("out-0.pdf"))["Pages"] == "3")
    let entries = try FileManager.default.contentsOfDirectory(atPath: cache + "/imprint/converted")
      .filter { !$0.hasPrefix(".") }
    #expect(entries.count == 2, "\(entries)")
    // A third run reads the entry: the same bytes again.
    let third = try convert([docx, folder.file("out-2.pdf")], cache: cache)
    #expect(third.status == 0)
    #expect(first == (try Data(contentsOf: URL(fileURLWithPath: folder.file("out-2.pdf")))))
  }

  @Test("refusals: a PDF, an output that is the input, a wrong command line")
  func refusals() throws {
    let folder = TemporaryFolder()
    let cache = folder.file("cache")
    let pdf = fixturesFolder + "/Documents/mixed.pdf"
    let notOffice = try convert(["--json", "-o", folder.path, pdf], cache: cache)
    #expect(notOffice.status == 1)
    #expect(notOffice.stdout.contains("\"document.notOffice\""), "\(notOffice.stdout)")
    #expect(notOffice.stderr.contains("is not a Word, Excel, PowerPoint"))
    #expect(!FileManager.default.fileExists(atPath: folder.file("mixed.pdf")))
    let docx = try officeFixture("docx-pages", ["1"], in: folder)
    let copy = folder.file("same.pdf")
    try FileManager.default.copyItem(atPath: docx, toPath: copy)
    let itself = try convert([copy, copy], cache: cache)
    #expect(itself.status == 1 && itself.stderr.contains("input"), "\(itself.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: copy)).starts(with: Array("PK".utf8)))
    let usage = try convert([docx, folder.file("out.png")], cache: cache)
    #expect(usage.status == 2 && usage.stderr.contains("INPUT OUTPUT.pdf"))
  }
}
