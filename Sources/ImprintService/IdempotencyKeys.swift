// SPDX-License-Identifier: Apache-2.0
// ImprintService: `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header): a POST
// that makes a job, retried with the same key and the same request, is answered with the job
// it made the first time instead of making another (an order printed twice).

import Foundation
import ImprintCore
import ImprintHTTP
import Synchronization

/// The `Idempotency-Key`s of the requests that made jobs, each with its request's fingerprint
/// and its job.
///
/// A key is the client's, one a request it may retry (a new UUID, say). The same key with the
/// same request (same route, query parameters and parts: names, file names and bytes; the
/// multipart boundary and the order of the parts do not count) is the job made the first
/// time; with another request it is refused (`ServiceError.idempotencyKeyReused`). Kept in
/// this process's memory, the most recent `limit` keys; with a jobs folder (`--jobs-dir`) each
/// key is also written with its job (`IdempotencyRecord`), and left in the folder when the job
/// is removed (`RemovedKeys`): the next start `restore`s the keys of the jobs it keeps and of
/// those removed. Without one, a restart forgets them all.
final class IdempotencyKeys: Sendable {
  /// What a request's key says.
  enum Claim: Equatable {
    /// The key is new: it is the caller's until `bind` or `release`.
    case new
    /// The key made job `id` with the same request.
    case replay(id: String)
  }

  private struct Entry {
    var fingerprint: [UInt8]
    /// The job the request made; nil while it is being accepted.
    var job: String?
    /// When it was claimed, from 0 (the oldest are forgotten first).
    var number: Int
  }

  private struct State {
    var entries: [String: Entry] = [:]
    var claimed = 0
  }

  /// Keys remembered at most; past it, the oldest whose job was made are forgotten.
  static let limit = 10_000
  /// The longest key, in bytes.
  static let maximumLength = 255
  private let state = Mutex(State())

  /// The key of `request`'s `Idempotency-Key` header, or nil without one.
  ///
  /// The draft's form is a Structured Field string (RFC 8941: `"..."`, with `\"` and `\\`);
  /// the bare text that many clients send is taken too, and names the same key.
  ///
  /// - Throws: `ServiceError.invalidIdempotencyKey` for an empty key, one longer than
  ///   `maximumLength` bytes, one with characters other than printable ASCII, or a quoted
  ///   string left open.
  static func key(of request: HTTPRequest) throws(ServiceError) -> String? {
    guard let header = request.idempotencyKey else { return nil }
    let text = header.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    var key: [UInt8] = []
    var bytes = Array(text.utf8)[...]
    if bytes.first == UInt8(ascii: "\"") {
      bytes = bytes.dropFirst()
      var closed = false
      while let byte = bytes.popFirst() {
        if byte == UInt8(ascii: "\"") {
          closed = true
          break
        }
        if byte == UInt8(ascii: "\\") {
          guard let escaped = bytes.popFirst(), [0x22, 0x5C].contains(escaped) else {
            throw .invalidIdempotencyKey(problem: "has a '\\' before neither '\"' nor '\\'")
          }
          key.append(escaped)
        } else {
          key.append(byte)
        }
      }
      guard closed, bytes.isEmpty else {
        throw .invalidIdempotencyKey(
          problem: closed ? "has text after its closing quote" : "has no closing quote")
      }
    } else {
      key = Array(bytes)
    }
    guard !key.isEmpty else { throw .invalidIdempotencyKey(problem: "is empty") }
    guard key.count <= maximumLength else {
      throw .invalidIdempotencyKey(
        problem: "is \(key.count) bytes; expected at most \(maximumLength)")
    }
    // The key's bytes are not echoed: a byte outside ASCII may not be text at all.
    if let position = key.firstIndex(where: { !(0x20...0x7E).contains($0) }) {
      throw .invalidIdempotencyKey(
        problem: "holds a byte outside printable ASCII at position \(position + 1) of the key "
          + "(\(key.count) bytes); expected only characters from ' ' to '~'")
    }
    return String(decoding: key, as: UTF8.self)
  }

  /// The SHA-256 of what makes `request` the request it is: its path, its query parameters
  /// and its parts (names, file names and bytes), each sorted by name and length-prefixed.
  static func fingerprint(of request: HTTPRequest) -> [UInt8] {
    var hash = SHA256()
    func add(_ bytes: [UInt8]) {
      var length = UInt64(bytes.count).bigEndian
      withUnsafeBytes(of: &length) { hash.update($0) }
      hash.update(bytes)
    }
    add(Array(request.path.utf8))
    for (name, value) in request.query.sorted(by: { $0.key < $1.key }) {
      add(Array(name.utf8))
      add(Array(value.utf8))
    }
    let parts = (request.parts ?? []).sorted {
      ($0.name, $0.filename ?? "") < ($1.name, $1.filename ?? "")
    }
    for part in parts {
      add(Array(part.name.utf8))
      add(Array((part.filename ?? "").utf8))
      add(part.bytes)
    }
    return hash.finish()
  }

  /// Claims `key` for a request of `fingerprint`.
  ///
  /// - Returns: `.new` when the key is new (the caller then `bind`s it to its job or
  ///   `release`s it); `.replay` with the job the same request made.
  /// - Throws: `ServiceError.idempotencyKeyReused` for a key sent with another request;
  ///   `.idempotencyKeyInUse` for one whose request is still being accepted.
  func claim(_ key: String, fingerprint: [UInt8]) throws(ServiceError) -> Claim {
    let outcome = state.withLock { state -> Result<Claim, ServiceError> in
      if let entry = state.entries[key] {
        guard let job = entry.job else { return .failure(.idempotencyKeyInUse(key: key)) }
        guard entry.fingerprint == fingerprint else {
          return .failure(.idempotencyKeyReused(key: key, id: job))
        }
        return .success(.replay(id: job))
      }
      state.entries[key] = Entry(fingerprint: fingerprint, job: nil, number: state.claimed)
      state.claimed += 1
      if state.entries.count > Self.limit {
        let oldest = state.entries.filter { $0.value.job != nil }
          .min { $0.value.number < $1.value.number }
        if let oldest { state.entries.removeValue(forKey: oldest.key) }
      }
      return .success(.new)
    }
    return try outcome.get()
  }

  /// Remembers that a request of `fingerprint` (64 lowercase hex digits) with `key` made job
  /// `id` before a restart (a key the jobs folder kept with its job).
  func restore(_ key: String, fingerprint: String, job id: String) {
    let digits = Array(fingerprint.utf8)
    guard digits.count == 64 else { return }
    func value(_ digit: UInt8) -> UInt8 { digit <= 0x39 ? digit - 0x30 : digit - 0x61 + 10 }
    let bytes = stride(from: 0, to: 64, by: 2).map {
      value(digits[$0]) << 4 | value(digits[$0 + 1])
    }
    state.withLock { state in
      state.entries[key] = Entry(fingerprint: bytes, job: id, number: state.claimed)
      state.claimed += 1
    }
  }

  /// Records that the request that claimed `key` made job `id`.
  func bind(_ key: String, job id: String) {
    state.withLock { $0.entries[key]?.job = id }
  }

  /// Forgets `key`, claimed by a request that made no job (it was refused): the key may be
  /// sent again.
  func release(_ key: String) {
    state.withLock { state in
      if state.entries[key]?.job == nil { state.entries.removeValue(forKey: key) }
    }
  }
}
