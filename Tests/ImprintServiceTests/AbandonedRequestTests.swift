// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: clients that leave while their request waits behind a full pool: their
// work is taken out of the queue (never started), counted, logged, and the requests after them
// are queued and answered, where the queue would otherwise have stayed full.

import Foundation
import ImprintTestSupport
import Testing

@Suite("imprint serve: clients that leave while their request waits", .liveHandlesChecked)
struct AbandonedRequestTests {
  @Test("two clients gone from a full queue: their work never starts, two others take their place")
  func abandonedWorkCancelled() throws {
    let folder = TemporaryFolder()
    let document = fixturesFolder + "/Documents/mixed.pdf"
    // One request worked at a time, two kept waiting; a document may take its time.
    let server = try ServiceProcess(["-j", "1", "--queue", "2", "--timeout", "600", "--access-log"])
    let warm = try curlRequest(
      "POST", server.url("/v1/inspect"), body: document,
      headers: ["Content-Type: application/pdf"], in: folder)
    #expect(warm.status == 200)
    let workers = server.childProcesses
    try #require(workers.count == 1, "\(workers)")
    // The worker stopped: the next inspect holds the pool's one place until it is continued.
    kill(workers[0], SIGSTOP)
    defer { kill(workers[0], SIGCONT) }
    let script = """
      import json, os, re, signal, socket, sys, time, urllib.request
      port, worker, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
      def metrics():
          text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60).read()
          values = {}
          for line in text.decode().splitlines():
              if line and not line.startswith("#"):
                  name, value = line.rsplit(" ", 1)
                  values[name] = float(value)
          return values
      def wait(what, condition):
          deadline = time.monotonic() + 120
          while time.monotonic() < deadline:
              values = metrics()
              if condition(values):
                  return values
              time.sleep(0.02)
          sys.exit(f"timed out waiting for {what}: {metrics()}")
      def send(target, body=b"", kind=None):
          s = socket.create_connection(("127.0.0.1", port), timeout=120)
          head = f"POST {target} HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: {len(body)}\\r\\n"
          if kind:
              head += f"Content-Type: {kind}\\r\\n"
          s.sendall(head.encode() + b"\\r\\n" + body)
          return s
      def answer(s):
          got = b""
          while b"\\r\\n\\r\\n" not in got:
              chunk = s.recv(65536)
              if not chunk:
                  sys.exit(f"connection closed before an answer: {got!r}")
              got += chunk
          head, _, body = got.partition(b"\\r\\n\\r\\n")
          lines = head.decode().split("\\r\\n")
          headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
          length = int(headers["content-length"])
          while len(body) < length:
              body += s.recv(65536)
          return int(lines[0].split()[1]), headers, body
      depth, running = "imprint_http_queue_depth", "imprint_http_requests_running"
      abandoned = "imprint_http_requests_abandoned_total"
      holder = send("/v1/inspect?name=held.pdf", open(path, "rb").read(), "application/pdf")
      wait("the held inspect", lambda m: m[running] == 1 and m[depth] == 0)
      gone = [send(f"/v1/qr?payload=abandoned-{i}") for i in (1, 2)]
      wait("two queued", lambda m: m[depth] == 2)
      # The queue is full: one more is refused at once.
      refused_status, _, refused_body = answer(send("/v1/qr?payload=refused"))
      for s in gone:
          s.close()
      after_leaving = wait("two abandoned", lambda m: m[abandoned] == 2 and m[depth] == 0)
      kept = [send(f"/v1/qr?payload=kept-{i}") for i in (1, 2)]
      wait("two queued again", lambda m: m[depth] == 2)
      os.kill(worker, signal.SIGCONT)
      held_status, _, held_body = answer(holder)
      kept_answers = [answer(s) for s in kept]
      final = wait("all answered", lambda m: m[running] == 0 and m[depth] == 0)
      print(json.dumps({
          "refused": [refused_status, json.loads(refused_body)["error"]["code"]],
          "abandonedAfterLeaving": after_leaving[abandoned],
          "held": [held_status, json.loads(held_body)["files"][0]["info"]["pages"]],
          "kept": [[status, headers.get("content-type"), len(body)]
                   for status, headers, body in kept_answers],
          "qrAnswered": final.get('imprint_http_requests_total{route="/v1/qr",method="POST",status="200"}'),
          "clientGone": final.get('imprint_errors_total{code="http.clientGone"}'),
          "abandoned": final[abandoned],
      }))
      """
    let run = try runTool("python3", ["-c", script, "\(server.port)", "\(workers[0])", document])
    #expect(run.status == 0, "\(run.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [String: Any])
    // The queue was full (503 http.busy) before the two left.
    let refused = report["refused"] as? [Any]
    #expect(refused?.first as? Int == 503)
    #expect(refused?.last as? String == "http.busy")
    #expect(report["abandonedAfterLeaving"] as? Double == 2)
    // The held request and the two queued after the departures are answered.
    #expect((report["held"] as? [Int]) == [200, 3])
    let kept = try #require(report["kept"] as? [[Any]])
    #expect(kept.map { $0[0] as? Int } == [200, 200])
    #expect(kept.map { $0[1] as? String } == ["image/png", "image/png"])
    // Only the two kept QR codes were made: the abandoned ones' work never ran.
    #expect(report["qrAnswered"] as? Double == 2)
    #expect(report["clientGone"] as? Double == 2)
    #expect(report["abandoned"] as? Double == 2)
    let stopped = server.stop()
    #expect(stopped.status == 0)
    // The access log: the two abandoned requests without a status, as http.clientGone.
    let records = try stopped.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let gone = records.filter { $0["errorCode"] as? String == "http.clientGone" }
    #expect(gone.count == 2, "\(stopped.stderr)")
    #expect(gone.allSatisfy { $0["status"] == nil && $0["path"] as? String == "/v1/qr" })
  }
}
