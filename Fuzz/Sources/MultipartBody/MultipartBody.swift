// SPDX-License-Identifier: Apache-2.0
// Fuzz target: ImprintHTTP's readers of untrusted request text, the multipart/form-data body
// (MultipartParser), a Content-Type's parameters and boundary, and a request target's path and
// query (HTTPHead, QueryParameters). Besides not trapping, it checks that a body read in one
// piece and the same body read a byte at a time give the same parts or the same refusal, and
// that every part a read gives is within the limits.

import FuzzSupport
import ImprintCore

@testable import ImprintHTTP

/// Reads `body` in pieces of `size` bytes.
func read(_ body: [UInt8], boundary: String, size: Int, limits: MultipartLimits)
  -> Result<[FormPart], HTTPError>
{
  let parser = MultipartParser(boundary: boundary, path: "/fuzz", limits: limits)
  var offset = 0
  while offset < body.count {
    let piece = Array(body[offset..<min(body.count, offset + size)])
    if let problem = piece.withUnsafeBytes({ parser.read($0) }) { return .failure(problem) }
    offset += size
  }
  return parser.finish()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = bytes(data, size)
  // The first line is a Content-Type value; the rest, the body.
  let newline = input.firstIndex(of: 0x0A) ?? input.count
  let contentType = String(decoding: input[..<newline], as: UTF8.self)
  let body = Array(input[min(input.count, newline + 1)...])
  _ = HTTPMessageHeaders.parameters(contentType)
  _ = HTTPMessageHeaders.charset(contentType)
  // The first line as a request target, too.
  var head = HTTPHead()
  head.target = Array(input[..<newline])
  if let (path, query) = head.pathAndQuery() {
    _ = RequestText.problem(RequestText.percentDecoded(path))
    _ = QueryParameters(query)
  }
  guard let boundary = HTTPMessageHeaders.boundary(contentType) else { return 0 }
  var limits = MultipartLimits()
  limits.maximumParts = 8
  limits.maximumPartBytes = 4096
  let whole = read(body, boundary: boundary, size: max(1, body.count), limits: limits)
  let bytewise = read(body, boundary: boundary, size: 1, limits: limits)
  switch (whole, bytewise) {
  case (.success(let a), .success(let b)):
    precondition(
      a.map(\.name) == b.map(\.name) && a.map(\.bytes) == b.map(\.bytes)
        && a.map(\.filename) == b.map(\.filename),
      "the same body read whole and byte by byte gave other parts")
    precondition(a.count <= limits.maximumParts && a.allSatisfy { $0.bytes.count <= 4096 })
    precondition(a.allSatisfy { !$0.name.isEmpty })
  case (.failure(let a), .failure(let b)):
    precondition(a.code == b.code, "whole: \(a.code), byte by byte: \(b.code)")
  default:
    preconditionFailure("the same body read whole and byte by byte: one read, one refused")
  }
  return 0
}

@_cdecl("MultipartBody_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzOne)
}
