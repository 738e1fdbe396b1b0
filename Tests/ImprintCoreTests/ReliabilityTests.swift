// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: the reliability rules' one place each: bounded reads, bounded lines, strict
// JSON, confined paths, escaped text, temporaries of other runs.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

/// Peak resident memory of this process so far, in kilobytes.
private func peakKilobytes() -> Int {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return usage.ru_maxrss
}

@Suite("Bounded reads", .liveHandlesChecked)
struct BoundedReadTests {
  @Test(
    "devices, FIFOs and sockets are refused at once, without blocking or reading",
    arguments: ["/dev/zero", "/dev/urandom", "/dev/null", "fifo"])
  func specialFiles(name: String) throws {
    let folder = TemporaryFolder()
    var path = name
    if name == "fifo" {
      path = folder.file("photo.jpg")
      #expect(mkfifo(path, 0o600) == 0)
    }
    let before = peakKilobytes()
    do {
      _ = try FileIO.read(path, limit: FileIO.Limit.image)
      Issue.record("\(path) was read")
    } catch {
      #expect(error.code == "file.notRegular")
      #expect(error.message.contains(path))
      #expect(error.hint != nil)
    }
    #expect(throws: FileError.self) { _ = try FileIO.openForReading(path) }
    #expect(throws: FileError.self) { _ = try DocumentBytes(mapping: path) }
    #expect(peakKilobytes() - before < 50_000)
  }

  @Test("a file over the limit is refused before it is read, naming the limit")
  func tooLarge() throws {
    let folder = TemporaryFolder()
    let path = folder.file("big.json")
    #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 5000)))
    #expect(throws: FileError.tooLarge(path: path, bytes: 5000, limit: 4096)) {
      _ = try FileIO.read(path, limit: 4096)
    }
    #expect(try FileIO.read(path, limit: 5000).count == 5000)
    // A sparse file of 8 GB is refused from its size alone (no allocation).
    let sparse = folder.file("sparse.pdf")
    #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
    #expect(truncate(sparse, 8 << 30) == 0)
    let before = peakKilobytes()
    #expect(throws: FileError.tooLarge(path: sparse, bytes: 8 << 30, limit: FileIO.Limit.image)) {
      _ = try FileIO.read(sparse, limit: FileIO.Limit.image)
    }
    #expect(throws: FileError.tooLarge(path: sparse, bytes: 8 << 30, limit: FileIO.Limit.document))
    {
      _ = try DocumentBytes(mapping: sparse)
    }
    #expect(peakKilobytes() - before < 50_000)
    #expect(FileError.tooLarge(path: "p", bytes: 9, limit: 8).message.contains("limit"))
  }
}

@Suite("Bounded lines", .liveHandlesChecked)
struct BoundedLineTests {
  @Test("a line over the limit is refused with its number, and the next lines are still read")
  func overlong() throws {
    let folder = TemporaryFolder()
    let path = folder.file("list.txt")
    let long = String(repeating: "y", count: 10_000)
    try Data("a\n\(long)\nb\r\n\(long)".utf8).write(to: URL(fileURLWithPath: path))
    var reader = try LineReader(path: path, limit: 1000)
    var seen: [String] = []
    while true {
      do {
        guard let line = try reader.next() else { break }
        seen.append(String(decoding: line, as: UTF8.self))
      } catch {
        #expect(error.code == "file.lineTooLong")
        seen.append("too long: \(reader.lineNumber)")
      }
    }
    #expect(seen == ["a", "too long: 2", "b", "too long: 4"])
  }

