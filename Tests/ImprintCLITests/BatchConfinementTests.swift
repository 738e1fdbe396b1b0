// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint batch` paths that must not leave their folder (a manifest's inputs,
// with and without --inputs-root; a quote job's order files).

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintBatch

/// A manifest folder `inside` beside a folder `outside`, which no job may read.
///
///     inside/profiles/p.json      a profile
///     inside/link-in.json         -> profiles/p.json (a link that stays inside)
///     inside/link-out.json        -> ../outside/p.json
///     inside/linkdir              -> ../outside
///     outside/p.json, photo.jpg, doc.pdf, order.json, prices.json, follow.json, t.json
private struct Folders {
  let base = TemporaryFolder()
  var inside: String { base.file("inside") }
  var outside: String { base.file("outside") }

  init() throws {
    let manager = FileManager.default
    try manager.createDirectory(atPath: inside + "/profiles", withIntermediateDirectories: true)
    try manager.createDirectory(atPath: outside, withIntermediateDirectories: true)
    let samples = repositoryRoot + "/assets/samples"
    for folder in [inside + "/profiles", outside] {
      try manager.copyItem(
        atPath: samples + "/profiles/harbor-lamp.json", toPath: folder + "/p.json")
    }
    try manager.copyItem(
      atPath: samples + "/photos/harbor-lamp.jpg", toPath: outside + "/photo.jpg")
    try manager.copyItem(
      atPath: samples + "/profiles/harbor-lamp.follow.json", toPath: outside + "/follow.json")
    try manager.copyItem(
      atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: outside + "/doc.pdf")
    try write(pricesJSON, to: outside + "/prices.json")
    try write(#"{"schemaVersion":1,"files":[{"path":"doc.pdf"}]}"#, to: outside + "/order.json")
    try write("{}", to: outside + "/t.json")
    try manager.createSymbolicLink(
      atPath: inside + "/link-in.json", withDestinationPath: "profiles/p.json")
    try manager.createSymbolicLink(
      atPath: inside + "/link-out.json", withDestinationPath: "../outside/p.json")
    try manager.createSymbolicLink(atPath: inside + "/linkdir", withDestinationPath: "../outside")
  }

  /// Runs `lines` as `inside/m.jsonl` (or CSV) into `base/out`; the results by id.
  func run(_ text: String, name: String = "m.jsonl", extra: [String] = []) async throws -> (
    run: Run, results: [String: [String: Any]]
  ) {
    try write(text, to: inside + "/" + name)
    let run = await imprint(
      ["batch", inside + "/" + name, "-o", base.file("out"), "-q"] + extra)
    var byID: [String: [String: Any]] = [:]
    for line in (try? results(base.file("out/results.jsonl"))) ?? [] {
      if let id = line["id"] as? String { byID[id] = line }
    }
    return (run, byID)
  }

  /// The ids whose outputs exist under `out/`, by the file names made.
  func made() -> Set<String> {
    var ids = Set<String>()
    for folder in ["cards", "qr", "thumbs", "quotes"] {
      for name in (try? FileManager.default.contentsOfDirectory(atPath: base.file("out/" + folder)))
        ?? [] where !name.hasPrefix(".")
      {
        ids.insert((name as NSString).deletingPathExtension)
      }
    }
    return ids
  }
}

/// A USD price list: 10 cents a mono simplex impression, A4 paper free.
private let pricesJSON =
  #"{"schemaVersion":1,"version":"v","currency":"USD","rates":{"default":{"mono":{"simplex":10}}},"paper":{"A4":{"plain":0}}}"#

private func code(_ result: [String: Any]?) -> String? {
  (result?["error"] as? [String: Any])?["code"] as? String
}

@Suite("imprint batch: paths confined to their folder", .liveHandlesChecked)
struct BatchConfinementTests {
  @Test("a JSON Lines manifest: '..', links leading out fail their job alone; inside paths run")
  func jsonLines() async throws {
    let folders = try Folders()
    let lines = [
      #"{"id":"ok","kind":"card","profile":"profiles/p.json"}"#,
      #"{"id":"linkIn","kind":"card","profile":"link-in.json"}"#,
      #"{"id":"dotdot","kind":"card","profile":"../outside/p.json"}"#,
      #"{"id":"hidden","kind":"card","profile":"profiles/../../outside/p.json"}"#,
      #"{"id":"photo","kind":"card","profile":"profiles/p.json","photo":"../outside/photo.jpg"}"#,
      #"{"id":"follow","kind":"card","profile":"profiles/p.json","followCounts":"../outside/follow.json"}"#,
      #"{"id":"template","kind":"card","profile":"profiles/p.json","template":"../outside/t.json"}"#,
      #"{"id":"linkOut","kind":"card","profile":"link-out.json"}"#,
      #"{"id":"linkDir","kind":"card","profile":"linkdir/p.json"}"#,
      #"{"id":"thumb","kind":"thumb","file":"linkdir/doc.pdf"}"#,
      #"{"id":"order","kind":"quote","file":"../outside/order.json","prices":"profiles/p.json"}"#,
      #"{"id":"prices","kind":"quote","file":"x.json","prices":"../outside/prices.json"}"#,
      // An operator's absolute path is read as written (no --inputs-root).
      #"{"id":"absolute","kind":"card","profile":"\#(folders.outside)/p.json"}"#,
      #"{"id":"qr","kind":"qr","payload":"still runs"}"#,
    ]
    let (run, results) = try await folders.run(lines.joined(separator: "\n"))
    #expect(run.code == 1, "\(run.stderr)")
    #expect(results.count == lines.count)
    let refused = [
      "dotdot", "hidden", "photo", "follow", "template", "linkOut", "linkDir", "thumb", "order",
      "prices",
    ]
    for id in refused {
      #expect(code(results[id]) == "file.escapesFolder", "\(id): \(results[id] ?? [:])")
    }
    for id in ["ok", "linkIn", "absolute", "qr"] {
      #expect(results[id]?["status"] as? String == "ok", "\(id): \(results[id] ?? [:])")
    }
    #expect(folders.made() == ["ok", "linkIn", "absolute", "qr"])
    // The message names the manifest, the job, its line and the path as written.
    let message = (results["dotdot"]?["error"] as? [String: Any])?["message"] as? String ?? ""
    #expect(
      message.contains("'m.jsonl'") && message.contains("item 'dotdot' (line 3)"), "\(message)")
    #expect(message.contains("'../outside/p.json'"), "\(message)")
  }

