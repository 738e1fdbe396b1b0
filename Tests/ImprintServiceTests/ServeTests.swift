// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `imprint serve` itself, started on a free port: its command line's
// listen errors and SIGTERM with a request in flight. The routes' answers are checked against
// a service in this process (RouteOutputTests).

import Foundation
import ImprintTestSupport
import Testing

private let documents = fixturesFolder + "/Documents/"

@Suite("imprint serve", .liveHandlesChecked, .onTestThreads)
struct ServeTests {
  @Test(
    "a malformed --listen is a usage error (2); a port already taken fails with service.listen (1)")
  func listenErrors() async throws {
    let malformed = try runTool(imprintExecutable, ["serve", "--listen", "300.1.1.1:80"])
    #expect(malformed.status == 2)
    #expect(malformed.stderr.hasPrefix("error: '300.1.1.1:80' is not an address to listen on"))
    let server = try ServiceProcess()
    let taken = try runTool(imprintExecutable, ["serve", "--listen", "127.0.0.1:\(server.port)"])
    #expect(taken.status == 1)
    #expect(
      taken.stderr.hasPrefix(
        "error: cannot listen on 127.0.0.1:\(server.port): bind failed (Address already in use)"))
    #expect(server.stop().status == 0)
  }

  @Test("SIGTERM with a request in flight: it is answered, new connections refused, exit 0")
  func gracefulStop() async throws {
    let server = try ServiceProcess()
    // The request's head is sent with Expect: 100-continue; once 100 Continue came back the
    // server is reading it. Then SIGTERM, then the body: the answer must still come.
    let script = pythonFixture("expect_continue_client.py")
    let result = try runTool(
      "python3",
      ["-c", script, "\(server.pid)", "\(server.port)", documents + "mixed.pdf"])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
    #expect(report["status"] as? Int == 200)
    #expect(report["refused"] as? Bool == true)
    #expect(report["connection"] as? String == "close")
    let files = (report["body"] as? [String: Any])?["files"] as? [[String: Any]]
    #expect((files?.first?["info"] as? [String: Any])?["pages"] as? Int == 3)
    let exit = server.waitForExit()
    #expect(exit.status == 0)
    #expect(exit.stderr.hasSuffix("serve: stopped\n"))
  }

  @Test("a stop returns when another process holds the server's standard error open")
  func stopWithLeakedStderr() throws {
    // A process that holds the server's standard error (as a sibling started at the same
    // moment by another thread once inherited a replica's): its end of file never comes while
    // that process lives. The stop must reap the server and return all the same, not wait.
    let server = try ServiceProcess()
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/bin/bash")
    holder.arguments = ["-c", "exec 3>/proc/\(server.pid)/fd/2; exec sleep 120"]
    try holder.run()
    defer {
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
    }
    // The holder has the descriptor once its shell has exec'd the sleep.
    #expect(
      waitFor {
        (try? String(contentsOfFile: "/proc/\(holder.processIdentifier)/comm", encoding: .utf8))
          == "sleep\n"
      })
    let started = Date()
    let exit = server.stop()
    #expect(exit.status == 0)
    #expect(exit.stderr.contains("another process holds it"), "\(exit.stderr)")
    // The server was reaped: no zombie left for Swift Testing's exit-test monitor to spin on.
    #expect(kill(server.pid, 0) != 0)
    #expect(Date().timeIntervalSince(started) < 60)
  }
}
