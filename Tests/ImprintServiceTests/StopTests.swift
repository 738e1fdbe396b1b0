// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: how `imprint serve` stops, against real servers and real SIGTERM: work
// stuck in a system call (a prepare job sending to a printer that takes the connection and
// never answers) does not hold the process past the drain; the server says what was stuck and
// exits 3.

import Foundation
import ImprintTestSupport
import Testing

/// A printer that takes connections and never answers: it reads each until its client closes
/// it, and writes `connected` in `silent.log` of `folder` as each arrives.
private func silentPrinter(in folder: TemporaryFolder) throws -> (server: PythonServer, log: String)
{
  let log = folder.file("silent.log")
  let server = try PythonServer(
    handler: #"""
      import http.server, sys
      class H(http.server.BaseHTTPRequestHandler):
          def handle(self):
              with open(sys.argv[1], 'a') as f:
                  f.write('connected\n')
              while self.rfile.read(1):
                  pass
      """#, name: "silent", arguments: [log], stderr: folder.file("silent.err"), in: folder)
  return (server, log)
}

/// Whether the silent printer's log says a client connected.
private func connected(_ log: String) -> Bool {
  (try? String(contentsOfFile: log, encoding: .utf8))?.contains("connected") == true
}

@Suite("imprint serve: the stop", .liveHandlesChecked, .serialized)
struct StopTests {
  @Test(
    "SIGTERM while a prepare job is stuck sending to a printer that never answers: exit 3 after the drain, naming the job"
  )
  func stuckJobEndsTheProcess() throws {
    let folder = TemporaryFolder()
    let printer = try silentPrinter(in: folder)
    let post = try printShop(
      in: folder, printer: "ipp://127.0.0.1:\(printer.server.port)/ipp/print")
    let server = try ServiceProcess(["--config", folder.file("serve.json"), "--drain-timeout", "2"])
    let id = try acceptedID(try post("?prices=shop&printer=front", nil, server))
    // The job prepared its file and is sending it: libcups waits for the printer's answer.
    try #require(waitFor(tries: 30_000) { connected(printer.log) }, "the printer saw no job")
    kill(server.pid, SIGTERM)
    // A wait that only bounds a hang (the printer never answers), never a measure of time.
    try #require(waitFor(tries: 6_000) { isGone(server.pid) }, "the server still runs")
    let stopped = server.waitForExit()
    #expect(stopped.status == 3, "\(stopped.stderr)")
    let lines = stopped.stderr.split(separator: "\n").map(String.init)
    #expect(
      lines.contains(
        "error: the server stopped with work still stuck past the drain timeout of 2 s: "
          + "job '\(id)' (prepare)"), "\(stopped.stderr)")
    #expect(
      lines.last?.hasPrefix("hint: work that cannot be canceled (a prepare job sending to or")
        == true, "\(stopped.stderr)")
    #expect(!lines.contains("serve: stopped"))
  }
}
