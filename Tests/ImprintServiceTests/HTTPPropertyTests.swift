// SPDX-License-Identifier: Apache-2.0
// A property of the HTTP front end, over generated requests: a request that breaks RFC 9112
// gets exactly one error answer and its connection closed; a well-formed one gets its answer and
// the request after it is served as itself. Never two answers for one request, never a request
// hidden in another's bytes served.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

/// SplitMix64: the same cases on every run.
private typealias Generator = SeededGenerator

/// A request as lines, so that mutations can act on its parts.
private struct RequestShape {
  var requestLine = "GET /healthz HTTP/1.1"
  var headers: [(String, String)] = [("Host", "imprint.test"), ("User-Agent", "property")]
  /// The body as sent, framing included (chunks), and how it is framed.
  var body: [UInt8] = []
  /// Raw bytes to put between the head and the body in place of the blank line's CRLF pairs.
  var lineEnd = "\r\n"
  /// A line inserted among the headers as it is (a folded or nameless line).
  var rawLines: [String] = []

  /// The index of the User-Agent line (mutations change its name).
  var agent: Int {
    headers.firstIndex { $0.0.lowercased().hasPrefix("user-agent") } ?? 0
  }

  var bytes: [UInt8] {
    var head = requestLine + lineEnd
    for (name, value) in headers { head += "\(name): \(value)" + lineEnd }
    for line in rawLines { head += line + lineEnd }
    head += lineEnd
    return Array(head.utf8) + body
  }
}

/// One change to a request, and whether RFC 9112 makes the result malformed.
private struct Mutation: Sendable {
  var name: String
  var breaks: Bool
  var apply: @Sendable (inout RequestShape, inout Generator) -> Void
}

private let chunkedBody = Array("4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\n\r\n".utf8)

private let mutations: [Mutation] = [
  // Harmless: the request stays well-formed.
  Mutation(name: "header name in another case", breaks: false) { shape, _ in
    shape.headers[shape.agent].0 = String(
      shape.headers[shape.agent].0.map {
        $0.isUppercase ? Character($0.lowercased()) : Character($0.uppercased())
      })
  },
  Mutation(name: "an extra header", breaks: false) { shape, random in
    shape.headers.append(("X-Extra-\(random.below(100))", "value \(random.below(1000))"))
  },
  Mutation(name: "obs-text in a value", breaks: false) { shape, _ in
    shape.headers.append(("X-Text", "caf\u{E9}"))
  },
  Mutation(name: "a blank value", breaks: false) { shape, _ in
    shape.headers.append(("X-Blank", ""))
  },
  Mutation(name: "a body with Content-Length", breaks: false) { shape, _ in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = Array("hello".utf8)
    shape.headers.append(("Content-Length", "5"))
  },
  Mutation(name: "a chunked body with an extension", breaks: false) { shape, _ in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = chunkedBody
    shape.headers.append(("Transfer-Encoding", "chunked"))
  },
  // Breaking: each is refused by RFC 9112 (or 9110) as stated.
  Mutation(name: "a space before a colon", breaks: true) { shape, _ in
    shape.headers[shape.agent].0 += " "
  },
  Mutation(name: "a tab before a colon", breaks: true) { shape, _ in
    shape.headers[shape.agent].0 += "\t"
  },
  Mutation(name: "a header line without a name", breaks: true) { shape, random in
    shape.rawLines.append(": \(random.below(100))")
  },
  Mutation(name: "a folded line", breaks: true) { shape, _ in
    shape.rawLines.append(" folded")
  },
  Mutation(name: "bare LF line ends", breaks: true) { shape, _ in shape.lineEnd = "\n" },
  Mutation(name: "a NUL in a value", breaks: true) { shape, _ in
    shape.headers.append(("X-Nul", "a\u{0}b"))
  },
  Mutation(name: "a control byte in a value", breaks: true) { shape, random in
    let byte = [1, 8, 11, 12, 27, 31, 127][random.below(7)]
    shape.headers.append(("X-Control", "a" + String(UnicodeScalar(UInt8(byte))) + "b"))
  },
  Mutation(name: "two Hosts", breaks: true) { shape, _ in shape.headers.append(("Host", "b")) },
  Mutation(name: "no Host", breaks: true) { shape, _ in
    shape.headers.removeAll { $0.0 == "Host" }
  },
  Mutation(name: "HTTP/2.0", breaks: true) { shape, _ in
    shape.requestLine = shape.requestLine.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/2.0")
  },
  Mutation(name: "two spaces in the request line", breaks: true) { shape, _ in
    shape.requestLine = shape.requestLine.replacingOccurrences(of: " /", with: "  /")
  },
  Mutation(name: "Content-Length twice, differing", breaks: true) { shape, _ in
    shape.headers.append(("Content-Length", "0"))
    shape.headers.append(("Content-Length", "5"))
  },
  Mutation(name: "Content-Length and chunked", breaks: true) { shape, _ in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = chunkedBody
    shape.headers.append(("Content-Length", "5"))
    shape.headers.append(("Transfer-Encoding", "chunked"))
  },
  Mutation(name: "a coding that is not chunked, last", breaks: true) { shape, random in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = chunkedBody
    shape.headers.append(
      ("Transfer-Encoding", ["gzip", "identity", "\"chunked\"", "chunked, gzip"][random.below(4)]))
  },
  Mutation(name: "a chunk-size line with a bare LF", breaks: true) { shape, _ in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = Array("4\nabcd\r\n0\r\n\r\n".utf8)
    shape.headers.append(("Transfer-Encoding", "chunked"))
  },
  Mutation(name: "chunk data without its CRLF", breaks: true) { shape, _ in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = Array("4\r\nabcdXY0\r\n\r\n".utf8)
    shape.headers.append(("Transfer-Encoding", "chunked"))
  },
  Mutation(name: "a space after the chunk size", breaks: true) { shape, _ in
    shape.requestLine = "POST /healthz HTTP/1.1"
    shape.body = Array("4 \r\nabcd\r\n0\r\n\r\n".utf8)
    shape.headers.append(("Transfer-Encoding", "chunked"))
  },
]

