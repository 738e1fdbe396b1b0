// SPDX-License-Identifier: Apache-2.0
// Imprint: finds a module's SwiftPM resource bundle without the trap of a missing one.

import Foundation

/// Finds the resources SwiftPM copies beside the executable (`Imprint_<Module>.resources`), or
/// an installed copy of them in `../lib/imprint/` from the executable's folder.
///
/// A module with resources reads them through its `Bundle.module`, which SwiftPM generates. On
/// Linux that accessor looks beside the running executable (`Bundle.main`), then in the folder
/// the package was built in, and stops the process with `fatalError` when neither exists: a
/// server copied to another machine without its `.resources` folders would crash instead of
/// reporting an error. So each module asks here first, and calls `Bundle.module` only when the
/// bundle is beside the executable, where SwiftPM puts it for `swift build`, `swift run`, the
/// test runner and every package that depends on Imprint.
///
/// An installed `imprint` (the Debian package: `/usr/bin/imprint`, its bundles in
/// `/usr/lib/imprint/`) has no bundle beside it; its bundles are then read in the folder
/// `lib/imprint` next to the executable's folder (`<prefix>/bin/../lib/imprint/`), so a
/// prefix other than `/usr` works the same. Beside the executable wins.
///
/// No environment variable and no working directory are consulted: a dependent package's
/// executable finds Imprint's resources beside itself, whatever folder it runs in.
public enum ResourceBundle {
  /// The path of `resource` inside `module`'s resource bundle, or nil when the bundle is
  /// neither beside the executable nor installed in `../lib/imprint/`, or lacks it.
  ///
  /// - Parameters:
  ///   - resource: a file or folder name inside the bundle (`fonts`, `templates`).
  ///   - module: the module's target name (`ImprintGraphics`).
  ///   - bundle: the module's `Bundle.module`, evaluated only when the bundle is there.
  /// - Returns: the absolute path, or nil.
  public static func path(
    of resource: String, module: String, bundle: @autoclosure () -> Bundle
  ) -> String? {
    path(
      of: resource, module: module, executableFolder: Bundle.main.bundleURL.path,
      bundle: bundle())
  }

  /// `path(of:module:bundle:)` for an executable in `executableFolder`.
  ///
  /// - Parameters:
  ///   - resource: a file or folder name inside the bundle.
  ///   - module: the module's target name.
  ///   - executableFolder: the folder of the running executable.
  ///   - bundle: the module's `Bundle.module`, evaluated only when the bundle is beside the
  ///     executable.
  /// - Returns: the absolute path, or nil.
  package static func path(
    of resource: String, module: String, executableFolder: String,
    bundle: @autoclosure () -> Bundle
  ) -> String? {
    let name = bundleName(module: module)
    if isFolder(executableFolder + "/" + name) {
      guard let path = bundle().resourceURL?.appendingPathComponent(resource).path,
        FileManager.default.fileExists(atPath: path)
      else { return nil }
      return path
    }
    // SwiftPM's bundles on Linux are plain folders: the resources are at the bundle's top.
    let installed = installedFolder(executableFolder: executableFolder) + "/" + name
    guard isFolder(installed), FileManager.default.fileExists(atPath: installed + "/" + resource)
    else { return nil }
    return installed + "/" + resource
  }

  /// Where `module`'s bundle is expected: beside the executable (for error messages).
  public static func location(module: String) -> String {
    Bundle.main.bundleURL.appendingPathComponent(bundleName(module: module)).path
  }

  /// The folder an installed executable's bundles are read from: `lib/imprint` beside the
  /// executable's folder (`/usr/lib/imprint` for `/usr/bin/imprint`).
  ///
  /// - Parameter executableFolder: the folder of the executable (`/usr/bin`).
  /// - Returns: the folder's path, without `..`.
  package static func installedFolder(executableFolder: String) -> String {
    URL(fileURLWithPath: executableFolder).deletingLastPathComponent()
      .appendingPathComponent("lib/imprint").standardizedFileURL.path
  }

  private static func bundleName(module: String) -> String { "Imprint_\(module).resources" }

  private static func isFolder(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
      && isDirectory.boolValue
  }
}
