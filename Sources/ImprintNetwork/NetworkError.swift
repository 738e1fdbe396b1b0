// SPDX-License-Identifier: Apache-2.0
// ImprintNetwork: the errors of photo downloads, each knowing the status the service answers it
// with.

import ImprintCore

/// A photo that could not be downloaded, or whose server may not be reached.
///
/// The codes are those the failures had when the card module downloaded photos
/// (`card.photoDownload`, `card.photoAddressRefused`): a script that reads them reads them still.
public enum NetworkError: ImprintError, Equatable {
  /// The photo could not be downloaded: not an http(s) URL, a host that does not resolve, a
  /// failed or non-200 request, too large, too slow, too many redirects.
  case photoDownload(url: String, reason: String)
  /// The photo's server (or a redirect's) is on a network downloads may not reach: `detail`
  /// names the host, the address and its range; `never` when no option allows it.
  case photoAddressRefused(url: String, detail: String, never: Bool)

  public var code: String {
    switch self {
    case .photoDownload: "card.photoDownload"
    case .photoAddressRefused: "card.photoAddressRefused"
    }
  }

  /// The status the error is answered with: 422, input understood but refused (a profile whose
  /// photo cannot be fetched).
  public var status: Int {
    switch self {
    case .photoDownload, .photoAddressRefused: 422
    }
  }

  public var message: String {
    switch self {
    case .photoDownload(let url, let reason): "photo '\(url)' cannot be downloaded (\(reason))"
    case .photoAddressRefused(let url, let detail, let never):
      "photo '\(url)' is not downloaded: \(detail), "
        + (never
          ? "an address never fetched"
          : "a local-network address, fetched only with --allow-private-network")
    }
  }

  public var hint: String? {
    switch self {
    case .photoDownload: "check the URL, or pass --photo or --photo-cache"
    case .photoAddressRefused(_, _, let never):
      never
        ? "pass --photo or --photo-cache"
        : "pass --allow-private-network if this is the shop's own photo server, or --photo"
    }
  }
}
