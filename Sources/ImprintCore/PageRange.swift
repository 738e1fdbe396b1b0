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
  ///
  /// A part that names a page past the last is `.outside` whatever its shape: `9`, `2-9`, and
  /// an open range that starts past the end (`9-`); its highest page is the open range's first.
  /// A page number too large for an `Int` counts as `Int.max` (past any document), never a
  /// trap. Page 0, a reversed range (`3-2`) or anything but digits and `-` is `.malformed`;
  /// blanks around a part and its numbers are ignored.
  public static func resolve(_ spec: String, count: Int) -> Resolution {
    if spec.trimmingCharacters(in: .whitespaces) == "all" {
      return .pages(count > 0 ? Array(1...count) : [])
    }
    var pages: [Int] = []
    var seen = Set<Int>()
    for part in spec.split(separator: ",") {
      let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      guard (1...2).contains(bounds.count),
        let low = bounds[0].isEmpty && bounds.count == 2 ? 1 : page(bounds[0]), low >= 1
      else { return .malformed }
      let high: Int
      if bounds.count == 2 && bounds[1].isEmpty {
        // Open: to the last page, from a first page that must exist.
        guard low <= count else { return .outside(low) }
        high = count
      } else {
        guard let last = bounds.count == 1 ? low : page(bounds[1]), low <= last else {
          return .malformed
        }
        guard last <= count else { return .outside(last) }
        high = last
      }
      for page in low...high where seen.insert(page).inserted { pages.append(page) }
    }
    return pages.isEmpty ? .malformed : .pages(pages)
  }

  /// A page number of ASCII digits; `Int.max` for one past `Int`'s range; nil for other text.
  private static func page(_ text: String) -> Int? {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return Int(text) ?? Int.max
  }
}