  @Test("a 10 MB line and an endless device line keep memory bounded")
  func boundedMemory() throws {
    let folder = TemporaryFolder()
    let path = folder.file("huge.txt")
    var bytes = [UInt8](repeating: UInt8(ascii: "z"), count: 10 << 20)
    bytes += Array("\nlast\n".utf8)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    var reader = try LineReader(path: path)
    #expect(throws: FileError.lineTooLong(path: path, line: 1, limit: FileIO.Limit.line)) {
      _ = try reader.next()
    }
    #expect(try reader.next() == Array("last".utf8))
    #expect(try reader.next() == nil)
    // The memory this costs is measured in a process of its own (QRReliabilityTests.longLine,
    // against the same list with a short line): this process's peak is shared with the suites
    // running beside this one, and no window of it is this read's alone.
    #expect(throws: FileError.notRegularFile(path: "/dev/zero", kind: .characterDevice)) {
      _ = try LineReader(path: "/dev/zero")
    }
  }

  @Test("a FIFO is read like a pipe, and one with no writer is an empty input, not a hang")
  func fifo() throws {
    let folder = TemporaryFolder()
    let path = folder.file("list.fifo")
    #expect(mkfifo(path, 0o600) == 0)
    var reader = try LineReader(path: path)
    #expect(try reader.next() == nil)
  }
}

