// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: CUPS's IPP Everywhere printer simulator (ippeveprinter) on a free port,
// keeping every job it receives with the attributes it was given.

import Foundation

/// A job `ippeveprinter` received: the spooled file and the job's attributes.
public struct ReceivedJob: Sendable {
  /// The spooled file, byte for byte what was sent.
  public var file: String
  /// The job's attributes as the printer's hook got them (`IPP_COPIES` → `copies`, names in
  /// lowercase with dashes; enums as keywords: `finishings=staple`).
  public var attributes: [String: String]
}

/// `ippeveprinter` listening on `localhost` on a free port, accepting PDF, two-sided printing
/// and colour; stopped when released.
///
/// Debian's build needs Avahi's D-Bus even with DNS-SD off, so it runs in `dbus-run-session`
/// with the session bus standing in for the system bus. Each finished job runs a hook that
/// writes the job's `IPP_*` environment beside the kept file.
///
/// The session runs as a `ProcessTree`: stopping the printer (or the printer ending by itself)
/// ends and reaps `dbus-run-session`, its `dbus-daemon`, the printer and any hook still
/// running; none of them is left behind, whatever the test did.
public final class TestPrinter {
  /// `ipp://localhost:PORT/ipp/print`.
  public let uri: String
  /// The spool folder (files are kept).
  public let spool: String
  /// The printer's session: `dbus-run-session`, its daemon, the printer and its hooks.
  public let session: ProcessTree
  /// The folder of its spool and hook, kept as long as the printer runs (removed after it
  /// stopped, not under it).
  private let folder: TemporaryFolder

