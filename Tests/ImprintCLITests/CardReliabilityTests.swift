// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint card` under hostile input, run as the built binary: photo downloads
// that must not reach the local network or fill memory, a photo cache and template assets that
// must not leave their folders, special files, a full disk, outputs that would overwrite each
// other or an input, and text that must not reach the terminal raw.

import Foundation
import ImprintTestSupport
import Testing

/// Runs the built `imprint` with `arguments` (under `prlimit --fsize` when `fileSizeLimit` is
/// given), measured (`runMeasured`), killed with its workers after `timeout` seconds.
private func runCardBinary(
  _ arguments: [String], fileSizeLimit: Int? = nil, timeout: Double = 60
) throws -> MeasuredRun {
  let limit = fileSizeLimit.map { ["/usr/bin/prlimit", "--fsize=\($0)"] } ?? []
  return try runMeasured(limit + [imprintBinary] + arguments, timeout: timeout)
}

/// The code of the first (or only) error of a `--json` report.
private func cardErrorCodes(_ run: MeasuredRun) -> [String] {
  guard let data = run.stdout.data(using: .utf8),
    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
    let cards = object["cards"] as? [[String: Any]]
  else { return [] }
  return cards.compactMap { ($0["error"] as? [String: Any])?["code"] as? String }
}

/// A profile whose photo is `url`.
private func hostileProfile(account: String, photo url: String, name: String = "Photo Test") throws
  -> String
{
  let metadata: [String: Any] = [
    "profile": ["name": name, "profile_image": url, "version": 2]
  ]
  let encoded = String(
    decoding: try JSONSerialization.data(withJSONObject: metadata), as: UTF8.self)
  let object: [String: Any] = ["name": account, "posting_json_metadata": encoded]
  return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
}

@Suite("imprint card under hostile input (end to end)", .liveHandlesChecked)
struct CardReliabilityTests {
  let templates = repositoryRoot + "/templates"

  /// Runs `card` for one profile written from `json`, front side only, as PNG (fast).
  private func card(
    _ json: String, in folder: TemporaryFolder, extra: [String] = [], fileSizeLimit: Int? = nil,
    output: String = "card.png"
  ) throws -> MeasuredRun {
    let profile = folder.file("profile.json")
    try Data(json.utf8).write(to: URL(fileURLWithPath: profile))
    return try runCardBinary(
      ["card", profile, "-o", folder.file(output), "--side", "front", "--json"] + extra,
      fileSizeLimit: fileSizeLimit)
  }

