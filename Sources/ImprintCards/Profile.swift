// SPDX-License-Identifier: Apache-2.0
// ImprintCards: a Steem or Hive account as the card shows it, parsed from the shapes the APIs return.

import Foundation
import ImprintCore

/// The blockchain social network an account lives on.
public enum Platform: String, Sendable, Codable, CaseIterable {
  /// Steem (steemit.com).
  case steem
  /// Hive (hive.blog).
  case hive

  /// The profile page host.
  public var host: String { self == .steem ? "steemit.com" : "hive.blog" }
  /// The name shown on cards.
  public var displayName: String { self == .steem ? "Steem" : "Hive" }
}

/// Follower and following counts (a `get_follow_count` result).
public struct FollowCounts: Sendable, Equatable, Codable {
  /// Accounts following this one.
  public var followers: Int
  /// Accounts this one follows.
  public var following: Int

  /// Creates counts.
  public init(followers: Int, following: Int) {
    self.followers = followers
    self.following = following
  }
}

/// An account, with every field a card template can show.
public struct Profile: Sendable, Equatable {
  /// The account name, lower case (`harbor-lamp`).
  public var account: String
  /// The chain's numeric account id, when given.
  public var accountID: Int?
  /// The profile's display name, else the account name.
  public var displayName: String
  /// The profile's about text.
  public var about: String?
  /// The profile's location.
  public var location: String?
  /// The profile's website (with a scheme).
  public var website: String?
  /// The profile image URL (http or https only).
  public var profileImage: String?
  /// Year and month the account was created (UTC), when known.
  public var created: (year: Int, month: Int)?
  /// The raw reputation as a signed decimal string, when given.
  public var reputationRaw: String?
  /// The number of posts, when given.
  public var postCount: Int?
  /// Follower and following counts, when given.
  public var follow: FollowCounts?
  /// The network.
  public var platform: Platform
  /// What was wrong but could be rendered anyway (invalid metadata, a profile that is not an
  /// object); each names the field.
  public var warnings: [String]

  public static func == (a: Profile, b: Profile) -> Bool {
    a.account == b.account && a.accountID == b.accountID && a.displayName == b.displayName
      && a.about == b.about && a.location == b.location && a.website == b.website
      && a.profileImage == b.profileImage && a.created?.year == b.created?.year
      && a.created?.month == b.created?.month && a.reputationRaw == b.reputationRaw
      && a.postCount == b.postCount && a.follow == b.follow && a.platform == b.platform
      && a.warnings == b.warnings
  }

  /// `@account`.
  public var handle: String { "@" + account }

  /// `https://steemit.com/@account` or `https://hive.blog/@account`.
  public var profileURL: String { "https://\(platform.host)/@\(account)" }

  /// The reputation score (the exact formula, see `Reputation`), when the raw value is known.
  public var reputation: Double? { reputationRaw.flatMap(Reputation.score) }

  /// The names of every field a template may use (present or not for a given account).
  public static let fieldNames: Set<String> = [
    "account", "handle", "displayName", "profileUrl", "profileUrlShort", "platform", "about",
    "location", "website", "joined", "joinedDate", "accountId", "postCount", "reputation",
    "reputationPrecise", "followers", "following",
  ]
}
