// SPDX-License-Identifier: Apache-2.0
// Imprint: finds a module's SwiftPM resource bundle without the trap of a missing one.

import Foundation

/// Finds the resources SwiftPM copies beside the executable (`Imprint_<Module>.resources`).
///
/// A module with resources reads them through its `Bundle.module`, which SwiftPM generates. On
/// Linux that accessor looks beside the running executable (`Bundle.main`), then in the folder
/// the package was built in, and stops the process with `fatalError` when neither exists: a
/// server copied to another machine without its `.resources` folders would crash instead of
/// reporting an error. So each module asks here first, and calls `Bundle.module` only when the
/// bundle is beside the executable, where SwiftPM puts it for `swift build`, `swift run`, the
/// test runner and every package that depends on Imprint.
///
/// No environment variable and no working directory are consulted: a dependent package's
/// executable finds Imprint's resources beside itself, whatever folder it runs in.
public enum ResourceBundle {
  /// The path of `resource` inside `module`'s resource bundle, or nil when the bundle is not
  /// beside the executable or lacks it.
  ///
  /// - Parameters:
  ///   - resource: a file or folder name inside the bundle (`fonts`, `templates`).
  ///   - module: the module's target name (`ImprintGraphics`).
  ///   - bundle: the module's `Bundle.module`, evaluated only when the bundle is there.
  /// - Returns: the absolute path, or nil.
  public static func path(
    of resource: String, module: String, bundle: @autoclosure () -> Bundle
  ) -> String? {
    var isDirectory: ObjCBool = false
    guard
      FileManager.default.fileExists(atPath: location(module: module), isDirectory: &isDirectory),
      isDirectory.boolValue
    else { return nil }
    guard let path = bundle().resourceURL?.appendingPathComponent(resource).path,
      FileManager.default.fileExists(atPath: path)
    else { return nil }
    return path
  }

  /// Where `module`'s bundle is expected: beside the executable (for error messages).
  public static func location(module: String) -> String {
    Bundle.main.bundleURL.appendingPathComponent("Imprint_\(module).resources").path
  }
}
