// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: profile shapes, derived fields and the reputation formula (notes' table).

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintCards

func profile(_ json: String, source: String = "p.json") throws(CardError) -> Profile {
  try Profile.parse(Array(json.utf8), source: source)
}

@Suite("Reputation", .liveHandlesChecked)
struct ReputationTests {
  @Test(
    "matches the notes' table: exact, 1 dp, and the floored integer the card shows",
    arguments: [
      ("0", 25.0, "25.0", "25"), ("1489989", 25, "25.0", "25"), ("-712000000", 25, "25.0", "25"),
      ("4294967295", 30.697, "30.7", "30"), ("468214046858", 49.034, "49.0", "49"),
      ("10004392664120", 61.002, "61.0", "61"), ("95832978796820", 69.834, "69.8", "69"),
      ("334486135407077", 74.719, "74.7", "74"), ("-22233344455", 12.877, "12.9", "12"),
      ("-37765258368568", -16.194, "-16.2", "-17"), ("-1234123412342234", -29.822, "-29.8", "-30"),
      ("27182818284590452", 91.909, "91.9", "91"),
    ])
  func table(raw: String, exact: Double, oneDecimal: String, shown: String) throws {
    let score = try #require(Reputation.score(raw))
    #expect(abs(score - exact) < 0.001)
    #expect(Reputation.displayOneDecimal(raw) == oneDecimal)
    #expect(Reputation.display(score) == shown)
  }

  @Test("-4821937445512 shows -8.1 from the exact value, not -8.2 via the 2-dp float")
  func oneDecimalFromExact() {
    #expect(Reputation.displayOneDecimal("-4821937445512") == "-8.1")
  }

  @Test(
    "ASCII read as bytes scores as the same text read scalar by scalar",
    arguments: [
      "0", "000", "-0", "+0", "7", " 95832978796820", "95832978796820\t", "\t -37765258368568 ",
      "+334486135407077", "27182818284590452", "123456789012345678901234567890", "-", "+", "",
      " ", "12.5", "1e9", "--5", "+-5", "5 5", "0x10", "00000000468214046858", "999999999999999",
      "1000000000000000", "９５", "1\u{0301}",
    ])
  func asciiAsScalars(raw: String) {
    // A trailing ideographic space (a blank only the scalar path knows) sends the same text
    // down the other path; the raw values above are ASCII but the last two.
    let scalarPath = raw + "\u{3000}"
    let (fast, slow) = (Reputation.score(raw), Reputation.score(scalarPath))
    #expect(fast == slow, "\(String(describing: fast)) against \(String(describing: slow))")
  }

  @Test("an empty or non-numeric reputation is unknown, not 25")
  func unknown() throws {
    #expect(Reputation.score("") == nil)
    #expect(Reputation.score("12.5") == nil)
    let p = try profile(#"{"name":"abc","reputation":""}"#)
    #expect(p.reputation == nil && p.fields["reputation"] == nil)
  }
}

@Suite("Profile shapes", .liveHandlesChecked)
struct ProfileShapeTests {
  static let folder = repositoryRoot + "/assets/samples/profiles/"

