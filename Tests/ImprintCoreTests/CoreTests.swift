// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: colours, lengths, atomic files and the line reader.

import Foundation
import ImprintCore
import ImprintTestSupport
import Synchronization
import Testing

@Suite("Colours", .liveHandlesChecked)
struct ColorTests {
  @Test(
    "parses #RRGGBB, #RGB and names",
    arguments: [
      ("#1a2B3c", Color(red: 0x1A, green: 0x2B, blue: 0x3C)),
      ("1A2B3C", Color(red: 0x1A, green: 0x2B, blue: 0x3C)),
      ("#fff", Color.white), ("black", Color.black),
    ])
  func parses(text: String, expected: Color) {
    #expect(Color(parsing: text) == expected)
  }

  @Test("refuses what is not a colour", arguments: ["", "#12345", "#GGGGGG", "red", "#1234567"])
  func refuses(text: String) {
    #expect(Color(parsing: text) == nil)
  }

  @Test("computes WCAG contrast ratios")
  func contrast() {
    #expect(abs(Color.black.contrastRatio(with: .white) - 21) < 1e-9)
    #expect(abs(Color.white.contrastRatio(with: .white) - 1) < 1e-9)
    // #777777 on white is the classic 4.48:1 just below AA.
    let gray = Color(red: 0x77, green: 0x77, blue: 0x77)
    #expect(abs(gray.contrastRatio(with: .white) - 4.48) < 0.01)
  }
}

@Suite("Lengths", .liveHandlesChecked)
struct LengthTests {
  @Test("converts millimetres, points and pixels")
  func conversions() {
    let card = Length.mm(85.6)
    #expect(abs(card.points - 242.6457) < 1e-3)
    #expect(card.pixels(atDPI: 300) == 1011)
    #expect(Length.mm(53.98).pixels(atDPI: 300) == 638)
    #expect(abs(Length.inches(1).millimetres - 25.4) < 1e-12)
  }
}

@Suite("Atomic files", .liveHandlesChecked)
struct AtomicFileTests {
  @Test("writes the whole file and leaves no temporary behind")
  func writes() throws {
    let folder = TemporaryFolder()
    try AtomicFile.write(Array("hello".utf8), to: folder.file("a.txt"))
    #expect(folder.contents() == ["a.txt"])
    #expect(try String(contentsOfFile: folder.file("a.txt"), encoding: .utf8) == "hello")
  }

  @Test("a failing writer leaves no file at all")
  func failureLeavesNothing() {
    struct Boom: Error {}
    let folder = TemporaryFolder()
    #expect(throws: Boom.self) {
      try AtomicFile.write(to: folder.file("b.pdf")) { temporary in
        FileManager.default.createFile(atPath: temporary, contents: Data([1, 2, 3]))
        throw Boom()
      }
    }
    #expect(folder.contents().isEmpty)
  }

  @Test("refuses a directory and a missing folder, naming the path")
  func refuses() throws {
    let folder = TemporaryFolder()
    #expect(throws: FileError.isDirectory(path: folder.path)) {
      try AtomicFile.write([1], to: folder.path)
    }
    let missing = folder.file("no/such/x.png")
    do {
      try AtomicFile.write([1], to: missing)
      Issue.record("expected an error")
    } catch {
      #expect(error.code == "file.unwritable")
      #expect(error.message.contains(missing))
    }
  }
}

@Suite("Line reader", .liveHandlesChecked)
struct LineReaderTests {
  @Test("splits LF and CRLF lines and keeps a last line without newline")
  func splits() throws {
    let folder = TemporaryFolder()
    let path = folder.file("lines.txt")
    let long = String(repeating: "x", count: 100_000)
    try Data("one\r\ntwo\n\n\(long)\nlast".utf8).write(to: URL(fileURLWithPath: path))
    var reader = try LineReader(path: path)
    var lines: [String] = []
    while let line = try reader.next() { lines.append(String(decoding: line, as: UTF8.self)) }
    #expect(lines == ["one", "two", "", long, "last"])
    #expect(reader.lineNumber == 5)
  }

