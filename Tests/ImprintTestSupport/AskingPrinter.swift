// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a printer elsewhere on the network that asks for a password over plain
// HTTP (python3's http.server on every address): it answers every request 401 with
// `WWW-Authenticate: Basic` and logs whether the request carried credentials.

import Foundation

/// An HTTP server on all of this machine's addresses that answers every request `401
/// Unauthorized` asking for Basic credentials, logging `credentials` or `none` for each.
public final class AskingPrinter: PythonServer {
  private let log: String

  static let handler = pythonFixture("asking_printer.py")

  /// Starts the server in `folder`.
  public init(folder: TemporaryFolder) throws {
    log = folder.file("asking.log")
    try super.init(handler: Self.handler, name: "asking", host: "0.0.0.0", stderr: log, in: folder)
  }

  /// For each request so far, whether it carried credentials.
  public var requests: [Bool] {
    lines(of: log).map { $0 == "credentials" }
  }
}