@Suite("Strict JSON", .liveHandlesChecked)
struct StrictJSONTests {
  @Test(
    "refuses what JSONSerialization lets through or reports without a place",
    arguments: [
      (#"{"copies": 1, "copies": 10000}"#, "json.duplicateKey", "line 1, column 15"),
      (#"{"a": {"b": 1, "\u0062": 2}}"#, "json.duplicateKey", "column 16"),
      ("{\n  \"price\": 1e400\n}", "json.numberOutOfRange", "line 2, column 12"),
      (#"{"price": NaN}"#, "json.syntax", "line 1, column 11"),
      (#"{"price": -Infinity}"#, "json.syntax", "column 12: expected a digit"),
      ("{\"a\": \"\u{07}\"}", "json.syntax", "control characters"),
      (#"{"a": 1,}"#, "json.syntax", "a key in double quotes"),
      (#"[1, 2"#, "json.syntax", "the end of the document"),
      (#"{"a": 01}"#, "json.syntax", "no leading zero"),
      (#"{"a": "\ud800"}"#, "json.syntax", "low surrogate"),
      (#"{"a": 1} x"#, "json.syntax", "expected the end of the document"),
      ("  \n ", "json.empty", "is empty"),
      (String(repeating: "[", count: 70) + String(repeating: "]", count: 70), "json.tooDeep", "64"),
    ])
  func refuses(text: String, code: String, place: String) {
    do {
      _ = try StrictJSON.parse(Array(text.utf8), source: "order.json")
      Issue.record("accepted \(text)")
    } catch {
      #expect(error.code == code, "\(text)")
      #expect(error.message.contains("order.json"), "\(error.message)")
      #expect(error.message.contains(place), "\(error.message)")
      #expect(!error.message.contains("The data"))
      // The pass that builds values refuses the same documents with the same error.
      #expect(throws: error) { _ = try StrictJSON.tree(Array(text.utf8), source: "order.json") }
    }
  }

  @Test(
    "tree builds the values JSONSerialization builds, in one pass",
    arguments: [
      #"{"name": "J\u00e9r\u00f4me \ud83d\ude00", "n": [1, -2.5e3, 0, true, null], "o": {}}"#,
      #"[]"#, #"[[], {}, [[]], {"a": {"b": [false]}}]"#, #""just a string""#, "-0", "1e-7",
      #"{"esc": "\"\\\/\b\f\n\r\t", "mixed": "a\u0041é\n😀z", "é": "ü"}"#,
      "  {\"sp\" :\t[ 1 ,2 ] }\n", "12345678901234567890", "0.1", #"{"":""}"#,
    ])
  func treeMatchesFoundation(text: String) throws {
    let bytes = Array(text.utf8)
    let tree = try StrictJSON.tree(bytes, source: "x")
    let foundation = try JSONSerialization.jsonObject(
      with: Data(bytes), options: [.fragmentsAllowed])
    #expect(Self.canonical(tree) == Self.canonical(foundation: foundation))
  }

  @Test("tree keeps numbers as written, and a repeated key's later value when asked")
  func treeNumbersAndRepeatedKeys() throws {
    let numbers = try StrictJSON.tree(
      Array("[12, 2.0, 2e3, 99999999999999999999, 1.5]".utf8), source: "x")
    let written = numbers.array?.compactMap(\.number) ?? []
    #expect(written.map(\.text) == ["12", "2.0", "2e3", "99999999999999999999", "1.5"])
    #expect(written.map(\.isIntegerLiteral) == [true, false, false, true, false])
    #expect(written.map(\.integer) == [12, 2, 2000, nil, nil])
    #expect(written.map(\.canonicalText) == ["12", "2", "2000", "99999999999999999999", "1.5"])
    let repeated = Array(#"{"a": 1, "b": {"c": "x", "c": "y"}, "a": 3}"#.utf8)
    #expect(throws: JSONError.duplicateKey(source: "m", key: "c", line: 1, column: 26)) {
      _ = try StrictJSON.tree(repeated, source: "m")
    }
    let later = try StrictJSON.tree(repeated, source: "m", repeatedKeys: .lastWins)
    #expect(later["a"]?.number?.integer == 3)
    #expect(later["b"]?["c"]?.string == "y")
    #expect(later.object?.count == 2)
    // Every character is kept, U+FEFF after an escape too (Foundation's reader drops it there).
    let marks = try StrictJSON.tree(Array("[\"\\n\u{FEFF}x\", \"\u{FEFF}\"]".utf8), source: "x")
    #expect(marks.array?.compactMap(\.string) == ["\n\u{FEFF}x", "\u{FEFF}"])
  }

  /// A value written canonically (keys sorted, numbers as doubles), for comparing the tree with
  /// Foundation's reading of the same document.
  static func canonical(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let flag): "\(flag)"
    case .number(let number): "\(number.double + 0)"  // -0 and 0 alike, as Foundation reads them
    case .string(let text): text.debugDescription
    case .array(let elements): "[" + elements.map(canonical).joined(separator: ",") + "]"
    case .object(let members):
      "{"
        + members.sorted { $0.key < $1.key }.map {
          "\($0.key.debugDescription):\(canonical($0.value))"
        }
        .joined(separator: ",") + "}"
    }
  }

  /// Foundation's value written as `canonical` writes the tree's.
  static func canonical(foundation value: Any) -> String {
    if value is NSNull { return "null" }
    if let number = value as? NSNumber {
      return Formatting.isJSONBool(number) ? "\(number.boolValue)" : "\(number.doubleValue + 0)"
    }
    if let text = value as? String { return text.debugDescription }
    if let elements = value as? [Any] {
      return "[" + elements.map { canonical(foundation: $0) }.joined(separator: ",") + "]"
    }
    let members = (value as? [String: Any]) ?? [:]
    return "{"
      + members.keys.sorted().map {
        "\($0.debugDescription):\(canonical(foundation: members[$0] ?? NSNull()))"
      }
      .joined(separator: ",") + "}"
  }

  @Test("invalid UTF-8 is placed, and never quoted")
  func notUTF8() {
    for bytes: [UInt8] in [
      [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D],
      [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC0, 0xAF, 0x22, 0x7D],  // overlong '/'
      [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D],  // a surrogate
      [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xE2, 0x82],  // cut short
    ] {
      #expect(throws: JSONError.notUTF8(source: "p.json", line: 1, column: 7)) {
        _ = try StrictJSON.parse(bytes, source: "p.json")
      }
    }
  }

  @Test("a file that is not JSON is described, not quoted")
  func neverQuotes() {
    let passwd = "root:x:0:0:root:/root:/bin/bash\n"
    do {
      _ = try StrictJSON.parse(Array(passwd.utf8), source: "/etc/passwd")
      Issue.record("accepted")
    } catch {
      #expect(!error.message.contains("root:x"))
      #expect(error.message.contains("a word that is not true, false or null"))
    }
  }

  @Test("accepts ordinary JSON, a byte-order mark, escapes and any value at the top")
  func accepts() throws {
    let text =
      "\u{FEFF}{\"name\": \"J\\u00e9r\\u00f4me \\ud83d\\ude00\", \"n\": [1, -2.5e3, 0, true, null], \"o\": {}}"
    let object = try #require(try StrictJSON.parse(Array(text.utf8), source: "x") as? [String: Any])
    #expect(object["name"] as? String == "Jérôme 😀")
    #expect((object["n"] as? [Any])?.count == 5)
    #expect(try StrictJSON.parse(Array("42".utf8), source: "x") as? Int == 42)
    #expect(try StrictJSON.parse(Array(#""s""#.utf8), source: "x") as? String == "s")
  }
}

@Suite("Confined paths", .liveHandlesChecked)
struct ConfinedPathTests {
  @Test(
    "paths from input that would leave their folder are refused",
    arguments: [
      "../x.jpg", "../../etc/passwd", "/etc/passwd", "a/../../b", "a/./../..", "..", "x\u{0}y",
      "link/secret.txt", "outside-link",
    ])
  func refuses(relative: String) throws {
    let folder = TemporaryFolder()
    let inside = folder.file("inside")
    try FileManager.default.createDirectory(atPath: inside, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: inside + "/link", withDestinationPath: "/etc")
    try FileManager.default.createSymbolicLink(
      atPath: inside + "/outside-link", withDestinationPath: folder.file("other.pdf"))
    #expect(FileManager.default.createFile(atPath: folder.file("other.pdf"), contents: Data()))
    do {
      _ = try ConfinedPath.resolve(relative, in: inside, what: "order file")
      Issue.record("accepted \(relative)")
    } catch {
      #expect(error.code == "file.escapesFolder")
      #expect(error.message.contains("order file"))
    }
  }

  @Test("paths inside the folder resolve, whether or not they exist yet")
  func accepts() throws {
    let folder = TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("assets"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("alias"), withDestinationPath: folder.file("assets"))
    #expect(
      try ConfinedPath.resolve("assets/p.jpg", in: folder.path, what: "asset")
        == folder.path + "/assets/p.jpg")
    #expect(
      try ConfinedPath.resolve("./assets//p.jpg", in: folder.path, what: "asset")
        == folder.path + "/./assets/p.jpg")
    #expect(
      try ConfinedPath.resolve("alias/new/deep.jpg", in: folder.path, what: "asset")
        == folder.path + "/alias/new/deep.jpg")
  }

  @Test("openFile follows no link at any component and opens regular files only, never blocking")
  func openFile() throws {
    let folder = TemporaryFolder()
    let inside = folder.file("inside")
    try FileManager.default.createDirectory(
      atPath: inside + "/a/b", withIntermediateDirectories: true)
    #expect(
      FileManager.default.createFile(atPath: inside + "/a/b/c.txt", contents: Data("ok".utf8)))
    #expect(FileManager.default.createFile(atPath: folder.file("secret"), contents: Data()))
    let links = [
      "a/up": "..", "a/to-b": "b", "file-link": "a/b/c.txt", "out": folder.file("secret"),
    ]
    for (name, target) in links {
      try FileManager.default.createSymbolicLink(
        atPath: inside + "/" + name, withDestinationPath: target)
    }
    #expect(mkfifo(inside + "/pipe", 0o600) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("alias"), withDestinationPath: inside)

    let (descriptor, status) = try ConfinedPath.openFile("a//b/c.txt", in: inside, what: "output")
    #expect(status.st_size == 2)
    #expect(
      try FileIO.read(descriptor: descriptor, size: 2, path: "c", limit: 2) == Array("ok".utf8))
    // Reads block again: the descriptor is no longer non-blocking.
    #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK == 0)
    close(descriptor)
    let link = FileError.notRegularFile(path: "", kind: .symbolicLink)
    let expected: [(String, String, FileError)] = [
      ("a/to-b/c.txt", inside, link),
      ("a/up/a/b/c.txt", inside, link),
      ("file-link", inside, link),
      ("out", inside, link),
      ("pipe", inside, .notRegularFile(path: "", kind: .fifo)),
      ("a/b", inside, .isDirectory(path: "")),
      ("a/b/none.txt", inside, .notFound(path: "")),
      ("a/b/c.txt/d", inside, .notFound(path: "")),
      ("a/b/c.txt", folder.file("alias"), .notFound(path: "")),
      ("../inside/a/b/c.txt", inside, .escapesFolder(path: "", folder: inside, what: "output")),
      ("/etc/passwd", inside, .escapesFolder(path: "", folder: inside, what: "output")),
      ("", inside, .notFound(path: "")),
    ]
    for (relative, root, error) in expected {
      #expect(throws: error.renamed(relative), "\(relative)") {
        let (descriptor, _) = try ConfinedPath.openFile(relative, in: root, what: "output")
        close(descriptor)
      }
    }
  }

