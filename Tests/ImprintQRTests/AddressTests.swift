// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: Keccak-256, EIP-55, Base58Check, Bech32/Bech32m and segwit with the official vectors.

import ImprintQR
import ImprintTestSupport
import Testing

private func hex(_ bytes: [UInt8]) -> String {
  bytes.map {
    String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
  }
  .joined()
}

private func bytes(hex text: String) -> [UInt8] {
  var result: [UInt8] = []
  var index = text.startIndex
  while index < text.endIndex {
    let next = text.index(index, offsetBy: 2)
    result.append(UInt8(text[index..<next], radix: 16) ?? 0)
    index = next
  }
  return result
}

@Suite("Hashes", .liveHandlesChecked)
struct HashTests {
  @Test("Keccak-256 is Ethereum's, not SHA3-256")
  func keccak() {
    #expect(
      hex(Keccak256.hash([UInt8]()))
        == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
    #expect(
      hex(Keccak256.hash(Array("abc".utf8)))
        == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
    #expect(
      hex(Keccak256.hash(Array("The quick brown fox jumps over the lazy dog".utf8)))
        == "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15")
  }
}

@Suite("EIP-55 Ethereum addresses", .liveHandlesChecked)
struct EthereumAddressTests {
  static let valid = [
    "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    "0x88021160C5C792225E4E5452585947470010289D",
  ]

  @Test("official vectors validate and round-trip to the same checksummed form", arguments: valid)
  func validVectors(address: String) throws {
    let parsed = try EthereumAddress(address)
    #expect(parsed.checksummed == address)
    #expect(parsed.eip1191ChainID == nil)
    // The same address typed in lower case is accepted and shown checksummed.
    #expect(try EthereumAddress("0x" + address.dropFirst(2).lowercased()).checksummed == address)
  }

  @Test("SHA3-by-mistake casing and one flipped letter fail, naming the positions")
  func badChecksums() {
    #expect(
      throws: QRError.ethereumChecksumMismatch(
        address: "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", positions: [4])
    ) {
      _ = try EthereumAddress("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
    }
    do {
      _ = try EthereumAddress("0x5aaeb6053f3E94C9b9A09f33669435E7EF1Beaed")
      Issue.record("the SHA3-256 casing must fail")
    } catch {
      #expect(error.code == "eth.badChecksum")
      #expect(error.message.contains("0x5aaeb6053f3E94C9b9A09f33669435E7EF1Beaed"))
    }
  }

  @Test("EIP-1191 (RSK) checksums are recognised and reported")
  func rsk() throws {
    #expect(try EthereumAddress("0x5aaEB6053f3e94c9b9a09f33669435E7ef1bEAeD").eip1191ChainID == 30)
    #expect(try EthereumAddress("0x5aAeb6053F3e94c9b9A09F33669435E7EF1BEaEd").eip1191ChainID == 31)
  }

  @Test(
    "malformed addresses say what is wrong",
    arguments: [
      ("52908400098527886E0F7030069857D2E4169EE7", "does not start with 0x"),
      ("0x52908400098527886E0F7030069857D2E4169E", "has 38 hex digits after 0x; 40 expected"),
      ("0x52908400098527886E0F7030069857D2E4169EE7a", "has 41 hex digits"),
      ("0x5290840009852788gE0F7030069857D2E4169EE7", "has 'g' at position 19"),
      ("", "does not start with 0x"),
    ])
  func malformed(address: String, reason: String) {
    do {
      _ = try EthereumAddress(address)
      Issue.record("expected an error for \(address)")
    } catch {
      #expect(error.code == "eth.invalidAddress")
      #expect(error.message.contains(reason))
      #expect(error.message.contains("'\(address)'"))
    }
  }
}

@Suite("Base58 and Base58Check", .liveHandlesChecked)
struct Base58Tests {
  @Test(
    "encodes and decodes the reference vectors",
    arguments: [
      ("", ""), ("61", "2g"), ("626262", "a3gV"), ("636363", "aPEr"),
      ("516b6fcd0f", "ABnLTmg"), ("bf4f89001e670274dd", "3SEo3LWLoPntC"),
      ("73696d706c792061206c6f6e6720737472696e67", "2cFupjhnEsSn59qHXstmK2ffpLv2"),
      ("572e4794", "3EFU7m"), ("ecac89cad93923c02321", "EJDM8drfXA6uyA"), ("10c8511e", "Rt5zm"),
      ("00000000000000000000", "1111111111"), ("271f359e", "zzzzy"), ("271f359f", "zzzzz"),
      ("271f35a0", "211111"),
      ("00eb15231dfceb60925886b67d065299925915aeb172c06647", "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"),
    ])
  func vectors(hexText: String, text: String) throws {
    #expect(Base58.encode(bytes(hex: hexText)) == text)
    #expect(try Base58.decode(text).get() == bytes(hex: hexText))
  }

