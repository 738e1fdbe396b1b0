// SPDX-License-Identifier: Apache-2.0
// ImprintCore: Imprint's version, one place for `imprint --version`, the service's `Server`
// header and its `imprint_build_info` gauge.

/// Imprint's version.
public enum ImprintVersion {
  /// The version of this build (`imprint --version` prints it).
  public static let current = "0.2.0"
}
