// SPDX-License-Identifier: Apache-2.0
// Memory spent on JSON bodies and parts: bounded by the JSON limit, counted in --body-memory
// at the cost of decoding it, and not kept after.

import Foundation
import ImprintTestSupport
import Testing

/// `VmRSS` and `VmHWM` of `pid`, in KiB.
private func memory(of pid: Int32) throws -> (resident: Int, peak: Int) {
  let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
  func field(_ name: String) -> Int {
    let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
  }
  return (field("VmRSS"), field("VmHWM"))
}

/// A QR request's JSON of about `bytes` bytes whose bulk is an array of small numbers, the
/// costliest JSON to decode per byte.
private func numbers(_ bytes: Int, in folder: TemporaryFolder) throws -> String {
  let count = (bytes - 40) / 2
  let text =
    "{\"payload\": \"hello\", \"list\": ["
    + Array(repeating: "1", count: count)
    .joined(separator: ",") + "]}"
  let path = folder.file("numbers-\(bytes).json")
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  return path
}

@Suite("imprint serve: JSON bodies' memory", .serialized, .onTestThreads)
struct JSONMemoryTests {
  @Test("JSON over 1 MiB is refused unread; 1 MiB bodies in a loop: a bounded peak, no growth")
  func boundedAndGivenBack() async throws {
    let folder = TemporaryFolder()
    // glibc's malloc as a leak check needs it: two arenas, and blocks of 128 KiB and more
    // always mapped of their own (and so given back when freed). By default a loaded machine's
    // scheduling spreads the rounds' threads over new arenas, and a freed 1 MiB block raises
    // the mapping threshold so that the next come from an arena's heap, which keeps them:
    // both grew the resident size by 15-17 MiB in late rounds of full test runs, though
    // nothing was kept.
    var environment = ProcessInfo.processInfo.environment
    environment["MALLOC_ARENA_MAX"] = "2"
    environment["MALLOC_MMAP_THRESHOLD_"] = "131072"
    let server = try ServiceProcess(["--jobs", "2"], environment: environment)
    defer { _ = server.stop() }
    let json = ["Content-Type: application/json"]
    let base = try memory(of: server.pid)
    // 20 MB of JSON: refused from its Content-Length, before a byte of it is read.
    let large = try numbers(20 << 20, in: folder)
    let refused = try await server.request("POST", "/v1/qr", headers: json, file: large)
    #expect(refused.status == 413 && refused.errorCode == "http.bodyTooLarge", "\(refused.text)")
    #expect(try memory(of: server.pid).peak - base.peak < 8 << 10)
    // Just under the limit: read, decoded (the unknown key 'list' refused after), in rounds of
    // 20 one after the other and 8 at once.
    let body = try numbers((1 << 20) - 64, in: folder)
    var after: [Int] = []
    for _ in 0..<4 {
      for _ in 0..<20 {
        let answer = try await server.request("POST", "/v1/qr", headers: json, file: body)
        #expect(answer.status == 400 && answer.errorCode == "http.invalidParameter")
      }
      // Eight at once.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<8 {
          group.addTask {
            _ = try await server.request("POST", "/v1/qr", headers: json, file: body)
          }
        }
        try await group.waitForAll()
      }
      // Measured once the server let every body go: a body's bytes go back as its exchange
      // ends, just after its answer is sent, so the client may be answered first.
      for _ in 0..<50 {
        let held = try PrometheusText(try await server.request("GET", "/metrics").text).value(
          "imprint_http_body_bytes")
        if held == 0 { break }
        try await Task.sleep(for: .milliseconds(100))
      }
      // The least of ten samples a tenth of a second apart: what is kept, not what a thread
      // still tears down (the resident size moved by ±30 MiB between single samples).
      var least = Int.max
      for _ in 0..<10 {
        least = min(least, try memory(of: server.pid).resident)
        try await Task.sleep(for: .milliseconds(100))
      }
      after.append(least)
    }
    print("JSON bodies' memory: resident after each round \(after) KiB")
    let peak = try memory(of: server.pid).peak
    // Two requests decode at once (--jobs 2), each about 27 times 1 MiB at most: the
    // peak stays within 200 MB of the start (a 20 MB body took 600 MB before the limit).
    #expect(peak - base.peak < 200 << 10, "peak \(peak) KiB from \(base.peak)")
    // What a round took is given back or reused by the next: no growth from round to round
    // once warm. A round is 28 requests, so keeping even half a body's bytes a request would
    // grow it 14 MiB a round, 28 MiB over the last two. Counted from the second round (the
    // first makes the arenas' heaps): under 24 MiB over two rounds and under 12 MiB in the
    // last. (With malloc's default arenas, 16.1, 17.1 and 17.4 MiB over the last two rounds
    // in full test runs, 15 MiB of it in the last once: arenas, not a leak.)
    // The last two rounds' lower figure is compared with the first two's: in full test runs the
    // resident size swung by 15-20 MiB from one round to the next and back ([103148, 91732,
    // 90952, 105628], [94432, 105612, 89348, 105596], [83856, 82676, 79396, 99668] KiB), which
    // a leak never does: kept bytes raise every round, so the lower of the last two would stand
    // two rounds' growth (28 MiB for half a body a request) above the lower of the first two.
    let growth = "resident after each round: \(after) KiB"
    #expect(after[3] - after[1] < 24 << 10, "\(growth)")
    #expect(min(after[2], after[3]) - min(after[0], after[1]) < 12 << 10, "\(growth)")
  }

  @Test("--body-memory counts a JSON body's decoding: 32 times its size")
  func budgetCountsDecoding() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess(["--max-body", "\(8 << 20)", "--body-memory", "\(16 << 20)"])
    defer { _ = server.stop() }
    let json = ["Content-Type: application/json"]
    // 600 KB of JSON would take 19.2 MB to decode: more than the whole budget.
    let over = try numbers(600_000, in: folder)
    let busy = try await server.request("POST", "/v1/qr", headers: json, file: over)
    #expect(busy.status == 503 && busy.errorCode == "http.bodiesBusy", "\(busy.text)")
    // 400 KB takes 12.8 MB: served (its unknown key refused once decoded).
    let fits = try numbers(400_000, in: folder)
    let read = try await server.request("POST", "/v1/qr", headers: json, file: fits)
    #expect(read.status == 400 && read.errorCode == "http.invalidParameter", "\(read.text)")
    // The budget is whole again afterwards: the gauge reads 0. (A body's bytes go back as its
    // exchange ends, just after its answer is sent: on a loaded machine the client may ask
    // first.)
    var held: Double?
    for _ in 0..<50 {
      held = try PrometheusText(try await server.request("GET", "/metrics").text).value(
        "imprint_http_body_bytes")
      if held == 0 { break }
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(held == 0)
  }

  @Test("a JSON part (an order, a profile) over 1 MiB is 413; its decoding is budgeted")
  func jsonParts() async throws {
    let folder = TemporaryFolder()
    let config = folder.file("serve.json")
    try JSONSerialization.data(
      withJSONObject: [
        "priceLists": ["booster": repositoryRoot + "/assets/samples/prices-booster.json"]
      ]
    ).write(to: URL(fileURLWithPath: config))
    let server = try ServiceProcess(["--config", config])
    defer { _ = server.stop() }
    let order = folder.file("order.json")
    try Data(
      ("{\"schemaVersion\": 1, \"message\": \"" + String(repeating: "m", count: 1 << 20) + "\"}")
        .utf8
    ).write(to: URL(fileURLWithPath: order))
    let quote = try await server.request(
      "POST", "/v1/quote?prices=booster",
      form: [.file("order", path: order, type: "application/json")])
    #expect(quote.status == 413 && quote.errorCode == "http.bodyTooLarge", "\(quote.text)")
    #expect(quote.text.contains("JSON is taken up to 1048576 bytes"), "\(quote.text)")
    let card = try await server.request(
      "POST", "/v1/card", form: [.file("profile", path: order, type: "application/json")])
    #expect(card.status == 413 && card.errorCode == "http.bodyTooLarge", "\(card.text)")
  }
}
