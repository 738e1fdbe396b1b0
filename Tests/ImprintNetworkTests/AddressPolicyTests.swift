// SPDX-License-Identifier: Apache-2.0
// ImprintNetworkTests: the address policy of every fetch: the ranges fetched, fetched only when
// private addresses are allowed, and never fetched; schemes other than http(s) refused before any
// connection.

import ImprintCore
import ImprintNetwork
import ImprintTestSupport
import Testing

@Suite("Addresses fetched and refused", .liveHandlesChecked)
struct AddressPolicyTests {
  @Test(
    "address ranges: public fetched, local only when allowed, the rest never",
    arguments: [
      ("8.8.8.8", "public"), ("1.1.1.1", "public"), ("2606:4700:4700::1111", "public"),
      ("127.0.0.1", "private"), ("127.255.0.9", "private"), ("10.0.0.1", "private"),
      ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("172.32.0.1", "public"),
      ("192.168.0.1", "private"), ("100.64.0.1", "private"), ("100.127.255.255", "private"),
      ("100.128.0.1", "public"), ("::1", "private"), ("fc00::1", "private"),
      ("fd12:3456::1", "private"), ("::ffff:127.0.0.1", "private"),
      ("::ffff:10.0.0.1", "private"), ("64:ff9b::10.0.0.1", "private"),
      ("64:ff9b::8.8.8.8", "public"), ("2002:c0a8:0101::1", "private"),
      ("169.254.169.254", "never"), ("169.254.0.1", "never"), ("fe80::1", "never"),
      ("::ffff:169.254.169.254", "never"), ("64:ff9b::169.254.169.254", "never"),
      ("0.0.0.0", "never"), ("::", "never"), ("224.0.0.1", "never"),
      ("239.255.255.250", "never"), ("ff02::1", "never"), ("255.255.255.255", "never"),
      ("240.0.0.1", "never"), ("192.0.2.1", "never"), ("2001:db8::1", "never"),
      ("2001:0:4136:e378::1", "never"),
    ])
  func addressClasses(address: String, expected: String) {
    let found: String? =
      switch AddressPolicy.classify(address) {
      case .public?: "public"
      case .private?: "private"
      case .never?: "never"
      case nil: nil
      }
    #expect(found == expected, "\(address)")
  }

  @Test("a name is not an address to classify")
  func notAnAddress() {
    #expect(AddressPolicy.classify("localhost") == nil)
    #expect(AddressPolicy.classify("") == nil)
  }

  @Test("download URLs other than http(s) are refused before any connection")
  func schemes() async {
    for url in ["file:///etc/passwd", "ftp://example.org/a.jpg", "gopher://x/", "http:/x", ""] {
      do {
        _ = try await PhotoFetcher.fetch(url, timeout: 5)
        Issue.record("\(url) was fetched")
      } catch {
        #expect(error.code == "card.photoDownload" || error.code == "card.photoAddressRefused")
      }
    }
  }

  @Test("a policy admits public addresses, private ones only when allowed, the rest never")
  func admits() {
    let strict = AddressPolicy()
    let local = AddressPolicy(allowPrivateNetwork: true)
    let classes: [AddressPolicy.AddressClass] = [.public, .private("p"), .never("n")]
    #expect(classes.map(strict.admits) == [true, false, false])
    #expect(classes.map(local.admits) == [true, true, false])
  }

  @Test("a URL is checked without connecting: its scheme, and every address of its host")
  func check() {
    let strict = AddressPolicy()
    let loopback = strict.check("http://127.0.0.1:1/a.jpg")
    #expect(loopback?.never == false)
    #expect(loopback?.reason.contains("loopback") == true, "\(String(describing: loopback))")
    #expect(AddressPolicy(allowPrivateNetwork: true).check("http://127.0.0.1:1/a.jpg") == nil)
    #expect(
      AddressPolicy(allowPrivateNetwork: true).check("http://169.254.169.254/")?.never == true)
    #expect(strict.check("ftp://127.0.0.1/") != nil)
  }
}
