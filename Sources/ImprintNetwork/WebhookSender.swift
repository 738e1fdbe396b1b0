// SPDX-License-Identifier: Apache-2.0
// ImprintNetwork: POSTs a small document to a URL a client gave (the service's webhooks), under
// the rules photo downloads follow: the address of every connection checked, a deadline, a cap.

import Foundation
import ImprintCore

/// Sends webhook calls: one POST to an http or https URL, its addresses checked by the
/// `AddressPolicy` photo downloads follow.
///
/// A callback URL comes from a client, so the call never reaches the machine's own network: a
/// host any of whose addresses is loopback, private, CGNAT or unique local is refused unless the
/// policy allows private addresses (a deployment's own receivers); link-local (cloud metadata),
/// multicast, unspecified and reserved addresses are always refused. The address connected to is
/// the address checked (libcurl's socket callback), no redirect is followed (a redirect answered
/// is a final failure: the callback must be the receiver's own URL), proxies from the
/// environment are not used, and an answer other than 2xx is a failure.
public enum WebhookSender {
  /// Why a call was not delivered.
  public struct Failure: Error, Sendable, Equatable {
    /// What went wrong, for logs and reports (`the server answered HTTP 500`).
    public let reason: String
    /// Whether the URL's host is refused.
    public let refused: Bool
    /// Whether calling again cannot help: the host is refused, or the server answered with a
    /// redirect (a call follows none, and the next would be answered the same).
    public let final: Bool

    init(reason: String, refused: Bool, final: Bool? = nil) {
      self.reason = reason
      self.refused = refused
      self.final = final ?? refused
    }
  }

  /// The most bytes of an answer read (the rest is not waited for).
  public static let answerLimit = 64 << 10

  /// Checks `url` as a call would before connecting, without connecting.
  ///
  /// The URL must be http or https with a host that resolves, none of its addresses refused.
  ///
  /// - Returns: nil when a call may be made; else why not.
  public static func check(_ url: String, policy: AddressPolicy) -> Failure? {
    guard !url.utf8.contains(0), url.utf8.count <= 2048 else {
      return Failure(reason: "it is not a URL of at most 2048 bytes", refused: true)
    }
    guard AddressPolicy.isHTTP(url) else {
      return Failure(reason: "only http and https URLs are called", refused: true)
    }
    return policy.check(url).map { Failure(reason: $0.reason, refused: true) }
  }

  /// The header naming a delivery (`Webhook-Id`, as the Standard Webhooks specification names
  /// it): the same value in every call of one delivery, so that a receiver can drop a call it
  /// has already taken.
  public static let deliveryHeader = "Webhook-Id"

  /// POSTs `body` to `url` (blocking a thread of its own, never the caller's).
  ///
  /// - Parameters:
  ///   - url: the http or https URL.
  ///   - body: the bytes sent.
  ///   - contentType: their media type.
  ///   - timeout: the whole call's deadline in seconds, connection included.
  ///   - policy: the addresses that may be called.
  ///   - deliveryID: sent as `Webhook-Id` (`deliveryHeader`) when given: 1 to 200 characters
  ///     among letters, digits, `-`, `_`, `.` and `:`.
  ///   - signingKey: with a `deliveryID`, the call is signed as the Standard Webhooks
  ///     specification says (`signatureHeaders`): `Webhook-Timestamp` (the time of this call,
  ///     Unix seconds) and `Webhook-Signature` (`v1,` and the base64 HMAC-SHA256 under this key
  ///     of the id, the timestamp and the body joined by dots).
  /// - Returns: the 2xx status answered, or why the call failed (a `deliveryID` that breaks
  ///   its rule is refused before any connection).
  public static func post(
    _ url: String, body: [UInt8], contentType: String, timeout: TimeInterval,
    policy: AddressPolicy, deliveryID: String? = nil, signingKey: [UInt8]? = nil
  ) async -> Result<Int, Failure> {
    if let refused = check(url, policy: policy) {
      return .failure(refused)
    }
    if let deliveryID, !isDeliveryID(deliveryID) {
      return .failure(
        Failure(
          reason: "delivery id '\(SafeText.excerpt(deliveryID, limit: 60))' is not 1 to 200 "
            + "letters, digits, '-', '_', '.' or ':'", refused: true))
    }
    var headers = deliveryID.map { ["\(deliveryHeader): \($0)"] } ?? []
    if let deliveryID, let signingKey {
      headers += signatureHeaders(
        id: deliveryID, timestamp: Int(Date().timeIntervalSince1970), body: body, key: signingKey)
    }
    let call = Download(
      url: url, limit: answerLimit, timeout: timeout, policy: policy, post: (body, contentType),
      headers: headers)
    switch await call.run() {
    case .success(let answer): return .success(answer.status)
    case .failure(let failure):
      let refused = failure.refusedNever != nil
      return .failure(
        Failure(reason: failure.reason, refused: refused, final: refused || failure.redirected))
    }
  }

