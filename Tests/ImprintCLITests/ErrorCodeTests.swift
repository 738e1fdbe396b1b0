// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: one code per failure: each code is owned by one case of one error type, and
// the same failure reached by another command or entry point has that code.

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintQR
import ImprintTestSupport
import Testing

@Suite("One code per failure", .liveHandlesChecked)
struct ErrorCodeTests {
  @Test("no two error cases in Sources return the same code string")
  func codesAreUnique() throws {
    let pattern = try Regex(#"case \.[a-zA-Z]+(, \.[a-zA-Z]+)*: "([a-z]+\.[a-zA-Z]+)""#)
    var owners: [String: [String]] = [:]
    let sources = repositoryRoot + "/Sources"
    let files = FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String } ?? []
    for file in files where file.hasSuffix(".swift") {
      let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
      for match in text.matches(of: pattern) {
        guard let code = match.output[2].substring else { continue }
        owners[String(code), default: []].append(file)
      }
    }
    #expect(owners.count > 80, "the pattern no longer finds the codes")
    let shared = owners.filter { $0.value.count > 1 }
    #expect(shared.isEmpty, "codes returned by more than one case: \(shared)")
    // The image.* codes belong to ImageError alone.
    let image = owners.filter { $0.key.hasPrefix("image.") }
    #expect(image.values.allSatisfy { $0 == ["ImprintGraphics/ImageDecoder.swift"] }, "\(image)")
    #expect(owners["image.corrupt"] == nil && owners["image.jpegDecode"] == nil)
  }

  @Test("a too-large image is image.tooLarge with one message, whoever reads it")
  func tooLarge() async throws {
    let huge = fixturesFolder + "/Documents/huge.png"
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: huge)))
    let decoder = #expect(throws: ImageError.self) {
      _ = try ImageDecoder.decode(bytes, source: "huge.png")
    }
    #expect(decoder?.code == "image.tooLarge")
    let engine = #expect(throws: DocumentError.self) {
      _ = try DocumentEngine.inspect(bytes, file: "huge.png")
    }
    #expect(engine?.code == "image.tooLarge" && engine?.message == decoder?.message)
    #expect(engine?.hint == decoder?.hint && engine?.hint == "scale the image down")
    let inspect = await imprint(["inspect", "--json", huge])
    #expect(inspect.code == 1 && inspect.stdout.contains(#""code" : "image.tooLarge""#))
    // As a card's photo: card.photo, caused by the same image.tooLarge.
    let folder = TemporaryFolder()
    let card = await imprint([
      "card", samplesFolder + "/profiles/sora-park.json", "--photo", huge, "-o",
      folder.file("c.pdf"), "--json", "-v",
    ])
    #expect(card.code == 1)
    #expect(card.stdout.contains(#""code" : "card.photo""#))
    #expect(card.stdout.contains(#""code" : "image.tooLarge""#))
  }

  @Test("a damaged image is image.damaged from the decoders and from uploads alike")
  func damaged() throws {
    let truncated = Array(HostileDocuments.pngHeader(width: 0, height: 0))
    let upload = #expect(throws: DocumentError.self) {
      _ = try DocumentEngine.inspect(truncated, file: "z.png")
    }
    let decoder = #expect(throws: ImageError.self) {
      _ = try ImageDecoder.decode(truncated, source: "z.png")
    }
    #expect(upload?.code == "image.damaged" && decoder?.code == "image.damaged")
    #expect(upload?.message == decoder?.message)
    // JPEGDecoder called directly: the same code (it was image.jpegDecode).
    let jpeg = #expect(throws: ImageError.self) {
      _ = try JPEGDecoder.decode([0xFF, 0xD8, 0xFF, 0xE0, 0, 2], source: "x.jpg")
    }
    #expect(jpeg?.code == "image.damaged")
    #expect(jpeg?.message.hasPrefix("image 'x.jpg' is damaged or truncated (libjpeg: ") == true)
    // Encoding is another failure, with its own code; an output raster too large too.
    #expect(GraphicsError.jpegEncode(reason: "r").code == "graphics.jpegEncode")
    #expect(
      GraphicsError.rasterTooLarge(width: 1, height: 1, maximumPixels: 0).code
        == "graphics.rasterTooLarge")
    // Text at a size that cannot be set, or drawn larger than a glyph can be.
    #expect(GraphicsError.textSize(size: "nan").code == "graphics.textSize")
    #expect(
      GraphicsError.textTooLarge(pixels: 70000, maximumPixels: 65535).code
        == "graphics.textTooLarge")
  }

  @Test("every public error type is an ImprintError; decoders' errors are causes")
  func publicErrorsConform() {
    let errors: [any Error] = [
      PDFOpenFailure.damaged("x"), FileError.notFound(path: "x"),
      SystemError(ENOSPC), ImageError.damaged(source: "x", reason: "y"),
      GraphicsError.pngEncode(reason: "x"),
    ]
    for error in errors {
      #expect(error is any ImprintError, "\(type(of: error))")
    }
    #expect(PDFOpenFailure.encrypted.code == "poppler.encrypted")
    #expect(PDFOpenFailure.damaged("bad xref").message.contains("bad xref"))
    if case .failure(let invalid) = Base58.decode("0") {
      #expect(invalid.code == "base58.invalidCharacter" && (invalid as Any) is any ImprintError)
    } else {
      Issue.record("Base58 decoded '0'")
    }
    guard case .failure(let failure) = Bech32.decode("bc1notvalid") else {
      Issue.record("decoded")
      return
    }
    #expect(failure.code == "bech32.invalid" && failure.message.hasPrefix("the Bech32 text "))
    // An invalid Bech32 address keeps the decoder's error as its cause.
    do {
      _ = try BitcoinAddress("bc1notvalid")
      Issue.record("accepted")
    } catch {
      #expect(error.code == "btc.invalidAddress")
      #expect((error.underlying as? Bech32.Failure) == failure)
    }
  }

  @Test("a damaged PDF keeps poppler's report as its cause")
  func popplerCause() throws {
    let bytes = try mappedDocumentFixture("truncated.pdf")
    let error = #expect(throws: DocumentError.self) {
      _ = try DocumentEngine.inspect(bytes, file: "truncated.pdf")
    }
    #expect(error?.code == "pdf.damaged")
    let cause = error?.underlying as? PDFOpenFailure
    #expect(
      cause?.code == "poppler.damaged" || cause?.code == "poppler.invalid",
      "\(String(describing: cause))")
  }
}
