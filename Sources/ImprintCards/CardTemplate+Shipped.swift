// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the designs and the placeholder photo shipped in this module's resources.

import Foundation
import ImprintCore

extension CardTemplate {
  /// The folder of the designs shipped with Imprint (`templates` in this module's resource
  /// bundle, `Bundle.module`), or nil when the bundle is not deployed beside the executable.
  ///
  /// Found with no environment variable and no working-directory guess, so a package that
  /// depends on Imprint gets the same designs whatever folder its server runs in.
  public static var shippedFolder: String? {
    ResourceBundle.path(of: "templates", module: "ImprintCards", bundle: .module)
  }

  /// The names of the designs shipped with Imprint, sorted (`classic`, `midnight`, ...).
  public static var shippedNames: [String] { shippedNames(folder: nil) }

  /// Loads a design shipped with Imprint by name.
  ///
  /// - Throws: `CardError.templateNotFound` listing the shipped names; `CardError.file` when
  ///   the resources were not deployed beside the executable.
  public static func shipped(named name: String) throws(CardError) -> CardTemplate {
    guard ConfinedPath.isPlainFileName(name), !name.hasSuffix(".json") else {
      throw .templateNotFound(name: name, available: shippedNames)
    }
    return try load(name, folder: nil)
  }
}

extension CardInput {
  /// The placeholder photo shipped with Imprint (for profiles without a photo): its bytes and
  /// its path, read from this module's resource bundle.
  ///
  /// - Throws: `CardError.file` when the bundle is not deployed beside the executable.
  public static func shippedPlaceholder() throws(CardError) -> (bytes: [UInt8], source: String) {
    guard
      let path = ResourceBundle.path(
        of: "placeholder-photo.png", module: "ImprintCards", bundle: .module)
    else {
      throw .file(
        .notFound(
          path: ResourceBundle.location(module: "ImprintCards") + "/placeholder-photo.png"))
    }
    do {
      return (try FileIO.read(path, limit: FileIO.Limit.image), path)
    } catch {
      throw .file(error)
    }
  }

  /// Decodes a card's inputs as `init(profile:template:photo:placeholder:)` does, with the
  /// placeholder shipped with Imprint when `photo` is nil.
  ///
  /// - Throws: `CardError.photo` naming a photo that cannot be decoded; `CardError.file` when
  ///   the placeholder is needed and not deployed; `ImageError` for a template image.
  public init(
    profile: Profile, template: CardTemplate, photo: (bytes: [UInt8], source: String)?
  ) throws {
    try self.init(
      profile: profile, template: template, photo: photo,
      placeholder: photo == nil ? try CardInput.shippedPlaceholder() : ([], ""))
  }
}
