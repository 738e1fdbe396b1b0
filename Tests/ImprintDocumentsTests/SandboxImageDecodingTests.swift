// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: a sandbox decodes images (card photos) in its workers exactly as this
// process would, and reports a bad file with the image's own error.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintTestSupport
import Testing

@Suite("DocumentSandbox.decodeImage", .liveHandlesChecked)
struct SandboxImageDecodingTests {
  @Test("every format a worker decodes equals this process's decoding, pixel for pixel")
  func samePixels() async throws {
    let folder = TemporaryFolder()
    try CodecFixtures.make(in: folder)
    let images = fixturesFolder + "/Images"
    let files =
      [
        images + "/rotated.jpg", images + "/progressive.jpg", images + "/cmyk.jpg",
        images + "/alpha.png", CodecFixtures.heic(orientation: 6),
        CodecFixtures.heic(orientation: 7),
        repositoryRoot + "/assets/samples/photos/harbor-lamp.jpg",
      ] + ["alpha.webp", "anim.webp", "three.tif", "anim.gif"].map { folder.file($0) }
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    for file in files {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
      let here = try ImageDecoder.decode(bytes, source: file)
      let there = try await sandbox.decodeImage(bytes, source: file)
      #expect(there == here, "\(file)")
      #expect(there.width > 0 && there.hasAlpha == here.hasAlpha, "\(file)")
    }
  }

  @Test("a bad file is the image's own error (same code as here); other files still decode")
  func badFiles() async throws {
    let sandbox = DocumentSandbox(executable: worker, workers: 1)
    let heic = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: CodecFixtures.heic(orientation: 1))))
    let png = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: fixturesFolder + "/Images/alpha.png")))
    // A 20 000 x 20 000 PNG header: refused from the header, in the worker too.
    var huge = png
    for (offset, value) in [(16, 20_000), (20, 20_000)] {
      for index in 0..<4 { huge[offset + index] = UInt8((value >> (8 * (3 - index))) & 0xFF) }
    }
    let cases: [(name: String, bytes: [UInt8], code: String)] = [
      ("cut.heic", CodecFixtures.truncated(heic), "image.damaged"),
      ("notes.txt", Array("not an image".utf8), "image.unsupportedType"),
      ("huge.png", huge, "image.tooLarge"),
      ("empty.jpg", [], "image.unsupportedType"),
    ]
    for item in cases {
      var local: String?
      do { _ = try ImageDecoder.decode(item.bytes, source: item.name) } catch {
        local = error.code
      }
      #expect(local == item.code, "\(item.name)")
      let error = await #expect(throws: ImageError.self, "\(item.name)") {
        try await sandbox.decodeImage(item.bytes, source: item.name)
      }
      #expect(error?.code == item.code, "\(item.name)")
      #expect(error?.message.contains(item.name) == true, "\(item.name)")
    }
    // The worker that refused them still serves.
    let good = try await sandbox.decodeImage(png, source: "alpha.png")
    #expect(good == (try ImageDecoder.decode(png, source: "alpha.png")))
  }

  @Test("a HEIF whose header lies about its size is refused in the worker, under its limits")
  func lyingHEIF() async throws {
    let bytes = [UInt8](
      try Data(
        contentsOf: URL(fileURLWithPath: fixturesFolder + "/Images/heif/lying-size.heic")))
    let sandbox = DocumentSandbox(executable: worker, workers: 1)
    let error = await #expect(throws: (any Error).self) {
      try await sandbox.decodeImage(bytes, source: "lying-size.heic")
    }
    let code = (error as? any ImprintError)?.code
    // libheif decodes 11 900 x 11 900 where the header gives 1000 x 1000 (damaged), or the
    // worker's memory limit stops it first; on a machine so loaded that the 3.5 s decode
    // passes the worker's 60 s wall-clock limit, that limit stops it (seen with five builds
    // running): each is the worker refusing the file under its limits.
    #expect(
      ["image.damaged", "document.memoryLimit", "document.timeout"].contains(code),
      "\(String(describing: error))")
  }
}