  /// Starts a printer with its spool and hook in `folder`.
  ///
  /// - Parameters:
  ///   - folder: where the spool and the hook go.
  ///   - extra: shell lines the hook runs after writing the job's attributes (`IPP_*` set):
  ///     `exit 3` aborts the job, `sleep 3` keeps it processing.
  ///   - users: user names and passwords; when not empty, the printer asks for HTTP Basic
  ///     credentials for everything but Get-Printer-Attributes (`-A`), checked with PAM through
  ///     pam_wrapper's pam_matrix (a service of the test's own; see `TestScheduler`), pam_wrapper
  ///     loaded into the printer alone (its hook runs without it).
  /// - Throws: when it does not answer within 10 s (three ports are tried).
  public init(folder: TemporaryFolder, hook extra: String = "", users: [String: String] = [:])
    throws
  {
    self.folder = folder
    spool = folder.file("spool")
    try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
    let hook = folder.file("hook.sh")
    try Data(
      ("#!/bin/sh\nenv | grep '^IPP_' | sort > \"$1.env.tmp\" && mv \"$1.env.tmp\" \"$1.env\"\n"
        + extra + "\n").utf8
    ).write(to: URL(fileURLWithPath: hook))
    chmod(hook, 0o755)
    let executable = Self.find("ippeveprinter")
    var authentication = ""
    var loader = ""
    if !users.isEmpty {
      let pam = folder.file("printer-pam")
      try FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: true)
      let passwords = pam + "/passdb"
      try Data(
        users.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value):imprint-printer\n" }
          .joined().utf8
      ).write(to: URL(fileURLWithPath: passwords))
      try Data(
        ("auth required \(TestScheduler.pamMatrix) passdb=\(passwords)\n"
          + "account required \(TestScheduler.pamMatrix) passdb=\(passwords)\n").utf8
      ).write(to: URL(fileURLWithPath: pam + "/imprint-printer"))
      // pam_wrapper goes into the printer alone, by the dynamic loader's --preload, never by
      // LD_PRELOAD, which the printer would hand down to each job's hook with the rest of its
      // environment. Every process that loads pam_wrapper claims a folder /tmp/pam.X (62 names)
      // as it starts and removes it as it ends; two starting together (the hook's `env | grep |
      // sort`) can claim the same one, and the first to end removes it under the other, which
      // then exits 1 before its main ("Failed to copy config files"): the hook wrote no
      // attributes, or empty ones, and the job never appeared (1 hook run in 300 on its own,
      // more beside other tests' printers and schedulers).
      authentication = "PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR='\(pam)' "
      loader = "'\(Self.dynamicLoader)' --preload '\(TestScheduler.pamWrapper)' "
    }
    let demand = users.isEmpty ? "" : "-A --pam-service imprint-printer "
    var started: (ProcessTree, Int)?
    for _ in 0..<3 where started == nil {
      let port = Self.freePort()
      let command =
        "DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS "
        + "\(authentication)exec \(loader)'\(executable)' -p \(port) -n localhost -r off "
        + "-f application/pdf "
        + "-2 -s 20,10 -k \(demand)"
        + "-d '\(spool)' -c '\(hook)' imprint-test"
      let session = try ProcessTree(["dbus-run-session", "--", "sh", "-c", command])
      if Self.waitForListener(port: port, of: session.pid, while: { session.isRunning }) {
        started = (session, port)
      } else {
        session.stop()
      }
    }
    guard let (session, port) = started else {
      throw CocoaError(
        .featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "ippeveprinter did not start"])
    }
    self.session = session
    uri = "ipp://localhost:\(port)/ipp/print"
  }

  deinit { session.stop() }

  /// The dynamic loader (glibc's `ld.so`, x86-64 like `TestScheduler.pamWrapper`), which runs a
  /// program with a library preloaded (`--preload`) without putting it in the environment.
  static let dynamicLoader = "/lib64/ld-linux-x86-64.so.2"

  /// The jobs finished so far, by job id, once `count` of them have finished (or after 20 s).
  public func jobs(count: Int) -> [Int: ReceivedJob] {
    let deadline = Date().addingTimeInterval(20)
    var found: [Int: ReceivedJob] = [:]
    repeat {
      found = [:]
      let names = (try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? []
      for name in names where name.hasSuffix(".env") {
        let text = (try? String(contentsOfFile: spool + "/" + name, encoding: .utf8)) ?? ""
        var attributes: [String: String] = [:]
        for line in text.split(separator: "\n") {
          guard line.hasPrefix("IPP_"), let equals = line.firstIndex(of: "=") else { continue }
          let key = line[line.index(line.startIndex, offsetBy: 4)..<equals]
            .lowercased().replacingOccurrences(of: "_", with: "-")
          attributes[key] = String(line[line.index(after: equals)...])
        }
        guard let id = attributes["job-id"].flatMap({ Int($0) }) else { continue }
        found[id] = ReceivedJob(
          file: spool + "/" + String(name.dropLast(4)), attributes: attributes)
      }
      if found.count >= count { break }
      usleep(20_000)
    } while Date() < deadline
    return found
  }

  /// A port nothing listens on now (the kernel's choice for port 0).
  public static func freePort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length)
        return getsockname(descriptor, $0, &length)
      }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Whether process `pid`, or one it started, listens on `port` within 10 s while `running`
  /// holds.
  ///
  /// Something else may take the port between `freePort` and the program's own bind
  /// (another test's server or printer): a connection alone would then be answered by it.
  static func waitForListener(port: Int, of pid: pid_t, while running: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline && running() {
      if listens(port: port, processes: [pid] + ProcessTree.descendants(of: pid)) { return true }
      usleep(20_000)
    }
    return false
  }

  /// Whether one of `processes` holds a socket listening on TCP `port` (IPv4 or IPv6), as
  /// /proc/net/tcp and the processes' descriptors say.
  static func listens(port: Int, processes: [pid_t]) -> Bool {
    !held(listeningSockets(port: port), by: processes).isEmpty
  }

  /// `name` on PATH or in /usr/sbin (where Debian puts ippeveprinter).
  private static func find(_ name: String) -> String {
    let folders =
      (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
      .map(String.init) + ["/usr/sbin", "/sbin"]
    return folders.map { $0 + "/" + name }.first {
      FileManager.default.isExecutableFile(atPath: $0)
    } ?? name
  }
}
