// SPDX-License-Identifier: Apache-2.0
// ImprintBatchTests: batch card jobs take photos in HEIF, WebP, TIFF and GIF as `imprint card`
// does; a damaged one fails its job alone.

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintTestSupport
import Testing

@testable import ImprintBatch

@Suite("imprint batch: photos in the formats phones make", .liveHandlesChecked)
struct BatchPhotoFormatTests {
  @Test("card jobs with HEIC, WebP, TIFF and GIF photos are made; a truncated HEIC fails alone")
  func formats() async throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let heic = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: CodecFixtures.heic(orientation: 6))))
    try Data(heic).write(to: URL(fileURLWithPath: folder.file("phone.heic")))
    try Data(CodecFixtures.truncated(heic)).write(
      to: URL(fileURLWithPath: folder.file("cut.heic")))
    let profile = repositoryRoot + "/assets/samples/profiles/harbor-lamp.json"
    let photos = ["phone.heic", "alpha.webp", "three.tif", "anim.gif", "cut.heic"]
    let lines = photos.enumerated().map { index, photo in
      #"{"id":"c\#(index)","kind":"card","profile":"\#(profile)","photo":"\#(photo)"}"#
    }
    let manifest = folder.file("manifest.jsonl")
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(
      to: URL(fileURLWithPath: manifest))
    var options = BatchOptions(
      outputFolder: folder.file("out"), placeholder: try CardInput.shippedPlaceholder())
    options.jobs = 2
    options.sandbox = DocumentSandbox(executable: imprintExecutable, workers: 2)
    let summary = try await BatchRunner.run(manifest: manifest, options: options)
    #expect(summary.ok == 4 && summary.failed == 1)
    let results = try String(contentsOfFile: options.resultsFile, encoding: .utf8)
      .split(separator: "\n").map {
        try JSONDecoder().decode(ItemResult.self, from: Data($0.utf8))
      }
    #expect(results.map(\.status) == [.ok, .ok, .ok, .ok, .failed])
    #expect(results.last?.error?.code == "card.photo")
    #expect(results.last?.error?.message.contains("cut.heic") == true)
    // Each made card embeds its photo (pdfimages lists it beside the QR code's mask).
    for index in 0..<4 {
      let list = try runTool("pdfimages", ["-list", folder.file("out/cards/c\(index).pdf")])
      #expect(list.status == 0 && list.stdout.contains(" rgb "), "c\(index): \(list.stdout)")
    }
  }
}
