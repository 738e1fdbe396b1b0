// SPDX-License-Identifier: Apache-2.0
// ImprintCards: downloads a profile photo, on request only, within strict limits.

internal import CImprintFetch
import Foundation
import ImprintCore
import ImprintGraphics
import Synchronization

/// Downloads profile photos: http and https only, the server's addresses checked, a total
/// deadline, a size limit counted as the bytes arrive, and the content sniffed (an image type ImageDecoder reads),
/// whatever the server says its type is.
///
/// The rule (docs/reliability.md): a photo URL comes from the profile, that is from whoever
/// wrote it, so the download never reaches the machine's own network. The host is resolved
/// first and refused when any of its addresses is loopback, private (10/8, 172.16/12,
/// 192.168/16, CGNAT 100.64/10, fc00::/7), link-local (169.254/16 with the cloud metadata
/// address, fe80::/10), multicast, unspecified or reserved, IPv4 inside IPv6 (mapped, NAT64,
/// 6to4) judged by the IPv4 address. Every connection libcurl opens is checked again at the
/// moment it opens (the address connected to is the address checked, so a name that resolves
/// differently the second time gains nothing), and every redirect is a new hop checked the same
/// way. `allowPrivateNetwork` admits loopback and private addresses for a shop's own photo
/// server; link-local, multicast and reserved addresses are never fetched.
public enum PhotoFetcher {
  /// The largest photo downloaded (10 MB), counted after content decoding.
  public static let defaultLimit = 10 << 20
  /// The longest a whole download may take, redirects and slow servers included, in seconds.
  public static let defaultTimeout: TimeInterval = 15
  /// The most redirects followed.
  public static let maximumRedirects = 5

  /// How an address is treated.
  public enum AddressClass: Sendable, Equatable {
    /// Fetched.
    case `public`
    /// Loopback, private or CGNAT: fetched only with `allowPrivateNetwork`.
    case `private`(String)
    /// Link-local (cloud metadata), multicast, unspecified or reserved: never fetched.
    case never(String)
  }

  /// Classifies a numeric IPv4 or IPv6 address, as the download checks it.
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

  /// Downloads `url`.
  ///
  /// The transfer runs on a thread of its own (libcurl blocks), so the caller's task only
  /// waits; the deadline also bounds a host name whose resolution hangs.
  ///
  /// - Parameters:
  ///   - url: the photo's http or https URL.
  ///   - limit: the most bytes accepted, after content decoding.
  ///   - timeout: the whole download's deadline in seconds.
  ///   - allowPrivateNetwork: fetch loopback and private addresses too.
  /// - Returns: the image's bytes.
  /// - Throws: `CardError.photoDownload` naming the URL (not http(s), a refused address, a
  ///   failed or non-200 request, too large, too slow) or `CardError.photo` (not an image type Imprint reads).
  public static func fetch(
    _ url: String, limit: Int = defaultLimit, timeout: TimeInterval = defaultTimeout,
    allowPrivateNetwork: Bool = false
  ) async throws(CardError) -> [UInt8] {
    let shown = SafeText.excerpt(url, limit: 200)
    guard !url.utf8.contains(0), url.utf8.count <= 4096 else {
      throw .photoDownload(url: shown, reason: "it is not a URL with a host")
    }
    let lower = url.lowercased()
    guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
      throw .photoDownload(url: shown, reason: "only http and https URLs are downloaded")
    }
    let download = Download(
      url: url, limit: limit, timeout: timeout, allowPrivate: allowPrivateNetwork)
    let result = await download.run()
    let bytes: [UInt8]
    switch result {
    case .success(let data): bytes = data.bytes
    case .failure(let failure):
      if let never = failure.refusedNever {
        throw .photoAddressRefused(url: shown, detail: failure.reason, never: never)
      }
      throw .photoDownload(url: shown, reason: failure.reason)
    }
    guard ImageType(sniffing: bytes) != nil else {
      throw .photo(
        source: shown, reason: "the server sent something that is not a \(ImageType.accepted) image"
      )
    }
    return bytes
  }
}

/// One download (or POST, `WebhookSender`) on its own thread, its result delivered once: by the
/// thread, or by the deadline when the thread is still busy (a hanging name lookup), whichever
/// comes first.
final class Download: Sendable {
  /// The body received and the HTTP status it came with.
  typealias Answer = (bytes: [UInt8], status: Int)

  struct Failure: Error {
    let reason: String
    /// A refused address: whether it is never fetched.
    var refusedNever: Bool? = nil
    /// A POST answered with a redirect: calling again would be answered the same.
    var redirected = false
  }

