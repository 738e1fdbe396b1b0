// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint batch`: a mixed manifest, imposition read back, resume after a real
// kill, and shards run as separate processes.

import Foundation
import ImprintBatch
import ImprintCLI
import ImprintCore
import ImprintTestSupport
import Testing

let sampleManifest = repositoryRoot + "/assets/samples/orders.jsonl"
let imprintBinary = Bundle.main.bundleURL.appendingPathComponent("imprint").path

func results(_ path: String) throws -> [[String: Any]] {
  try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
    try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
  }
}

/// Every file under `folder` (relative paths) with its bytes, hidden state files excluded.
func snapshot(_ folder: String) -> [String: Data] {
  var files: [String: Data] = [:]
  let enumerator = FileManager.default.enumerator(atPath: folder)
  while let path = enumerator?.nextObject() as? String {
    guard !path.hasPrefix(".state"), !path.contains("/."), !path.hasPrefix("results") else {
      continue
    }
    if let data = FileManager.default.contents(atPath: folder + "/" + path) { files[path] = data }
  }
  return files
}

@Suite("imprint batch", .liveHandlesChecked)
struct BatchCLITests {
  @Test("a mixed manifest: every good job is made, every bad one reported, exit 1")
  func mixed() async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "batch", sampleManifest, "-o", folder.path, "--layout", "A4", "--crop-marks", "--card-files",
      "-q",
    ])
    #expect(run.code == 1)
    let lines = try results(folder.file("results.jsonl"))
    #expect(
      lines.map { $0["id"] as? String } == [
        "A-1042", "A-1043", "A-1044", "A-1045", "W-1", "T-1", "Q-1", "BAD-1", "A-1042", "BAD-2",
      ])
    #expect(
      lines.map { $0["status"] as? String } == [
        "ok", "ok", "ok", "ok", "ok", "ok", "ok", "failed", "failed", "failed",
      ])
    #expect((lines[7]["error"] as? [String: Any])?["code"] as? String == "file.notFound")
    #expect(
      ((lines[8]["error"] as? [String: Any])?["message"] as? String)?.contains(
        "the id is used by an earlier line") == true)
    #expect(
      try zbarDecode(folder.file("qr/W-1.png")) == "0x52908400098527886E0F7030069857D2E4169EE7")
    #expect(try pdfInfo(folder.file("cards/A-1042.pdf"))["Pages"] == "2")
    #expect(FileManager.default.fileExists(atPath: folder.file("thumbs/T-1.png")))
    #expect(FileManager.default.fileExists(atPath: folder.file("quotes/Q-1.json")))
    let packing = try String(contentsOfFile: folder.file("packing-list.csv"), encoding: .utf8)
    #expect(
      packing.hasPrefix(
        "id,copies,name,email,address,zip\r\nA-1042,2,Mara Lindqvist,mara@example.org,\""))
    #expect(
      ["A-1042", "A-1043", "A-1044"].allSatisfy { packing.contains("\n\($0),") }
        && !packing.contains("A-1045"))
    #expect(try pdfInfo(folder.file("labels.pdf"))["Pages"] == "1")
    let labels = try runTool("pdftotext", [folder.file("labels.pdf"), "-"]).stdout
    #expect(labels.contains("Mara Lindqvist") && labels.contains("박소라") && labels.contains("11181"))
  }

  @Test(
    "sheets read back: cards in the printable area, backs behind their fronts for both flips",
    arguments: ["long-edge", "short-edge"])
  func imposition(flip: String) async throws {
    let folder = TemporaryFolder()
    _ = await imprint([
      "batch", sampleManifest, "-o", folder.path, "--layout", "A4", "--duplex", flip,
      "--crop-marks", "-q",
    ])
    let pdf = folder.file("sheets-A4.pdf")
    #expect(try pdfInfo(pdf)["Pages"] == "2")
    // Without --card-files a card's output is the sheets file alone.
    #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.file("cards"))) == [])
    let first = try results(folder.file("results.jsonl"))[0]
    #expect(first["outputs"] as? [String] == ["sheets-A4.pdf"])
    // The same manifest gives the same bytes (cards drawn as jobs finish, in any order).
    let again = TemporaryFolder()
    // Another process (its own hashing seed), one job at a time.
    _ = try runTool(
      imprintBinary,
      [
        "batch", sampleManifest, "-o", again.path, "--layout", "A4", "--duplex", flip,
        "--crop-marks", "-q", "-j", "1",
      ])
    #expect(
      FileManager.default.contents(atPath: again.file("sheets-A4.pdf"))
        == FileManager.default.contents(atPath: pdf))
    #expect(
      FileManager.default.contents(atPath: again.file("sheet-map.csv"))
        == FileManager.default.contents(atPath: folder.file("sheet-map.csv")))
    // CR80 + 3.175 mm bleed on A4 inside 5 mm margins: 3 x 3, rotated, centred.
    let grid = SheetGrid.best(cardWidth: 91.95, cardHeight: 60.33, sheet: (210, 297), margin: 5)
    #expect(grid.columns == 3 && grid.rows == 3 && grid.rotated)
    let k = 72 / 25.4
    let pages = try pdfWords(pdf)
    for page in pages {
      for word in page {
        #expect(word.xMin >= 5 * k - 0.5 && word.xMax <= 205 * k + 0.5, "\(word)")
        #expect(word.yMin >= 5 * k - 0.5 && word.yMax <= 292 * k + 0.5, "\(word)")
      }
    }
    func cell(_ word: (word: String, xMin: Double, yMin: Double, xMax: Double, yMax: Double)) -> (
      Int, Int
    ) {
      let x = (word.xMin + word.xMax) / 2 / k
      let y = (word.yMin + word.yMax) / 2 / k
      return (Int((y - grid.originY) / grid.cellHeight), Int((x - grid.originX) / grid.cellWidth))
    }
    // A-1043 (@sora-park) is the third card: front at row 0, column 2.
    let front = try #require(pages[0].first { $0.word == "@sora-park" })
    #expect(cell(front) == (0, 2))
    let back = try #require(pages[1].first { $0.word == "#1930254" })
    #expect(cell(back) == (flip == "long-edge" ? (0, 0) : (2, 2)))
    let map = try String(contentsOfFile: folder.file("sheet-map.csv"), encoding: .utf8)
    #expect(map.contains("1,front,1,3,A-1043,1"))
    #expect(map.contains(flip == "long-edge" ? "1,back,1,1,A-1043,1" : "1,back,3,3,A-1043,1"))
  }

  @Test("a card of another size fails alone with its own code; the sheets hold the others")
  func otherSize() async throws {
    let folder = TemporaryFolder()
    var template = try String(
      contentsOfFile: repositoryRoot + "/templates/classic.json", encoding: .utf8)
    template = template.replacingOccurrences(of: "\"width\": 85.6,", with: "\"width\": 90,")
    try template.write(toFile: folder.file("wide.json"), atomically: true, encoding: .utf8)
    let profile = repositoryRoot + "/assets/samples/profiles/harbor-lamp.json"
    let lines = [
      #"{"id":"a","kind":"card","profile":"\#(profile)"}"#,
      #"{"id":"wide","kind":"card","profile":"\#(profile)","template":"\#(folder.file("wide.json"))"}"#,
      #"{"id":"b","kind":"card","profile":"\#(profile)"}"#,
    ]
    try Data(lines.joined(separator: "\n").utf8).write(
      to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint([
      "batch", folder.file("m.jsonl"), "-o", folder.file("out"), "--layout", "A4", "-q",
      "--allow-missing-glyphs",
    ])
    #expect(run.code == 1)
    let lines2 = try results(folder.file("out/results.jsonl"))
    #expect(lines2.map { $0["status"] as? String } == ["ok", "failed", "ok"])
    let error = try #require(lines2[1]["error"] as? [String: Any])
    #expect(error["code"] as? String == "batch.sizeMismatch")
    #expect((error["message"] as? String)?.contains("card 'wide' is 96.35 x 60.33 mm") == true)
    let map = try String(contentsOfFile: folder.file("out/sheet-map.csv"), encoding: .utf8)
    #expect(map.contains(",a,1") && map.contains(",b,1") && !map.contains("wide"))
    // With per-card files, a rerun skips all three; the wide one still fails, and the summary
    // counts it once, as failed.
    let files = ["batch", folder.file("m.jsonl"), "-o", folder.file("files"), "--layout", "A4"]
    _ = try runTool(imprintBinary, files + ["--card-files", "-q", "--allow-missing-glyphs"])
    let rerun = try runTool(imprintBinary, files + ["--card-files", "--allow-missing-glyphs"])
    #expect(rerun.status == 1)
    #expect(rerun.stderr.contains("0 ok, 2 skipped, 1 failed of 3"), "\(rerun.stderr)")
    // Sharded: the merge leaves the card out, says why, and exits 1.
    let shared = folder.file("shared")
    for index in 0..<2 {
      _ = try runTool(
        imprintBinary,
        [
          "batch", folder.file("m.jsonl"), "-o", shared, "--shard", "\(index)/2", "--layout", "A4",
          "-q", "--allow-missing-glyphs",
        ])
    }
    let merge = try runTool(
      imprintBinary,
      ["batch", "merge", folder.file("m.jsonl"), "-o", shared, "--layout", "A4", "-q"])
    #expect(merge.status == 1 && merge.stderr.contains("error: card 'wide' is 96.35 x 60.33 mm"))
    #expect(
      try String(contentsOfFile: shared + "/sheet-map.csv", encoding: .utf8)
        == String(contentsOfFile: folder.file("out/sheet-map.csv"), encoding: .utf8))
  }

  @Test("a CSV manifest with a header: shipping columns become shipTo")
  func csv() async throws {
    let folder = TemporaryFolder()
    let run = await imprint([
      "batch", repositoryRoot + "/assets/samples/orders.csv", "-o", folder.path, "-q",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    let lines = try results(folder.file("results.jsonl"))
    #expect(lines.map { $0["id"] as? String } == ["C-1", "C-2"])
    #expect((lines[1]["shipTo"] as? [String: Any])?["address"] as? String == "大阪市北区梅田1-1")
    #expect(lines[1]["copies"] as? Int == 2)
  }

  @Test("card-printer layout: front and back of every card copy, in order, at card size")
  func cardPrinter() async throws {
    let folder = TemporaryFolder()
    _ = await imprint([
      "batch", sampleManifest, "-o", folder.path, "--layout", "card-printer", "-q",
    ])
    let info = try pdfInfo(folder.file("card-printer.pdf"))
    #expect(info["Pages"] == "10")  // 5 cards (A-1042 twice) x 2 sides
    #expect(info["Page size"]?.hasPrefix("260.646 x 171.014") == true)
  }

  @Test("a batch killed with SIGKILL resumes to the same result as an uninterrupted run")
  func resume() async throws {
    let folder = TemporaryFolder()
    var lines: [String] = []
    for index in 0..<120 {
      lines.append(#"{"id":"q\#(index)","kind":"qr","payload":"https://example.org/\#(index)"}"#)
    }
    for index in 0..<60 {
      lines.append(
        #"{"id":"c\#(index)","kind":"card","profile":"\#(repositoryRoot)/assets/samples/profiles/harbor-lamp.json"}"#
      )
    }
    let manifest = folder.file("m.jsonl")
    try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: manifest))
    let killed = folder.file("killed")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: imprintBinary)
    process.arguments = ["batch", manifest, "-o", killed, "-q", "-j", "1"]
    #expect(FileManager.default.createFile(atPath: folder.file("stderr.txt"), contents: nil))
    process.standardError = FileHandle(forWritingAtPath: folder.file("stderr.txt"))
    try process.run()
    // Kill it mid-run: once some codes exist, while the cards (last in the manifest) are going.
    for _ in 0..<1000 {
      let made =
        (try? FileManager.default.contentsOfDirectory(atPath: killed + "/cards"))?.count ?? 0
      if made >= 2 { break }
      // Blocking on purpose: a Task.sleep can resume late when other suites hold the pool.
      usleep(10_000)
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(
      process.terminationReason == .uncaughtSignal,
      "exit \(process.terminationStatus): \((try? String(contentsOfFile: folder.file("stderr.txt"), encoding: .utf8)) ?? "")"
    )
    let partial = snapshot(killed).count
    let rerun = try runTool(imprintBinary, ["batch", manifest, "-o", killed, "-q"])
    #expect(rerun.status == 0, "\(rerun.stderr)")
    let statuses = try results(killed + "/results.jsonl").map { $0["status"] as? String }
    #expect(statuses.count == 180)
    // Finished jobs are skipped (an output written just before the kill, without its state
    // file yet, is made again), and nothing unfinished is skipped.
    let skipped = statuses.filter { $0 == "skipped" }.count
    #expect(skipped > 0 && skipped <= partial)
    let clean = folder.file("clean")
    #expect(try runTool(imprintBinary, ["batch", manifest, "-o", clean, "-q"]).status == 0)
    #expect(snapshot(killed) == snapshot(clean))
  }

  @Test(
    "a sheets batch killed while it draws leaves no sheets file; the rerun makes the same bytes")
  func resumeSheets() throws {
    let folder = TemporaryFolder()
    let lines = (0..<90).map {
      #"{"id":"c\#($0)","kind":"card","copies":2,"profile":"\#(repositoryRoot)/assets/samples/profiles/harbor-lamp.json"}"#
    }
    let manifest = folder.file("m.jsonl")
    try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: manifest))
    let arguments = ["batch", manifest, "--layout", "A4", "--crop-marks", "-q", "-j", "1"]
    let killed = folder.file("killed")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: imprintBinary)
    process.arguments = arguments + ["-o", killed]
    try process.run()
    // Kill it while the sheets file is being written (its hidden temporary exists).
    var sawTemporary = false
    for _ in 0..<2000 where !sawTemporary {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: killed)) ?? []
      sawTemporary = names.contains { $0.hasPrefix(".sheets-A4.pdf.tmp-") }
      if !sawTemporary { usleep(2_000) }
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(sawTemporary)
    #expect(!FileManager.default.fileExists(atPath: killed + "/sheets-A4.pdf"))
    #expect(try runTool(imprintBinary, arguments + ["-o", killed]).status == 0)
    let clean = folder.file("clean")
    #expect(try runTool(imprintBinary, arguments + ["-o", clean]).status == 0)
    #expect(snapshot(killed) == snapshot(clean))
    #expect(snapshot(killed)["sheets-A4.pdf"] != nil)
    let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: killed)) ?? []).filter {
      $0.contains(".tmp-")
    }
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  @Test("three shards as separate processes make exactly the jobs of one run, none twice")
  func shards() async throws {
    let folder = TemporaryFolder()
    let shared = folder.file("shared")
    for index in 0..<3 {
      let run = try runTool(
        "/usr/bin/env",
        [
          "JOB_COMPLETION_INDEX=\(index)", "JOB_COMPLETION_COUNT=3", imprintBinary, "batch",
          sampleManifest, "-o", shared, "--shard", "auto", "--layout", "A4", "-q",
        ])
      #expect(run.status <= 1, "\(run.stderr)")
    }
    var seen: [String] = []
    for index in 0..<3 {
      seen += try results(shared + "/results-\(index)-of-3.jsonl").map { "\($0["line"] ?? "")" }
    }
    #expect(seen.sorted() == (1...10).map(String.init).sorted())
    let merged = try runTool(
      imprintBinary, ["batch", "merge", sampleManifest, "-o", shared, "--layout", "A4", "-q"])
    #expect(merged.status == 1)  // the manifest's three bad lines
    let single = folder.file("single")
    _ = try runTool(imprintBinary, ["batch", sampleManifest, "-o", single, "--layout", "A4", "-q"])
    let a = try results(shared + "/results.jsonl").map {
      [$0["id"] as? String, $0["status"] as? String]
    }
    let b = try results(single + "/results.jsonl").map {
      [$0["id"] as? String, $0["status"] as? String]
    }
    #expect(a == b)
    #expect(snapshot(shared).keys.sorted() == snapshot(single).keys.sorted())
    // The merge lays the shards' cards out in manifest order: the same sheets, byte for byte.
    #expect(snapshot(shared)["sheets-A4.pdf"] == snapshot(single)["sheets-A4.pdf"])
    #expect(snapshot(shared)["sheet-map.csv"] == snapshot(single)["sheet-map.csv"])
  }
}
