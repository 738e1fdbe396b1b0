// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: HMAC-SHA256 against RFC 4231's test cases and Python's hmac module.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

private func hex(_ bytes: [UInt8]) -> String {
  bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

private func bytes(hex text: String) -> [UInt8] {
  let digits = Array(text.utf8)
  return stride(from: 0, to: digits.count, by: 2).map {
    UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0
  }
}

@Suite("HMAC-SHA256", .liveHandlesChecked)
struct HMACTests {
  @Test(
    "RFC 4231's test cases: short keys, a key and data of 0xaa and 0xdd, a 131-byte key",
    arguments: [
      (
        "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", hex(Array("Hi There".utf8)),
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
      ),
      (
        hex(Array("Jefe".utf8)), hex(Array("what do ya want for nothing?".utf8)),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      ),
      (
        String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
      ),
      (
        "0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
      ),
      (
        String(repeating: "aa", count: 131),
        hex(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
      ),
      (
        String(repeating: "aa", count: 131),
        hex(
          Array(
            ("This is a test using a larger than block-size key and a larger than block-size "
              + "data. The key needs to be hashed before being used by the HMAC algorithm.").utf8)),
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
      ),
    ])
  func rfc4231(key: String, data: String, mac: String) {
    #expect(hex(HMAC.sha256(key: bytes(hex: key), message: bytes(hex: data))) == mac)
  }

  @Test("keys of 0 to 130 bytes and messages around the block size agree with Python's hmac")
  func againstPython() throws {
    // Bytes from a fixed linear congruential sequence: no randomness, same every run.
    var state: UInt32 = 2_024
    func next(_ count: Int) -> [UInt8] {
      (0..<count).map { _ in
        state = state &* 1_103_515_245 &+ 12_345
        return UInt8(truncatingIfNeeded: state >> 16)
      }
    }
    var cases: [(key: [UInt8], message: [UInt8])] = []
    for keyLength in [0, 1, 32, 63, 64, 65, 130] {
      for messageLength in [0, 55, 64, 119, 300] {
        cases.append((next(keyLength), next(messageLength)))
      }
    }
    let lines = cases.map { "\(hex($0.key)) \(hex($0.message))" }.joined(separator: "\n")
    let python = try runTool(
      "python3",
      [
        "-c",
        pythonFixture("hmac_sha256.py"),
      ], stdin: Array(lines.utf8))
    let expected = python.stdout.split(separator: "\n").map(String.init)
    #expect(expected.count == cases.count, "\(python.stderr)")
    for (index, (key, message)) in cases.enumerated() where index < expected.count {
      #expect(
        hex(HMAC.sha256(key: key, message: message)) == expected[index],
        "key \(key.count) bytes, message \(message.count) bytes")
    }
  }
}
