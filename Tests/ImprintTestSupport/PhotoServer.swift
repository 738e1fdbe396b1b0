// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a local HTTP server for photo-download tests (python3's http.server): a
// photo, redirects, a 1 GB body, a gzip bomb, a slow drip, a truncated body.

import Foundation

/// A local HTTP server for the download tests: a photo, redirects, a 1 GB body, a gzip bomb, a
/// slow drip, a truncated body; it logs each request's path on standard error.
public final class PhotoServer: PythonServer {
  /// Its log of requested paths.
  public let log: String

  static let handler = pythonFixture("photo_server.py")

  /// Starts a server in `folder` serving `photo` as `/photo.jpg`.
  public init(folder: TemporaryFolder, photo: String) throws {
    log = folder.file("server.log")
    try super.init(
      handler: Self.handler, name: "server", arguments: [photo], stderr: log, in: folder)
  }

  /// The paths requested so far.
  public var requests: [String] {
    lines(of: log)
  }
}
