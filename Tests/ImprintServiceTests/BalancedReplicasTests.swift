// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: three `imprint serve` replicas behind HAProxy (Debian's), sharing their
// jobs through a real PostgreSQL, under a mixed load — batches posted and polled through the
// balancer while QR requests stream — with one replica killed (SIGKILL) and started again on
// its port: every job ends done with all its items, each item's output made once, and the
// requests that failed are at most those the killed replica held.

import Foundation
import ImprintJobsDB
import ImprintTestSupport
import Synchronization
import Testing

/// HAProxy in front of `ports`, on a port of its own, checking each replica's `/readyz`.
private final class Balancer {
  let port = TestPrinter.freePort()
  private let process = Process()
  private let folder = TemporaryFolder()

  init(_ ports: [Int]) throws {
    let servers = ports.enumerated().map { "  server r\($0.offset) 127.0.0.1:\($0.element) check" }
    let configuration = """
      global
        maxconn 512
      defaults
        mode http
        timeout connect 2s
        timeout client 120s
        timeout server 120s
        retries 3
        option redispatch
      frontend imprint
        bind 127.0.0.1:\(port)
        default_backend replicas
      backend replicas
        balance roundrobin
        option httpchk GET /readyz
        http-check expect status 200
        default-server inter 300ms fall 1 rise 1
      \(servers.joined(separator: "\n"))

      """
    let path = folder.file("haproxy.cfg")
    try Data(configuration.utf8).write(to: URL(fileURLWithPath: path))
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
    process.arguments = ["-db", "-f", path]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
  }

  func stop() {
    process.terminate()
    process.waitUntilExit()
  }

  deinit { if process.isRunning { stop() } }
}

/// The balancer as a `LoopbackServer` for the raw client.
private struct Front: LoopbackServer, Sendable {
  let port: Int
}

/// The QR requests' answers: whether they still stream, how many were answered and failed.
private final class Stream: Sendable {
  let on = Atomic(true)
  let answered = Atomic(0)
  let failed = Atomic(0)
}

@Suite(
  "imprint serve replicas behind HAProxy (PostgreSQL)", .tags(.slow), .skippedWhenQuick,
  .liveHandlesChecked, .onTestThreads)
struct BalancedReplicasTests {
  @Test("a mixed load through HAProxy with a replica killed and restarted: every job done once")
  func killedUnderLoad() async throws {
    let database = try PostgresServer()
    let folder = TemporaryFolder()
    let jobs = folder.file("jobs")
    let arguments = ["--jobs-dir", jobs, "--jobs-db", database.url(), "--job-lease", "2"]
    let ports = (0..<3).map { _ in TestPrinter.freePort() }
    var replicas = try ports.map { try ServiceProcess(arguments, port: $0) }
    let balancer = try Balancer(ports)
    let front = Front(port: balancer.port)
    #expect(try await eventually { (try? await front.get("/readyz"))?.status == 200 })

    let items = 400
    let manifest = try writeManifest(
      (0..<items).map {
        #"{"id": "Q-\#($0)", "kind": "qr", "payload": "https://example.com/o/\#($0)"}"#
      }, in: folder)
    // QR codes streamed by four clients while the batches run; their failures counted.
    let stream = Stream()
    // On the test's own threads: other suites may hold Swift's global pool for minutes.
    let clients = Task(executorPreference: testExecutor) {
      await withTaskGroup(of: Void.self) { group in
        for client in 0..<4 {
          group.addTask {
            var index = 0
            while stream.on.load(ordering: .acquiring) {
              let answer = try? await front.request(
                "POST", "/v1/qr?payload=client-\(client)-\(index)", seconds: 30)
              if answer?.status == 200 {
                stream.answered.add(1, ordering: .relaxed)
              } else {
                stream.failed.add(1, ordering: .relaxed)
              }
              index += 1
            }
          }
        }
      }
    }
    var ids: [String] = []
    for _ in 0..<6 { ids.append(try acceptedID(try await postBatch(manifest, on: front))) }
    // The replica running a job killed (its pid is in the lease's owner), then started again
    // on its port.
    let db = try JobsDBConnection(url: database.url(), migrate: false)
    var running: (job: String, replica: Int)?
    #expect(
      try waitFor {
        let row = try db.query(
          "SELECT id, lease_owner FROM jobs WHERE state = 'running' ORDER BY number LIMIT 1"
        ).rows.first
        let pid = row?.string("lease_owner")?.split(separator: "/").dropFirst().first
        guard let row, let id = row.string("id"),
          let index = replicas.firstIndex(where: { pid == "\($0.pid)"[...] })
        else { return false }
        running = (id, index)
        return true
      })
    let (taken, victim) = try #require(running)
    kill(replicas[victim].pid, SIGKILL)
    _ = replicas[victim].waitForExit()
    try await Task.sleep(for: .seconds(3))
    replicas[victim] = try ServiceProcess(arguments, port: ports[victim])

    for id in ids {
      let done = try await waitForJob(id, on: front)
      #expect(done.json?["state"] as? String == "done", "\(done.text)")
      let summary = try #require(done.json?["summary"] as? [String: Any], "\(done.text)")
      let made = (summary["ok"] as? Int ?? 0) + (summary["skipped"] as? Int ?? 0)
      #expect(summary["failed"] as? Int == 0 && made == items, "\(id): \(summary)")
      // Each item's output once, whichever replica made it.
      let codes = try FileManager.default.contentsOfDirectory(atPath: jobs + "/\(id)/output/qr")
      #expect(codes.count == items && Set(codes).count == items)
    }
    stream.on.store(false, ordering: .releasing)
    await clients.value
    let total = stream.answered.load(ordering: .relaxed) + stream.failed.load(ordering: .relaxed)
    // The error rate: at most the requests the killed replica held (one a client).
    let errors = stream.failed.load(ordering: .relaxed)
    print("balanced replicas: \(errors) of \(total) QR requests failed around the kill")
    #expect(total > 0 && errors <= 4, "\(errors) of \(total) failed")
    // The job the killed replica ran was taken over once; the others ran once, or twice when
    // the killed replica had claimed them too.
    let attempts = try ids.map { try db.job(id: $0)?.attempts ?? 0 }
    #expect(try db.job(id: taken)?.attempts == 2, "\(attempts)")
    #expect(attempts.allSatisfy { $0 >= 1 && $0 <= 2 }, "\(attempts)")
    balancer.stop()
    for replica in replicas { #expect(replica.stop().status == 0) }
  }
}
