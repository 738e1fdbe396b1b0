// SPDX-License-Identifier: Apache-2.0
// ImprintNetwork: one libcurl transfer (fetch.c) on a thread of its own, under a deadline the
// caller's task never blocks past.

internal import CImprintFetch
import Foundation
import ImprintCore
import Synchronization

/// One download (`PhotoFetcher`) or POST (`WebhookSender`) on its own thread, its result
/// delivered once: by the thread, or by the deadline when the thread is still busy (a hanging
/// name lookup), whichever comes first.
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
  let policy: AddressPolicy
  /// The most redirects followed (a POST follows none).
  let redirects: Int
  /// A POST's body and its media type; nil for a GET.
  let post: (body: [UInt8], type: String)?
  /// More header lines of a POST (`Name: value`, printable ASCII, under 1000 bytes each).
  let headers: [String]
  private let continuation = Mutex<CheckedContinuation<Result<Answer, Failure>, Never>?>(nil)

  init(
    url: String, limit: Int, timeout: TimeInterval, policy: AddressPolicy, redirects: Int = 0,
    post: (body: [UInt8], type: String)? = nil, headers: [String] = []
  ) {
    self.url = url
    self.limit = limit
    self.timeout = timeout
    self.policy = policy
    self.redirects = redirects
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
    policy.apply(to: &fetch)
    fetch.max_redirects = Int32(redirects)
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
    let detail = AddressPolicy.detail(of: fetch)
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
