// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: decoded images and their print-ready versions, shared by a process's threads.

import Foundation
import Synchronization

/// Decoded images, and the versions prepared for a box (cropped, scaled, JPEG-encoded), kept
/// for the next card that uses the same file.
///
/// The cards of one run often share images: the placeholder photo, a template's background,
/// a shop's default avatars, the copies and reprints of an order. Each distinct file is then
/// decoded, scaled and encoded once per process instead of once per card.
///
/// Entries are keyed by the file's bytes themselves (compared in full on a hit, so two files
/// can never be confused) and the cache holds at most `capacity` bytes of keys, pixels and JPEG
/// data: when a new entry would pass it, everything is dropped and filling starts again, so
/// memory stays bounded however many cards a batch has. Images larger than a quarter of the
/// capacity are never kept. Thread-safe; decoding happens outside the lock.
public final class ImageCache: Sendable {
  /// The process-wide cache (24 MB).
  public static let shared = ImageCache(capacity: 24 << 20)

  /// A decoded image and the number that names it in this cache.
  public struct Decoded: Sendable {
    /// The image.
    public let bitmap: Bitmap
    /// Names this decoding for `prepared(_:id:...)`; nil when the image was too large to keep.
    public let id: UInt64?
  }

  private struct PreparedKey: Hashable {
    let id: UInt64
    let width: Int
    let height: Int
    let fit: ImageFit
    let jpeg: Bool
  }

  /// A file's bytes as a key, hashed once, outside the lock, as one block of memory (an array's
  /// own hashing feeds the hasher a byte at a time).
  private struct FileKey: Hashable {
    let bytes: [UInt8]
    let hash: Int

    init(_ bytes: [UInt8]) {
      self.bytes = bytes
      var hasher = Hasher()
      bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
      hash = hasher.finalize()
    }

    static func == (a: FileKey, b: FileKey) -> Bool {
      a.hash == b.hash && a.bytes.count == b.bytes.count
        && a.bytes.withUnsafeBytes { x in
          b.bytes.withUnsafeBytes { y in
            guard let left = x.baseAddress, let right = y.baseAddress, left != right else {
              return true  // both empty (equal counts), or one storage
            }
            return memcmp(left, right, x.count) == 0
          }
        }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
  }

  private struct State {
    var decoded: [FileKey: Decoded] = [:]
    var prepared: [PreparedKey: Bitmap] = [:]
    var bytes = 0
    var nextID: UInt64 = 1
    var hits = 0
    var misses = 0
  }

  private let capacity: Int
  private let state = Mutex(State())

  /// Creates a cache holding at most `capacity` bytes.
  public init(capacity: Int) { self.capacity = capacity }

  /// How many look-ups were answered from the cache, how many were not, and the bytes held
  /// (for tests and benchmarks).
  public var statistics: (hits: Int, misses: Int, bytes: Int) {
    state.withLock { ($0.hits, $0.misses, $0.bytes) }
  }

  /// Decodes `bytes` (see `ImageDecoder.decode`), or returns the earlier decoding of the same
  /// bytes.
  ///
  /// - Throws: `ImageError`, as `ImageDecoder.decode` (failures are not cached).
  public func decode(_ bytes: [UInt8], source: String) throws(ImageError) -> Decoded {
    let key = FileKey(bytes)
    if let found = lookUp({ $0.decoded[key] }) { return found }
    return keep(try ImageDecoder.decode(bytes, source: source), for: key, bytes: bytes.count)
  }

  /// Returns the earlier decoding of the same bytes, or decodes them with `decoder` (a
  /// sandbox's workers for a file from a stranger) and keeps the result.
  ///
  /// - Throws: what `decoder` throws (failures are not cached).
  public func decode(_ bytes: [UInt8], source: String, with decoder: any ImageDecoding)
    async throws -> Decoded
  {
    let key = FileKey(bytes)
    if let found = lookUp({ $0.decoded[key] }) { return found }
    return keep(try await decoder.decodeImage(bytes, source: source), for: key, bytes: bytes.count)
  }

  /// Keeps `bitmap` as the decoding of the file `key` (`bytes` long), unless it is too large
  /// or another thread kept one first.
  private func keep(_ bitmap: Bitmap, for key: FileKey, bytes: Int) -> Decoded {
    let cost = bytes + bitmap.pixels.count + (bitmap.jpeg?.count ?? 0)
    guard cost <= capacity / 4 else { return Decoded(bitmap: bitmap, id: nil) }
    return state.withLock { state in
      if let raced = state.decoded[key] { return raced }
      makeRoom(for: cost, in: &state)
      let entry = Decoded(bitmap: bitmap, id: state.nextID)
      state.nextID += 1
      state.decoded[key] = entry
      state.bytes += cost
      return entry
    }
  }

  /// `bitmap.prepared(forWidth:height:fit:)`, with JPEG data when `jpeg` is set, or the earlier
  /// result for the same decoding (`id` from `decode`) and box.
  ///
  /// - Throws: `GraphicsError.jpegEncode` when libjpeg cannot encode.
  public func prepared(
    _ bitmap: Bitmap, id: UInt64?, width: Int, height: Int, fit: ImageFit, jpeg: Bool
  ) throws(GraphicsError) -> Bitmap {
    func make() throws(GraphicsError) -> Bitmap {
      let prepared = bitmap.prepared(forWidth: width, height: height, fit: fit)
      return jpeg ? try prepared.withJPEG() : prepared
    }
    guard let id else { return try make() }
    let key = PreparedKey(id: id, width: width, height: height, fit: fit, jpeg: jpeg)
    if let found = lookUp({ $0.prepared[key] }) { return found }
    let result = try make()
    let cost = result.pixels.count + (result.jpeg?.count ?? 0)
    guard cost <= capacity / 4 else { return result }
    state.withLock { state in
      guard state.prepared[key] == nil else { return }
      makeRoom(for: cost, in: &state)
      state.prepared[key] = result
      state.bytes += cost
    }
    return result
  }

  /// Empties the cache.
  public func removeAll() {
    state.withLock { Self.empty(&$0) }
  }

  /// Finds an entry, counting the hit or miss.
  private func lookUp<Entry: Sendable>(_ find: (State) -> Entry?) -> Entry? {
    state.withLock { state in
      let found = find(state)
      if found != nil { state.hits += 1 } else { state.misses += 1 }
      return found
    }
  }

  private func makeRoom(for cost: Int, in state: inout State) {
    // Prepared versions name decodings by number; dropping both together keeps them consistent
    // (a dropped decoding's number is never reused).
    if state.bytes + cost > capacity { Self.empty(&state) }
  }

  private static func empty(_ state: inout State) {
    state.decoded = [:]
    state.prepared = [:]
    state.bytes = 0
  }

}
