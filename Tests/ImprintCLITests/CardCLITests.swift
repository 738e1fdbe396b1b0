// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint card` and `imprint templates list`: outputs read back, every bad input.

import Foundation
import ImprintCLI
import ImprintTestSupport
import Testing

let samplesFolder = repositoryRoot + "/assets/samples"
let harbor = samplesFolder + "/profiles/harbor-lamp.json"

@Suite("imprint card", .liveHandlesChecked)
struct CardCLITests {
  @Test("templates list shows the three designs with a description, and --json their languages")
  func list() async throws {
    let run = await imprint(["templates", "list", "--templates", repositoryRoot + "/templates"])
    #expect(run.code == 0)
    let lines = run.stdout.split(separator: "\n")
    #expect(
      lines.map { $0.split(separator: " ").first ?? "" } == ["classic", "midnight", "moderator"])
    #expect(lines.allSatisfy { $0.count > 20 })
    let json = await imprint([
      "templates", "list", "--templates", repositoryRoot + "/templates", "--json",
    ])
    let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let entries = try #require(document?["templates"] as? [[String: Any]])
    let languages = [
      "ar", "bn", "en", "es", "fa", "hi", "id", "ja", "ko", "pt", "ru", "th", "tr", "vi", "zh-Hans",
      "zh-Hant",
    ]
    #expect(entries.allSatisfy { $0["locales"] as? [String] == languages }, "\(json.stdout)")
  }

  @Test("a PDF with front and back, and PNGs for each side that decode")
  func outputs() async throws {
    let folder = TemporaryFolder()
    let pdf = await imprint([
      "card", harbor, "-o", folder.file("c.pdf"), "--photo",
      samplesFolder + "/photos/harbor-lamp.jpg",
      "--follow-counts", samplesFolder + "/profiles/harbor-lamp.follow.json", "--template",
      "midnight",
      "--templates", repositoryRoot + "/templates", "--json",
    ])
    #expect(pdf.code == 0, "\(pdf.stderr)")
    #expect(try pdfInfo(folder.file("c.pdf"))["Pages"] == "2")
    #expect(pdf.stdout.contains("\"account\" : \"harbor-lamp\""))
    let png = await imprint(["card", harbor, "-o", folder.file("c.png"), "--dpi", "300"])
    #expect(png.code == 0, "\(png.stderr)")
    #expect(folder.contents() == ["c-back.png", "c-front.png", "c.pdf"])
    #expect(try zbarDecode(folder.file("c-back.png")) == "https://steemit.com/@harbor-lamp")
    let front = await imprint([
      "card", harbor, "-o", folder.file("f.png"), "--side", "front", "--bleed", "0",
    ])
    #expect(front.code == 0)
    let header = pngHeader(
      [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file("f.png")))))
    #expect(header?.width == 1011 && header?.height == 638)
  }

  @Test("several profiles go into one PDF, front and back in order; a bad one is left out")
  func combined() async throws {
    let folder = TemporaryFolder()
    let bad = folder.file("bad.json")
    try Data("{\"user\":\"No account found\",\"status\":\"404\"}".utf8).write(
      to: URL(fileURLWithPath: bad))
    let profiles = ["harbor-lamp", "sora-park", "layla-h"].map {
      samplesFolder + "/profiles/\($0).json"
    }
    let run = await imprint(["card"] + profiles + [bad, "-o", folder.file("all.pdf")])
    #expect(run.code == 1)
    #expect(run.stderr.contains("error: \(bad): profile '\(bad)': account was not found"))
    #expect(run.stderr.contains("card: 3 of 4 cards written"))
    #expect(try pdfInfo(folder.file("all.pdf"))["Pages"] == "6")
    let text = try runTool("pdftotext", ["-f", "3", "-l", "3", folder.file("all.pdf"), "-"]).stdout
    #expect(text.contains("@sora-park"))
  }

  @Test("one PDF of many cards holds a shared photo and each fixed label once, still as text")
  func sharedObjects() async throws {
    let folder = TemporaryFolder()
    // The same account five times, with the same photo file: five fronts and five backs.
    let profiles = Array(repeating: samplesFolder + "/profiles/layla-h.json", count: 5)
    let photo = samplesFolder + "/photos/harbor-lamp.jpg"
    let run = await imprint(["card"] + profiles + ["--photo", photo, "-o", folder.file("all.pdf")])
    #expect(run.code == 0)
    let images = try runTool("pdfimages", ["-list", folder.file("all.pdf")]).stdout
      .split(separator: "\n").dropFirst(2).map {
        $0.split(separator: " ", omittingEmptySubsequences: true)
      }
    // Listed once per use, but the JPEG's object is the same on every page.
    let photoObjects = Set(images.filter { $0[8] == "jpeg" }.map { $0[10] })
    #expect(images.filter { $0[8] == "jpeg" }.count == 5 && photoObjects.count == 1)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.file("all.pdf")))
    let forms = bytes.ranges(of: Data("/Subtype /Form".utf8)).count
    #expect(forms >= 3 && forms <= 12)  // the design's fixed labels, not one per card
    let back = try runTool("pdftotext", ["-f", "10", "-l", "10", folder.file("all.pdf"), "-"])
    #expect(back.stdout.contains("REPUTATION") && back.stdout.contains("Scan to visit the profile"))
  }

  @Test(
    "bad input: exit 1, an error naming the input, no file left",
    arguments: [
      ("not json", "{nope", [], "is not valid JSON"),
      ("404", #"{"user":"No account found","status":"404"}"#, [], "account '@ghost' was not found"),
      ("451", #"{"user":"Content unavailable","status":"451"}"#, [], "is unavailable (status 451"),
      ("empty object", "{}", [], "holds no account"),
      ("missing name", #"{"id":3}"#, [], "the account has no 'name'"),
      (
        "unknown template", #"{"name":"abc"}"#, ["--template", "fancy"],
        "template 'fancy' is neither"
      ),
      ("bad photo", #"{"name":"abc"}"#, ["--photo", "PHOTO"], "photo '"),
      (
        "missing photo", #"{"name":"abc"}"#, ["--photo", "/no/such.jpg"],
        "'/no/such.jpg' does not exist"
      ),
      (
        "missing folder", #"{"name":"abc"}"#, ["-o", "/no/such/folder/c.pdf"],
        "folder '/no/such/folder' does not exist"
      ),
    ] as [(String, String, [String], String)])
  func badInput(kind: String, json: String, extra: [String], message: String) async throws {
    let folder = TemporaryFolder()
    let profile = folder.file("@ghost.json")
    try Data(json.utf8).write(to: URL(fileURLWithPath: profile))
    let photo = folder.file("photo.jpg")
    try Data("GIF89a not a jpeg".utf8).write(to: URL(fileURLWithPath: photo))
    let output = folder.file("out/c.pdf")
    try FileManager.default.createDirectory(
      atPath: folder.file("out"), withIntermediateDirectories: true)
    var arguments = ["card", profile] + extra.map { $0 == "PHOTO" ? photo : $0 }
    if !extra.contains("-o") { arguments += ["-o", output] }
    let run = await imprint(arguments)
    #expect(run.code == 1, "\(kind): \(run.stderr)")
    #expect(run.stderr.hasPrefix("error: "))
    #expect(run.stderr.contains(message), "\(kind): \(run.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).isEmpty)
  }

  @Test("a template with an unknown element type or a missing asset is refused by name")
  func badTemplate() async throws {
    let folder = TemporaryFolder()
    for (name, element) in [
      ("shape.json", #"{"type":"star","x":5,"y":5}"#),
      ("logo.json", #"{"type":"image","x":5,"y":5,"width":5,"height":5,"src":"logo.png"}"#),
    ] {
      let template = #"{"schemaVersion":1,"front":{"elements":[\#(element)]},"back":{}}"#
      try Data(template.utf8).write(to: URL(fileURLWithPath: folder.file(name)))
      let run = await imprint([
        "card", harbor, "--template", folder.file(name), "-o", folder.file("c.pdf"),
      ])
      #expect(run.code == 1)
      #expect(run.stderr.contains("template '\(name)': 'front.elements[0]"), "\(run.stderr)")
    }
    #expect(!folder.contents().contains("c.pdf"))
  }

  @Test("--fetch-photo downloads over http from a local server, refuses what is not an image")
  func fetch() async throws {
    let folder = TemporaryFolder()
    let served = folder.file("www")
    try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: samplesFolder + "/photos/harbor-lamp.jpg", toPath: served + "/a.jpg")
    try Data("<html>".utf8).write(to: URL(fileURLWithPath: served + "/a.html"))
    // Port 0: the system picks a free port, which the server prints ("Serving HTTP on
    // 127.0.0.1 port N"); a fixed port could be another program's.
    let server = Process()
    let announcement = CloseOnExecPipe()
    server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    server.arguments = [
      "python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", served,
    ]
    server.standardOutput = announcement.fileHandleForWriting
    server.standardError = FileHandle.nullDevice
    try server.run()
    announcement.closeWriteEnd()
    // SIGKILL: the server inherits the test thread's signal mask, in which SIGTERM is blocked,
    // so terminate() left one python3 running after every test run.
    defer { kill(server.processIdentifier, SIGKILL) }
    var line: [UInt8] = []
    while !line.contains(UInt8(ascii: ")")),
      let byte = try announcement.fileHandleForReading.read(upToCount: 1)
    {
      line += byte
    }
    let words = String(decoding: line, as: UTF8.self).split(separator: " ")
    let port = try #require(words.firstIndex(of: "port").flatMap { Int(words[$0 + 1]) })
    #expect(canConnect(port: port))
    let cache = folder.file("cache")
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    for (index, (file, code)) in [("a.jpg", Int32(0)), ("a.html", 1), ("missing.jpg", 1)]
      .enumerated()
    {
      let profile = folder.file("p.json")
      let json =
        #"{"name":"fetcher\#(index)","json_metadata":{"profile":{"profile_image":"http://127.0.0.1:\#(port)/\#(file)"}}}"#
      try Data(json.utf8).write(to: URL(fileURLWithPath: profile))
      let run = await imprint([
        "card", profile, "--fetch-photo", "--allow-private-network", "--photo-cache", cache,
        "-o", folder.file("f.pdf"),
      ])
      #expect(run.code == code, "\(file): \(run.stderr)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: cache) == ["fetcher0.jpg"])
  }
}

/// Whether a TCP server listens on 127.0.0.1:`port`.
func canConnect(port: Int) -> Bool {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  return withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
    }
  }
}
