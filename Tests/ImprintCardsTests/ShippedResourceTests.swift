// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: the designs, placeholder and fonts shipped in the modules' resource bundles,
// and fonts chosen by the caller instead of a process-wide setting.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintTestSupport
import Testing

@testable import ImprintCards

@Suite("Shipped resources", .liveHandlesChecked)
struct ShippedResourceTests {
  @Test("the shipped designs load by name from the bundle beside the test runner")
  func shippedDesigns() throws {
    #expect(CardTemplate.shippedNames == ["classic", "midnight", "moderator"])
    let folder = try #require(CardTemplate.shippedFolder)
    #expect(folder.hasSuffix("Imprint_ImprintCards.resources/templates"), "\(folder)")
    #expect(folder.hasPrefix(Bundle.main.bundleURL.path))
    for name in CardTemplate.shippedNames {
      let template = try CardTemplate.shipped(named: name)
      #expect(template == (try CardTemplate.load(name, folder: templates)))
    }
  }

  @Test("an unknown or path-like shipped name is template.notFound listing the designs")
  func unknownDesign() {
    for name in ["badge", "../templates/classic", "classic.json", ""] {
      #expect {
        try CardTemplate.shipped(named: name)
      } throws: { error in
        guard let error = error as? CardError, case .templateNotFound(_, let available) = error
        else { return false }
        return error.code == "template.notFound" && available == CardTemplate.shippedNames
      }
    }
  }

  @Test("the placeholder photo and the fonts come from the bundles, not the checkout")
  func placeholderAndFonts() throws {
    let placeholder = try CardInput.shippedPlaceholder()
    #expect(placeholder.source.hasSuffix("Imprint_ImprintCards.resources/placeholder-photo.png"))
    let checkout = try [UInt8](
      Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/assets/placeholder-photo.png")))
    #expect(placeholder.bytes == checkout)
    let fonts = try #require(FontLibrary.bundledFolder)
    #expect(fonts.hasSuffix("Imprint_ImprintGraphics.resources/fonts"), "\(fonts)")
    #expect(try FontLibrary.bundled().directories == [fonts])
  }

  @Test("a card with no photo and no placeholder given uses the shipped one")
  func shippedPlaceholderCard() throws {
    var input = try sampleInput(photo: nil)
    let viaBundle = try CardInput(profile: input.profile, template: input.template, photo: nil)
    #expect(viaBundle.photo == input.photo)
    input = viaBundle
    #expect(try CardMaker.pdf(input, options: CardOptions()).bytes.starts(with: Array("%PDF".utf8)))
  }

  @Test("CardOptions.fonts sets the card's text with the caller's fonts, not the default")
  func callerFonts() throws {
    let folder = TemporaryFolder()
    try FileManager.default.copyItem(
      atPath: repositoryRoot + "/assets/fonts/dejavu/DejaVuSansMono.ttf",
      toPath: folder.file("DejaVuSansMono.ttf"))
    let mono = try FontLibrary(directories: [folder.path])
    let input = try sampleInput()
    var options = CardOptions()
    options.faces = [.front]
    let standard = String(decoding: try CardMaker.pdf(input, options: options).bytes, as: UTF8.self)
    options.fonts = mono
    let chosen = String(decoding: try CardMaker.pdf(input, options: options).bytes, as: UTF8.self)
    #expect(standard.contains("DejaVuSans-Bold") && !standard.contains("DejaVuSansMono"))
    #expect(chosen.contains("DejaVuSansMono") && !chosen.contains("DejaVuSans-Bold"))
    // The default is untouched by the other card.
    let again = String(
      decoding: try CardMaker.pdf(input, options: CardOptions()).bytes, as: UTF8.self)
    #expect(!again.contains("DejaVuSansMono"))
  }
}