  @Test("removeFolder removes a tree through descriptors, links as links, nothing outside it")
  func removeFolder() throws {
    let folder = TemporaryFolder()
    let outside = folder.file("outside")
    try FileManager.default.createDirectory(
      atPath: outside + "/deep", withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: outside + "/keep.txt", contents: Data("k".utf8)))
    let tree = folder.file("tree")
    try FileManager.default.createDirectory(
      atPath: tree + "/a/b/c", withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: tree + "/a/b/c/f.txt", contents: Data()))
    // A name that is not UTF-8 (byte 0xFF), made with open(2).
    let odd = Array((tree + "/a/").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
    let made = open(odd, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #expect(made >= 0)
    close(made)
    try FileManager.default.createSymbolicLink(
      atPath: tree + "/a/to-folder", withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(
      atPath: tree + "/a/b/to-file", withDestinationPath: outside + "/keep.txt")
    #expect(mkfifo(tree + "/pipe", 0o600) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("link-to-outside"), withDestinationPath: outside)

    #expect(FileIO.removeFolder(tree))
    #expect(!FileManager.default.fileExists(atPath: tree))
    // A link given as the folder is removed as a link.
    #expect(FileIO.removeFolder(folder.file("link-to-outside")))
    #expect(
      (try? FileManager.default.destinationOfSymbolicLink(atPath: folder.file("link-to-outside")))
        == nil)
    #expect(FileManager.default.fileExists(atPath: outside + "/deep"))
    #expect(try String(contentsOfFile: outside + "/keep.txt", encoding: .utf8) == "k")
    #expect(FileIO.removeFolder(folder.file("never-made")))
  }

  @Test("file names from input: plain names only")
  func fileNames() {
    for name in ["alice", "bob.png", "ü-ß_1"] { #expect(ConfinedPath.isPlainFileName(name)) }
    for name in [
      "", ".", "..", "../escaped", "a/b", ".hidden", "x\u{1B}[2J",
      String(repeating: "a", count: 256),
    ] {
      #expect(!ConfinedPath.isPlainFileName(name), "\(name)")
    }
  }

  @Test("an output that is an input is refused, by any name")
  func outputIsInput() throws {
    let folder = TemporaryFolder()
    let input = folder.file("b.pdf")
    #expect(FileManager.default.createFile(atPath: input, contents: Data("%PDF".utf8)))
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("l.pdf"), withDestinationPath: input)
    #expect(throws: FileError.outputIsInput(path: input)) {
      try ConfinedPath.checkNotInput(input, inputs: ["a.pdf", input])
    }
    #expect(throws: FileError.outputIsInput(path: folder.file("l.pdf"))) {
      try ConfinedPath.checkNotInput(folder.file("l.pdf"), inputs: [folder.path + "/./b.pdf"])
    }
    try ConfinedPath.checkNotInput(folder.file("c.png"), inputs: [input])
  }
}

