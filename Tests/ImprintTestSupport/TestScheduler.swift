// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a private CUPS scheduler (cupsd in the foreground, its own ServerRoot,
// spool and logs in a test's folder, on a free port), never the system's, with queues pointing
// at TestPrinters, and optionally users only it knows (pam_wrapper's pam_matrix).

import Foundation

/// `cupsd -f` listening on `127.0.0.1` on a free port, configured in a folder of its own, as
/// CUPS's own tests run it (test/run-stp-tests.sh): stopped when released, its children with it.
///
/// The scheduler has no filters (Debian's cups-filters is not installed), so its
/// `mime.convs` passes PDF to a queue's printer untouched (`application/pdf` to
/// `application/vnd.cups-pdf`, the format an IPP Everywhere queue's PPD takes, at cost 0 with
/// no program): the printer receives the prepared file's very bytes. With `users`, Create-Job,
/// Print-Job, Send-Document and Cancel-Job need HTTP Basic credentials, which cupsd checks with
/// PAM: `LD_PRELOAD` of pam_wrapper gives it a PAM service `cups` of its own (pam_matrix with a
/// password file in the folder), so no user of the system is involved.
public final class TestScheduler {
  /// `127.0.0.1:PORT`, for `CUPS_SERVER`, `PrintAccess.scheduler` and `lpadmin -h`.
  public let address: String
  /// The scheduler's folder (configuration, spool, logs).
  public let root: String
  private let process: Process
  /// The folder it lives in, kept as long as it runs (removed after it stopped, not under it).
  private let folder: TemporaryFolder

  /// pam_wrapper's preload library and its password-matrix module (Debian's libpam-wrapper).
  public static let pamWrapper = "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so"
  /// pam_matrix: users and passwords from a file.
  public static let pamMatrix = "/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so"

  /// Starts a scheduler in `folder/cups`.
  ///
  /// - Parameters:
  ///   - folder: where its folder goes (made traversable: the backends run as `lp`).
  ///   - users: user names and passwords; when not empty, jobs need them.
  /// - Throws: when cupsd does not answer within 10 s (three ports are tried).
  public init(folder: TemporaryFolder, users: [String: String] = [:]) throws {
    self.folder = folder
    root = folder.file("cups")
    for sub in ["", "/spool", "/spool/temp", "/log", "/cache", "/pam"] {
      try FileManager.default.createDirectory(
        atPath: root + sub, withIntermediateDirectories: true)
    }
    // cupsd runs the ipp backend as lp, which must reach the spool inside the test's folder.
    chmod(folder.path, 0o711)
    chmod(root, 0o711)
    try Self.write(
      "application/pdf application/vnd.cups-pdf 0 -\n", to: root + "/mime.convs")
    try Self.write(
      """
      FileDevice No
      Printcap \(root)/printcap
      ServerRoot \(root)
      StateDir \(root)
      ServerBin /usr/lib/cups
      CacheDir \(root)/cache
      DataDir /usr/share/cups
      RequestRoot \(root)/spool
      TempDir \(root)/spool/temp
      AccessLog \(root)/log/access_log
      ErrorLog \(root)/log/error_log
      PageLog \(root)/log/page_log

      """, to: root + "/cups-files.conf")
    var environment = ProcessInfo.processInfo.environment
    if !users.isEmpty {
      let passwords = root + "/pam/passdb"
      try Self.write(
        users.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value):cups\n" }.joined(),
        to: passwords)
      try Self.write(
        "auth required \(Self.pamMatrix) passdb=\(passwords)\n"
          + "account required \(Self.pamMatrix) passdb=\(passwords)\n",
        to: root + "/pam/cups")
      environment["LD_PRELOAD"] = Self.pamWrapper
      environment["PAM_WRAPPER"] = "1"
      environment["PAM_WRAPPER_SERVICE_DIR"] = root + "/pam"
    }
    let jobsNeedCredentials =
      users.isEmpty
      ? ""
      : """
      <Limit Create-Job Print-Job Send-Document Cancel-Job>
      AuthType Basic
      Require valid-user
      Order Allow,Deny
      </Limit>

      """
    var started: (Process, Int)?
    for _ in 0..<3 where started == nil {
      let port = TestPrinter.freePort()
      try Self.write(
        """
        Browsing Off
        Listen 127.0.0.1:\(port)
        LogLevel info
        MaxLogSize 0
        DefaultAuthType Basic
        <Policy default>
        \(jobsNeedCredentials)<Limit All>
        Order Allow,Deny
        </Limit>
        </Policy>

        """, to: root + "/cupsd.conf")
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [
        "cupsd", "-f", "-c", root + "/cupsd.conf", "-s", root + "/cups-files.conf",
      ]
      process.environment = environment
      process.currentDirectoryURL = URL(fileURLWithPath: root)
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      if TestPrinter.waitForListener(
        port: port, of: process.processIdentifier, while: { process.isRunning })
      {
        started = (process, port)
      } else {
        Self.stop(process)
      }
    }
    guard let (process, port) = started else {
      throw CocoaError(
        .featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "cupsd did not start"])
    }
    self.process = process
    address = "127.0.0.1:\(port)"
  }

  deinit { Self.stop(process) }

  /// Adds the queue `name` for the printer at `device` as an IPP Everywhere queue (`lpadmin
  /// -m everywhere`: the scheduler asks the printer what it supports and writes its PPD), and
  /// waits until its PPD is written.
  ///
  /// - Throws: when lpadmin fails or the PPD is not there within 20 s.
  public func addQueue(_ name: String, device: String) throws {
    // The model: IPP Everywhere, a PPD made from what the printer says it supports.
    let model = "everywhere"
    let made = try runTool(
      "lpadmin", ["-h", address, "-p", name, "-E", "-v", device, "-m", model])
    guard made.status == 0 else {
      throw CocoaError(
        .featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "lpadmin: \(made.stderr)"])
    }
    let deadline = Date().addingTimeInterval(20)
    while !FileManager.default.fileExists(atPath: "\(root)/ppd/\(name).ppd") {
      guard Date() < deadline else {
        throw CocoaError(
          .featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "no PPD for \(name)"])
      }
      usleep(20_000)
    }
  }

  /// The queue names the scheduler lists (`lpstat -e`).
  public func queues() throws -> [String] {
    try runTool("lpstat", ["-h", address, "-e"]).stdout.split(separator: "\n").map(String.init)
  }

  private static func write(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  }

  /// Ends the scheduler this object started and what it started (backends and their children),
  /// each by its own process id (from /proc): SIGKILL, which the test runner's blocked SIGTERM
  /// cannot hold off.
  private static func stop(_ process: Process) {
    let pid = process.processIdentifier
    if process.isRunning, pid > 1 {
      let started = ProcessTree.descendants(of: pid)
      kill(pid, SIGKILL)
      for child in started where child > 1 { kill(child, SIGKILL) }
    }
    if process.isRunning { process.waitUntilExit() }
  }
}