  @Test(
    "--fetch-photo refuses local, link-local, multicast and reserved addresses before any request",
    arguments: [
      "http://127.0.0.1:PORT/photo.jpg", "http://localhost:PORT/photo.jpg",
      "http://[::1]:PORT/photo.jpg", "http://[::ffff:127.0.0.1]:PORT/photo.jpg",
      "http://2130706433:PORT/photo.jpg", "http://0x7f.1:PORT/photo.jpg",
      "http://0.0.0.0:PORT/photo.jpg", "http://169.254.169.254/latest/meta-data/",
      "http://10.1.2.3/a.jpg", "http://172.16.0.1/a.jpg", "http://192.168.1.1/a.jpg",
      "http://100.64.0.1/a.jpg", "http://[fd00::1]/a.jpg", "http://[fe80::1]/a.jpg",
      "http://224.0.0.1/a.jpg", "http://[ff02::1]/a.jpg", "http://[64:ff9b::a00:1]/a.jpg",
      "http://[64:ff9b::7f00:1]:PORT/photo.jpg", "http://[2002:c0a8:101::1]/a.jpg",
    ])
  func refusedAddresses(template: String) throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: samplesFolder + "/photos/harbor-lamp.jpg")
    let url = template.replacingOccurrences(of: "PORT", with: "\(server.port)")
    let run = try card(
      try hostileProfile(account: "alice", photo: url), in: folder, extra: ["--fetch-photo"])
    #expect(run.status == 1, "\(url): \(run.stderr)")
    #expect(cardErrorCodes(run) == ["card.photoAddressRefused"], "\(url): \(run.stdout)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("card.png")))
    #expect(server.requests.isEmpty)
    #expect(run.seconds < 20)
  }

  @Test("--allow-private-network reaches the shop's server; its redirects are checked hop by hop")
  func allowedAndRedirects() throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: samplesFolder + "/photos/harbor-lamp.jpg")
    let allowed = ["--fetch-photo", "--allow-private-network"]
    let direct = try card(
      try hostileProfile(account: "alice", photo: server.url("/photo.jpg")), in: folder,
      extra: allowed
    )
    #expect(direct.status == 0, "\(direct.stderr)")
    let hop = try card(
      try hostileProfile(
        account: "alice", photo: server.url("/redirect?\(server.url("/photo.jpg"))")),
      in: folder, extra: allowed)
    #expect(hop.status == 0, "\(hop.stderr)")
    try FileManager.default.removeItem(atPath: folder.file("card.png"))
    for target in [
      "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x", "http://224.0.0.1/x",
      "http://[::ffff:169.254.169.254]/x",
    ] {
      let run = try card(
        try hostileProfile(account: "alice", photo: server.url("/redirect?\(target)")), in: folder,
        extra: allowed)
      #expect(run.status == 1, "\(target)")
      #expect(cardErrorCodes(run) == ["card.photoAddressRefused"], "\(target): \(run.stdout)")
    }
    // Five redirects are followed, a sixth is not.
    func chain(_ hops: Int) -> String {
      (0..<hops).reduce(server.url("/photo.jpg")) { target, _ in server.url("/redirect?\(target)") }
    }
    let five = try card(
      try hostileProfile(account: "alice", photo: chain(5)), in: folder, extra: allowed)
    #expect(five.status == 0, "\(five.stderr)")
    try FileManager.default.removeItem(atPath: folder.file("card.png"))
    let six = try card(
      try hostileProfile(account: "alice", photo: chain(6)), in: folder, extra: allowed)
    #expect(cardErrorCodes(six) == ["card.photoDownload"])
    #expect(six.stdout.contains("more than 5 redirects"), "\(six.stdout)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("card.png")))
    let file = try card(
      try hostileProfile(account: "alice", photo: server.url("/redirect?file:///etc/passwd")),
      in: folder, extra: allowed)
    #expect(cardErrorCodes(file) == ["card.photoDownload"])
    #expect(!file.stdout.contains("root:"))
    #expect(!FileManager.default.fileExists(atPath: folder.file("card.png")))
  }

  @Test(
    "a 1 GB body, a 1 GB body with its length, and a gzip bomb stop at 10 MB with memory flat",
    arguments: ["/big", "/biglength", "/gzip"])
  func sizeCap(path: String) throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: samplesFolder + "/photos/harbor-lamp.jpg")
    let run = try card(
      try hostileProfile(account: "alice", photo: server.url(path)), in: folder,
      extra: ["--fetch-photo", "--allow-private-network", "--photo-cache", folder.file("cache")])
    #expect(run.status == 1)
    #expect(cardErrorCodes(run) == ["card.photoDownload"])
    #expect(run.stdout.contains("10485760"))
    if Sanitizer.measuresMemory { #expect(run.peakMB < 150, "peak \(run.peakMB) MB") }
    #expect(run.seconds < 30)
    #expect(!FileManager.default.fileExists(atPath: folder.file("card.png")))
    #expect(
      (try? FileManager.default.contentsOfDirectory(atPath: folder.file("cache"))) ?? [] == [])
  }

  @Test("a slow drip is stopped at the 15-second deadline for the whole download")
  func deadline() throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: samplesFolder + "/photos/harbor-lamp.jpg")
    let run = try card(
      try hostileProfile(account: "alice", photo: server.url("/drip")), in: folder,
      extra: ["--fetch-photo", "--allow-private-network"])
    #expect(run.status == 1)
    #expect(cardErrorCodes(run) == ["card.photoDownload"])
    #expect(run.stdout.contains("longer than 15 seconds"))
    #expect(run.seconds > 14 && run.seconds < 25, "\(run.seconds) s")
  }

  @Test("the photo cache: names that leave the folder are not used, bad entries are misses")
  func photoCache() throws {
    let folder = TemporaryFolder()
    let server = try PhotoServer(folder: folder, photo: samplesFolder + "/photos/harbor-lamp.jpg")
    let cache = folder.file("cache")
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    let fetch = ["--fetch-photo", "--allow-private-network", "--photo-cache", cache]
    let photo = try Data(
      contentsOf: URL(fileURLWithPath: samplesFolder + "/photos/harbor-lamp.jpg"))

    // An account that names a path: fetched, never written or read outside the cache.
    for account in ["../escaped", "../../escaped2", "a/b", ".hidden"] {
      let run = try card(
        try hostileProfile(account: account, photo: server.url("/photo.jpg")), in: folder,
        extra: fetch
      )
      #expect(run.status == 0, "\(account): \(run.stderr)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: cache) == [], "\(account)")
    }
    #expect(!folder.contents().contains("escaped.jpg"))
    #expect(!FileManager.default.fileExists(atPath: folder.path + "/../escaped2.jpg"))

    // A truncated download is not cached; a bad entry is replaced by the next download.
    let truncated = try card(
      try hostileProfile(account: "bob", photo: server.url("/truncated")), in: folder, extra: fetch)
    #expect(truncated.status == 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: cache) == [])
    try photo.prefix(photo.count / 3).write(to: URL(fileURLWithPath: cache + "/bob.jpg"))
    let refetched = try card(
      try hostileProfile(account: "bob", photo: server.url("/photo.jpg")), in: folder, extra: fetch)
    #expect(refetched.status == 0, "\(refetched.stderr)")
    #expect(refetched.stderr.contains("cached photo"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: cache + "/bob.jpg")) == photo)

    // Without --fetch-photo a bad entry (cut short, a FIFO, a link out) is a warning.
    try photo.prefix(100).write(to: URL(fileURLWithPath: cache + "/carol.jpg"))
    #expect(mkfifo(cache + "/dave.jpg", 0o600) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: cache + "/erin.jpg", withDestinationPath: samplesFolder + "/photos/harbor-lamp.jpg")
    for account in ["carol", "dave", "erin"] {
      let run = try card(
        try hostileProfile(account: account, photo: server.url("/photo.jpg")), in: folder,
        extra: ["--photo-cache", cache])
      #expect(run.status == 0, "\(account): \(run.stderr)")
      #expect(run.stderr.contains("warning: cached photo"), "\(account): \(run.stderr)")
      #expect(run.seconds < 20)
    }
  }

  @Test("template assets stay in the template's folder; templates are strict JSON")
  func templateAssets() throws {
    let folder = TemporaryFolder()
    let design = folder.file("design")
    try FileManager.default.createDirectory(atPath: design, withIntermediateDirectories: true)
    let outside = folder.file("outside.jpg")
    try FileManager.default.copyItem(
      atPath: samplesFolder + "/photos/harbor-lamp.jpg", toPath: outside)
    try FileManager.default.createSymbolicLink(
      atPath: design + "/link.jpg", withDestinationPath: outside)
    let profile = folder.file("p.json")
    try FileManager.default.copyItem(atPath: harbor, toPath: profile)
    func template(_ background: String, duplicate: Bool = false) -> String {
      #"{"schemaVersion": 1, "front": {"backgroundImage": "\#(background)"}, "#
        + (duplicate ? #""back": {}, "# : "") + #""back": {}}"#
    }
    let cases: [(String, String)] = [
      (template("../outside.jpg"), "file.escapesFolder"),
      (template("../../../../../../etc/passwd"), "file.escapesFolder"),
      (template(outside), "file.escapesFolder"),
      (template("link.jpg"), "file.escapesFolder"),
      (template("sub/../../outside.jpg"), "file.escapesFolder"),
      (template("missing.jpg"), "template.missingAsset"),
      (template("link.jpg", duplicate: true), "template.invalid"),
    ]
    for (json, code) in cases {
      try Data(json.utf8).write(to: URL(fileURLWithPath: design + "/t.json"))
      let run = try runCardBinary(
        ["card", profile, "--template", design + "/t.json", "-o", folder.file("c.pdf")])
      #expect(run.status == 1, "\(json)")
      #expect(run.stderr.contains(code == "template.invalid" ? "appears twice" : "error: "))
      #expect(
        code != "file.escapesFolder" || run.stderr.contains("leads outside its folder"),
        "\(json): \(run.stderr)")
      #expect(!FileManager.default.fileExists(atPath: folder.file("c.pdf")))
    }
    // A FIFO as the template is refused at once.
    #expect(mkfifo(design + "/fifo.json", 0o600) == 0)
    let fifo = try runCardBinary(
      ["card", profile, "--template", design + "/fifo.json", "-o", folder.file("c.pdf")],
      timeout: 20)
    #expect(fifo.status == 1)
    #expect(fifo.stderr.contains("a regular file was expected"), "\(fifo.stderr)")
    #expect(fifo.seconds < 15)
  }

  @Test(
    "devices and FIFOs as profile, photo or follow counts are refused at once",
    arguments: ["profile", "photo", "follow-counts"], ["/dev/zero", "/dev/urandom", "fifo"])
  func specialFiles(role: String, kind: String) throws {
    let folder = TemporaryFolder()
    var special = kind
    if kind == "fifo" {
      special = folder.file("fifo")
      #expect(mkfifo(special, 0o600) == 0)
    }
    var arguments = ["card", role == "profile" ? special : harbor, "-o", folder.file("c.pdf")]
    if role != "profile" { arguments += ["--\(role)", special] }
    let run = try runCardBinary(arguments + ["--json"], timeout: 30)
    #expect(run.status == 1, "\(role) \(kind): \(run.stderr)")
    #expect(cardErrorCodes(run) == ["file.notRegular"], "\(role) \(kind): \(run.stdout)")
    #expect(run.seconds < 15)
    if Sanitizer.measuresMemory { #expect(run.peakMB < 200) }
    #expect(!FileManager.default.fileExists(atPath: folder.file("c.pdf")))
  }

  @Test(
    "a full disk fails PDF, PNG, share and combined outputs with exit 1, leaving no file",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)),
    arguments: [1024, 12 * 1024, 60 * 1024])
  func fullDisk(limit: Int) throws {
    let sora = samplesFolder + "/profiles/sora-park.json"
    let layla = samplesFolder + "/profiles/layla-h.json"
    let runs: [(String, [String])] = [
      ("c.pdf", [harbor]), ("c.png", [harbor]), ("c.png", [harbor, "--format", "share"]),
      ("c.pdf", [harbor, sora, layla]), ("c.pdf", [harbor, sora, layla, "--crop-marks"]),
    ]
    for (output, inputs) in runs {
      let folder = TemporaryFolder()
      let run = try runCardBinary(
        ["card"] + inputs + ["-o", folder.file(output)], fileSizeLimit: limit)
      let files = folder.contents()
      if run.status == 0 {
        // Small enough to fit: then it must be whole.
        #expect(!files.contains { $0.hasPrefix(".") }, "\(files)")
        if output.hasSuffix(".pdf") {
          #expect(try pdfInfo(folder.file(output))["Pages"] != nil)
        }
      } else {
        #expect(run.status == 1, "\(inputs) at \(limit): \(run.stderr)")
        #expect(run.stderr.contains("File too large"), "\(inputs) at \(limit): \(run.stderr)")
        #expect(files.isEmpty, "\(inputs) at \(limit): \(files)")
      }
      // 1 KB and 12 KB hold no card (the smallest, harbor-lamp's PDF, is some 19 KB).
      if limit <= 12 * 1024 { #expect(run.status == 1, "\(inputs) at \(limit)") }
    }
    let folder = TemporaryFolder()
    let dir = try runCardBinary(
      ["card", harbor, sora, "--output-dir", folder.file("out"), "--format", "png"],
      fileSizeLimit: limit)
    let written = (try? FileManager.default.contentsOfDirectory(atPath: folder.file("out"))) ?? []
    #expect(!written.contains { $0.hasPrefix(".") }, "\(written)")
    if limit <= 12 * 1024 {
      #expect(dir.status == 1)
      #expect(written.isEmpty, "\(written)")
    }
  }

  @Test("two profiles with one base name, or an output that is an input, are refused")
  func collisions() throws {
    let folder = TemporaryFolder()
    for sub in ["a", "b"] {
      try FileManager.default.createDirectory(
        atPath: folder.file(sub), withIntermediateDirectories: true)
    }
    try FileManager.default.copyItem(atPath: harbor, toPath: folder.file("a/alice.json"))
    try FileManager.default.copyItem(
      atPath: samplesFolder + "/profiles/sora-park.json", toPath: folder.file("b/alice.json"))
    for format in ["pdf", "png"] {
      let out = folder.file("out-\(format)")
      let run = try runCardBinary(
        [
          "card", folder.file("a/alice.json"), folder.file("b/alice.json"), "--output-dir", out,
          "--format", format, "--side", "front", "--json",
        ])
      #expect(run.status == 1)
      #expect(cardErrorCodes(run) == ["file.outputCollision"], "\(run.stdout)")
      #expect(run.stderr.contains("b/alice.json"))
      #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["alice.\(format)"])
    }
    #expect(try pdfInfo(folder.file("out-pdf/alice.pdf"))["Title"] == "@harbor-lamp")

    // The output is an input: the profile itself, or the photo.
    let named = folder.file("out-pdf/x.pdf")
    try FileManager.default.copyItem(atPath: harbor, toPath: named)
    let before = try Data(contentsOf: URL(fileURLWithPath: named))
    let same = try runCardBinary(
      ["card", named, "--output-dir", folder.file("out-pdf"), "--json"])
    #expect(same.status == 1)
    #expect(cardErrorCodes(same) == ["file.outputIsInput"], "\(same.stdout)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: named)) == before)
    let photo = folder.file("photo.png")
    try FileManager.default.copyItem(atPath: samplesFolder + "/photos/sora-park.png", toPath: photo)
    let photoBefore = try Data(contentsOf: URL(fileURLWithPath: photo))
    let overPhoto = try runCardBinary(
      ["card", harbor, "--photo", photo, "-o", photo, "--side", "front"])
    #expect(overPhoto.status == 1)
    #expect(overPhoto.stderr.contains("is also an input"), "\(overPhoto.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: photo)) == photoBefore)
  }

  @Test("control characters from a profile never reach the terminal raw; glyph hints are right")
  func escapesAndGlyphs() throws {
    let folder = TemporaryFolder()
    let hostile = "Ev\u{1B}[2J\u{07} ᏣᎳᎩ"
    let single = try card(
      try hostileProfile(account: "alice", photo: "", name: hostile), in: folder)
    #expect(single.status == 1)
    #expect(!single.stderr.utf8.contains(0x1B) && !single.stderr.utf8.contains(0x07))
    #expect(single.stderr.contains("U+13E3 (Cherokee)"), "\(single.stderr)")
    #expect(!single.stderr.contains("bootstrap"))
    #expect(single.stderr.contains("--allow-missing-glyphs"))
    // Several profiles: each failure line names its file and message, escaped too.
    let second = folder.file("p\u{1B}[31m.json")
    try Data(try hostileProfile(account: "bob", photo: "", name: hostile).utf8).write(
      to: URL(fileURLWithPath: second))
    let many = try runCardBinary(
      ["card", folder.file("profile.json"), second, "--output-dir", folder.file("out")])
    #expect(many.status == 1)
    #expect(!many.stderr.utf8.contains(0x1B), "\(many.stderr)")
    #expect(many.stderr.components(separatedBy: "U+13E3 (Cherokee)").count == 3)
    // Allowed: a warning, escaped.
    let allowed = try card(
      try hostileProfile(account: "alice", photo: "", name: hostile), in: folder,
      extra: ["--allow-missing-glyphs"])
    #expect(allowed.status == 0, "\(allowed.stderr)")
    #expect(!allowed.stderr.utf8.contains(0x1B))
  }
}