  @Test("reports a missing file and a directory")
  func errors() {
    #expect(throws: FileError.notFound(path: "/no/such/file")) {
      _ = try LineReader(path: "/no/such/file")
    }
    #expect(throws: FileError.isDirectory(path: "/tmp")) { _ = try LineReader(path: "/tmp") }
  }
}

@Suite("Page ranges", .liveHandlesChecked)
struct PageRangeTests {
  @Test(
    "ranges resolve against the page count",
    arguments: [
      ("all", 3, PageRange.Resolution.pages([1, 2, 3])),
      ("1-3,5", 10, .pages([1, 2, 3, 5])),
      ("8-", 10, .pages([8, 9, 10])),
      ("2, 1-3", 5, .pages([2, 1, 3])),
      ("5-9", 3, .outside(9)),
      ("3-1", 5, .malformed),
      ("x", 5, .malformed),
      ("", 5, .malformed),
      // An open range from past the end reaches outside as a closed one does.
      ("9-", 3, .outside(9)), ("4-", 3, .outside(4)), ("3-", 3, .pages([3])),
      ("1-3,9-", 3, .outside(9)), ("1-", 0, .outside(1)), ("-2", 3, .pages([1, 2])),
      ("0-", 3, .malformed), ("0", 3, .malformed), ("3-2", 3, .malformed),
      ("-", 3, .pages([1, 2, 3])),
      (" 1 - 2 , 3 ", 3, .pages([1, 2, 3])), ("1--2", 3, .malformed), ("+2", 3, .malformed),
      ("1-x", 3, .malformed),
      // Past Int's range: outside, never a trap.
      ("99999999999999999999999-", 3, .outside(Int.max)),
      ("1-99999999999999999999999", 3, .outside(Int.max)),
      ("99999999999999999999999", 3, .outside(Int.max)),
      ("99999999999999999999999-1", 3, .malformed),
    ])
  func resolve(spec: String, count: Int, expected: PageRange.Resolution) {
    #expect(PageRange.resolve(spec, count: count) == expected)
  }

  @Test(
    "a page list written as a range resolves to the same list",
    arguments: [
      ([1, 2, 3, 5], "1-3,5"), ([7], "7"), ([5, 6, 7, 8, 1, 2], "5-8,1-2"), ([4, 2], "4,2"),
      ([], ""),
    ])
  func text(pages: [Int], expected: String) {
    #expect(PageRange.text(pages) == expected)
    if !pages.isEmpty { #expect(PageRange.resolve(expected, count: 8) == .pages(pages)) }
  }
}

@Suite("Formatting", .liveHandlesChecked)
struct FormattingTests {
  @Test("numbers, thousands and JSON booleans")
  func helpers() throws {
    #expect(Formatting.number(3) == "3" && Formatting.number(2.5) == "2.5")
    #expect(Formatting.thousands("1234567") == "1,234,567" && Formatting.thousands("12") == "12")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(#"{"a":1,"b":true}"#.utf8)) as? [String: Any])
    let number = try #require(object["a"])
    let flag = try #require(object["b"])
    #expect(!Formatting.isJSONBool(number) && Formatting.isJSONBool(flag))
  }

  @Test("JSON booleans told from numbers, asked again and again in any order (the kept answers)")
  func booleansKept() throws {
    let values = try #require(
      try JSONSerialization.jsonObject(
        with: Data(#"[true, 1, false, 0, 2.5, -7, 1e300, "true", null, [true], {"a": false}]"#.utf8)
      ) as? [Any])
    // By the boxed type, as Foundation's JSONSerialization boxes them.
    let expected = [true, false, true, false, false, false, false, false, false, false, false]
    for round in 0..<3 {
      for index in (round == 1 ? Array(values.indices.reversed()) : Array(values.indices)) {
        #expect(Formatting.isJSONBool(values[index]) == expected[index], "value \(index)")
      }
    }
    // Swift's own Bool and Int are not JSONSerialization's boxes: neither is a JSON boolean.
    #expect(!Formatting.isJSONBool(true) && !Formatting.isJSONBool(1))
    // Foundation's own boxes: a Bool's is a boolean, a number's (1, 0, a byte) is not.
    #expect(
      Formatting.isJSONBool(NSNumber(value: false)) && Formatting.isJSONBool(true as NSNumber))
    #expect(
      !Formatting.isJSONBool(NSNumber(value: 1)) && !Formatting.isJSONBool(NSNumber(value: 0)))
    #expect(!Formatting.isJSONBool(NSNumber(value: UInt8(1))) && !Formatting.isJSONBool(NSNull()))
  }
}

