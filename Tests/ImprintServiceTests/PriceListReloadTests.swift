// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: price lists reloaded when their file changes, the three ways files
// change in deployments (an editor's rename, `cp` over the file, a Kubernetes ConfigMap's
// `..data` link swapped), a half-written file kept out, and a running `imprint serve` quoting
// with the new prices afterwards (totals worked out by hand).

import Foundation
import ImprintHTTP
import ImprintTestSupport
import Testing

@testable import ImprintService

/// A price list of `store` charging `mono` and `paper` minor units (US cents) a page side, as
/// version `version`; no tax, tiers, adjustments or minimum, so a quote is pages × (mono +
/// paper).
private func prices(mono: Int, paper: Int = 2, version: String) -> String {
  """
  {"schemaVersion": 1, "store": "Copy Corner", "version": "\(version)", "currency": "USD",
   "rates": {"default": {"mono": {"simplex": \(mono), "duplex": \(mono)},
                         "color": {"simplex": 50, "duplex": 40}}},
   "paper": {"A4": {"plain": \(paper)}}, "defaults": {"paper": "A4"}}
  """
}

/// Writes `text` to a new file `path` (fails if writing fails).
private func create(_ path: String, _ text: String) throws {
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// An editor's save: a new file written beside `path`, then renamed over it (a new inode).
private func renameOver(_ path: String, _ text: String) throws {
  try create(path + ".swp", text)
  try #require(rename(path + ".swp", path) == 0)
}

/// `cp` over `path`: the same file truncated and written in place (the inode kept).
private func copyOver(_ path: String, _ text: String) throws {
  let before = FileIdentity(path)
  let fd = open(path, O_WRONLY | O_TRUNC)
  try #require(fd >= 0)
  defer { close(fd) }
  let bytes = Array(text.utf8)
  try #require(write(fd, bytes, bytes.count) == bytes.count)
  try #require(FileIdentity(path).inode == before.inode)
}

/// A folder as Kubernetes mounts a ConfigMap: `NAME` a link to `..data/NAME`, `..data` a link
/// to a timestamped folder holding the files; `update` makes a new timestamped folder, swaps
/// `..data` to it with one rename, and removes the old one, as the kubelet does.
private final class ConfigMapFolder {
  let path: String
  private var generation = 0
  private var current: String?

  init(_ path: String, files: [String: String]) throws {
    self.path = path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try update(files)
    for name in files.keys {
      try #require(symlink("..data/" + name, path + "/" + name) == 0)
    }
  }

  func update(_ files: [String: String]) throws {
    generation += 1
    let folder = "..2026_12_01_19_00_0\(generation).123456789"
    try FileManager.default.createDirectory(
      atPath: path + "/" + folder, withIntermediateDirectories: false)
    for (name, text) in files { try create(path + "/" + folder + "/" + name, text) }
    try #require(symlink(folder, path + "/..data_tmp") == 0)
    try #require(rename(path + "/..data_tmp", path + "/..data") == 0)
    if let current { try FileManager.default.removeItem(atPath: path + "/" + current) }
    current = folder
  }
}

@Suite(
  "imprint serve: price lists reloaded when their file changes", .liveHandlesChecked, .onTestThreads
)
struct PriceListReloadTests {
  /// Checks until one reloads something or `limit` checks pass; the settling check first.
  private func checks(_ store: PriceListStore, limit: Int = 2) -> [PriceListStore.Reload] {
    for _ in 0..<limit {
      let reloads = store.reloadChanged()
      if !reloads.isEmpty { return reloads }
    }
    return []
  }

  @Test("nothing changed, or touched with the same bytes: checks reload nothing")
  func unchanged() throws {
    let folder = TemporaryFolder()
    let file = folder.file("retail.json")
    try create(file, prices(mono: 10, version: "v1"))
    let store = try PriceListStore(files: ["retail": file])
    for _ in 0..<5 { #expect(store.reloadChanged().isEmpty) }
    // A new modification time, and a copy of the same bytes renamed over it: read, not
    // reloaded (the same SHA-256).
    var times = [
      timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0),
    ]
    try #require(utimensat(AT_FDCWD, file, &times, 0) == 0)
    #expect(checks(store, limit: 3).isEmpty)
    try renameOver(file, prices(mono: 10, version: "v1"))
    #expect(checks(store, limit: 3).isEmpty)
    #expect(store.reloadCounts == (loaded: 0, failed: 0))
    #expect(store.checkCount == 11)
    #expect(store.list("retail")?.version == "v1")
  }

  @Test("an editor's rename, cp over the file, a ConfigMap swap: each reloaded once")
  func changeStyles() throws {
    let folder = TemporaryFolder()
    let edited = folder.file("edited.json")
    let copied = folder.file("copied.json")
    try create(edited, prices(mono: 10, version: "e1"))
    try create(copied, prices(mono: 10, version: "c1"))
    let configMap = try ConfigMapFolder(
      folder.file("configmap"), files: ["k8s.json": prices(mono: 10, version: "k1")])
    let store = try PriceListStore(files: [
      "edited": edited, "copied": copied, "k8s": configMap.path + "/k8s.json",
    ])
    try renameOver(edited, prices(mono: 11, version: "e2"))
    try copyOver(copied, prices(mono: 12, version: "c2-longer"))
    try configMap.update(["k8s.json": prices(mono: 13, version: "k2")])
    // The first check sees the three changes; the next finds them settled and reads them.
    #expect(store.reloadChanged().isEmpty)
    let reloads = store.reloadChanged()
    #expect(reloads.map(\.name) == ["copied", "edited", "k8s"])
    #expect(reloads.allSatisfy { $0.error == nil })
    #expect(store.list("edited")?.version == "e2")
    #expect(store.list("copied")?.version == "c2-longer")
    #expect(store.list("k8s")?.version == "k2")
    // Once each: later checks find nothing new.
    for _ in 0..<3 { #expect(store.reloadChanged().isEmpty) }
    #expect(store.reloadCounts == (loaded: 3, failed: 0))
  }

  @Test("a file still changing is not read; a half-written one keeps the list, once")
  func halfWritten() throws {
    let folder = TemporaryFolder()
    let file = folder.file("retail.json")
    try create(file, prices(mono: 10, version: "v1"))
    let store = try PriceListStore(files: ["retail": file])
    let whole = prices(mono: 15, version: "v2")
    // A change between every two checks is never read.
    for cut in [10, 40, 80] {
      try copyOver(file, String(whole.prefix(cut)))
      #expect(store.reloadChanged().isEmpty)
    }
    #expect(store.reloadCounts == (loaded: 0, failed: 0))
    // It stops half-way: read once settled, refused, the list kept, and not read again.
    let refused = store.reloadChanged()
    #expect(refused.count == 1)
    #expect(refused.first?.error?.code.hasPrefix("json.") == true, "\(refused)")
    #expect(refused.first?.error?.message.contains(file) == true)
    for _ in 0..<3 { #expect(store.reloadChanged().isEmpty) }
    #expect(store.list("retail")?.version == "v1")
    #expect(store.reloadCounts == (loaded: 0, failed: 1))
    // Finished: loaded.
    try copyOver(file, whole)
    #expect(checks(store).map(\.error?.code) == [nil])
    #expect(store.list("retail")?.version == "v2")
    // Removed: refused as SIGHUP refuses it (file.notFound), the list kept.
    try FileManager.default.removeItem(atPath: file)
    #expect(checks(store).first?.error?.code == "file.notFound")
    #expect(store.list("retail")?.version == "v2")
  }

  @Test("imprint serve quotes with the new prices after each change; a broken file is kept out")
  func serverQuotesNewPrices() async throws {
    let folder = TemporaryFolder()
    let configMap = try ConfigMapFolder(
      folder.file("configmap"), files: ["retail.json": prices(mono: 10, version: "v1")])
    let file = configMap.path + "/retail.json"
    let config = folder.file("serve.json")
    try create(
      config, #"{"priceListCheck": 0.1, "priceLists": {"retail": "configmap/retail.json"}}"#)
    let order = folder.file("order.json")
    try create(
      order,
      #"{"schemaVersion": 1, "store": "Copy Corner", "files": [{"path": "a.pdf", "color": "mono"}]}"#
    )
    let document = fixturesFolder + "/Documents/mixed.pdf"
    let pages = try #require(Int(try pdfInfo(document)["Pages"] ?? ""))
    let server = try InProcessService(try ServiceSettings.load(config))
    func quote() async throws -> (total: Int?, version: String?) {
      let answer = try await server.request(
        "POST", "/v1/quote", form: [.file("order", path: order), .file("a.pdf", path: document)])
      #expect(answer.status == 200, "\(answer.text)")
      let json = answer.json
      return (
        (json?["total"] as? [String: Any])?["minor"] as? Int,
        json?["priceListVersion"] as? String
      )
    }
    func reloads(_ result: String) async throws -> Double? {
      try await metric(server, "imprint_price_list_reloads_total", ["result": result])
    }
    // Each page printed once, mono, on A4: (mono + paper) cents a page.
    let first = try await quote()
    #expect(first.total == pages * (10 + 2))
    #expect(first.version == "v1")
    // The kubelet swaps ..data; then an editor renames a file over the link (a plain file
    // now); then cp writes over it in place.
    let changes: [(mono: Int, version: String, change: () throws -> Void)] = [
      (15, "v2", { try configMap.update(["retail.json": prices(mono: 15, version: "v2")]) }),
      (20, "v3", { try renameOver(file, prices(mono: 20, version: "v3")) }),
      (7, "v4-copied", { try copyOver(file, prices(mono: 7, version: "v4-copied")) }),
    ]
    for (index, (mono, version, change)) in changes.enumerated() {
      try change()
      #expect(try await eventually { try await reloads("loaded") == Double(index + 1) })
      let quoted = try await quote()
      #expect(quoted.total == pages * (mono + 2), "after change \(index + 1)")
      #expect(quoted.version == version)
    }
    // Broken half-way: refused, counted, and the last list still quotes. (A copy in place is
    // a truncation then a write: a check between them finds an empty file, refused too, which
    // a loaded machine sees now and then: each refusal is counted and told once.)
    let failedBefore = try await reloads("failed") ?? 0
    try copyOver(file, String(prices(mono: 99, version: "v5").prefix(60)))
    #expect(try await eventually { try await reloads("failed") ?? 0 > failedBefore })
    #expect(try await quote().version == "v4-copied")
    // Nothing changes now: checks go on and reload nothing.
    let checked = try #require(try await metric(server, "imprint_price_list_checks_total"))
    #expect(
      try await eventually {
        try await metric(server, "imprint_price_list_checks_total") ?? 0 >= checked + 5
      })
    #expect(try await reloads("loaded") == 3)
    let failed = try #require(try await reloads("failed"))
    #expect((1...3).contains(failed), "\(failed) refused")
    #expect(await server.stop().isComplete)
    let lines = server.log
    #expect(
      lines.filter {
        $0 == "serve: price list 'retail' reloaded from \(folder.path)/configmap/retail.json"
      }.count == 3, "\(lines)")
    #expect(
      lines.filter {
        $0.hasPrefix("error: price list 'retail' not reloaded, the previous one is kept: ")
      }.count == Int(failed))
  }
}
