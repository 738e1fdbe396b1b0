// SPDX-License-Identifier: Apache-2.0
// ImprintNetworkTests: the errors of photo downloads keep the codes, messages and hints they had
// in the card module, and the status the service answers them with.

import ImprintCore
import ImprintNetwork
import ImprintTestSupport
import Testing

@Suite("NetworkError: codes, messages, hints and statuses", .liveHandlesChecked)
struct NetworkErrorTests {
  @Test("a download that failed: card.photoDownload, 422")
  func download() {
    let error = NetworkError.photoDownload(url: "http://x/a.jpg", reason: "it took too long")
    #expect(error.code == "card.photoDownload" && error.status == 422)
    #expect(error.message == "photo 'http://x/a.jpg' cannot be downloaded (it took too long)")
    #expect(error.hint == "check the URL, or pass --photo or --photo-cache")
  }

  @Test("a refused address: card.photoAddressRefused, 422, a hint for each kind")
  func refused() {
    let local = NetworkError.photoAddressRefused(url: "u", detail: "d", never: false)
    let never = NetworkError.photoAddressRefused(url: "u", detail: "d", never: true)
    #expect(local.code == "card.photoAddressRefused" && never.code == local.code)
    #expect(local.status == 422 && never.status == 422)
    #expect(
      local.message
        == "photo 'u' is not downloaded: d, a local-network address, fetched only with "
        + "--allow-private-network")
    #expect(never.message == "photo 'u' is not downloaded: d, an address never fetched")
    #expect(
      local.hint
        == "pass --allow-private-network if this is the shop's own photo server, or --photo")
    #expect(never.hint == "pass --photo or --photo-cache")
  }
}
