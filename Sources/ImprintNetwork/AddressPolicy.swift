// SPDX-License-Identifier: Apache-2.0
// ImprintNetwork: which addresses a fetch may reach, the one rule of photo downloads and webhook
// calls alike (fetch.c applies it to every connection as it opens).

internal import CImprintFetch
import Foundation
import ImprintCore

/// Which addresses a fetch may connect to: the rule `PhotoFetcher` and `WebhookSender` follow.
///
/// A URL to fetch comes from input (a profile's photo, a request's callback), so a fetch never
/// reaches the machine's own network unless a deployment says so. The host is resolved first
/// and refused when any of its addresses is refused; every connection libcurl opens is checked
/// again at the moment it opens (the address connected to is the address checked, so a name
/// that resolves differently the second time gains nothing), and every redirect is a new hop
/// checked the same way. Loopback, private (10/8, 172.16/12, 192.168/16), CGNAT (100.64/10) and
/// unique local (fc00::/7) addresses are fetched only with `allowPrivateNetwork`; link-local
/// (169.254/16 with the cloud metadata address, fe80::/10), multicast, unspecified and reserved
/// addresses never are. IPv4 inside IPv6 (mapped, NAT64, 6to4) is judged by the IPv4 address.
/// Proxies from the environment are not used: the address checked must be the server's own.
public struct AddressPolicy: Sendable, Equatable {
  /// Whether loopback, private, CGNAT and unique local addresses are fetched too (a shop's own
  /// photo server, a deployment's own webhook receivers).
  public var allowPrivateNetwork: Bool

  /// A policy; by default only public addresses are fetched.
  public init(allowPrivateNetwork: Bool = false) {
    self.allowPrivateNetwork = allowPrivateNetwork
  }

  /// How an address is treated.
  public enum AddressClass: Sendable, Equatable {
    /// Fetched.
    case `public`
    /// Loopback, private or CGNAT: fetched only with `allowPrivateNetwork`.
    case `private`(String)
    /// Link-local (cloud metadata), multicast, unspecified or reserved: never fetched.
    case never(String)
  }

  /// A URL this policy does not fetch, and why.
  public struct Refusal: Sendable, Equatable {
    /// What is refused (`host 'x' resolves to 127.0.0.1 (loopback, 127.0.0.0/8)`, `only http
    /// and https URLs are downloaded`), its text escaped for messages.
    public let reason: String
    /// Whether no policy fetches it (a link-local, multicast or reserved address).
    public let never: Bool
  }

  /// Classifies a numeric IPv4 or IPv6 address, as a fetch checks it
  /// (`CImprintFetch_address_class`).
  ///
  /// - Returns: nil when `address` is not a numeric address.
  public static func classify(_ address: String) -> AddressClass? {
    var v4 = in_addr()
    var v6 = in6_addr()
    var name: UnsafePointer<CChar>?
    let kind: Int32
    if inet_pton(AF_INET, address, &v4) == 1 {
      kind = withUnsafeBytes(of: &v4) { raw in
        CImprintFetch_address_class(4, raw.bindMemory(to: UInt8.self).baseAddress, &name)
      }
    } else if inet_pton(AF_INET6, address, &v6) == 1 {
      kind = withUnsafeBytes(of: &v6) { raw in
        CImprintFetch_address_class(6, raw.bindMemory(to: UInt8.self).baseAddress, &name)
      }
    } else {
      return nil
    }
    let text = name.map { String(cString: $0) } ?? ""
    switch Int(kind) {
    case Int(CImprintFetch_ADDRESS_PUBLIC): return .public
    case Int(CImprintFetch_ADDRESS_PRIVATE): return .private(text)
    default: return .never(text)
    }
  }

  /// Whether this policy fetches an address of class `kind`.
  public func admits(_ kind: AddressClass) -> Bool {
    switch kind {
    case .public: true
    case .private: allowPrivateNetwork
    case .never: false
    }
  }

  /// Checks `url` as a fetch checks each hop before it connects (`CImprintFetch_check`), without
  /// connecting: an http or https URL with a host that resolves, none of whose addresses is
  /// refused.
  ///
  /// - Returns: nil when the URL may be fetched; else why not.
  public func check(_ url: String) -> Refusal? {
    var fetch = CImprintFetch_Fetch()
    apply(to: &fetch)
    let outcome = Int(CImprintFetch_check(url, &fetch))
    guard outcome != Int(CImprintFetch_FETCH_OK) else { return nil }
    return Refusal(
      reason: SafeText.escaped(Self.detail(of: fetch)),
      never: outcome == Int(CImprintFetch_FETCH_REFUSED) && fetch.refused_never != 0)
  }

  /// Sets the policy's fields of a fetch (`allow_private`).
  func apply(to fetch: inout CImprintFetch_Fetch) {
    fetch.allow_private = allowPrivateNetwork ? 1 : 0
  }

  /// The text `fetch.c` left in a fetch's `detail`.
  static func detail(of fetch: CImprintFetch_Fetch) -> String {
    withUnsafeBytes(of: fetch.detail) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
  }

  /// Whether `url` names the http or https scheme (case aside), the only ones fetched.
  static func isHTTP(_ url: String) -> Bool {
    let lower = url.lowercased()
    return lower.hasPrefix("http://") || lower.hasPrefix("https://")
  }
}
