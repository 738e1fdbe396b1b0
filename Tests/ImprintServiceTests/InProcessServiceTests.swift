// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the harness route tests run against (ImprintTestSupport's
// InProcessService): it leaves the test runner's signals alone, and a stopped service leaves no
// request, document worker or socket behind.

import Foundation
import ImprintTestSupport
import Testing

/// The signals this process catches (`SigCgt` of /proc/self/status), as a mask.
private func caughtSignals() -> UInt64? {
  let status = procText("/proc/self/status") ?? ""
  let line = status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }
  return line.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) }
}

@Suite("the in-process service harness", .liveHandlesChecked, .onTestThreads)
struct InProcessServiceTests {
  @Test("no signal handler installed; once stopped, no request, worker or socket is left")
  func leavesNothing() async throws {
    let before = try #require(caughtSignals())
    let server = try InProcessService()
    let inspected = try await server.request(
      "POST", "/v1/inspect", headers: ["Content-Type: application/pdf"],
      file: fixturesFolder + "/Documents/mixed.pdf")
    #expect(inspected.status == 200, "\(inspected.text)")
    // What the stop must end is there: a document worker.
    #expect(server.workers.count == 1, "\(server.workers)")
    // SIGTERM, SIGINT and SIGHUP are still the test runner's.
    let mask: UInt64 =
      (1 << (UInt64(SIGTERM) - 1)) | (1 << (UInt64(SIGINT) - 1))
      | (1 << (UInt64(SIGHUP) - 1))
    #expect(try #require(caughtSignals()) & mask == before & mask)
    let port = server.port
    #expect(await server.stop().isComplete)
    // `stop` checked these too.
    #expect((try? RawHTTPConnection(port: port)) == nil)
    #expect(server.workers.isEmpty)
  }

  // docs/api-testing.md shows this test as the example of a route test: keep the two alike.
  @Test("a part over --max-part is 413 http.partTooLarge; the server stays up")
  func partTooLarge() async throws {
    let server = try InProcessService(settings: { $0.maxPart = 100_000 })
    let folder = TemporaryFolder()
    try Data(repeating: 0x25, count: 100_001).write(
      to: URL(fileURLWithPath: folder.file("big.pdf")))
    let answer = try await server.request(
      "POST", "/v1/thumbnail", form: [.file("file", path: folder.file("big.pdf"))])
    #expect(answer.status == 413 && answer.errorCode == "http.partTooLarge", "\(answer.text)")
    #expect(try await server.get("/healthz").status == 200)
    #expect(await server.stop().isComplete)
  }
}
