// SPDX-License-Identifier: Apache-2.0
// ImprintNetworkTests: WebhookSender against a real Python receiver: the delivery id sent as the
// Webhook-Id header when given, none when not, and an id that could end or fold a header line
// refused before any connection; a redirect never followed, and final.

import Foundation
import ImprintNetwork
import ImprintTestSupport
import Testing

@Suite("WebhookSender: the delivery id, redirects", .liveHandlesChecked, .serialized)
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
}
