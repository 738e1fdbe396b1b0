// SPDX-License-Identifier: Apache-2.0
// ImprintNetworkTests: WebhookSender against a real Python receiver: the delivery id sent as the
// Webhook-Id header when given, none when not, and an id that could end or fold a header line
// refused before any connection; a redirect never followed, and final; a delivery's retries,
// stopped by an answer, a final failure or the last attempt.

import Foundation
import ImprintNetwork
import ImprintTestSupport
import Synchronization
import Testing

@Suite("WebhookSender: the delivery id, redirects, retries", .liveHandlesChecked, .serialized)
struct WebhookSenderTests {
  @Test("sent as Webhook-Id; an id with a line break, a blank or over 200 bytes is refused")
  func deliveryID() async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let body = Array(#"{"job": "x"}"#.utf8)
    func post(_ id: String?) async -> Result<Int, WebhookSender.Failure> {
      await WebhookSender.post(
        receiver.url("/hook"), body: body, contentType: "application/json", timeout: 10,
        policy: AddressPolicy(allowPrivateNetwork: true), deliveryID: id)
    }
    let id = "5f0c3a52-2f4e-4f7e-9c3b-0d2f5e6a7b8c"
    #expect(await post(id) == .success(204))
    #expect(await post(nil) == .success(204))
    for bad in ["a\r\nX-Injected: 1", "a b", "", String(repeating: "a", count: 201), "é"] {
      guard case .failure(let failure) = await post(bad) else {
        Issue.record("'\(bad)' was sent")
        continue
      }
      #expect(failure.refused)
      #expect(failure.reason.contains("delivery id"), "\(failure.reason)")
    }
    #expect(await post(String(repeating: "a", count: 200)) == .success(204))
    let calls = receiver.calls
    #expect(calls.map(\.id) == [id, "", String(repeating: "a", count: 200)])
    #expect(calls.allSatisfy { $0.body == #"{"job": "x"}"# && $0.type == "application/json" })
  }

  @Test(
    "a redirect is not followed and ends the delivery: final, not refused, its status named",
    arguments: [
      "/moved-301", "/moved-302", "/moved-303", "/moved-307", "/moved-308",
      "/moved-302-bare",
    ])
  func redirect(path: String) async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let result = await WebhookSender.post(
      receiver.url(path), body: Array("{}".utf8), contentType: "application/json", timeout: 10,
      policy: AddressPolicy(allowPrivateNetwork: true), deliveryID: "d-1")
    guard case .failure(let failure) = result else {
      Issue.record("\(path): \(result)")
      return
    }
    let status = path.split(separator: "-")[1]
    #expect(failure.final && !failure.refused)
    #expect(
      failure.reason.hasPrefix("the server answered HTTP \(status), a redirect"), "\(failure)")
    // One call, to the redirecting path; its location (/hook) never called.
    #expect(receiver.calls.map(\.path) == [path])
    // A 2xx or a 503 is not final: a 503 may be retried.
    guard
      case .failure(let down) = await WebhookSender.post(
        receiver.url("/down"), body: [], contentType: "application/json", timeout: 10,
        policy: AddressPolicy(allowPrivateNetwork: true))
    else {
      Issue.record("/down was taken")
      return
    }
    #expect(!down.final && !down.refused)
  }

  @Test(
    "a delivery retries after a failure until answered, never past a final failure or the attempts",
    arguments: [
      ("/flaky", 1...3, ["500", "204"]), ("/down", 1...3, ["503", "503", "503"]),
      ("/down", 3...3, ["503"]), ("/moved-302", 1...3, ["302"]), ("/hook", 2...3, ["204"]),
    ])
  func deliver(path: String, attempts: ClosedRange<Int>, answers: [String]) async throws {
    let folder = TemporaryFolder()
    let receiver = try WebhookReceiver(folder: folder)
    let ended = Mutex<[WebhookSender.Attempt]>([])
    await WebhookSender.deliver(
      receiver.url(path), body: Array("{}".utf8), contentType: "application/json", timeout: 10,
      policy: AddressPolicy(allowPrivateNetwork: true), deliveryID: "d-2", attempts: attempts,
      backoff: 0.01
    ) { attempt in
      ended.withLock { $0.append(attempt) }
      return true
    }
    let calls = ended.withLock { $0 }
    #expect(receiver.calls.map(\.id) == Array(repeating: "d-2", count: answers.count))
    #expect(calls.map(\.number) == Array(attempts.lowerBound..<attempts.lowerBound + answers.count))
    #expect(calls.map(\.last) == answers.indices.map { $0 == answers.count - 1 })
    let shown = calls.map { attempt in
      switch attempt.result {
      case .success(let status): "\(status)"
      case .failure(let failure): String(failure.reason.split(separator: " ")[4].prefix(3))
      }
    }
    #expect(shown == answers, "\(calls)")
  }
}