  @Test(
    "Base58Check addresses map to their scriptPubKey",
    arguments: [
      ("1FsSia9rv4NeEwvJ2GvXrX7LyxYspbN2mo", "76a914a31c06bd463e3923bc1aadbde48b16976c08071788ac"),
      ("36j4NfKv6Akva9amjWrLG6MuSQym1GuEmm", "a914373b819a068f32b7a6b38b6b38729647cfde01c287"),
      ("mzK2FFDEhxqHcmrJw1ysqFkVyhUULo45hZ", "76a914ce28b26c57472737f5c3561a1761185bd8589a4388ac"),
      ("2NC2hEhe28ULKAJkW5MjZ3jtTMJdvXmByvK", "a914ce0bba75891ff9ec60148d4bd4a09ee2dc5c933187"),
      ("1FjL87pn8ky6Vbavd1ZHeChRXtoxwRGCRd", "76a914a19331b7b2627e663e25a7b001e4c0dcc5e21bc788ac"),
      ("3BZECeAH8gSKkjrTx8PwMrNQBLG18yHpvf", "a9146c382dcdf5b284760c8e3fead91f7422cd76aa8787"),
    ])
  func base58Check(address: String, script: String) throws {
    #expect(try BitcoinAddress(address).scriptPubKeyHex == script)
  }

  @Test("a valid Base58 string with a wrong checksum is refused as such")
  func badChecksum() {
    #expect(
      throws: QRError.invalidBitcoinAddress(
        address: "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L", reason: "fails its Base58Check checksum")
    ) {
      _ = try BitcoinAddress("1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L")
    }
    // BIP-21's example address has a deliberately broken checksum.
    #expect(throws: QRError.self) { _ = try BitcoinAddress("175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W") }
  }

  @Test("characters outside the alphabet are named with their position")
  func badCharacter() {
    do {
      _ = try BitcoinAddress("1FsSia9rv4NeEwvJ2GvXrX7LyxYspbN2m0")
      Issue.record("expected an error")
    } catch {
      #expect(error.message.contains("has '0' at position 34"))
    }
  }
}

@Suite("Bech32, Bech32m and segwit", .liveHandlesChecked)
struct Bech32Tests {
  static let bech32Valid = [
    "A12UEL5L", "a12uel5l",
    "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
    "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
    "11" + String(repeating: "q", count: 82) + "c8247j",
    "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", "?1ezyfcl",
  ]
  static let bech32mValid = [
    "A1LQFN3A", "a1lqfn3a",
    "an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11sg7hg6",
    "abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx",
    "11" + String(repeating: "l", count: 83) + "udsr8",
    "split1checkupstagehandshakeupstreamerranterredcaperredlc445v", "?1v759aa",
  ]

  @Test("valid Bech32 strings decode as Bech32", arguments: bech32Valid)
  func bech32(text: String) throws {
    #expect(try Bech32.decode(text).get().variant == .bech32)
  }

  @Test("valid Bech32m strings decode as Bech32m", arguments: bech32mValid)
  func bech32m(text: String) throws {
    #expect(try Bech32.decode(text).get().variant == .bech32m)
  }

  @Test(
    "invalid Bech32 and Bech32m strings are refused",
    arguments: [
      "\u{20}1nwldj5", "\u{7F}1axkwrx", "\u{80}1eym55h", "pzry9x0s0muk", "1pzry9x0s0muk",
      "x1b4n0q5v", "li1dgmt3", "de1lg7wt\u{FF}", "A1G7SGD8", "10a06t8", "1qzzfhee",
      "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
      "\u{20}1xj0phk", "\u{7F}1g6xzxy", "\u{80}1vctc34", "qyrz8wqd2c9m", "1qyrz8wqd2c9m",
      "y1b0jsk6g", "lt1igcx5c0", "in1muywd", "mm1crxm3i", "au1s5cgom", "M1VUXWEZ", "16plkw9",
      "1p2gdwpf",
      "an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4",
    ])
  func invalid(text: String) {
    if case .success = Bech32.decode(text) { Issue.record("\(text) must be invalid") }
  }

  @Test(
    "segwit addresses map to their scriptPubKey (BIP-350 vectors)",
    arguments: [
      (
        "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"
      ),
      (
        "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
        "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262"
      ),
      (
        "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
        "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6"
      ),
      ("BC1SW50QGDZ25J", "6002751e"),
      ("bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", "5210751e76e8199196d454941c45d1b3a323"),
      (
        "tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy",
        "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433"
      ),
      (
        "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
        "5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433"
      ),
      (
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
        "512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
      ),
      (
        "bc1qvyq0cc6rahyvsazfdje0twl7ez82ndmuac2lhv", "00146100fc6343edc8c874496cb2f5bbfec88ea9b77c"
      ),
      (
        "bc1p83n3au0rjylefxq2nc2xh2y4jzz4pm6zxj4mw5pagdjjr2a9f36s6jjnnu",
        "51203c671ef1e3913f94980a9e146ba895908550ef4234abb7503d436521aba54c75"
      ),
      ("bc1z2rksukkjr8", "520250ed"),
    ])
  func segwit(address: String, script: String) throws {
    #expect(try BitcoinAddress(address).scriptPubKeyHex == script)
  }

  @Test(
    "invalid segwit addresses are refused",
    arguments: [
      "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut",
      "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
      "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf",
      "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL",
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh",
      "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47",
      "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4",
      "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", "bc1pw5dgrnzv",
      "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", "bc1gmk9yu",
      "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav",
      "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq",
      "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf",
      "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j",
    ])
  func invalidSegwit(address: String) {
    do {
      _ = try BitcoinAddress(address)
      Issue.record("\(address) must be invalid")
    } catch {
      #expect(error.code == "btc.invalidAddress")
    }
  }

  @Test("a segwit v0 address with a Bech32m checksum says so")
  func wrongVariant() {
    #expect(
      throws: QRError.invalidBitcoinAddress(
        address: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh",
        reason: "is segwit version 0 but uses a Bech32m checksum")
    ) {
      _ = try BitcoinAddress("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh")
    }
  }
}
