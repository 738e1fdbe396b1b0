// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: the test printer leaves nothing running: its D-Bus session, its daemon
// and the printer end with it (stopped, or the printer dying by itself), and a ProcessTree ends
// what its program left behind, a process that left its group included, and hands down none of
// the test runner's descriptors.

import Foundation
import ImprintTestSupport
import Testing

@Suite(
  "TestPrinter and ProcessTree: nothing left running", .liveHandlesChecked, .tags(.slow),
  .skippedWhenQuick)
struct TestPrinterTests {
  /// The processes of `tree`'s group but its keeper, by name (the kernel's 15-character names).
  private func members(of tree: ProcessTree) -> [String: pid_t] {
    var found: [String: pid_t] = [:]
    for pid in ProcessTree.processes(inGroup: tree.pid) where pid != tree.pid {
      if let fields = ProcessTree.statFields(of: pid) { found[fields.name] = pid }
    }
    return found
  }

  /// The signals blocked in `pid` (`SigBlk` of /proc/PID/status, a hexadecimal mask).
  private func blockedSignals(of pid: pid_t) -> UInt64? {
    let lines = (procText("/proc/\(pid)/status") ?? "").split(separator: "\n")
    return lines.first { $0.hasPrefix("SigBlk:") }.flatMap {
      UInt64($0.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }
  }

  @Test("a stopped printer leaves no process: not its D-Bus daemon, its session nor itself")
  func stopped() throws {
    let folder = TemporaryFolder()
    var printer: TestPrinter? = try TestPrinter(folder: folder)
    let session = try #require(printer?.session)
    let running = members(of: session)
    let daemon = try #require(running["dbus-daemon"], "the group holds \(running)")
    #expect(running["dbus-run-sessio"] != nil)
    #expect(running["ippeveprinter"] != nil)
    // The daemon takes SIGTERM: the test runner's blocked signals are not handed down.
    #expect(blockedSignals(of: daemon) == 0)
    printer = nil
    #expect(ProcessTree.processes(inGroup: session.pid).isEmpty)
    for (name, pid) in running {
      #expect(ProcessTree.state(of: pid) == nil, "\(name) (\(pid)) is left")
    }
  }

  @Test("a printer that dies by itself takes its D-Bus session and daemon with it")
  func died() throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let running = members(of: printer.session)
    let daemon = try #require(running["dbus-daemon"], "the group holds \(running)")
    kill(try #require(running["ippeveprinter"]), SIGKILL)
    // The keeper ends once nothing is left, without being asked.
    #expect(waitFor { !printer.session.isRunning })
    #expect(ProcessTree.state(of: daemon) == nil)
    #expect(ProcessTree.processes(inGroup: printer.session.pid) == [printer.session.pid])
    printer.session.stop()
    #expect(ProcessTree.processes(inGroup: printer.session.pid).isEmpty)
  }

  @Test("a tree's stop ends what its program left behind, in its group or not")
  func orphans() throws {
    let folder = TemporaryFolder()
    let script =
      "sleep 300 & echo $! > '\(folder.file("child"))'; "
      + "(setsid sleep 301 & echo $! > '\(folder.file("orphan"))'); exec sleep 302"
    let tree = try ProcessTree(["sh", "-c", script])
    let read = { (name: String) in
      (try? String(contentsOfFile: folder.file(name), encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
    }
    #expect(waitFor { read("child") != nil && read("orphan") != nil })
    let child = try #require(read("child"))
    let orphan = try #require(read("orphan"))
    // The orphan left the group and its parent ended: the keeper adopted it.
    #expect(
      waitFor {
        let fields = ProcessTree.statFields(of: orphan)
        return fields?.parent == tree.pid && fields?.name == "sleep" && fields?.group != tree.pid
      })
    #expect(ProcessTree.statFields(of: child)?.group == tree.pid)
    tree.stop()
    #expect(ProcessTree.state(of: child) == nil)
    #expect(ProcessTree.state(of: orphan) == nil)
    #expect(ProcessTree.processes(inGroup: tree.pid).isEmpty)
  }

  @Test("a tree's program holds none of the test runner's descriptors (a file open to write)")
  func descriptors() throws {
    let folder = TemporaryFolder()
    // Open without close-on-exec, as a hook being written is: exec of it fails with ETXTBSY
    // while any process holds it open to write.
    let held = open(folder.file("hook.sh"), O_WRONLY | O_CREAT, 0o755)
    defer { close(held) }
    let tree = try ProcessTree(["sleep", "300"])
    // Once the child is sleep itself (its exec done).
    #expect(
      waitFor {
        ProcessTree.children(of: tree.pid).map { ProcessTree.statFields(of: $0)?.name } == ["sleep"]
      })
    for pid in [tree.pid] + ProcessTree.children(of: tree.pid) {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
      let files = names.compactMap {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")
      }
      #expect(!files.isEmpty && !files.contains(folder.file("hook.sh")), "\(pid): \(files)")
    }
    tree.stop()
  }
}
