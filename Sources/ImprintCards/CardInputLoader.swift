// SPDX-License-Identifier: Apache-2.0
// ImprintCards: a card's inputs read and decoded, with its photo chosen: the photo file given,
// else the cached one, else (on request) the downloaded one, else the placeholder.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintNetwork

/// The files one card is made from.
public struct CardRequest: Sendable {
  /// The profile's path; with `inlineProfile`, the name messages give the profile.
  public var profile: String
  /// The profile's bytes when they are not read from `profile` (a manifest's inline profile).
  public var inlineProfile: [UInt8]?
  /// The photo file (an image type `ImageDecoder` reads); nil to look in the cache, download or
  /// use the placeholder.
  ///
  /// With `inlinePhoto`, the name messages give the photo.
  public var photo: String?
  /// The photo's bytes when they are not read from `photo` (an upload); at most
  /// `FileIO.Limit.image` bytes.
  public var inlinePhoto: [UInt8]?
  /// A `get_follow_count` result for the back.
  public var followCounts: String?
  /// The network; detected from the profile when nil (else Steem).
  public var platform: Platform?

  /// A request for the card of the profile at (or named) `profile`.
  public init(
    profile: String, inlineProfile: [UInt8]? = nil, photo: String? = nil,
    inlinePhoto: [UInt8]? = nil, followCounts: String? = nil, platform: Platform? = nil
  ) {
    self.profile = profile
    self.inlineProfile = inlineProfile
    self.photo = photo
    self.inlinePhoto = inlinePhoto
    self.followCounts = followCounts
    self.platform = platform
  }
}

/// Where a card's photo may come from when no photo file is given for it.
public struct PhotoOptions: Sendable {
  /// The folder of photos named after accounts (`--photo-cache`), or nil.
  public var cache: PhotoCache?
  /// Download the profile's `profile_image` when no photo is given or cached (`--fetch-photo`);
  /// never without it.
  public var fetch: Bool
  /// Let downloads reach loopback and private addresses (`--allow-private-network`).
  public var allowPrivateNetwork: Bool

  /// Options that neither look in a cache nor download (the default).
  public init(cache: PhotoCache? = nil, fetch: Bool = false, allowPrivateNetwork: Bool = false) {
    self.cache = cache
    self.fetch = fetch
    self.allowPrivateNetwork = allowPrivateNetwork
  }

  /// Whether a card's photo comes only from its photo file or the placeholder (no cache, no
  /// download).
  public var isDefault: Bool { cache == nil && !fetch }
}

/// Where a card's photo came from.
public enum PhotoChoice: Sendable, Equatable {
  /// The photo file the request named.
  case given(path: String)
  /// The photo bytes the request held (`CardRequest.inlinePhoto`, an upload), named `name`.
  case uploaded(name: String)
  /// The photo cache's entry for the account.
  case cached(path: String)
  /// Downloaded from the profile's `profile_image`; `cachedAt` is the cache entry it was kept
  /// in (nil without a cache, or when it could not be written).
  case fetched(url: String, cachedAt: String?)
  /// The placeholder.
  case placeholder

  /// The file the photo was read from (a given or cached photo): an input that no output may
  /// replace.
  public var file: String? {
    switch self {
    case .given(let path), .cached(let path): path
    case .uploaded, .fetched, .placeholder: nil
    }
  }
}

/// A card's decoded inputs, where its photo came from, and what to tell the person about it.
public struct LoadedCardInput: Sendable {
  /// The decoded profile, template and photo.
  public var input: CardInput
  /// Where the photo came from.
  public var photo: PhotoChoice
  /// Warnings about the photo: an unusable cache entry, a download that could not be cached.
  public var warnings: [String]
}

/// Reads a card's profile, follow counts and photo and decodes them: the one loader `imprint
/// card`, batch card jobs and a backend share.
public struct CardInputLoader: Sendable {
  /// The photo used when a card has none.
  public var placeholder: (bytes: [UInt8], source: String)
  /// Where photos may come from besides a request's photo file.
  public var photos: PhotoOptions
  /// Decodes the photos (given, cached or downloaded: files from strangers).
  ///
  /// A `DocumentSandbox`, whose workers decode under memory, CPU and time limits. Nil refuses
  /// every photo but the placeholder (`card.photoNotSandboxed`); `InProcessImageDecoder()`
  /// decodes in this process, for photos the caller trusts.
  public var decoder: (any ImageDecoding)?

  /// A loader with `placeholder` for cards without a photo, decoding photos with `decoder`.
  public init(
    placeholder: (bytes: [UInt8], source: String), photos: PhotoOptions = PhotoOptions(),
    decoder: (any ImageDecoding)?
  ) {
    self.placeholder = placeholder
    self.photos = photos
    self.decoder = decoder
  }

