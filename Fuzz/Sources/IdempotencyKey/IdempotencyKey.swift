// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the `Idempotency-Key` header of `POST /v1/prepare` (ImprintService's
// `IdempotencyKeys`), text a client sends. The input is the header's value as libmicrohttpd
// hands it over (its bytes up to a NUL, read as UTF-8 the way the server reads them); it goes
// through `IdempotencyKeys.key(of:)` and, when it names a key, through the keys' store (claim,
// bind, replay, another request's refusal, release). Besides not trapping, it checks:
// - a key is 1 to `maximumLength` bytes of printable ASCII, and reading is deterministic;
// - the same key written as a Structured Field string (RFC 8941) reads back as itself, and
//   written bare (when it can be) too: both forms name one key;
// - a refusal is `http.invalidIdempotencyKey`, and every message and hint, which echo the
//   client's text, are safe to print (`SafeText`: no control or bidirectional characters) and
//   bounded.
// Internal API (`@testable`): scripts/fuzz builds in debug, where SwiftPM enables testing.

import FuzzSupport
import ImprintCore

@testable import ImprintHTTP
@testable import ImprintService

/// A request that carries `header` as its `Idempotency-Key`.
func request(_ header: String?) -> HTTPRequest {
  HTTPRequest(
    method: "POST", path: "/v1/prepare", query: [:], repeatedParameters: [],
    contentType: nil, body: [], idempotencyKey: header, deadline: .now)
}

/// Reads `header` as the server would.
func key(_ header: String) -> Result<String?, ServiceError> {
  Result { () throws(ServiceError) -> String? in try IdempotencyKeys.key(of: request(header)) }
}

/// Fails the run unless `error`'s words are safe to print and bounded.
func checkWords(_ error: ServiceError) {
  for text in [error.message, error.hint ?? ""] {
    precondition(
      !SafeText.needsEscape(text), "unsafe text in \(error.code): \(text.debugDescription)")
    precondition(text.unicodeScalars.count <= 1_000, "\(error.code): \(text.count) characters")
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  // libmicrohttpd gives a C string; the server reads it with String(cString:).
  let header = String(decoding: input.prefix { $0 != 0 }, as: UTF8.self)
  let read = key(header)
  switch (read, key(header)) {
  case (.success(let a), .success(let b)): precondition(a == b, "two readings differ")
  case (.failure(let a), .failure(let b)): precondition(a == b, "two refusals differ")
  default: preconditionFailure("one reading refused, the other not")
  }
  let found: String
  switch read {
  case .failure(let error):
    precondition(error.code == "http.invalidIdempotencyKey", "refused as \(error.code)")
    checkWords(error)
    return 0
  case .success(let value):
    guard let value else { preconditionFailure("a header given read as none") }
    found = value
  }
  let bytes = Array(found.utf8)
  precondition((1...IdempotencyKeys.maximumLength).contains(bytes.count), "\(bytes.count) bytes")
  precondition(bytes.allSatisfy { (0x20...0x7E).contains($0) }, "not printable ASCII")
  // Written as a Structured Field string, the key reads back as itself.
  var quoted = "\""
  for character in found {
    if character == "\"" || character == "\\" { quoted.append("\\") }
    quoted.append(character)
  }
  quoted.append("\"")
  guard case .success(found) = key(quoted) else {
    preconditionFailure(
      "\(found.debugDescription) written as \(quoted.debugDescription) reads otherwise")
  }
  // So does the bare form, when the key can be written bare (no quote first, no space at
  // either end, which the server trims).
  if bytes.first != UInt8(ascii: "\""), bytes.first != 0x20, bytes.last != 0x20 {
    guard case .success(found) = key(found) else {
      preconditionFailure("\(found.debugDescription) bare reads otherwise")
    }
  }
  // The store: new, in use until bound, then the same request's job; another request's
  // refusal names the key safely; released only while no job is bound.
  let keys = IdempotencyKeys()
  let fingerprint = IdempotencyKeys.fingerprint(of: request(header))
  precondition((try? keys.claim(found, fingerprint: fingerprint)) == .new)
  do {
    _ = try keys.claim(found, fingerprint: fingerprint)
    preconditionFailure("a key being accepted claimed twice")
  } catch {
    precondition(error == .idempotencyKeyInUse(key: found))
    checkWords(error)
  }
  keys.bind(found, job: "job-1")
  keys.release(found)
  precondition((try? keys.claim(found, fingerprint: fingerprint)) == .replay(id: "job-1"))
  do {
    _ = try keys.claim(found, fingerprint: Array(fingerprint.reversed()))
    preconditionFailure("a key claimed with another request")
  } catch {
    precondition(error == .idempotencyKeyReused(key: found, id: "job-1"))
    checkWords(error)
  }
  return 0
}

@_cdecl("IdempotencyKey_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
