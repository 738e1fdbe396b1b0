// SPDX-License-Identifier: Apache-2.0
// ImprintCards: reads profiles from @user.json, get_accounts, bridge.get_profile or a bare account.

import Foundation
import ImprintCore

extension Profile {
  /// Parses a profile from JSON bytes.
  ///
  /// Accepted shapes: an `@user.json` response (`{"user": …, "status": "200"}`; a string `user`
  /// with status 404 or 451 is an error naming the account), a `condenser_api.get_accounts`
  /// result (an array, bare or in a JSON-RPC `result`), a `bridge.get_profile` result, or one
  /// account object. Metadata follows steemit.com: `posting_json_metadata.profile` when it parses
  /// to an object with `version == 2`, else `json_metadata.profile` (an object or an encoded
  /// string, double-encoded tolerated). Invalid metadata is a warning, never a failure.
  ///
  /// - Parameters:
  ///   - bytes: the file's content.
  ///   - source: the file name, for messages.
  ///   - platform: the network; guessed from HBD/HIVE fields when nil (else Steem).
  ///   - follow: follower counts passed alongside, if any.
  /// - Returns: the profile with its warnings.
  /// - Throws: `CardError` for JSON that is not a profile.
  public static func parse(
    _ bytes: [UInt8], source: String, platform: Platform? = nil, follow: FollowCounts? = nil
  ) throws(CardError) -> Profile {
    let root = try strictJSON(bytes, source: source)
    var account = try findAccount(root, source: source)
    var warnings: [String] = []
    if let array = account.array {
      guard let first = array.first else {
        throw .noAccount(source: source, found: "an empty array")
      }
      if array.count > 1 {
        warnings.append("profile '\(source)' holds \(array.count) accounts; the first is used")
      }
      account = first
    }
    guard let object = account.object else {
      throw .noAccount(source: source, found: account.kindDescription)
    }
    if object.isEmpty { throw .noAccount(source: source, found: "an empty object") }
    guard let rawName = object["name"]?.string, !rawName.isEmpty else {
      throw .missingAccountName(source: source)
    }
    let name = rawName.lowercased()
    if !isValidAccountName(name) {
      warnings.append("account name '\(rawName)' does not follow the chain's naming rule")
    }
    let (profile, metadataWarnings) = profileObject(object)
    warnings += metadataWarnings
    let detected: Platform =
      platform
      ?? (object["hbd_balance"] != nil || object["balance"]?.string?.hasSuffix(" HIVE") == true
        ? .hive : .steem)
    var result = Profile(
      account: name, accountID: integer(object["id"]),
      // steemit.com cuts names to 20 characters for its pages; a card fits the whole name to its
      // box (templates/README.md), so only a bound on the work remains.
      displayName: sanitised(profile["name"], limit: 100).flatMap { $0.hasPrefix("@") ? nil : $0 }
        ?? name,
      about: sanitised(profile["about"], limit: 160),
      location: sanitised(profile["location"], limit: 30),
      website: website(profile["website"]), profileImage: imageURL(profile["profile_image"]),
      created: object["created"]?.string.flatMap(parseDate),
      reputationRaw: reputation(object["reputation"]), postCount: integer(object["post_count"]),
      follow: follow ?? stats(object["stats"]), platform: detected, warnings: warnings)
    if result.displayName.isEmpty { result.displayName = name }
    return result
  }

  /// Parses a `get_follow_count` result (bare or in a JSON-RPC `result`).
  ///
  /// - Throws: `CardError.profileNotJSON` or `CardError.noAccount` for another shape.
  public static func parseFollowCounts(_ bytes: [UInt8], source: String) throws(CardError)
    -> FollowCounts
  {
    let root = try strictJSON(bytes, source: source)
    var object = root.object
    if let result = object?["result"]?.object { object = result }
    guard let object, let followers = integer(object["follower_count"]),
      let following = integer(object["following_count"])
    else {
      throw .noAccount(
        source: source, found: "no follower_count and following_count (a get_follow_count result)")
    }
    return FollowCounts(followers: followers, following: following)
  }

  /// Parses through `StrictJSON` (a repeated key, 1e400 or invalid UTF-8 is refused with its
  /// line and column), values built in the same pass.
  private static func strictJSON(_ bytes: [UInt8], source: String) throws(CardError) -> JSONValue {
    do {
      return try StrictJSON.tree(bytes, source: source)
    } catch .empty {
      throw .profileNotJSON(source: source, detail: "the file is empty")
    } catch {
      throw .profileNotJSON(source: source, detail: error.placeText, cause: error)
    }
  }

