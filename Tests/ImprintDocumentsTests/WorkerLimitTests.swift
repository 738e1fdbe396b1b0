// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the CPU limit of a worker that serves many requests, read from the
// kernel's own account of it (/proc/PID/limits).

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintTestSupport
import Testing

@Suite("Document workers: the CPU limit of a reused worker", .liveHandlesChecked)
struct WorkerLimitTests {
  /// The `Max cpu time` soft and hard limits of each live worker this test process started.
  private func workerCPULimits() -> [(pid: String, soft: String, hard: String)] {
    let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return processes.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
      guard
        let command = procText("/proc/\(pid)/cmdline")?.split(separator: "\0").map(String.init),
        command.contains("__worker"),
        let parent = command.firstIndex(of: "--parent"), parent + 1 < command.count,
        command[parent + 1] == "\(getpid())",
        let line = procText("/proc/\(pid)/limits")?.split(separator: "\n")
          .first(where: { $0.hasPrefix("Max cpu time") })
      else { return nil }
      let fields = line.dropFirst("Max cpu time".count).split(separator: " ")
      guard fields.count >= 2 else { return nil }
      return (pid, String(fields[0]), String(fields[1]))
    }
  }

  @Test("requests leave the hard limit as inherited, so a later request's soft limit can rise")
  func hardLimitKept() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 2)), to: folder.file("a.pdf"))
    var limits = SandboxLimits()
    limits.cpuSeconds = 7
    let sandbox = DocumentSandbox(executable: worker, limits: limits, workers: 1)
    // Three requests, one worker (one slot): each sets the limit again.
    for _ in 0..<3 {
      _ = try await sandbox.inspect(path: folder.file("a.pdf"), file: "a.pdf")
    }
    let found = workerCPULimits()
    try #require(!found.isEmpty, "no worker of this process found in /proc")
    // A lowered hard limit cannot be raised again without CAP_SYS_RESOURCE (containers drop
    // it): every request after the first would be held to the first one's allowance.
    for worker in found {
      #expect(worker.hard == "unlimited", "worker \(worker.pid): hard limit \(worker.hard)")
    }
    // The worker that served: its soft limit is its CPU so far plus the 7 s allowed.
    #expect(found.contains { Int($0.soft).map { $0 >= 8 } == true }, "\(found)")
  }
}
