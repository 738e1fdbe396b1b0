// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: the tags every test target shares, and the quick loop. `.slow` marks a
// suite that starts LibreOffice, an IPP printer, Schemathesis or PostgreSQL (minutes on the
// 2-core machine); such a suite also carries `.skippedWhenQuick`, since Swift Testing's command
// line filters by name, not by tag (`swift test --filter tag:slow` runs nothing in Swift 6.3).

import Foundation

// A release build compiles this module too (SwiftPM builds every target), where Testing cannot
// be imported.
#if canImport(Testing)
  import Testing

  extension Tag {
    /// A suite that takes a minute or more (see the file's comment).
    @Tag public static var slow: Self
  }

  extension Trait where Self == ConditionTrait {
    /// Skips a `.slow` suite when the environment has `IMPRINT_QUICK` (any value).
    ///
    /// The quick loop, `IMPRINT_QUICK=1 swift test --disable-xctest`, runs everything else. CI and
    /// the README's test command do not set it, so every suite runs there.
    public static var skippedWhenQuick: Self {
      .disabled(
        if: ProcessInfo.processInfo.environment["IMPRINT_QUICK"] != nil,
        "a slow suite (LibreOffice, a printer, Schemathesis, PostgreSQL): IMPRINT_QUICK is set")
    }
  }
#endif
