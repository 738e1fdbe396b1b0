// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a local HTTP server receiving webhook calls (python3's http.server): each
// POST's path, Content-Type, Webhook-Id, Webhook-Timestamp, Webhook-Signature and body logged as
// one JSON line.

import Foundation

/// A local server for webhook tests: `POST /hook` answers 204, `/flaky` 500 the first time and
/// 200 after, `/down` always 503, `/moved-NNN` NNN with `Location: /hook` (none when the path
/// ends in `-bare`), `/gated` 503 after 5 s while the gate is closed (`closeGate`)
/// and 204 at once while it is open (as it is at first); every POST is logged as it arrives.
public final class WebhookReceiver: PythonServer {
  private let log: String

  static let handler = pythonFixture("webhook_receiver.py")

  /// Starts a server logging into `folder`.
  public init(folder: TemporaryFolder) throws {
    log = folder.file("receiver.log")
    try super.init(
      handler: Self.handler, name: "receiver", arguments: [log], stderr: "/dev/null", in: folder)
  }

  /// The calls received so far: each one's path, Content-Type, `Webhook-Id` (empty when it had
  /// none) and body.
  public var calls: [(path: String, type: String, id: String, body: String)] {
    signedCalls.map { ($0.path, $0.type, $0.id, $0.body) }
  }

  /// The calls received so far with their `Webhook-Timestamp` and `Webhook-Signature` (empty
  /// when they had none).
  public var signedCalls:
    [(path: String, type: String, id: String, body: String, timestamp: String, signature: String)]
  {
    lines(of: log).compactMap {
      guard
        let object = (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
      else { return nil }
      return (
        object["path"] ?? "", object["type"] ?? "", object["id"] ?? "", object["body"] ?? "",
        object["timestamp"] ?? "", object["signature"] ?? ""
      )
    }
  }

  /// When each call to `path` arrived (Unix seconds, the receiver's clock), in order.
  public func arrivals(_ path: String) -> [Double] {
    lines(of: log).compactMap {
      guard
        let object = (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String],
        object["path"] == path
      else { return nil }
      return object["received"].flatMap(Double.init)
    }
  }

  /// Makes `/gated` answer 503 until `openGate`.
  public func closeGate() throws {
    try Data().write(to: URL(fileURLWithPath: log + ".closed"))
  }

  /// Makes `/gated` answer 204 again.
  public func openGate() throws {
    try FileManager.default.removeItem(atPath: log + ".closed")
  }
}