  let url: String
  let limit: Int
  let timeout: TimeInterval
  let allowPrivate: Bool
  /// A POST's body and its media type; nil for a GET.
  let post: (body: [UInt8], type: String)?
  /// More header lines of a POST (`Name: value`, printable ASCII, under 1000 bytes each).
  let headers: [String]
  private let continuation = Mutex<CheckedContinuation<Result<Answer, Failure>, Never>?>(nil)

  init(
    url: String, limit: Int, timeout: TimeInterval, allowPrivate: Bool,
    post: (body: [UInt8], type: String)? = nil, headers: [String] = []
  ) {
    self.url = url
    self.limit = limit
    self.timeout = timeout
    self.allowPrivate = allowPrivate
    self.post = post
    self.headers = headers
  }

  func run() async -> Result<Answer, Failure> {
    await withCheckedContinuation { continuation in
      self.continuation.withLock { $0 = continuation }
      let thread = Thread { [self] in deliver(transfer()) }
      thread.stackSize = 1 << 20
      thread.start()
      // One second past libcurl's own deadline: only a lookup that never returns gets here.
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout + 1) { [self] in
        deliver(.failure(Failure(reason: tooSlow)))
      }
    }
  }

  private var tooSlow: String {
    "it took longer than \(Formatting.number(timeout)) seconds"
  }

  private func deliver(_ result: Result<Answer, Failure>) {
    continuation.withLock { $0.take() }?.resume(returning: result)
  }

  /// Runs libcurl (blocking).
  private func transfer() -> Result<Answer, Failure> {
    var fetch = CImprintFetch_Fetch()
    fetch.limit = limit
    fetch.timeout_ms = Int(timeout * 1000)
    fetch.allow_private = allowPrivate ? 1 : 0
    fetch.max_redirects = Int32(PhotoFetcher.maximumRedirects)
    // Never empty, so that its pointer is one libcurl may read (`post_len` says how much).
    let body = post.map { $0.body.isEmpty ? [0] : $0.body } ?? []
    let outcome = "Imprint/0.1".withCString { agent in
      (post?.type ?? "").withCString { type in
        body.withUnsafeBufferPointer { bytes in
          fetch.user_agent = agent
          if post != nil {
            // A body makes the request a POST; it is never redirected.
            fetch.post_body = bytes.baseAddress
            fetch.post_len = post?.body.count ?? 0
            fetch.post_type = type
            fetch.max_redirects = 0
          }
          guard post != nil, !headers.isEmpty else { return Int(CImprintFetch_fetch(url, &fetch)) }
          return headers.joined(separator: "\n").withCString { lines in
            fetch.post_headers = lines
            return Int(CImprintFetch_fetch(url, &fetch))
          }
        }
      }
    }
    let detail = withUnsafeBytes(of: fetch.detail) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    let reason: String
    switch outcome {
    case Int(CImprintFetch_FETCH_OK):
      defer { CImprintFetch_free(fetch.body) }
      guard let body = fetch.body else { return .success(([], fetch.http_status)) }
      return .success(
        (Array(UnsafeBufferPointer(start: body, count: fetch.body_len)), fetch.http_status))
    case Int(CImprintFetch_FETCH_REFUSED):
      return .failure(
        Failure(reason: SafeText.escaped(detail), refusedNever: fetch.refused_never != 0))
    case Int(CImprintFetch_FETCH_HTTP_STATUS):
      reason = "the server answered HTTP \(fetch.http_status)"
    case Int(CImprintFetch_FETCH_TOO_LARGE):
      reason = "it is over \(limit) bytes; at most \(limit) are downloaded"
    case Int(CImprintFetch_FETCH_TIMEOUT):
      reason = tooSlow
    case Int(CImprintFetch_FETCH_REDIRECTS) where post != nil:
      return .failure(
        Failure(
          reason: "the server answered HTTP \(fetch.http_status), a redirect, and a webhook call "
            + "follows none: the callback must be the receiver's own URL, not one that redirects",
          redirected: true))
    case Int(CImprintFetch_FETCH_BAD_URL), Int(CImprintFetch_FETCH_UNRESOLVED),
      Int(CImprintFetch_FETCH_REDIRECTS), Int(CImprintFetch_FETCH_UNAVAILABLE):
      reason = detail
    default:
      reason = "the download failed (\(detail))"
    }
    return .failure(Failure(reason: SafeText.escaped(reason)))
  }
}
