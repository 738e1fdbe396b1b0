// SPDX-License-Identifier: Apache-2.0
// ImprintNetwork: downloads a profile photo, on request only, within strict limits.

import Foundation
import ImprintCore

/// Downloads profile photos: http and https only, every address checked by an `AddressPolicy`,
/// a total deadline, a size limit counted as the bytes arrive.
///
/// The rule (docs/reliability.md): a photo URL comes from the profile, that is from whoever
/// wrote it, so the download never reaches the machine's own network unless the policy allows
/// private addresses (a shop's own photo server); every redirect is a new hop checked the same
/// way. What the bytes are is the caller's to judge: the card loader sniffs them for an image
/// type before it decodes them.
public enum PhotoFetcher {
  /// The largest photo downloaded (10 MB), counted after content decoding.
  public static let defaultLimit = 10 << 20
  /// The longest a whole download may take, redirects and slow servers included, in seconds.
  public static let defaultTimeout: TimeInterval = 15
  /// The most redirects followed.
  public static let maximumRedirects = 5

  /// Downloads `url`.
  ///
  /// The transfer runs on a thread of its own (libcurl blocks), so the caller's task only
  /// waits; the deadline also bounds a host name whose resolution hangs.
  ///
  /// - Parameters:
  ///   - url: the photo's http or https URL.
  ///   - limit: the most bytes accepted, after content decoding.
  ///   - timeout: the whole download's deadline in seconds.
  ///   - policy: the addresses that may be connected to (by default public ones only).
  /// - Returns: the body's bytes (not checked to be an image).
  /// - Throws: `NetworkError.photoDownload` naming the URL (not http(s), a failed or non-200
  ///   request, too large, too slow) or `NetworkError.photoAddressRefused` (an address the
  ///   policy refuses).
  public static func fetch(
    _ url: String, limit: Int = defaultLimit, timeout: TimeInterval = defaultTimeout,
    policy: AddressPolicy = AddressPolicy()
  ) async throws(NetworkError) -> [UInt8] {
    let shown = SafeText.excerpt(url, limit: 200)
    guard !url.utf8.contains(0), url.utf8.count <= 4096 else {
      throw .photoDownload(url: shown, reason: "it is not a URL with a host")
    }
    guard AddressPolicy.isHTTP(url) else {
      throw .photoDownload(url: shown, reason: "only http and https URLs are downloaded")
    }
    let download = Download(
      url: url, limit: limit, timeout: timeout, policy: policy, redirects: maximumRedirects)
    switch await download.run() {
    case .success(let answer): return answer.bytes
    case .failure(let failure):
      if let never = failure.refusedNever {
        throw .photoAddressRefused(url: shown, detail: failure.reason, never: never)
      }
      throw .photoDownload(url: shown, reason: failure.reason)
    }
  }
}