  private static func findAccount(_ root: JSONValue, source: String) throws(CardError) -> JSONValue
  {
    guard let object = root.object else { return root }
    if let status = object["status"], let user = object["user"] {
      let code = status.string ?? status.number?.canonicalText ?? ""
      if let text = user.string {
        let account = object["account"]?.string ?? accountFromSource(source)
        switch code {
        case "404": throw .accountNotFound(source: source, account: account, text: text)
        case "451": throw .accountUnavailable(source: source, account: account, text: text)
        default: throw .noAccount(source: source, found: "status \(code): \(text)")
        }
      }
      return user
    }
    if object["jsonrpc"] != nil || object["result"] != nil {
      if let error = object["error"]?.object {
        let message = error["message"].map { $0.string ?? $0.kindDescription } ?? ""
        throw .noAccount(source: source, found: "a JSON-RPC error: \(message)")
      }
      guard let result = object["result"] else {
        throw .noAccount(source: source, found: "a JSON-RPC reply without a result")
      }
      if let accounts = result["accounts"] { return accounts }
      return result
    }
    return root
  }

  /// `@harbor-lamp.json` → `harbor-lamp`, to name the account in a 404 message.
  private static func accountFromSource(_ source: String) -> String? {
    let file = (source as NSString).lastPathComponent
    guard file.hasPrefix("@") else { return nil }
    return String((file as NSString).deletingPathExtension.dropFirst())
  }

  /// The profile object per steemit.com's rule, with warnings for what was unusable.
  ///
  /// Metadata is JSON written inside a string by whatever client saved the profile; it is read
  /// as the site's `JSON.parse` reads it (a repeated key keeps its later value), with Imprint's
  /// limits (depth, numbers, UTF-8): what breaks them is a warning, like any unreadable metadata.
  private static func profileObject(_ account: [String: JSONValue]) -> (
    [String: JSONValue], [String]
  ) {
    var warnings: [String] = []
    func decode(_ value: JSONValue?, field: String) -> [String: JSONValue]? {
      var value = value
      for _ in 0..<2 {
        guard let text = value?.string else { break }
        if trimmed(text, newlines: false).isEmpty { return nil }
        guard
          let parsed = try? StrictJSON.tree(
            Array(text.utf8), source: field, repeatedKeys: .lastWins)
        else {
          warnings.append("\(field) is not valid JSON; its profile is ignored")
          return nil
        }
        value = parsed
      }
      guard let value, !value.isNull else { return nil }
      guard let object = value.object else {
        warnings.append("\(field) is not a JSON object; its profile is ignored")
        return nil
      }
      return object
    }
    func profile(of metadata: [String: JSONValue]?, field: String) -> [String: JSONValue]? {
      guard let metadata, let profile = metadata["profile"] else { return nil }
      if let object = profile.object { return object }
      if let text = profile.string, let object = decode(.string(text), field: "\(field).profile") {
        return object
      }
      warnings.append("\(field).profile is not an object; it is ignored")
      return nil
    }
    let posting = profile(
      of: decode(account["posting_json_metadata"], field: "posting_json_metadata"),
      field: "posting_json_metadata")
    if let posting, integer(posting["version"]) == 2 { return (posting, warnings) }
    let legacy = profile(
      of: decode(account["json_metadata"], field: "json_metadata"), field: "json_metadata")
    if let bridge = account["metadata"]?["profile"]?.object {
      return (bridge, warnings)
    }
    return (legacy ?? [:], warnings)
  }

  private static func sanitised(_ value: JSONValue?, limit: Int) -> String? {
    guard var text = value?.string.map({ trimmed($0) }), !text.isEmpty, !text.utf8.contains(0)
    else {
      return nil
    }
    // Most text is its own NFC form already; Foundation's normalisation (through NSString) was
    // a fortieth of a batch's CPU, and about 25 µs for each non-ASCII field of a served card.
    if mayChangeUnderNFC(text) { text = text.precomposedStringWithCanonicalMapping }
    if text.count > limit { text = String(text.prefix(limit - 3)) + "..." }
    return text
  }

  /// Whether normalising `text` to NFC could change it: false only when every scalar is one
  /// NFC keeps whatever surrounds it.
  ///
  /// NFC changes a string only at a scalar whose NFC_Quick_Check is No (exactly the
  /// Full_Composition_Exclusion ones), at one whose check is Maybe (it may compose with the
  /// scalar before it: combining marks, and Hangul's medial vowels and final consonants), or
  /// where combining marks (canonical combining class above 0) are out of order. So a string
  /// with none of: a full composition exclusion, a non-zero combining class, a mark (Mn, Mc,
  /// Me), a conjoining jamo (U+1100-U+11FF) is already NFC. Scalars below U+0300 are all of
  /// that kind. A test holds this against Foundation's normalisation for every assigned scalar.
  static func mayChangeUnderNFC(_ text: String) -> Bool {
    text.unicodeScalars.contains { scalar in
      guard scalar.value >= 0x300 else { return false }
      if (0x1100...0x11FF).contains(scalar.value) { return true }
      let properties = scalar.properties
      switch properties.generalCategory {
      case .nonspacingMark, .spacingMark, .enclosingMark: return true
      default:
        return properties.canonicalCombiningClass.rawValue != 0
          || properties.isFullCompositionExclusion
      }
    }
  }