@Suite("Whole-file reads", .liveHandlesChecked)
struct FileIOTests {
  @Test("reads whole files, empty ones, and files whose size stat does not know")
  func reads() throws {
    let folder = TemporaryFolder()
    let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    try Data(bytes).write(to: URL(fileURLWithPath: folder.file("a.bin")))
    #expect(try FileIO.read(folder.file("a.bin"), limit: 1 << 20) == bytes)
    try Data().write(to: URL(fileURLWithPath: folder.file("empty")))
    #expect(try FileIO.read(folder.file("empty"), limit: 1 << 20) == [])
    // /proc files report size 0 and still have content: read until the end, not to the size.
    let status = String(
      decoding: try FileIO.read("/proc/self/status", limit: 1 << 20), as: UTF8.self)
    #expect(status.hasPrefix("Name:"))
  }

  @Test("a missing file, a folder and an unreadable path are told apart")
  func errors() throws {
    let folder = TemporaryFolder()
    #expect(throws: FileError.notFound(path: folder.file("none"))) {
      try FileIO.read(folder.file("none"), limit: 1 << 20)
    }
    #expect(throws: FileError.isDirectory(path: folder.path)) {
      try FileIO.read(folder.path, limit: 1 << 20)
    }
    #expect(throws: FileError.notFound(path: folder.file("none/x"))) {
      try FileIO.read(folder.file("none/x"), limit: 1 << 20)
    }
  }
}

@Suite("Document bytes, mapped or copied", .liveHandlesChecked)
struct DocumentBytesTests {
  @Test("a mapped file and a copy hold the file's bytes; empty files and folders are handled")
  func mapsAndCopies() throws {
    let folder = TemporaryFolder()
    let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    try Data(bytes).write(to: URL(fileURLWithPath: folder.file("a.bin")))
    let mapped = try DocumentBytes(mapping: folder.file("a.bin"))
    #expect(mapped.count == bytes.count && mapped.array == bytes)
    #expect(mapped.withBuffer { $0[99_999] } == bytes[99_999])
    #expect(DocumentBytes(copying: bytes).array == bytes)
    #expect(DocumentBytes(copying: []).count == 0)
    try Data().write(to: URL(fileURLWithPath: folder.file("empty")))
    #expect(try DocumentBytes(mapping: folder.file("empty")).count == 0)
    #expect(throws: FileError.isDirectory(path: folder.path)) {
      _ = try DocumentBytes(mapping: folder.path)
    }
    #expect(throws: FileError.notFound(path: folder.file("none"))) {
      _ = try DocumentBytes(mapping: folder.file("none"))
    }
  }
}

@Suite("Bounded parallel work", .liveHandlesChecked)
struct ConcurrencyTests {
  /// Counts tasks running at once.
  final class Gauge: Sendable {
    let state = Mutex((now: 0, most: 0))
    func enter() {
      state.withLock {
        $0.now += 1
        $0.most = max($0.most, $0.now)
      }
    }
    func leave() { state.withLock { $0.now -= 1 } }
  }

  @Test(
    "every input is worked on once; at most `jobs` at a time; with `ready` false, one at a time",
    arguments: [true, false])
  func bounded(ready: Bool) async {
    let gauge = Gauge()
    var next = 0
    var seen: [Int] = []
    await forEachConcurrently(
      inputs: { () -> Int? in
        defer { next += 1 }
        return next < 40 ? next : nil
      }, jobs: 3, ready: { ready },
      work: { input in
        gauge.enter()
        try? await Task.sleep(nanoseconds: UInt64(input % 4) * 1_000_000)
        gauge.leave()
        return input
      },
      collect: { seen.append($0) })
    #expect(seen.sorted() == Array(0..<40))
    let most = gauge.state.withLock { $0.most }
    #expect(ready ? most <= 3 : most == 1)
  }
}
