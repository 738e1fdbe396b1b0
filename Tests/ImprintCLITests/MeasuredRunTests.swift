// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: the measuring the end-to-end tests rely on (runMeasured): status, signals,
// peak memory of the program alone, and a hang guard that kills the whole process group.

import Foundation
import ImprintTestSupport
import Testing

@Suite("runMeasured: what the end-to-end tests measure", .liveHandlesChecked)
struct MeasuredRunTests {
  @Test("exit status, output, standard input, and a signal as its negative number")
  func statuses() throws {
    let folder = TemporaryFolder()
    try Data("from a file".utf8).write(to: URL(fileURLWithPath: folder.file("in.txt")))
    let cat = try runMeasured(
      ["sh", "-c", "cat; echo oops >&2; exit 3"], stdinPath: folder.file("in.txt"))
    #expect(cat.status == 3 && cat.stdout == "from a file" && cat.stderr == "oops\n")
    let killed = try runMeasured(["sh", "-c", "kill -9 $$"])
    #expect(killed.status == -9)
    // SIGTERM is blocked in the test runner's mask; the program starts with it unblocked.
    let term = try runMeasured(["sh", "-c", "kill -TERM $$; sleep 5"], timeout: 60)
    #expect(term.status == -15 && term.seconds < 4, "\(term.status) after \(term.seconds) s")
  }

  @Test("the peak is the program's, not the test process's")
  func peak() throws {
    let small = try runMeasured(["true"])
    #expect(small.peakKiB < 50_000, "\(small.peakKiB) KiB")
    let large = try runMeasured(
      ["python3", "-c", "b = bytearray(200 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"])
    #expect(large.status == 0 && large.peakKiB > 200_000, "\(large.peakKiB) KiB")
  }

  @Test("the hang guard kills the program and its children, and says so")
  func hangGuard() throws {
    let folder = TemporaryFolder()
    let pidFile = folder.file("child.pid")
    // On a loaded machine the shell may not reach its first line before a short guard fires
    // (seen at a load of 16 on 2 cores): then no child exists to be killed, and the run is
    // tried again with a guard four times longer.
    var child: Int32?
    for timeout in [2.0, 8, 32] where child == nil {
      let run = try runMeasured(
        ["sh", "-c", "sleep 300 & echo $! > \(pidFile); wait"], timeout: timeout)
      #expect(run.status == 999 && run.seconds < timeout + 30)
      #expect(run.peakKiB == Int.max / 2)
      child = Int32(
        String(decoding: FileManager.default.contents(atPath: pidFile) ?? Data(), as: UTF8.self)
          .trimmingCharacters(in: .whitespacesAndNewlines))
    }
    let started = try #require(child, "the shell never started its child, even in 32 s")
    // Killed with the group (a zombie until its reaper runs counts as gone: no state "S").
    var gone = false
    for _ in 0..<200 where !gone {
      let stat = procText("/proc/\(started)/stat") ?? ""
      gone = stat.isEmpty || stat.contains(") Z ")
      if !gone { usleep(10_000) }
    }
    #expect(gone)
  }
}
