// SPDX-License-Identifier: Apache-2.0
// ImprintHTTP: the address `imprint serve --listen` takes.

import Foundation
import ImprintCore

/// An IPv4 address and TCP port to listen on (`127.0.0.1:8080`; port 0 lets the system choose).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
  /// The address as given (`127.0.0.1`, `0.0.0.0`).
  public let host: String
  /// The TCP port, 0 to 65535.
  public let port: Int
  /// The address in network byte order.
  let ipv4: in_addr

  /// Parses `ADDRESS:PORT`.
  ///
  /// - Throws: `HTTPError.invalidAddress` for anything else (IPv6 is not taken yet).
  public init(parsing text: String) throws(HTTPError) {
    guard let colon = text.lastIndex(of: ":"),
      let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port)
    else { throw .invalidAddress(text) }
    let host = String(text[..<colon])
    var address = in_addr()
    guard inet_pton(AF_INET, host, &address) == 1 else { throw .invalidAddress(text) }
    self.host = host
    self.port = port
    ipv4 = address
  }

  public var description: String { "\(host):\(port)" }

  public static func == (lhs: ListenAddress, rhs: ListenAddress) -> Bool {
    lhs.host == rhs.host && lhs.port == rhs.port
  }
}