  /// `text` without white space (and line breaks) at its ends, scalar by scalar, without
  /// bridging to NSString (Foundation's trimming was 2.5 % of a served card PDF's CPU).
  ///
  /// With `newlines`, as Foundation's `.whitespacesAndNewlines` (Unicode's Z categories,
  /// U+0009-U+000D, U+0085 and, as Foundation has it, U+200B); without, as `.whitespaces`
  /// (Zs, U+0009 and U+200B).
  static func trimmed(_ text: String, newlines: Bool = true) -> String {
    func blank(_ scalar: Unicode.Scalar) -> Bool {
      switch scalar.value {
      case 0x09, 0x20, 0x200B: return true
      case 0x0A...0x0D, 0x85: return newlines
      case 0..<0x80: return false
      default:
        switch scalar.properties.generalCategory {
        case .spaceSeparator: return true
        case .lineSeparator, .paragraphSeparator: return newlines
        default: return false
        }
      }
    }
    let scalars = text.unicodeScalars
    guard let first = scalars.first, let last = scalars.last, blank(first) || blank(last) else {
      return text
    }
    var start = scalars.startIndex
    var end = scalars.endIndex
    while start < end, blank(scalars[start]) { start = scalars.index(after: start) }
    while end > start, blank(scalars[scalars.index(before: end)]) {
      end = scalars.index(before: end)
    }
    return String(scalars[start..<end])
  }

  private static func website(_ value: JSONValue?) -> String? {
    guard let text = sanitised(value, limit: 1000), text.count <= 100 else { return nil }
    let lower = text.lowercased()
    return lower.hasPrefix("http://") || lower.hasPrefix("https://") ? text : "http://" + text
  }

  private static func imageURL(_ value: JSONValue?) -> String? {
    let text = value?.string ?? value?.array?.first?.string
    guard let text = text.map({ trimmed($0, newlines: false) }), text.count <= 1024 else {
      return nil
    }
    let lower = text.lowercased()
    return lower.hasPrefix("https://") || lower.hasPrefix("http://") ? text : nil
  }

  private static func reputation(_ value: JSONValue?) -> String? {
    // A number only as an integer literal, its digits as written (above 2^63 too): bridge's
    // scores are floats (`69.83`, `70.0`), not raw values.
    let literal = value?.number.flatMap { $0.isIntegerLiteral ? $0.text : nil }
    guard let text = value?.string ?? literal else { return nil }
    return Reputation.score(text) == nil ? nil : text
  }

  private static func stats(_ value: JSONValue?) -> FollowCounts? {
    guard let stats = value?.object, let followers = integer(stats["followers"]),
      let following = integer(stats["following"])
    else { return nil }
    return FollowCounts(followers: followers, following: following)
  }
}

/// A whole number given as a JSON number (`12`, `12.0`) or as decimal digits in a string.
func integer(_ value: JSONValue?) -> Int? {
  if let number = value?.number { return number.integer }
  if let text = value?.string { return Int(text) }
  return nil
}

/// `YYYY-MM-DDTHH:MM:SS` (UTC, no zone) → year and month; nil for the unset sentinels.
///
/// The text is cut at `-`, `T` and `:` (empty parts dropped); of at least three parts, the
/// first two are the year (after 1970) and the month (1-12), each digits with an optional `+`,
/// as `Int` reads them. Read from the UTF-8 bytes in one pass: splitting and making strings of
/// the parts cost a hundredth of a card's parse.
func parseDate(_ text: String) -> (year: Int, month: Int)? {
  // The first two parts' values (nil: not a number), and how many parts there are.
  var year: Int?
  var month: Int?
  var parts = 0
  var current: Int? = 0
  var length = 0
  var signed = false
  for byte in text.utf8 {
    switch byte {
    case UInt8(ascii: "-"), UInt8(ascii: "T"), UInt8(ascii: ":"):
      guard length > 0 else { continue }
      let value = signed && length == 1 ? nil : current
      if parts == 0 { year = value } else if parts == 1 { month = value }
      parts += 1
      current = 0
      length = 0
      signed = false
    case UInt8(ascii: "0")...UInt8(ascii: "9"):
      length += 1
      if let value = current {
        let (times, overflow) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflowSum) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
        current = overflow || overflowSum ? nil : sum
      }
    case UInt8(ascii: "+") where length == 0:
      length = 1
      signed = true
    default:
      length += 1
      current = nil
    }
  }
  if length > 0 { parts += 1 }
  guard parts >= 3, let year, let month, (1...12).contains(month), year > 1970 else { return nil }
  return (year, month)
}

/// The chain's rule: 3-16 characters; dot-separated segments of at least 3, each starting with a
/// letter, ending with a letter or digit, with letters, digits and hyphens between.
///
/// Checked on the UTF-8 bytes: a name with anything but ASCII letters, digits, `-` and `.` is
/// invalid, so a byte is a character wherever the answer can be yes.
func isValidAccountName(_ name: String) -> Bool {
  let bytes = Array(name.utf8)
  guard (3...16).contains(bytes.count) else { return false }
  func isLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
  func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
  return bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy {
    segment in
    guard segment.count >= 3, let first = segment.first, let last = segment.last else {
      return false
    }
    return isLetter(first) && (isLetter(last) || isDigit(last))
      && segment.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
  }
}
