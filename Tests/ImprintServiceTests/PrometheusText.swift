// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: a strict reader of the Prometheus text exposition format 0.0.4, written
// from the format's description (prometheus.io, "Exposition formats"), to check `/metrics`
// independently of the code that writes it.

import Foundation
import ImprintTestSupport

/// One problem in an exposition, with its line (1-based).
struct ExpositionError: Error, CustomStringConvertible {
  let line: Int
  let problem: String
  var description: String { "line \(line): \(problem)" }
}

/// An exposition read strictly: every family's type, every sample's value.
///
/// Refused: a line that is neither a comment nor a sample; malformed metric or label names; a
/// label value with an escape other than `\\`, `\"` and `\n`; a value that is not a float; a
/// `# TYPE` or `# HELP` given twice or after the family's samples; a family's samples not
/// together; the same sample twice; a negative counter; and for histograms, buckets without
/// `le`, not cumulative, without `+Inf`, or whose `+Inf` is not `_count`, or a missing `_sum`.
struct PrometheusText {
  /// A sample's name and labels.
  struct Key: Hashable, CustomStringConvertible {
    var name: String
    var labels: [String: String]
    var description: String {
      name + "{"
        + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        .joined(separator: ",") + "}"
    }
  }

  /// Families' types (`counter`, `gauge`, `histogram`, `summary`, `untyped`).
  private(set) var types: [String: String] = [:]
  /// Families' help texts.
  private(set) var help: [String: String] = [:]
  /// Every sample's value.
  private(set) var samples: [Key: Double] = [:]

  init(_ text: String) throws {
    guard text.isEmpty || text.hasSuffix("\n") else {
      throw ExpositionError(line: 0, problem: "the exposition does not end with a line feed")
    }
    var current: String?
    var finished: Set<String> = []
    var order: [Key] = []
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .dropLast().enumerated()
    {
      let number = index + 1
      func fail(_ problem: String) -> ExpositionError {
        ExpositionError(line: number, problem: "\(problem): \(line)")
      }
      if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
      if line.hasPrefix("#") {
        let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
        guard words.count >= 3, words[0] == "#", ["HELP", "TYPE"].contains(words[1]) else {
          continue  // a comment
        }
        let name = String(words[2])
        guard Self.isMetricName(name) else { throw fail("malformed metric name") }
        if finished.contains(name) || current == name {
          throw fail("\(words[1]) after the family's samples")
        }
        if words[1] == "TYPE" {
          guard words.count == 4,
            ["counter", "gauge", "histogram", "summary", "untyped"].contains(words[3])
          else { throw fail("unknown type") }
          guard types[name] == nil else { throw fail("second TYPE") }
          types[name] = String(words[3])
        } else {
          guard help[name] == nil else { throw fail("second HELP") }
          let raw = words.count == 4 ? String(words[3]) : ""
          guard let text = Self.unescaped(raw, quote: false) else { throw fail("bad escape") }
          help[name] = text
        }
        continue
      }
      let (key, value) = try Self.sample(line, fail)
      let family = self.family(of: key.name)
      if family != current {
        if let current { finished.insert(current) }
        guard !finished.contains(family) else { throw fail("family \(family) is split") }
        current = family
      }
      guard samples[key] == nil else { throw fail("duplicate sample") }
      samples[key] = value
      order.append(key)
      if types[family] == "counter" && !(value >= 0) { throw fail("counter below zero") }
    }
    try checkHistograms()
  }

