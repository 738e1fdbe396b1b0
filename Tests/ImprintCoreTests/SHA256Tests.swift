// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: SHA-256, one-shot and streamed, against the FIPS 180-4 examples.

import ImprintCore
import ImprintTestSupport
import Testing

private func hex(_ bytes: [UInt8]) -> String {
  bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

@Suite("SHA-256", .liveHandlesChecked)
struct SHA256Tests {
  static let examples: [(String, String)] = [
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
  ]

  @Test("matches FIPS 180-4 examples")
  func examples() {
    for (text, digest) in Self.examples {
      #expect(hex(SHA256.hash(Array(text.utf8))) == digest, "\(text)")
    }
  }

  @Test("a million 'a's fed in chunks of 1000 is the FIPS 180-4 digest")
  func millionA() {
    var digest = SHA256()
    let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
    for _ in 0..<1000 { digest.update(chunk) }
    #expect(
      hex(digest.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test(
    "the padding at and around block boundaries (FIPS 180-4 lengths from Python's hashlib)",
    arguments: [
      (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
      (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
      (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
      (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
      (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
      (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
      (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
    ])
  func boundaries(count: Int, digest: String) {
    #expect(hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: count))) == digest)
  }

  @Test(
    "the digest does not depend on how the input is cut (every split of 0 to 200 bytes)",
    arguments: [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 200])
  func splits(count: Int) {
    // Bytes from a fixed linear congruential sequence: no randomness, same every run.
    var state: UInt32 = 12345
    let bytes = (0..<count).map { _ -> UInt8 in
      state = state &* 1_103_515_245 &+ 12345
      return UInt8(truncatingIfNeeded: state >> 16)
    }
    let whole = SHA256.hash(bytes)
    for split in 0...count {
      var digest = SHA256()
      digest.update(bytes[..<split])
      digest.update(bytes[split...])
      #expect(digest.finish() == whole, "split at \(split) of \(count)")
    }
    // Byte by byte, and from a collection without contiguous storage.
    var single = SHA256()
    for byte in bytes { single.update([byte]) }
    #expect(single.finish() == whole)
    #expect(SHA256.hash(bytes.lazy.map { $0 }) == whole)
  }
}