@Suite("Echoed text", .liveHandlesChecked)
struct SafeTextTests {
  @Test("control characters, bidi overrides and line separators are escaped; letters are not")
  func escapes() {
    #expect(SafeText.escaped("\u{1B}[31mred\u{07}") == "\\u{1B}[31mred\\u{7}")
    #expect(SafeText.escaped("a\nb\u{202E}c\u{9B}") == "a\\u{A}b\\u{202E}c\\u{9B}")
    #expect(SafeText.escaped("Jérôme 김 अ 😀") == "Jérôme 김 अ 😀")
    #expect(SafeText.excerpt(String(repeating: "k", count: 100), limit: 10) == "kkkkkkkkkk…")
  }
}

@Suite("Temporaries of other runs", .liveHandlesChecked)
struct TemporaryFileTests {
  @Test("a live run's temporaries are kept, a dead run's are removed, other hosts' by age")
  func stale() throws {
    let folder = TemporaryFolder()
    let mine = try AtomicFile.temporaryPath(for: folder.file("out.pdf"))
    #expect(FileManager.default.createFile(atPath: mine, contents: Data()))
    // This host's name as the temporary carries it.
    let name = (mine as NSString).lastPathComponent
    let tail = name[name.range(of: ".tmp-")!.upperBound...]
    let host = tail.split(separator: "-").dropLast(2).joined(separator: "-")
    // A process that has ended: a child that exited.
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/bin/true")
    try child.run()
    child.waitUntilExit()
    let dead = folder.file(".card.pdf.tmp-\(host)-\(child.processIdentifier)-1")
    let live = folder.file(".card.pdf.tmp-\(host)-1-1")  // init never ends
    let otherHost = folder.file(".card.pdf.tmp-elsewhere-\(child.processIdentifier)-1")
    let oldOther = folder.file(".card.pdf.tmp-faraway-7-1")
    for path in [dead, live, otherHost, oldOther] {
      #expect(FileManager.default.createFile(atPath: path, contents: Data()))
    }
    var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, oldOther, &times, 0) == 0)
    AtomicFile.removeStaleTemporaries(in: folder.path)
    let left = Set(folder.contents())
    #expect(!left.contains((dead as NSString).lastPathComponent))
    #expect(!left.contains((oldOther as NSString).lastPathComponent))
    #expect(left.contains((live as NSString).lastPathComponent))
    #expect(left.contains((otherHost as NSString).lastPathComponent))
    #expect(left.contains(name))
  }

  @Test("a stopped writer's temporaries are removed by its process ID, whatever runs under it")
  func madeBy() throws {
    let folder = TemporaryFolder()
    let mine = try AtomicFile.temporaryPath(for: folder.file("t.png"))
    let name = (mine as NSString).lastPathComponent
    let tail = name[name.range(of: ".tmp-")!.upperBound...]
    let host = tail.split(separator: "-").dropLast(2).joined(separator: "-")
    // Process 1 (init, alive) as the writer that was stopped: known by its ID, not by whether
    // a process has that ID now.
    let made = [".t-1.png.tmp-\(host)-1-1", ".t-2.png.tmp-\(host)-1-2"]
    let kept = [
      ".t-3.png.tmp-\(host)-12-1", ".t-4.png.tmp-elsewhere-1-1", ".t-5.png.tmp-\(host)-1-x",
      "t-6.png", name,
    ]
    for file in made + kept {
      #expect(FileManager.default.createFile(atPath: folder.file(file), contents: Data()))
    }
    AtomicFile.removeTemporaries(in: folder.path, madeBy: 1)
    #expect(Set(folder.contents()) == Set(kept))
  }
}