  /// The family a sample belongs to: a histogram's or summary's name for its `_bucket`,
  /// `_sum` and `_count` samples, else the sample's own name.
  private func family(of name: String) -> String {
    for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
      let base = String(name.dropLast(suffix.count))
      if ["histogram", "summary"].contains(types[base]) { return base }
    }
    return name
  }

  private func checkHistograms() throws {
    for (family, type) in types where type == "histogram" {
      var groups: [[String: String]: [(Double, Double)]] = [:]
      for (key, value) in samples where key.name == family + "_bucket" {
        var labels = key.labels
        guard let le = labels.removeValue(forKey: "le") else {
          throw ExpositionError(line: 0, problem: "\(key): a bucket without le")
        }
        guard let bound = Self.float(le) else {
          throw ExpositionError(line: 0, problem: "\(key): le is not a float")
        }
        groups[labels, default: []].append((bound, value))
      }
      for (labels, buckets) in groups {
        let sorted = buckets.sorted { $0.0 < $1.0 }
        for (previous, next) in zip(sorted, sorted.dropFirst()) where next.1 < previous.1 {
          throw ExpositionError(
            line: 0, problem: "\(family)\(labels): buckets not cumulative at le=\(next.0)")
        }
        guard let last = sorted.last, last.0 == .infinity else {
          throw ExpositionError(line: 0, problem: "\(family)\(labels): no +Inf bucket")
        }
        guard samples[Key(name: family + "_count", labels: labels)] == last.1 else {
          throw ExpositionError(line: 0, problem: "\(family)\(labels): +Inf is not _count")
        }
        guard samples[Key(name: family + "_sum", labels: labels)] != nil else {
          throw ExpositionError(line: 0, problem: "\(family)\(labels): no _sum")
        }
      }
    }
  }

  /// The value of sample `name` with exactly `labels`, if present.
  func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
    samples[Key(name: name, labels: labels)]
  }

  /// `name{labels} value [timestamp]`.
  private static func sample(
    _ line: Substring, _ fail: (String) -> ExpositionError
  ) throws -> (Key, Double) {
    var rest = line[...]
    let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
    guard isMetricName(name) else { throw fail("malformed metric name") }
    rest = rest.dropFirst(name.count)
    var labels: [String: String] = [:]
    if rest.first == "{" {
      rest = rest.dropFirst()
      while rest.first != "}" {
        let label = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        guard isLabelName(label) else { throw fail("malformed label name") }
        rest = rest.dropFirst(label.count)
        guard rest.hasPrefix("=\"") else { throw fail("expected =\" after \(label)") }
        rest = rest.dropFirst(2)
        var raw = ""
        var escaped = false
        while let character = rest.first {
          rest = rest.dropFirst()
          if escaped {
            raw += "\\" + String(character)
            escaped = false
          } else if character == "\\" {
            escaped = true
          } else if character == "\"" {
            break
          } else {
            raw.append(character)
          }
          if rest.isEmpty { throw fail("unterminated label value") }
        }
        guard let value = unescaped(raw, quote: true) else { throw fail("bad escape") }
        guard labels[label] == nil else { throw fail("label \(label) twice") }
        labels[label] = value
        if rest.first == "," {
          rest = rest.dropFirst()
          guard rest.first != "}" else { throw fail("a comma before }") }
        } else if rest.first != "}" {
          throw fail("expected , or }")
        }
      }
      rest = rest.dropFirst()
    }
    guard rest.first == " " else { throw fail("expected a space before the value") }
    let fields = rest.split(separator: " ")
    guard (1...2).contains(fields.count), let value = float(String(fields[0])) else {
      throw fail("malformed value")
    }
    if fields.count == 2 && Int64(fields[1]) == nil { throw fail("malformed timestamp") }
    return (Key(name: name, labels: labels), value)
  }

  /// A float as the format writes them: Go's `ParseFloat` forms plus `+Inf`, `-Inf`, `NaN`.
  static func float(_ text: String) -> Double? {
    switch text {
    case "+Inf": return .infinity
    case "-Inf": return -.infinity
    case "NaN": return .nan
    default:
      guard let first = text.first, first.isNumber || "+-.".contains(first) else { return nil }
      return Double(text)
    }
  }

  /// `text` with its escapes resolved: `\\` and `\n`, and `\"` in label values; nil for any
  /// other escape.
  private static func unescaped(_ text: String, quote: Bool) -> String? {
    var out = ""
    var escaped = false
    for character in text {
      if escaped {
        switch character {
        case "\\": out += "\\"
        case "n": out += "\n"
        case "\"" where quote: out += "\""
        default: return nil
        }
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else {
        out.append(character)
      }
    }
    return escaped ? nil : out
  }

  private static func isMetricName(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, first.isASCII,
      first.properties.isAlphabetic || first == "_" || first == ":"
    else { return false }
    return name.unicodeScalars.allSatisfy {
      $0.isASCII
        && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_"
          || $0 == ":")
    }
  }

  private static func isLabelName(_ name: String) -> Bool {
    !name.contains(":") && isMetricName(name)
  }
}

/// `/metrics`' value of `name` (with `labels`) on `server`; nil when it has no such sample.
func metric(_ server: some LoopbackServer, _ name: String, _ labels: [String: String] = [:])
  async throws -> Double?
{
  try PrometheusText(try await server.get("/metrics").text).value(name, labels)
}