  @Test("a CSV manifest follows the same rule, column by column")
  func csv() async throws {
    let folders = try Folders()
    let rows = [
      "id,kind,profile,photo",
      "ok,card,profiles/p.json,",
      "up,card,../outside/p.json,",
      "photo,card,profiles/p.json,linkdir/photo.jpg",
      "link,card,link-out.json,",
      "inside,card,link-in.json,",
      "absolute,card,\(folders.outside)/p.json,",
    ]
    let (run, results) = try await folders.run(rows.joined(separator: "\r\n"), name: "m.csv")
    #expect(run.code == 1, "\(run.stderr)")
    for id in ["up", "photo", "link"] {
      #expect(code(results[id]) == "file.escapesFolder", "\(id): \(results[id] ?? [:])")
    }
    #expect(folders.made() == ["ok", "inside", "absolute"])
  }

  @Test("--inputs-root: paths relative to it, absolute ones only inside it, links checked")
  func inputsRoot() async throws {
    let folders = try Folders()
    let inside = folders.inside
    let lines = [
      #"{"id":"relative","kind":"card","profile":"profiles/p.json"}"#,
      #"{"id":"absoluteIn","kind":"card","profile":"\#(inside)/profiles/p.json"}"#,
      #"{"id":"absoluteOut","kind":"card","profile":"\#(folders.outside)/p.json"}"#,
      #"{"id":"passwd","kind":"thumb","file":"/etc/passwd"}"#,
      #"{"id":"climb","kind":"card","profile":"\#(inside)/../outside/p.json"}"#,
      #"{"id":"linkOut","kind":"card","profile":"\#(inside)/link-out.json"}"#,
      #"{"id":"dotdot","kind":"card","profile":"../outside/p.json"}"#,
    ]
    let (run, results) = try await folders.run(
      lines.joined(separator: "\n"), extra: ["--inputs-root", inside])
    #expect(run.code == 1, "\(run.stderr)")
    for id in ["absoluteOut", "passwd", "climb", "linkOut", "dotdot"] {
      #expect(code(results[id]) == "file.escapesFolder", "\(id): \(results[id] ?? [:])")
    }
    #expect(folders.made() == ["relative", "absoluteIn"])
    // A root that is not a folder is the run's error, before any job.
    let missing = await imprint([
      "batch", inside + "/m.jsonl", "-o", folders.base.file("out2"), "--inputs-root",
      folders.base.file("nowhere"),
    ])
    #expect(missing.code == 1 && missing.stderr.contains("--inputs-root"), "\(missing.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folders.base.file("out2/results.jsonl")))
    let help = await imprint(["batch", "--help"])
    #expect(help.stdout.contains("--inputs-root") && help.stdout.contains("file.escapesFolder"))
  }