@Suite("HTTP front end: generated requests, one answer each", .onTestThreads)
struct HTTPPropertyTests {
  @Test("300 generated requests: malformed ones one error and closed, others served in order")
  func generated() async throws {
    let server = try InProcessService()
    let port = server.port
    var random = Generator(state: 20_261_205)
    var broken = 0
    for index in 0..<300 {
      var shape = RequestShape()
      // One or two mutations of different kinds; the body ones exclude each other.
      var chosen: [Mutation] = []
      for _ in 0..<(1 + random.below(2)) {
        let mutation = mutations[random.below(mutations.count)]
        // Mutations of one part (the body, Host, the User-Agent line) exclude each other: one
        // could undo the other.
        let part = { (m: Mutation) -> String in
          if m.name.contains("Host") { return "host" }
          if m.name.contains("colon") || m.name.contains("case") { return "agent" }
          let body = ["body", "chunk", "coding", "Content-Length"]
          return body.contains { m.name.contains($0) } ? "body" : m.name
        }
        if chosen.contains(where: { part($0) == part(mutation) }) { continue }
        chosen.append(mutation)
      }
      for mutation in chosen { mutation.apply(&shape, &random) }
      let names = chosen.map(\.name).joined(separator: " + ")
      let hidden = "GET /v1/jobs/hidden-\(index) HTTP/1.1\r\nHost: a\r\n\r\n"
      let request = shape.bytes + Array(hidden.utf8)
      let seen = try await onOwnThread {
        try rawExchange(port: port, request, answers: 2, seconds: 10, settle: 0.1)
      }
      if chosen.contains(where: \.breaks) {
        broken += 1
        // One answer, an error, and the connection closed: the hidden request never served.
        #expect(seen.answers.count == 1, "\(index) \(names): \(seen.answers.map(\.status))")
        let status = seen.answers.first?.status ?? 0
        #expect([400, 417, 431, 501, 505].contains(status), "\(index) \(names): \(status)")
        #expect(seen.answers.first?.header("Connection") == "close", "\(index) \(names)")
        #expect(seen.closed, "\(index) \(names): left open")
      } else {
        // Its own answer (GET: 200; POST: 405, /healthz takes GET), then the hidden one's, as
        // itself: 404 for that job.
        #expect(seen.answers.count == 2, "\(index) \(names): \(seen.answers.map(\.status))")
        #expect(
          seen.answers.first?.status == (shape.requestLine.hasPrefix("GET") ? 200 : 405),
          "\(index) \(names)")
        #expect(seen.answers.last?.errorCode == "http.unknownJob", "\(index) \(names)")
        #expect(seen.answers.last?.text.contains("hidden-\(index)") == true, "\(index) \(names)")
      }
    }
    // Both kinds were generated in numbers.
    #expect(broken > 100 && broken < 290, "\(broken) of 300 broken")
    #expect(await server.stop().isComplete)
  }
}