  /// Reads and decodes the inputs of one card.
  ///
  /// The photo is the request's photo bytes or file, else the cached `<account>.jpg` (or another of
  /// `PhotoCache.extensions`), else
  /// (with `photos.fetch`) the downloaded `profile_image`, which is then kept in the cache once
  /// it decoded; else the placeholder. A cached photo that cannot be used is a miss (a warning),
  /// replaced by the next download. A cache that cannot be written costs the next card a
  /// download (a warning), not this card.
  ///
  /// - Parameters:
  ///   - request: the card's files.
  ///   - template: the design.
  /// - Returns: the decoded inputs, where the photo came from, and warnings.
  /// The photo is decoded by `decoder` (a sandbox's worker); the same bytes decoded before in
  /// this process are not decoded again.
  ///
  /// - Throws: `FileError` for a file that cannot be read; `CardError` for a profile, follow
  ///   counts or photo that cannot be used (a download that is not an image included), or a
  ///   photo without a decoder (`card.photoNotSandboxed`); `NetworkError` for a download that
  ///   failed (`card.photoDownload`, `card.photoAddressRefused`);
  ///   the decoder's own errors (`document.memoryLimit` ...); `ImageError` for a template
  ///   image.
  public func load(_ request: CardRequest, template: CardTemplate) async throws -> LoadedCardInput {
    let follow = try request.followCounts.map { path in
      try Profile.parseFollowCounts(
        try FileIO.read(path, limit: FileIO.Limit.structured), source: path)
    }
    let profile = try Profile.parse(
      try request.inlineProfile
        ?? FileIO.read(request.profile, limit: FileIO.Limit.structured),
      source: request.profile, platform: request.platform, follow: follow)
    var warnings: [String] = []
    var photo: (bytes: [UInt8], source: String)?
    var decoded: ImageCache.Decoded?
    var choice = PhotoChoice.placeholder
    if let path = request.photo, let bytes = request.inlinePhoto {
      guard bytes.count <= FileIO.Limit.image else {
        throw FileError.tooLarge(path: path, bytes: bytes.count, limit: FileIO.Limit.image)
      }
      photo = (bytes, path)
      decoded = try await decode(photo)
      choice = .uploaded(name: path)
    } else if let path = request.photo {
      photo = (try FileIO.read(path, limit: FileIO.Limit.image), path)
      decoded = try await decode(photo)
      choice = .given(path: path)
    } else {
      switch photos.cache?.lookup(profile.account) {
      case .hit(let bytes, let path)?:
        // No decoder is the caller's error, not the entry's: never a warning and a miss.
        guard decoder != nil else { throw CardError.photoNotSandboxed(source: path) }
        do {
          decoded = try await decode((bytes, path))
          photo = (bytes, path)
          choice = .cached(path: path)
        } catch let error as any ImprintError {
          // An entry that does not decode (or breaks the sandbox's limits) is a miss.
          let reason =
            if case .photo(_, let reason, _)? = error as? CardError { reason } else {
              error.message
            }
          warnings.append("cached photo '\(path)' is not used (\(reason))")
        }
      case .unusable(let path, let reason)?:
        warnings.append("cached photo '\(path)' is not used (\(reason))")
      case .miss?, nil: break
      }
    }
    if photo == nil, photos.fetch, let url = profile.profileImage {
      photo = (try await download(url), url)
      decoded = try await decode(photo)
      choice = .fetched(url: url, cachedAt: nil)
    }
    let input =
      try decoded.map { try CardInput(profile: profile, template: template, decoded: $0) }
      ?? CardInput(profile: profile, template: template, photo: nil, placeholder: placeholder)
    if case .fetched(let url, _) = choice, let photo, let cache = photos.cache {
      // Stored only now that it decoded.
      do {
        choice = .fetched(
          url: url, cachedAt: try cache.store(photo.bytes, account: profile.account))
      } catch {
        warnings.append("the photo of @\(profile.account) was not cached (\(error.message))")
      }
    }
    return LoadedCardInput(input: input, photo: choice, warnings: warnings)
  }

  /// Downloads the photo at `url` (`PhotoFetcher`, under `photos.allowPrivateNetwork`) and
  /// checks that the bytes are an image type Imprint reads, whatever the server says they are.
  ///
  /// - Throws: `NetworkError` when the download fails or is refused; `CardError.photo` when the
  ///   bytes are not an image.
  private func download(_ url: String) async throws -> [UInt8] {
    let bytes = try await PhotoFetcher.fetch(
      url, policy: AddressPolicy(allowPrivateNetwork: photos.allowPrivateNetwork))
    guard ImageType(sniffing: bytes) != nil else {
      throw CardError.photo(
        source: SafeText.excerpt(url, limit: 200),
        reason: "the server sent something that is not a \(ImageType.accepted) image")
    }
    return bytes
  }

  /// Decodes a photo with `decoder` (or the earlier decoding of the same bytes).
  ///
  /// - Throws: `CardError.photoNotSandboxed` without a decoder; `CardError.photo` for a file
  ///   that is not a usable image; the decoder's own errors.
  private func decode(_ photo: (bytes: [UInt8], source: String)?) async throws
    -> ImageCache.Decoded?
  {
    guard let photo else { return nil }
    guard let decoder else { throw CardError.photoNotSandboxed(source: photo.source) }
    return try await CardInput.decodePhoto(photo, with: decoder)
  }
}