@Suite("Resource folders named by settings", .liveHandlesChecked)
struct ResourceFolderTests {
  @Test("a folder named by an option that is not there is an error naming the option")
  func missing() throws {
    let folder = TemporaryFolder()
    #expect(throws: FileError.folderNotFound(path: "/nonexistent", setting: "--templates")) {
      _ = try ResourceLocator.checkedTemplatesDirectory(explicit: "/nonexistent")
    }
    #expect(FileManager.default.createFile(atPath: folder.file("file"), contents: Data()))
    #expect(throws: FileError.folderNotFound(path: folder.file("file"), setting: "--assets")) {
      _ = try ResourceLocator.checkedAssetsDirectory(explicit: folder.file("file"))
    }
    #expect(try ResourceLocator.checkedTemplatesDirectory(explicit: folder.path) == folder.path)
    #expect(
      FileError.folderNotFound(path: "/x", setting: "IMPRINT_TEMPLATES").message
        == "IMPRINT_TEMPLATES names '/x', which is not a folder")
  }
}

@Suite("Deferred flushing", .liveHandlesChecked)
struct DeferredFlushTests {
  @Test("a bulk run's files are complete and renamed with the flush deferred; the default flushes")
  func deferred() async throws {
    let folder = TemporaryFolder()
    #expect(AtomicFile.flushEachFile)
    let inside = try await AtomicFile.withDeferredFlush(syncing: folder.path) { () async -> Bool in
      await withTaskGroup(of: Bool.self) { group in
        for index in 0..<8 {
          group.addTask {
            try? AtomicFile.write(
              Array(repeating: UInt8(index), count: 1000), to: folder.file("\(index).bin"))
            return AtomicFile.flushEachFile
          }
        }
        var flags: [Bool] = []
        for await flag in group { flags.append(flag) }
        return flags.allSatisfy { !$0 }
      }
    }
    #expect(inside)
    #expect(AtomicFile.flushEachFile)
    #expect(folder.contents() == (0..<8).map { "\($0).bin" }.sorted())
    for index in 0..<8 {
      #expect(
        try FileIO.read(folder.file("\(index).bin"), limit: 2000)
          == Array(repeating: UInt8(index), count: 1000))
    }
  }
}

