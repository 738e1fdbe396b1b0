// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: the fonts and placeholder photo a deployment names with IMPRINT_ASSETS.

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics
import Synchronization

/// The resources `imprint` renders with: a deployment's own when `IMPRINT_ASSETS` names a
/// folder (`<assets>/fonts`, `<assets>/placeholder-photo.png`), else the ones shipped in the
/// library's resource bundles.
///
/// The working directory is never consulted: a `./assets` folder there belongs to whoever runs
/// `imprint` (a web application's own `assets/fonts`), not to Imprint.
enum DeploymentResources {
  private static let loaded = Mutex<[String: FontLibrary]>([:])

  /// The fonts of `IMPRINT_ASSETS`, loaded once per folder; nil when it is unset (the library
  /// then uses the fonts it ships).
  ///
  /// - Throws: `FileError.folderNotFound` when the variable names no folder;
  ///   `GraphicsError.fontsUnavailable` when it holds no fonts.
  static func fonts() throws -> FontLibrary? {
    guard let assets = try ResourceLocator.checkedAssetsDirectory() else { return nil }
    let folder = assets + "/fonts"
    if let library = loaded.withLock({ $0[folder] }) { return library }
    let library = try FontLibrary(bundle: folder)
    return loaded.withLock { cache in
      if let first = cache[folder] { return first }
      cache[folder] = library
      return library
    }
  }

  /// The placeholder photo: `<IMPRINT_ASSETS>/placeholder-photo.png` when the variable is set,
  /// else the one shipped with the library.
  ///
  /// - Throws: `FileError` when it cannot be read; `CardError.file` when the bundle is missing.
  static func placeholder() throws -> (bytes: [UInt8], source: String) {
    guard let assets = try ResourceLocator.checkedAssetsDirectory() else {
      return try CardInput.shippedPlaceholder()
    }
    let path = assets + "/placeholder-photo.png"
    return (try FileIO.read(path, limit: FileIO.Limit.image), path)
  }
}
