// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: the documentation's shape. README.md stays short (the guides are in docs/)
// and links every document in docs/, and every relative link in README.md and docs/*.md leads
// to a file of the repository that exists, and to a heading of it that exists when the link
// names one.

import Foundation
import ImprintTestSupport
import Testing

/// The markdown files whose links are checked: README.md and docs/*.md, as paths from the
/// repository's root.
private func documents() throws -> [String] {
  let docs = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/docs")
    .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
  return ["README.md"] + docs
}

/// `text` without its fenced code blocks, and each line without its inline code spans, so that
/// a link or a heading shown as code is not taken for one.
private func prose(_ text: String) -> [String] {
  var lines: [String] = []
  var fenced = false
  for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
    // A fence's lines stay as empty ones, so that line numbers are the file's.
    if line.hasPrefix("```") {
      fenced.toggle()
      lines.append("")
      continue
    }
    if fenced {
      lines.append("")
      continue
    }
    lines.append(String(line).replacing(/`[^`]*`/, with: "``"))
  }
  return lines
}

/// The anchors GitHub gives a file's headings: lowercased, every character but letters, digits,
/// spaces, `-` and `_` dropped, spaces made `-`; a repeated heading gets `-1`, `-2`...
func headingAnchors(_ text: String) -> Set<String> {
  var anchors: Set<String> = []
  var fenced = false
  for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
    if line.hasPrefix("```") { fenced.toggle() }
    guard !fenced, let match = line.wholeMatch(of: /#{1,6} (.+)/) else { continue }
    let title = String(match.output.1).replacing(/\[([^\]]*)\]\([^)]*\)/) { String($0.output.1) }
    var slug = ""
    for character in title.lowercased() {
      if character == " " {
        slug.append("-")
      } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
        slug.append(character)
      }
    }
    var anchor = slug
    var count = 0
    while anchors.contains(anchor) {
      count += 1
      anchor = "\(slug)-\(count)"
    }
    anchors.insert(anchor)
  }
  return anchors
}

@Suite("The documentation: README's length and every link")
struct DocumentationTests {
  @Test("README.md is under 300 lines: what Imprint is, install, quick start, examples, links")
  func readmeIsShort() throws {
    let text = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
    #expect(lines < 300, "README.md has \(lines) lines; move the detail to a guide in docs/")
    #expect(text.contains("\n## Quick start\n"), "the quick start CI and new users run")
  }

  @Test("README's table of docs/ links every document in docs/")
  func readmeListsEveryDocument() throws {
    let text = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
    for document in try documents() where document != "README.md" {
      #expect(text.contains("](\(document))"), "README.md does not link \(document)")
    }
  }

  @Test("every relative link of README.md and docs/*.md leads to a file, and heading, that exists")
  func relativeLinks() throws {
    let root = URL(fileURLWithPath: repositoryRoot).standardizedFileURL.path
    var checked = 0
    for document in try documents() {
      let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
      let folder = (document as NSString).deletingLastPathComponent
      for (number, line) in prose(text).enumerated() {
        for match in line.matches(of: /\]\(([^)\s]+)\)/) {
          let target = String(match.output.1)
          if target.contains("://") || target.hasPrefix("mailto:") { continue }
          checked += 1
          let place = "\(document), line \(number + 1): '\(target)'"
          let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
          let pathPart = String(parts[0])
          let anchor = parts.count > 1 ? String(parts[1]) : nil
          #expect(!pathPart.hasPrefix("/"), "\(place) is absolute; link within the repository")
          let file =
            pathPart.isEmpty
            ? root + "/" + document
            : URL(fileURLWithPath: root + "/" + folder + "/" + pathPart).standardizedFileURL.path
          #expect(
            file == root || file.hasPrefix(root + "/"), "\(place) leads out of the repository")
          var isFolder: ObjCBool = false
          guard FileManager.default.fileExists(atPath: file, isDirectory: &isFolder) else {
            Issue.record("\(place): no such file")
            continue
          }
          if let anchor, !isFolder.boolValue, file.hasSuffix(".md") {
            let anchors = headingAnchors(try String(contentsOfFile: file, encoding: .utf8))
            #expect(anchors.contains(anchor), "\(place): no heading with the anchor '#\(anchor)'")
          }
        }
      }
    }
    #expect(checked > 50, "only \(checked) links found; is the link reader broken?")
  }

  @Test("heading anchors are GitHub's")
  func anchors() {
    let anchors = headingAnchors(
      "# Title\n## Where is…\n## `imprint serve`\n```\n## not a heading\n```\n## Jobs\n## Jobs\n"
        + "## `GET /v1/jobs/ID`\n")
    #expect(
      anchors == ["title", "where-is", "imprint-serve", "jobs", "jobs-1", "get-v1jobsid"])
  }
}
