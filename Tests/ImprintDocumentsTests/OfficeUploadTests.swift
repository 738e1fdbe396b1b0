// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: Office uploads through the sandbox, the quoter and the preparer: one
// conversion, one truth. inspect, the thumbnails, the quote and the print-ready file of an
// upload all come from the same converted PDF (named by its SHA-256), checked from outside
// with poppler; HWP and HWPX are refused with a hint; the cache is bounded.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintPricing
import ImprintPrinting
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

/// A sandbox whose Office reader keeps its PDFs in `folder`'s own cache.
private func officeSandbox(_ folder: TemporaryFolder, workers: Int = 2) throws
  -> (DocumentSandbox, ConversionCache)
{
  let cache = try ConversionCache(folder: folder.file("cache"))
  let sandbox = DocumentSandbox(
    executable: worker, workers: workers, office: OfficeReader(cache: cache))
  return (sandbox, cache)
}

private func sha256(_ path: String) throws -> String {
  SHA256.hash(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    .map { String(format: "%02x", $0) }.joined()
}

@Suite(
  "Office uploads: inspected, thumbnailed, quoted and prepared from one conversion", .serialized,
  .tags(.slow), .skippedWhenQuick)
struct OfficeUploadTests {
  @Test("inspect reports an Office file's type, its converted pages and the PDF they came from")
  func inspect() async throws {
    let folder = TemporaryFolder()
    let (sandbox, cache) = try officeSandbox(folder)
    defer { sandbox.stopIdleWorkers() }
    // Named to mislead: the type comes from the bytes.
    let docx = try officeFixture("docx-pages", ["4"], in: folder)
    let renamed = folder.file("report.pdf")
    try FileManager.default.moveItem(atPath: docx, toPath: renamed)
    let info = try await sandbox.inspect(path: renamed, file: "report.pdf")
    #expect(info.type == .docx)
    #expect(info.pages == 4)
    let conversion = try #require(info.conversion)
    #expect(conversion.pages == 4 && conversion.application == "writer")
    // The cache holds exactly that PDF, by its digest; poppler counts the same pages and sizes.
    let entries = try FileManager.default.contentsOfDirectory(atPath: cache.folder)
      .filter { $0.hasSuffix(".pdf") }
    #expect(entries.count == 1)
    let pdf = cache.folder + "/" + entries[0]
    #expect(try sha256(pdf) == conversion.pdfSHA256)
    let poppler = try pdfInfo(pdf)
    #expect(poppler["Pages"] == "4")
    // python-docx's default section is US Letter.
    #expect(info.pageSizes.allSatisfy { $0.paper == .letter })
    // A second reading converts nothing: the entry is reused as it is.
    let again = try await sandbox.inspect(path: renamed, file: "report.pdf")
    #expect(again.conversion == conversion)
    #expect(try FileManager.default.contentsOfDirectory(atPath: cache.folder).count == 2)
  }

  @Test("thumbnails of a presentation are the converted PDF's pages as pdftoppm draws them")
  func thumbnails() async throws {
    let folder = TemporaryFolder()
    let (sandbox, cache) = try officeSandbox(folder)
    defer { sandbox.stopIdleWorkers() }
    let pptx = try officeFixture("pptx-hidden", ["4", "2"], in: folder)
    let written = try await sandbox.thumbnails(
      path: pptx, file: "deck.pptx", pages: "all", size: 200, format: .png,
      output: folder.file("deck.png"))
    #expect(written.count == 3)
    let pdf = try #require(
      try FileManager.default.contentsOfDirectory(atPath: cache.folder)
        .first { $0.hasSuffix(".pdf") })
    for (index, thumbnail) in written.enumerated() {
      let result = try runTool(
        "pdftoppm",
        [
          "-f", "\(index + 1)", "-l", "\(index + 1)", "-scale-to", "200", "-singlefile",
          cache.folder + "/" + pdf, folder.file("splash-\(index + 1)"),
        ])
      #expect(result.status == 0)
      let ppm = [UInt8](
        try Data(contentsOf: URL(fileURLWithPath: folder.file("splash-\(index + 1).ppm"))))
      let (width, height, start) = try #require(ppmHeader(ppm))
      let png = try ImageDecoder.decode(
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: thumbnail))), source: thumbnail)
      #expect(abs(png.width - width) <= 1 && abs(png.height - height) <= 1)
      var differing = 0
      for y in 0..<min(height, png.height) {
        for x in 0..<min(width, png.width) {
          let ours = y * png.width * 4 + x * 4
          let theirs = start + (y * width + x) * 3
          for channel in 0..<3
          where abs(Int(png.pixels[ours + 2 - channel]) - Int(ppm[theirs + channel])) > 8 {
            differing += 1
          }
        }
      }
      #expect(differing * 200 < width * height * 3, "page \(index + 1): \(differing) differ")
    }
  }

  @Test("an order of a DOCX, a PPTX and a PDF: the hand-computed quote and print-ready files")
  func quoteAndPrepare() async throws {
    let folder = TemporaryFolder()
    let (sandbox, _) = try officeSandbox(folder)
    defer { sandbox.stopIdleWorkers() }
    try FileManager.default.moveItem(
      atPath: try officeFixture("docx-pages", ["5"], in: folder), toPath: folder.file("a.docx"))
    try FileManager.default.moveItem(
      atPath: try officeFixture("pptx-hidden", ["4", "3"], in: folder),
      toPath: folder.file("b.pptx"))
    try FileManager.default.copyItem(atPath: documents + "mixed.pdf", toPath: folder.file("c.pdf"))
    let prices = #"""
      {"schemaVersion":1,"store":"Copy Corner","version":"v1","currency":"USD",
       "rates":{"default":{"mono":{"simplex":10,"duplex":8}}},
       "paper":{"A4":{"plain":2}},"defaults":{"paper":"A4"}}
      """#
    try Data(prices.utf8).write(to: URL(fileURLWithPath: folder.file("prices.json")))
    let order = #"""
      {"schemaVersion":1,"files":[{"path":"a.docx","copies":2},{"path":"b.pptx"},
       {"path":"c.pdf"}]}
      """#
    try Data(order.utf8).write(to: URL(fileURLWithPath: folder.file("order.json")))
    let quoter = OrderQuoter(sandbox: sandbox, jobs: 2)
    let quoted = try await quoter.quote(
      order: folder.file("order.json"), prices: folder.file("prices.json"))
    // By hand: a.docx 5 pages x 2 copies = 10 impressions at 10 = 100, 10 sheets at 2 = 20;
    // b.pptx 3 slides (one hidden) = 30 + 6; c.pdf 3 pages = 30 + 6. Total 192 cents.
    let lines = quoted.quote.files
    #expect(lines.map(\.pages) == [5, 3, 3])
    #expect(lines.map(\.subtotal.minor) == [120, 36, 36])
    #expect(quoted.quote.total.minor == 192)
    #expect(lines[0].pagesFrom == "conversion" && lines[1].pagesFrom == "conversion")
    #expect(lines[2].pagesFrom == nil && lines[2].pdfSHA256 == nil)
    #expect(lines[0].pdfSHA256 == quoted.files[0].info.conversion?.pdfSHA256)
    try FileManager.default.createDirectory(
      atPath: folder.file("out"), withIntermediateDirectories: true)
    let prepared = try await OrderPreparer(quoter: quoter).prepare(
      quoted, output: folder.file("out"))
    #expect(prepared.files.count == 3)
    for (file, pages) in zip(prepared.files, [5, 3, 3]) {
      #expect(try pdfInfo(file.document)["Pages"] == "\(pages)", "\(file.document)")
    }
    let text = try runTool("pdftotext", [prepared.files[0].document, "-"]).stdout
    for page in 1...5 { #expect(text.contains("Page \(page) ")) }
    let slides = try runTool("pdftotext", [prepared.files[1].document, "-"]).stdout
    #expect(slides.contains("Slide 4") && !slides.contains("Slide 3"))
  }

  @Test("every Office type converts: the old binary formats, OpenDocument and RTF")
  func everyType() async throws {
    let folder = TemporaryFolder()
    let (sandbox, _) = try officeSandbox(folder, workers: 1)
    defer { sandbox.stopIdleWorkers() }
    let sources = [
      "docx": try officeFixture("docx-pages", ["3"], in: folder),
      "pptx": try officeFixture("pptx-hidden", ["4", "2"], in: folder),
      "xlsx": try officeFixture("xlsx-rows", ["150"], in: folder),
    ]
    var pages: [String: Int] = [:]
    for (type, path) in sources {
      pages[type] = try await sandbox.inspect(path: path, file: "source.\(type)").pages
    }
    #expect(pages["docx"] == 3 && pages["pptx"] == 3)
    // Each made from its source by LibreOffice itself, the way a customer's old file was saved.
    let made: [(source: String, format: String, type: DocumentType, words: String)] = [
      ("docx", "doc", .doc, "Page 3 "), ("docx", "rtf", .rtf, "Page 3 "),
      ("docx", "odt", .odt, "Page 3 "), ("pptx", "ppt", .ppt, "Slide 4"),
      ("pptx", "odp", .odp, "Slide 4"), ("xlsx", "xls", .xls, "row 150"),
      ("xlsx", "ods", .ods, "row 150"),
    ]
    for (source, format, type, words) in made {
      let output = folder.file("made-\(format)")
      let run = try runMeasured(
        [
          "/usr/lib/libreoffice/program/soffice",
          "-env:UserInstallation=file://" + folder.file("soffice-profile"), "--headless",
          "--convert-to", format, "--outdir", output, try #require(sources[source]),
        ], timeout: 120)
      try #require(run.status == 0, "soffice --convert-to \(format): \(run.stderr)")
      let file = try #require(
        try FileManager.default.contentsOfDirectory(atPath: output).first)
      // Named .bin: the type is read from the bytes.
      let path = folder.file("upload-\(format).bin")
      try FileManager.default.moveItem(atPath: output + "/" + file, toPath: path)
      let info = try await sandbox.inspect(path: path, file: "upload.bin")
      #expect(info.type == type, "\(format)")
      // The pages LibreOffice itself prints the file on (a spreadsheet saved as ODS takes
      // LibreOffice's default page style, and so its own page count).
      let plain = folder.file("plain-\(format)")
      let printed = try runMeasured(
        [
          "/usr/lib/libreoffice/program/soffice",
          "-env:UserInstallation=file://" + folder.file("soffice-profile"), "--headless",
          "--convert-to", "pdf", "--outdir", plain, path,
        ], timeout: 120)
      try #require(printed.status == 0, "\(printed.stderr)")
      let expected = try pdfInfo(plain + "/upload-\(format).pdf")["Pages"]
      #expect("\(info.pages)" == expected, "\(format): \(info.pages) pages")
      if source != "xlsx" { #expect(info.pages == pages[source], "\(format)") }
      let written = try await sandbox.thumbnails(
        path: path, file: "upload.bin", size: 64, format: .png,
        output: folder.file("\(format).png"))
      #expect(written.count == 1)
      let converted = try #require(
        try await sandbox.office.convert(path: path, file: "upload.bin", password: nil))
      let text = try runTool("pdftotext", [converted.pdf, "-"]).stdout
      #expect(text.contains(words), "\(format): \(text.prefix(200))")
    }
  }

  @Test(
    "HWP and HWPX are refused with a hint to export a PDF", arguments: ["hwp", "hwpx"])
  func hangul(kind: String) async throws {
    let folder = TemporaryFolder()
    let (sandbox, _) = try officeSandbox(folder)
    defer { sandbox.stopIdleWorkers() }
    let path = folder.file("report.\(kind)")
    if kind == "hwp" {
      // A HWP 5 file's Compound File: its FileHeader signature and the summary stream.
      let header = Array("HWP Document File".utf8)
      let bytes = CompoundFileBytes.make([
        ("FileHeader", header + Array(repeating: 0, count: 256 - header.count)),
        ("\u{5}HwpSummaryInformation", Array(repeating: 0x11, count: 300)),
      ])
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    } else {
      // An HWPX package as Hancom writes it: the mimetype first, stored.
      let script = pythonFixture("hwpx_package.py")
      #expect(try runTool("python3", ["-c", script, path]).status == 0)
    }
    let error = await #expect(throws: DocumentError.self) {
      try await sandbox.inspect(path: path, file: "report.\(kind)")
    }
    #expect(error?.code == "document.unsupportedType")
    #expect(error?.message.contains("Hangul") == true)
    #expect(error?.hint?.contains("Hancom Office") == true)
  }

  @Test("the cache keeps at most its size, the newest entry always")
  func bounded() async throws {
    let folder = TemporaryFolder()
    let cache = try ConversionCache(folder: folder.file("cache"), maximumBytes: 200_000)
    let reader = OfficeReader(cache: cache)
    defer { reader.stop() }
    var converted: [ConvertedUpload] = []
    // Each converted PDF is some 20-30 KB: 20 of them pass 200 KB.
    for pages in 1...20 {
      let docx = try officeFixture("docx-pages", ["\(pages)"], in: folder)
      converted.append(
        try #require(try await reader.convert(path: docx, file: "f.docx", password: nil)))
    }
    var total = 0
    let names = try FileManager.default.contentsOfDirectory(atPath: cache.folder)
    for name in names where name.hasSuffix(".pdf") {
      total +=
        (try FileManager.default.attributesOfItem(atPath: cache.folder + "/" + name)[.size]
          as? Int) ?? 0
    }
    #expect(total <= 200_000, "\(total) bytes")
    #expect(names.filter { $0.hasSuffix(".pdf") }.count < 20)
    // The newest is kept, the oldest went first; every PDF and record come in pairs.
    #expect(FileManager.default.fileExists(atPath: converted[19].pdf))
    #expect(!FileManager.default.fileExists(atPath: converted[0].pdf))
    #expect(
      Set(names.filter { $0.hasSuffix(".pdf") }.map { $0.dropLast(4) })
        == Set(names.filter { $0.hasSuffix(".json") }.map { $0.dropLast(5) }))
  }
}