@Suite("Content kinds for messages", .liveHandlesChecked)
struct ContentKindTests {
  @Test(
    "a file's first bytes are named by kind, never quoted",
    arguments: [
      (Array("GIF89a\u{1}\u{0}".utf8), "a GIF image"),
      (Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), "a WebP image"),
      ([0x00, 0x00, 0x00, 0x18] + Array("ftypheic".utf8), "a HEIC image"),
      ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], "a TIFF image"),
      (Array("PK".utf8) + [3, 4, 20, 0], "a ZIP archive (or an Office document)"),
      (Array("  <!DOCTYPE html><html>".utf8), "an HTML page"),
      (Array("root:x:0:0:root:/root:/bin/bash\n".utf8), "text"),
      (Array("{\"secret\": 1}".utf8), "JSON or other text"),
      ([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1], "a program (ELF)"),
      ([0x01, 0x02, 0x00, 0xFF], "unrecognised binary data"),
      ([0xC3, 0x28, 0x41], "unrecognised binary data"),
      ([], "nothing: it is empty"),
    ] as [([UInt8], String)])
  func kinds(bytes: [UInt8], expected: String) {
    #expect(ContentKind.describe(bytes) == expected)
  }

  @Test("text cut inside a multi-byte character at the 512-byte window is still text")
  func cutCharacter() {
    let text = Array(String(repeating: "가", count: 400).utf8)  // 3 bytes each: 512 is mid-way
    #expect(ContentKind.describe(text) == "text")
  }
}

extension FileError {
  /// The same error naming `path`.
  fileprivate func renamed(_ path: String) -> FileError {
    switch self {
    case .notRegularFile(_, let kind): .notRegularFile(path: path, kind: kind)
    case .isDirectory: .isDirectory(path: path)
    case .notFound: .notFound(path: path)
    case .escapesFolder(_, let folder, let what):
      .escapesFolder(path: path, folder: folder, what: what)
    default: self
    }
  }
}
