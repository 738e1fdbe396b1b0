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
