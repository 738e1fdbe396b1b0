// SPDX-License-Identifier: Apache-2.0
// Imprint: the resource folders a deployment names for the imprint command.

import Foundation

/// Finds the folders a deployment names for the `imprint` command: `--templates`,
/// `IMPRINT_TEMPLATES` and `IMPRINT_ASSETS` (its `fonts/` and `placeholder-photo.png`).
///
/// Order: an explicit folder, then the environment variable; nil when neither is given, and
/// the library then uses the resources it ships (`FontLibrary.bundled()`,
/// `CardTemplate.shippedFolder`, `CardInput.shippedPlaceholder()`), found through SwiftPM's
/// `Bundle.module`. The working directory is never guessed: a `./assets` or `./templates` there
/// belongs to whoever runs the program (web applications often have an `assets/fonts` of their
/// own), and taking it for Imprint's would change every card. The library itself reads no
/// environment variable; only the command line does, through this type.
public enum ResourceLocator {
  /// The assets folder a deployment names (`explicit`, else `IMPRINT_ASSETS`), or nil.
  public static func assetsDirectory(explicit: String? = nil) -> String? {
    named(environment: "IMPRINT_ASSETS", explicit: explicit)
  }

  /// The templates folder a deployment names (`explicit`, else `IMPRINT_TEMPLATES`), or nil.
  public static func templatesDirectory(explicit: String? = nil) -> String? {
    named(environment: "IMPRINT_TEMPLATES", explicit: explicit)
  }

  /// The checkout's folder `name` (holding `marker`) beside or up to four folders above the
  /// running executable; never the working directory.
  ///
  /// For the demo's sample data only (`.build/debug/imprint demo` finds it from anywhere): the
  /// library's resources come from its bundles.
  public static func checkoutDirectory(_ name: String, marker: String) -> String? {
    var folder = executableFolder()
    for _ in 0..<5 {
      let candidate = folder.appendingPathComponent(name).path
      if isFolder(candidate + "/" + marker) { return candidate }
      folder = folder.deletingLastPathComponent()
    }
    return nil
  }

  /// The installed folder `name` (holding `marker`) in `share/imprint` beside the running
  /// executable's folder (`/usr/share/imprint/assets` for `/usr/bin/imprint`, as the Debian
  /// package installs it), or nil.
  ///
  /// For the demo's sample data only, as `checkoutDirectory` is.
  public static func installedDirectory(_ name: String, marker: String) -> String? {
    installedDirectory(name, marker: marker, executableFolder: executableFolder().path)
  }

  /// `installedDirectory(_:marker:)` for an executable in `executableFolder`.
  package static func installedDirectory(
    _ name: String, marker: String, executableFolder: String
  ) -> String? {
    let candidate = URL(fileURLWithPath: executableFolder).deletingLastPathComponent()
      .appendingPathComponent("share/imprint").appendingPathComponent(name).standardizedFileURL
      .path
    return isFolder(candidate + "/" + marker) ? candidate : nil
  }

  /// The folder of the running executable, symbolic links resolved (`/proc/self/exe`).
  private static func executableFolder() -> URL {
    if let selfPath = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      return URL(fileURLWithPath: selfPath).deletingLastPathComponent()
    }
    return URL(fileURLWithPath: CommandLine.arguments.first ?? "")
      .resolvingSymlinksInPath().deletingLastPathComponent()
  }

  private static func isFolder(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
      && isDirectory.boolValue
  }

  /// The templates folder as `templatesDirectory` finds it, refusing a folder named explicitly
  /// (by `--templates` or `IMPRINT_TEMPLATES`) that is not there: listing a folder that does not
  /// exist would print nothing and succeed.
  ///
  /// - Throws: `FileError.folderNotFound` naming the setting.
  public static func checkedTemplatesDirectory(explicit: String? = nil) throws(FileError)
    -> String?
  {
    try checked("templates", environment: "IMPRINT_TEMPLATES", explicit: explicit)
    return templatesDirectory(explicit: explicit)
  }

  /// The assets folder as `assetsDirectory` finds it, refusing one named explicitly (by an option
  /// or `IMPRINT_ASSETS`) that is not there.
  ///
  /// - Throws: `FileError.folderNotFound` naming the setting.
  public static func checkedAssetsDirectory(explicit: String? = nil) throws(FileError) -> String? {
    try checked("assets", environment: "IMPRINT_ASSETS", explicit: explicit)
    return assetsDirectory(explicit: explicit)
  }

  private static func checked(_ option: String, environment: String, explicit: String?)
    throws(FileError)
  {
    let named: (String, String)? =
      if let explicit {
        (explicit, "--\(option)")
      } else if let value = ProcessInfo.processInfo.environment[environment],
        !value.isEmpty
      { (value, environment) } else { nil }
    guard let (path, setting) = named else { return }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      isDirectory.boolValue
    else {
      throw .folderNotFound(path: path, setting: setting)
    }
  }

  private static func named(environment: String, explicit: String?) -> String? {
    if let explicit { return explicit }
    if let value = ProcessInfo.processInfo.environment[environment], !value.isEmpty {
      return value
    }
    return nil
  }
}
