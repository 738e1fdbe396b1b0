// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `/metrics` read by Prometheus's own Python client
// (`prometheus_client.parser`, Debian's python3-prometheus-client) and held to the naming rules
// `promtool check metrics` applies (client_golang's promlint): help text, counters ending in
// `_total`, base units spelled out, no type in a name, names reserved for histograms and
// summaries, no colon, snake_case names and labels.

import Foundation
import ImprintTestSupport
import Testing

/// Parses an exposition (the file named by `sys.argv[1]`) with prometheus_client and lints it;
/// prints `{"families": {name: type}, "samples": N, "problems": [...]}`.
private let linter = pythonFixture("prometheus_lint.py")

/// What the linter made of an exposition.
struct PrometheusLint {
  /// Each family's type, by the name its `# TYPE` line gives.
  let families: [String: String]
  /// How many samples the parser read.
  let samples: Int
  /// The parser's error, or each rule a family breaks (`NAME: problem`).
  let problems: [String]

  /// Parses and lints `exposition` with python3's prometheus_client.
  init(_ exposition: String, in folder: TemporaryFolder) throws {
    let path = folder.file(UUID().uuidString + ".prom")
    try Data(exposition.utf8).write(to: URL(fileURLWithPath: path))
    let run = try runTool("python3", ["-c", linter, path])
    try #require(run.status == 0, "\(run.stderr)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [String: Any])
    families = object["families"] as? [String: String] ?? [:]
    samples = object["samples"] as? Int ?? 0
    problems = object["problems"] as? [String] ?? []
  }
}
