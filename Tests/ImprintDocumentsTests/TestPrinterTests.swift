// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the test printer leaves nothing running: its D-Bus session, its daemon
// and the printer end with it (stopped, or the printer dying by itself), and a ProcessTree ends
// what its program left behind, a process that left its group included.

import Foundation
import ImprintTestSupport
import Testing

@Suite("TestPrinter and ProcessTree: nothing left running", .liveHandlesChecked)
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
    #expect(waitFor { ProcessTree.statFields(of: orphan)?.parent == tree.pid })
    #expect(ProcessTree.statFields(of: orphan)?.group != tree.pid)
    #expect(ProcessTree.statFields(of: child)?.group == tree.pid)
    tree.stop()
    #expect(ProcessTree.state(of: child) == nil)
    #expect(ProcessTree.state(of: orphan) == nil)
    #expect(ProcessTree.processes(inGroup: tree.pid).isEmpty)
  }
}