  /// One call of a delivery (`deliver`), as it ended.
  public struct Attempt: Sendable {
    /// The call's number among the delivery's calls (the first of `attempts` for the first).
    public let number: Int
    /// The 2xx status answered, or why the call failed.
    public let result: Result<Int, Failure>
    /// Whether no call follows: delivered, a final failure, or the last of the attempts.
    public let last: Bool
  }

  /// Delivers `body` to `url`: calls `post` until one is answered 2xx, a failure is final
  /// (`Failure.final`) or the attempts are spent, waiting `delay(after:backoff:)` between
  /// calls: `backoff` seconds after call 1, twice as long after each later one.
  ///
  /// Every call carries the same `deliveryID` and body, so that a receiver can drop a call it has
  /// already taken.
  ///
  /// - Parameters:
  ///   - url: the http or https URL.
  ///   - body: the bytes sent.
  ///   - contentType: their media type.
  ///   - timeout: each call's deadline in seconds, connection included.
  ///   - policy: the addresses that may be called.
  ///   - deliveryID: sent as `Webhook-Id` with every call (`post`).
  ///   - signingKey: each call signed with it (`post`).
  ///   - attempts: the numbers of the calls that may be made (`1...3`; a delivery resumed after
  ///     calls made before starts past them); one call at least.
  ///   - backoff: seconds after call 1, doubled after each later one (`delay`).
  ///   - ended: told each call as it ends, before any wait; returns whether the calls may go on
  ///     (false: none is made after this one, the delivery is someone else's now). A task
  ///     canceled while it waits to call again makes no more calls either.
  public static func deliver(
    _ url: String, body: [UInt8], contentType: String, timeout: TimeInterval,
    policy: AddressPolicy, deliveryID: String? = nil, signingKey: [UInt8]? = nil,
    attempts: ClosedRange<Int>, backoff: TimeInterval, ended: (Attempt) -> Bool
  ) async {
    for number in attempts {
      let result = await post(
        url, body: body, contentType: contentType, timeout: timeout, policy: policy,
        deliveryID: deliveryID, signingKey: signingKey)
      let last =
        switch result {
        case .success: true
        case .failure(let failure): number == attempts.upperBound || failure.final
        }
      let goOn = ended(Attempt(number: number, result: result, last: last))
      if last || !goOn { return }
      try? await Task.sleep(for: .seconds(delay(after: number, backoff: backoff)))
      // Canceled while it waited (the server stops): no call after it.
      if Task.isCancelled { return }
    }
  }

  /// The wait after call `number` of a delivery (counted from its first call, by whichever
  /// process made it: a delivery resumed after a restart, or taken over by another replica,
  /// keeps its spacing): `backoff` seconds after the first call, twice as long after each later
  /// one, at most a day.
  public static func delay(after number: Int, backoff: TimeInterval) -> TimeInterval {
    min(backoff * pow(2, Double(min(max(0, number - 1), 62))), 86_400)
  }

  /// The Standard Webhooks signature lines of a call: `Webhook-Timestamp: <timestamp>` and
  /// `Webhook-Signature: v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`.
  public static func signatureHeaders(id: String, timestamp: Int, body: [UInt8], key: [UInt8])
    -> [String]
  {
    let signed = Array("\(id).\(timestamp).".utf8) + body
    let signature = Data(HMAC.sha256(key: key, message: signed)).base64EncodedString()
    return ["Webhook-Timestamp: \(timestamp)", "Webhook-Signature: v1,\(signature)"]
  }

  /// Whether `id` may be sent as a delivery id: 1 to 200 ASCII letters, digits, `-`, `_`, `.`
  /// or `:` (nothing that could end or fold a header line).
  static func isDeliveryID(_ id: String) -> Bool {
    (1...200).contains(id.utf8.count)
      && id.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
          UInt8(ascii: "."), UInt8(ascii: ":"):
          true
        default: false
        }
      }
  }
}