  @Test("@user.json: the posting_json_metadata v2 profile wins over stale json_metadata")
  func userJSON() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "harbor-lamp.json"))
    let p = try Profile.parse([UInt8](data), source: "harbor-lamp.json")
    #expect(p.account == "harbor-lamp" && p.handle == "@harbor-lamp")
    #expect(p.displayName == "Mara Lindqvist")
    #expect(p.location == "Göteborg, Sweden")
    #expect(p.website == "http://harborlamp.example")
    #expect(p.joined == "Joined March 2017")
    #expect(p.fields["reputation"] == "69")
    #expect(p.fields["accountId"] == "#1284467")
    #expect(p.profileURL == "https://steemit.com/@harbor-lamp")
    #expect(p.platform == .steem)
    #expect(p.warnings.isEmpty)
  }

  @Test("the chain's naming rule: a warning for each name that breaks it, none otherwise")
  func accountNames() throws {
    let valid = ["abc", "a-b1", "harbor-lamp", "a12.bcd", "abc.def.gh1", "abcdefghijklmnop"]
    let invalid = [
      "ab", "abcdefghijklmnopq", "1abc", "abc-", "ab.cde", "abc..def", "abc.", "-abc",
      "ab_c", "abé", "ab\u{301}c", "日本語です", "abc\r\n", "a.bc", ".abc", "abc.de",
    ]
    for name in valid + invalid {
      let json = #"{"name": "\#(name.replacingOccurrences(of: "\r\n", with: "\\r\\n"))"}"#
      let warned = try profile(json).warnings.contains { $0.contains("naming rule") }
      #expect(warned == invalid.contains(name), "\(name)")
    }
  }

  @Test("get_accounts JSON-RPC reply, reputation as a bare number, json_metadata as a string")
  func getAccounts() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "sora-park.json"))
    let p = try Profile.parse([UInt8](data), source: "sora-park.json")
    #expect(p.displayName == "박소라 🌸")
    #expect(p.fields["reputation"] == "49")
    #expect(p.joined == "Joined January 2018")
  }

  @Test("a bare account; a 31 Dec 22:45 UTC join stays in December 2019")
  func bareAccount() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "layla-h.json"))
    let p = try Profile.parse([UInt8](data), source: "layla-h.json")
    #expect(p.displayName == "ليلى حداد")
    #expect(p.joined == "Joined December 2019")
  }

  @Test("Hive accounts are detected from HIVE/HBD balances and link to hive.blog")
  func hive() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "kenji.hive.json"))
    let p = try Profile.parse([UInt8](data), source: "kenji.hive.json")
    #expect(p.platform == .hive)
    #expect(p.profileURL == "https://hive.blog/@kenji.tanaka")
    #expect(p.fields["platform"] == "Hive")
  }

  @Test("404 and 451 answers are errors naming the account")
  func errors() throws {
    #expect(
      throws: CardError.accountNotFound(
        source: "@ghost.json", account: "ghost", text: "No account found")
    ) {
      _ = try profile(#"{"user":"No account found","status":"404"}"#, source: "@ghost.json")
    }
    #expect(
      throws: CardError.accountUnavailable(
        source: "x.json", account: nil, text: "Content unavailable")
    ) {
      _ = try profile(#"{"user":"Content unavailable","status":"451"}"#, source: "x.json")
    }
  }

  @Test(
    "what is not an account is refused with its code",
    arguments: [
      ("", "profile.notJSON"), ("{not json", "profile.notJSON"), ("{}", "profile.noAccount"),
      ("[]", "profile.noAccount"), (#"{"jsonrpc":"2.0","result":[],"id":1}"#, "profile.noAccount"),
      (#"{"id":5}"#, "profile.missingName"), (#"{"name":""}"#, "profile.missingName"),
      ("42", "profile.noAccount"),
    ])
  func refused(json: String, code: String) {
    do {
      _ = try profile(json, source: "bad.json")
      Issue.record("\(json) must be refused")
    } catch {
      #expect(error.code == code)
      #expect(error.message.contains("'bad.json'"))
    }
  }

  @Test("invalid metadata is a warning and the account name stands in")
  func messyMetadata() throws {
    let lax = try profile(#"{"name":"abc","json_metadata":"{profile: {name: 'x'}}"}"#)
    #expect(lax.displayName == "abc")
    #expect(lax.warnings == ["json_metadata is not valid JSON; its profile is ignored"])
    let notObject = try profile(#"{"name":"abc","json_metadata":{"profile":["a"]}}"#)
    #expect(notObject.warnings == ["json_metadata.profile is not an object; it is ignored"])
    let doubleEncoded = try profile(
      #"{"name":"abc","json_metadata":"\"{\\\"profile\\\":{\\\"name\\\":\\\"Double\\\"}}\""}"#)
    #expect(doubleEncoded.displayName == "Double")
    let unversioned = try profile(
      #"{"name":"abc","json_metadata":{"profile":{"name":"Old"}},"posting_json_metadata":"{\"profile\":{\"name\":\"New\"}}"}"#
    )
    #expect(unversioned.displayName == "Old")  // the Steem rule: posting wins only with version 2
  }

  @Test("metadata reads as the site's JSON.parse reads it; booleans and floats are not counts")
  func metadataAsTheSiteReadsIt() throws {
    // A repeated key keeps its later value (JSON.parse); a trailing comma is refused by it.
    let repeated = try profile(
      #"{"name":"abc","json_metadata":"{\"profile\":{\"name\":\"First\",\"name\":\"Later\"}}"}"#)
    #expect(repeated.displayName == "Later" && repeated.warnings.isEmpty)
    let trailing = try profile(
      #"{"name":"abc","json_metadata":"{\"profile\":{\"name\":\"T\"},}"}"#)
    #expect(trailing.displayName == "abc")
    #expect(trailing.warnings == ["json_metadata is not valid JSON; its profile is ignored"])
    // Deeper than Imprint's JSON limit: a warning, never a failure.
    let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
    let nested = try profile(
      #"{"name":"abc","json_metadata":"{\"profile\":{\"name\":\"D\"},\"x\":\#(deep)}"}"#)
    #expect(nested.displayName == "abc" && nested.warnings.count == 1)
    // true is not account id 1; 12.0 is post count 12; a float reputation is a score, not raw.
    let typed = try profile(
      #"{"name":"abc","id":true,"post_count":12.0,"reputation":70.0,"stats":{"followers":true,"following":2}}"#
    )
    #expect(typed.accountID == nil && typed.postCount == 12)
    #expect(typed.reputationRaw == nil && typed.follow == nil)
    // Blanks trimmed as Foundation's .whitespacesAndNewlines trims them (U+200B included);
    // blanks inside kept.
    let blanks = try profile(
      #"{"name":"abc","json_metadata":{"profile":{"name":"\u200b\u3000 Mara\u00a0Lind\u00a0\u2029\t","location":" \u0085"}}}"#
    )
    #expect(blanks.displayName == "Mara\u{00A0}Lind" && blanks.location == nil)
    // A raw reputation above 2^63 keeps every digit.
    let huge = try profile(#"{"name":"abc","reputation":123456789012345678901}"#)
    #expect(huge.reputationRaw == "123456789012345678901")
  }

  @Test("blanks trimmed as Foundation's .whitespaces and .whitespacesAndNewlines trim them")
  func trimming() {
    // Every scalar of the Basic Multilingual Plane and the first supplementary plane, alone,
    // doubled at both ends of a word, and inside it.
    for value in UInt32(0)..<0x2_0000 {
      guard let scalar = Unicode.Scalar(value) else { continue }
      let blank = String(Character(scalar))
      for text in [blank, blank + blank + "a" + blank + "b" + blank + blank] {
        #expect(
          Profile.trimmed(text, newlines: false) == text.trimmingCharacters(in: .whitespaces),
          "U+\(String(value, radix: 16))")
        #expect(
          Profile.trimmed(text) == text.trimmingCharacters(in: .whitespacesAndNewlines),
          "U+\(String(value, radix: 16))")
      }
    }
  }

  @Test("NFC is skipped only where Foundation's normalisation would change nothing")
  func nfcQuickCheck() throws {
    // Every assigned scalar outside the private-use areas: one the check passes must be NFC
    // alone, and every scalar after the first of a canonical decomposition (one that may compose
    // with what comes before it) must be one the check stops at.
    var passed = 0
    for value in UInt32(0)...0x10_FFFF {
      guard let scalar = Unicode.Scalar(value) else { continue }
      switch scalar.properties.generalCategory {
      case .unassigned, .privateUse, .surrogate: continue
      default: break
      }
      let alone = String(Character(scalar))
      if !Profile.mayChangeUnderNFC(alone) {
        passed += 1
        #expect(
          alone.precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(
            alone.unicodeScalars), "U+\(String(value, radix: 16))")
      }
      let parts = Array(alone.decomposedStringWithCanonicalMapping.unicodeScalars)
      for part in parts.dropFirst() {
        #expect(
          Profile.mayChangeUnderNFC(String(Character(part))),
          "U+\(String(part.value, radix: 16)) of U+\(String(value, radix: 16))'s decomposition")
      }
    }
    #expect(passed > 100_000, "\(passed) scalars pass")
    // Through the parser: decomposed Latin, conjoining jamo and a singleton (OHM SIGN) come out
    // composed; Hangul syllables, Devanagari with its vowel signs precomposed and CJK as they are.
    let cases: [(String, String)] = [
      ("Rene\u{301}e", "Ren\u{E9}e"), ("\u{1100}\u{1161}\u{11A8}", "\u{AC01}"),
      ("\u{2126}", "\u{3A9}"), ("박소라", "박소라"), ("अमित शर्मा", "अमित शर्मा"), ("山田", "山田"),
      ("a\u{323}\u{302}", "\u{1EAD}"),
    ]
    for (input, expected) in cases {
      let escaped = input.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
      let parsed = try profile(
        #"{"name":"abc","json_metadata":{"profile":{"name":"\#(escaped)"}}}"#)
      #expect(
        parsed.displayName.unicodeScalars.elementsEqual(expected.unicodeScalars),
        "\(input.unicodeScalars.map { String($0.value, radix: 16) })")
    }
  }

  @Test("sanitising: names kept whole up to 100 characters, @-names dropped, sentinel dates hidden")
  func sanitising() throws {
    // steemit.com cuts names to 20 characters for its pages; a card fits the whole name instead.
    let long = try profile(
      #"{"name":"abc","json_metadata":{"profile":{"name":"Alexandra Konstantinopoulou-Smith"}}}"#)
    #expect(long.displayName == "Alexandra Konstantinopoulou-Smith")
    let huge = String(repeating: "Featherstonehaugh ", count: 10)
    let capped = try profile(#"{"name":"abc","json_metadata":{"profile":{"name":"\#(huge)"}}}"#)
    #expect(capped.displayName == huge.prefix(97) + "...")
    #expect(capped.displayName.count == 100)
    let at = try profile(#"{"name":"abc","json_metadata":{"profile":{"name":"@impostor"}}}"#)
    #expect(at.displayName == "abc")
    for sentinel in ["1970-01-01T00:00:00", "1969-12-31T23:59:59"] {
      #expect(try profile(#"{"name":"abc","created":"\#(sentinel)"}"#).joined == nil)
    }
    let image = try profile(
      #"{"name":"abc","json_metadata":{"profile":{"profile_image":"ipfs://x"}}}"#)
    #expect(image.profileImage == nil)
  }

  @Test("follow counts from a get_follow_count reply")
  func followCounts() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "harbor-lamp.follow.json"))
    let counts = try Profile.parseFollowCounts([UInt8](data), source: "f.json")
    #expect(counts == FollowCounts(followers: 2381, following: 417))
    #expect(throws: CardError.self) {
      _ = try Profile.parseFollowCounts(Array("{}".utf8), source: "f.json")
    }
  }
}
