// SPDX-License-Identifier: Apache-2.0
// Imprint: finds the repository's data folders (assets/, templates/) at run time.

import Foundation

/// Finds Imprint's data folders, which are data files, not SwiftPM resources.
///
/// Order: an explicit folder; the environment variable (`IMPRINT_ASSETS`, `IMPRINT_TEMPLATES`);
/// `./<name>` in the working directory; then `<name>` beside, or up to four folders above, the
/// running executable (so `.build/release/imprint` finds the checkout's folders from anywhere).
public enum ResourceLocator {
  /// The assets folder (fonts, sample data), or nil when none is found.
  public static func assetsDirectory(explicit: String? = nil) -> String? {
    locate("assets", environment: "IMPRINT_ASSETS", explicit: explicit, marker: "fonts")
  }

  /// The templates folder, or nil when none is found.
  public static func templatesDirectory(explicit: String? = nil) -> String? {
    locate("templates", environment: "IMPRINT_TEMPLATES", explicit: explicit, marker: nil)
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

  private static func locate(
    _ name: String, environment: String, explicit: String?, marker: String?
  ) -> String? {
    if let explicit { return explicit }
    if let value = ProcessInfo.processInfo.environment[environment], !value.isEmpty {
      return value
    }
    func valid(_ folder: String) -> Bool {
      var isDirectory: ObjCBool = false
      let probe = marker.map { folder + "/" + $0 } ?? folder
      return FileManager.default.fileExists(atPath: probe, isDirectory: &isDirectory)
        && isDirectory.boolValue
    }
    let cwd = FileManager.default.currentDirectoryPath + "/" + name
    if valid(cwd) { return cwd }
    let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "")
      .resolvingSymlinksInPath()
    var folder = executable.deletingLastPathComponent()
    if let selfPath = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      folder = URL(fileURLWithPath: selfPath).deletingLastPathComponent()
    }
    for _ in 0..<5 {
      let candidate = folder.appendingPathComponent(name).path
      if valid(candidate) { return candidate }
      folder = folder.deletingLastPathComponent()
    }
    return nil
  }
}
