// SPDX-License-Identifier: Apache-2.0
// Imprint: page ranges as people write them (`1-3,5,8-`, `all`), shared by thumbnails and quotes.

import Foundation

/// Page ranges such as `1-3,5,8-` (an open end runs to the last page) or `all`.
public enum PageRange {
  /// What a range names in a document of some pages.
  public enum Resolution: Sendable, Equatable {
    /// The pages, 1-based, in the order written, each once.
    case pages([Int])
    /// The text is not a range.
    case malformed
    /// A part reaches past the last page; the highest page asked for.
    case outside(Int)
  }

  /// The range that names `pages` in their order: runs of consecutive pages as `a-b`, others
  /// alone (`[1, 2, 3, 5]` → `1-3,5`); `resolve` gives `pages` back when they are distinct and
  /// within the document.
  public static func text(_ pages: [Int]) -> String {
    var runs: [String] = []
    var index = 0
    while index < pages.count {
      var end = index
      while end + 1 < pages.count && pages[end] < Int.max && pages[end + 1] == pages[end] + 1 {
        end += 1
      }
      runs.append(end == index ? "\(pages[index])" : "\(pages[index])-\(pages[end])")
      index = end + 1
    }
    return runs.joined(separator: ",")
  }

  /// Resolves `spec` against a document of `count` pages.
  public static func resolve(_ spec: String, count: Int) -> Resolution {
    if spec.trimmingCharacters(in: .whitespaces) == "all" {
      return .pages(count > 0 ? Array(1...count) : [])
    }
    var pages: [Int] = []
    var seen = Set<Int>()
    for part in spec.split(separator: ",") {
      let bounds = part.trimmingCharacters(in: .whitespaces).split(
        separator: "-", omittingEmptySubsequences: false)
      guard (1...2).contains(bounds.count), let low = Int(bounds[0].isEmpty ? "1" : bounds[0]),
        let high = bounds.count == 1 ? low : (bounds[1].isEmpty ? count : Int(bounds[1])),
        low >= 1, low <= high
      else { return .malformed }
      guard high <= count else { return .outside(high) }
      for page in low...high where seen.insert(page).inserted { pages.append(page) }
    }
    return pages.isEmpty ? .malformed : .pages(pages)
  }
}
