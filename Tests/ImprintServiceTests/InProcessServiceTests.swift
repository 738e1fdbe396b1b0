// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the harness route tests run against (ImprintTestSupport's
// InProcessService): it leaves the test runner's signals alone, a stopped service leaves no
// request, document worker or socket behind, and it answers while Swift's global pool is held.

import Foundation
import ImprintCore
import ImprintTestSupport
import Synchronization
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
    // Its listening socket, by inode (another test's server may take the port number once it
    // is free, so a refused connection cannot be the check).
    let listener = held(listeningSockets(port: server.port), by: [getpid()])
    #expect(!listener.isEmpty)
    #expect(await server.stop().isComplete)
    // `stop` checked these too.
    #expect(held(listener, by: [getpid()]).isEmpty)
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

  /// What blocks the global pool's threads: a count of those that started, and the word to
  /// stop.
  private final class Blockers: Sendable {
    let started = Atomic(0)
    let released = Atomic(false)
  }

  // The failure this guards against: the service once worked requests and jobs on Swift's
  // global pool, where blocking work elsewhere in the process (other suites, a library) held
  // every thread and no answer came until it ended.
  @Test("with every thread of Swift's global pool blocked, a probe, a QR and a batch are answered")
  func globalPoolHeld() async throws {
    let folder = TemporaryFolder()
    let manifest = try writeManifest(
      [
        #"{"id": "Q-1", "kind": "qr", "payload": "https://example.com/o/17"}"#,
        #"{"id": "Q-2", "kind": "qr", "payload": "held pool"}"#,
      ], in: folder)
    let server = try InProcessService()
    let blockers = Blockers()
    // Released whatever happens below; each blocker also gives up on its own after 120 s, so
    // that nothing here outlives a test that crashed half-way.
    defer { blockers.released.store(true, ordering: .releasing) }
    let count = activeProcessorCount * 4
    for _ in 0..<count {
      Task(executorPreference: globalConcurrentExecutor) {
        blockers.started.add(1, ordering: .relaxed)
        let end = ContinuousClock.now + .seconds(120)
        while !blockers.released.load(ordering: .acquiring) && ContinuousClock.now < end {
          usleep(10_000)
        }
      }
    }
    // As many blockers as the pool lets run hold its threads (in a whole run of the suites,
    // other suites' work may hold some too; on Linux the pool may add threads for blocked
    // ones): the service's answers must not wait for any of them.
    await eventually(tries: 300) { blockers.started.load(ordering: .relaxed) >= 1 }
    // Each answered within a minute, the job done within two, while the blockers run.
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(120)
    let health = try await server.request("GET", "/healthz", seconds: 60)
    #expect(health.status == 200, "\(health.text)")
    let qr = try await server.request("POST", "/v1/qr?payload=held%20pool", seconds: 60)
    #expect(qr.status == 200 && qr.contentType == "image/png", "\(qr.text)")
    let id = try acceptedID(
      try await server.request(
        "POST", "/v1/batch", form: [.file("manifest", path: manifest)], seconds: 60))
    var job = HTTPExchange(status: 0, contentType: "", body: [], headers: [:])
    await eventually(tries: 12_000) {
      job = (try? await server.request("GET", "/v1/jobs/\(id)", seconds: 10)) ?? job
      return job.json?["state"] as? String == "done" || clock.now > deadline
    }
    #expect(job.json?["state"] as? String == "done", "\(job.text)")
    blockers.released.store(true, ordering: .releasing)
    #expect(await server.stop().isComplete)
  }
}
