// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: a document worker keeps none of its parent's descriptors but its three
// streams, close-on-exec or not: a pipe another thread of a backend opened stays closable.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite("Document workers inherit no descriptor", .liveHandlesChecked)
struct WorkerDescriptorTests {
  /// The pipe and socket inodes process `pid` holds open, by descriptor.
  private static func descriptors(of pid: pid_t) -> [Int32: String] {
    let folder = "/proc/\(pid)/fd"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    var found: [Int32: String] = [:]
    for name in names {
      guard let number = Int32(name),
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)
      else { continue }
      found[number] = target
    }
    return found
  }

  @Test("a pipe opened without close-on-exec before a worker starts is not the worker's")
  func noInheritedPipe() async throws {
    // Foundation's Pipe opens its ends without O_CLOEXEC, as plain pipe() does.
    var ends: [Int32] = [-1, -1]
    #expect(pipe(&ends) == 0)
    defer { for end in ends { close(end) } }
    let mine = Self.descriptors(of: getpid())
    let pipeInodes = Set(ends.compactMap { mine[$0] })
    #expect(pipeInodes.count == 1, "\(mine)")

    let sandbox = DocumentSandbox(executable: worker, workers: 1)
    let items = await sandbox.inspect(files: [documents + "mixed.pdf"])
    #expect(items.map(\.status) == [.ok])
    let workers = ProcessTree.children(of: getpid()).filter { pid in
      (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.hasPrefix(
        worker + "\0") == true
    }
    try #require(!workers.isEmpty, "no worker alive")
    for pid in workers {
      let held = Self.descriptors(of: pid)
      #expect(held.values.allSatisfy { !pipeInodes.contains($0) }, "worker \(pid): \(held)")
    }
    sandbox.stopIdleWorkers()
  }
}