  @Test("a quote job's order files stay in the order's folder, as with imprint quote")
  func orderFiles() async throws {
    let folders = try Folders()
    let orders = folders.inside + "/orders"
    try FileManager.default.createDirectory(atPath: orders, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: fixturesFolder + "/Documents/mixed.pdf", toPath: orders + "/doc.pdf")
    try FileManager.default.createSymbolicLink(
      atPath: orders + "/link.pdf", withDestinationPath: "../../outside/doc.pdf")
    try write(pricesJSON, to: folders.inside + "/prices.json")
    let files = [
      "ok": #"{"path":"doc.pdf"}"#,
      "up": #"{"path":"../../outside/doc.pdf"}"#,
      "passwd": #"{"path":"/etc/passwd"}"#,
      "absolute": #"{"path":"\#(orders)/doc.pdf"}"#,
      "link": #"{"path":"link.pdf"}"#,
      // A good file first: the bad path fails the job before any file is read.
      "second": #"{"path":"doc.pdf"},{"path":"../doc.pdf"}"#,
    ]
    var lines: [String] = []
    for (id, file) in files.sorted(by: { $0.key < $1.key }) {
      try write(#"{"schemaVersion":1,"files":[\#(file)]}"#, to: orders + "/\(id).json")
      lines.append(
        #"{"id":"\#(id)","kind":"quote","file":"orders/\#(id).json","prices":"prices.json"}"#)
    }
    let (run, results) = try await folders.run(lines.joined(separator: "\n"))
    #expect(run.code == 1, "\(run.stderr)")
    #expect(results["ok"]?["status"] as? String == "ok", "\(results["ok"] ?? [:])")
    for id in ["up", "passwd", "absolute", "link", "second"] {
      #expect(code(results[id]) == "file.escapesFolder", "\(id): \(results[id] ?? [:])")
    }
    #expect(folders.made() == ["ok"])
    let message =
      (results["passwd"]?["error"] as? [String: Any])?["message"] as? String ?? ""
    #expect(message.contains("order file '/etc/passwd'") && !message.contains("root:"))
  }

  @Test("the shipped sample manifests run from their own folder")
  func samples() async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "batch", repositoryRoot + "/assets/samples/orders.jsonl", "-o", folder.path, "-q",
    ])
    #expect(run.code == 1)  // three bad lines on purpose
    let lines = try results(folder.file("results.jsonl"))
    #expect(!lines.contains { code($0) == "file.escapesFolder" })
    #expect(lines.filter { $0["status"] as? String == "failed" }.count == 3)
    let csv = await imprint([
      "batch", repositoryRoot + "/assets/samples/orders.csv", "-o", folder.file("csv"), "-q",
    ])
    #expect(csv.code == 0, "\(csv.stderr)")
  }
}
