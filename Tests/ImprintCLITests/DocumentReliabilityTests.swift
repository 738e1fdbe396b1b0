// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: `imprint inspect` and `thumb` under hostile input, end to end with the built
// binary where a process is needed: a trap-prone file fails alone, special files return at
// once, outputs never replace inputs or each other, a full disk leaves nothing, and no worker
// outlives the CLI (killed or not).

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintTestSupport
import Testing

/// The live (not zombie) processes but this one, each with its command line's arguments.
func liveProcesses() -> [(pid: Int32, arguments: [String])] {
  let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  return names.compactMap { name -> (Int32, [String])? in
    guard let pid = Int32(name), pid != getpid(),
      let raw = procBytes("/proc/\(name)/cmdline"),
      let stat = procText("/proc/\(name)/stat")
    else { return nil }
    // The state follows the command name in parentheses; a zombie has ended.
    let state = stat.split(separator: ")").last?.split(separator: " ").first
    guard state != "Z" else { return nil }
    return (pid, raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
  }
}

/// The PIDs of live (not zombie) processes whose command line contains `marker`, or that were
/// started with `--parent PARENT` (spawned workers of the CLI with PID `parent`).
func workers(marker: String, parent: Int32) -> [Int32] {
  liveProcesses().compactMap { pid, arguments in
    let spawned = zip(arguments, arguments.dropFirst()).contains {
      $0 == "--parent" && $1 == "\(parent)"
    }
    return spawned || arguments.contains(where: { $0.contains(marker) }) ? pid : nil
  }
}

/// Runs `arguments` under a Python parent that is a child subreaper (PR_SET_CHILD_SUBREAPER):
/// a worker the CLI did not wait for is adopted by it when the CLI exits.
///
/// - Returns: the CLI's exit status, how many processes the subreaper adopted and reaped, and
///   the largest resident size of the CLI and every process it waited for, in kilobytes.
func runAsSubreaper(_ arguments: [String]) throws -> (status: Int32, adopted: Int, peakKB: Int) {
  let script = pythonFixture("subreaper.py")
  let run = try runTool("python3", ["-c", script] + arguments)
  let numbers = run.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
  guard numbers.count == 3 else { return (-1, -1, -1) }
  return (Int32(numbers[0]), numbers[1], numbers[2])
}

@Suite("imprint inspect and thumb under hostile input", .liveHandlesChecked)
struct DocumentReliabilityTests {
  static let binary = Bundle.main.bundleURL.appendingPathComponent("imprint").path

  /// Good files around hostile ones: each hostile file fails with its code, the good ones are
  /// reported, and the run ends with status 1 (no signal).
  @Test("inspect and thumb: a 1e30 MediaBox (and worse) among good files fails alone")
  func trapsAmongGoodFiles() throws {
    let folder = TemporaryFolder()
    let e30 = "1" + String(repeating: "0", count: 30)
    let hostile: [(String, [UInt8], String)] = [
      ("e30.pdf", HostileDocuments.onePage(box: "0 0 \(e30) \(e30)"), "pdf.pageTooLarge"),
      ("minus-e30.pdf", HostileDocuments.onePage(box: "-\(e30) 0 0 842"), "pdf.pageTooLarge"),
      ("zerobox.pdf", HostileDocuments.onePage(box: "0 0 0 0"), "pdf.emptyPage"),
      (
        "count.pdf", HostileDocuments.onePage(box: "0 0 595 842", count: "2147483647"),
        "pdf.countMismatch"
      ),
      ("zero.png", HostileDocuments.pngHeader(width: 0, height: 0), "image.damaged"),
      ("huge.png", HostileDocuments.pngHeader(width: 0xFFFF_FFFF, height: 2), "image.damaged"),
    ]
    for (name, bytes, _) in hostile { try HostileDocuments.write(bytes, to: folder.file(name)) }
    let good = [documentFixtures + "mixed.pdf", documentFixtures + "hyperlink.pdf"]
    var files = [good[0]]
    for (name, _, _) in hostile { files.append(folder.file(name)) }
    files.append(good[1])
    let expected = ["ok"] + hostile.map { $0.2 } + ["ok"]

    let inspect = try runTool(Self.binary, ["inspect", "--json"] + files)
    #expect(inspect.status == 1, "\(inspect.stderr)")
    #expect(!inspect.stderr.contains("Fatal error"))
    let report = try JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any]
    let entries = report?["files"] as? [[String: Any]] ?? []
    #expect(
      entries.map {
        ($0["error"] as? [String: Any])?["code"] as? String ?? ($0["status"] as? String)
      }
        == expected)

    let output = TemporaryFolder()
    let thumb = try runTool(Self.binary, ["thumb", "--json", "-o", output.path] + files)
    #expect(thumb.status == 1, "\(thumb.stderr)")
    let thumbs = try JSONSerialization.jsonObject(with: Data(thumb.stdout.utf8)) as? [String: Any]
    let thumbEntries = thumbs?["files"] as? [[String: Any]] ?? []
    #expect(
      thumbEntries.map {
        ($0["error"] as? [String: Any])?["code"] as? String ?? ($0["status"] as? String)
      } == expected)
    #expect(output.contents() == ["hyperlink.png", "mixed.png"])
    // With colours (every page drawn): still each file's own error, and memory bounded (no
    // list of 2^31 pages, no 1e30-point page drawn).
    let colors = try runAsSubreaper([Self.binary, "inspect", "--colors"] + files)
    #expect(colors.status == 1 && colors.adopted == 0)
    #expect(colors.peakKB > 0 && colors.peakKB < 1 << 20, "peak \(colors.peakKB) KB")
  }

  @Test(
    "a 60-megapixel PNG header (and a 40 000-pixel side) is image.tooLarge for inspect and thumb alike",
    arguments: [(UInt32(10_000), UInt32(6_000)), (40_000, 10)])
  func oneImageLimit(width: UInt32, height: UInt32) throws {
    let folder = TemporaryFolder()
    let file = folder.file("big.png")
    try HostileDocuments.write(HostileDocuments.pngHeader(width: width, height: height), to: file)
    func error(_ arguments: [String]) throws -> (Int32, [String: Any]) {
      let run = try runTool(Self.binary, arguments + [file])
      let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
      let entry = (report?["files"] as? [[String: Any]])?.first
      return (run.status, entry?["error"] as? [String: Any] ?? [:])
    }
    let output = TemporaryFolder()
    let (inspectStatus, inspect) = try error(["inspect", "--json"])
    let (thumbStatus, thumb) = try error(["thumb", "--json", "-o", output.path])
    #expect(inspectStatus == 1 && thumbStatus == 1)
    #expect(inspect["code"] as? String == "image.tooLarge")
    #expect(thumb["code"] as? String == "image.tooLarge")
    let message = inspect["message"] as? String ?? ""
    #expect(message.contains("big.png") && message.contains("\(width) x \(height)"), "\(message)")
    #expect(thumb["message"] as? String == message)
    #expect(output.contents().isEmpty)
  }

  @Test("thumb a.pdf b.pdf (the -o forgotten) is a usage error and leaves b.pdf untouched")
  func forgottenOutputFolder() async throws {
    let folder = TemporaryFolder()
    let a = folder.file("a.pdf")
    let b = folder.file("b.pdf")
    try FileManager.default.copyItem(atPath: documentFixtures + "mixed.pdf", toPath: a)
    try FileManager.default.copyItem(atPath: documentFixtures + "hyperlink.pdf", toPath: b)
    let photo = folder.file("photo.png")
    try FileManager.default.copyItem(atPath: documentFixtures + "huge.png", toPath: photo)
    let jpeg = folder.file("photo.jpg")
    try Data([0xFF, 0xD8, 0xFF, 0xE0]).write(to: URL(fileURLWithPath: jpeg))
    let before = try [a, b, photo, jpeg].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    for arguments in [
      [a, b], [a, b, folder.file("c.pdf")], [a], [a, jpeg], [a, folder.file("new.pdf")],
      ["--format", "jpeg", a, photo],
    ] {
      let run = await imprint(["thumb"] + arguments)
      #expect(run.code == 2, "\(arguments): \(run.stderr)")
      #expect(run.stderr.contains("-o <dir>"), "\(run.stderr)")
    }
    // The output named as the input itself, by another path.
    let same = await imprint(["thumb", photo, folder.path + "/./photo.png"])
    #expect(same.code == 1 && same.stderr.contains("is also an input"), "\(same.stderr)")
    #expect(
      try [a, b, photo, jpeg].map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == before)
    #expect(folder.contents() == ["a.pdf", "b.pdf", "photo.jpg", "photo.png"])
    // The freedesktop form still works: a new PNG, or one that replaces an earlier thumbnail.
    for _ in 0..<2 {
      let run = await imprint(["thumb", a, folder.file("t.png")])
      #expect(run.code == 0, "\(run.stderr)")
    }
    let help = await imprint(["thumb", "--help"])
    #expect(help.stdout.contains("'imprint thumb a.pdf b.pdf'"))
  }

  @Test("thumb -o: inputs with the same name are both refused, an input in the folder is kept")
  func sameBaseNames() async throws {
    let folder = TemporaryFolder()
    for sub in ["x", "y"] {
      try FileManager.default.createDirectory(
        atPath: folder.file(sub), withIntermediateDirectories: true)
    }
    try FileManager.default.copyItem(
      atPath: documentFixtures + "mixed.pdf", toPath: folder.file("x/a.pdf"))
    try FileManager.default.copyItem(
      atPath: documentFixtures + "hyperlink.pdf", toPath: folder.file("y/a.pdf"))
    let output = folder.file("out")
    let run = await imprint([
      "thumb", "--json", "-o", output, folder.file("x/a.pdf"), folder.file("y/a.pdf"),
      documentFixtures + "hyperlink.pdf",
    ])
    #expect(run.code == 1)
    let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    let codes = (report?["files"] as? [[String: Any]] ?? []).map {
      ($0["error"] as? [String: Any])?["code"] as? String ?? "ok"
    }
    #expect(codes == ["file.outputCollision", "file.outputCollision", "ok"])
    #expect(
      (try? FileManager.default.contentsOfDirectory(atPath: output).sorted()) == ["hyperlink.png"])
    // With --pages all too (a-1.png, a-2.png ... would mix the two files' pages).
    let pages = await imprint([
      "thumb", "--pages", "all", "-o", folder.file("pages"), folder.file("x/a.pdf"),
      folder.file("y/a.pdf"),
    ])
    #expect(pages.code == 1 && pages.stderr.contains("would both be written to"))
    #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.file("pages"))) == [])
    // -o naming the input's own folder: the PNG input would be its own thumbnail.
    let photo = folder.file("p.png")
    try FileManager.default.copyItem(atPath: documentFixtures + "huge.png", toPath: photo)
    let before = try Data(contentsOf: URL(fileURLWithPath: photo))
    let own = await imprint(["thumb", "--json", "-o", folder.path, photo])
    #expect(own.code == 1 && own.stdout.contains("file.outputIsInput"), "\(own.stdout)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: photo)) == before)
  }

  @Test("a FIFO, /dev/zero and /dev/urandom are refused at once by inspect and thumb")
  func specialFiles() throws {
    let folder = TemporaryFolder()
    let fifo = folder.file("pipe.pdf")
    #expect(mkfifo(fifo, 0o600) == 0)
    let files = [fifo, "/dev/zero", "/dev/urandom", documentFixtures + "mixed.pdf"]
    for command in [["inspect", "--json"], ["thumb", "--json", "-o", folder.file("out")]] {
      let started = Date()
      let run = try runTool(Self.binary, command + files)
      // A hang guard (a FIFO read would block forever), generous for a loaded machine.
      #expect(Date().timeIntervalSince(started) < 60, "\(command[0]) took too long")
      #expect(run.status == 1, "\(run.stderr)")
      let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
      let codes = (report?["files"] as? [[String: Any]] ?? []).map {
        ($0["error"] as? [String: Any])?["code"] as? String ?? "ok"
      }
      #expect(codes == ["file.notRegular", "file.notRegular", "file.notRegular", "ok"])
    }
  }

  @Test(
    "thumb on a full disk (RLIMIT_FSIZE): the write fails with a code, exit 1, no file left",
    .disabled(
      if: !Sanitizer.startsUnderSmallFileSizeLimit,
      Comment(rawValue: Sanitizer.smallFileSizeLimitReason)))
  func fullDisk() throws {
    let folder = TemporaryFolder()
    let run = try runTool(
      "prlimit",
      [
        "--fsize=500", Self.binary, "thumb", "--json", "--size", "512", "--pages", "all", "-o",
        folder.path, documentFixtures + "mixed.pdf", documentFixtures + "hyperlink.pdf",
      ])
    #expect(run.status == 1, "\(run.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    let codes = (report?["files"] as? [[String: Any]] ?? []).map {
      ($0["error"] as? [String: Any])?["code"] as? String ?? "ok"
    }
    #expect(codes == ["file.unwritable", "file.unwritable"], "\(run.stdout)")
    // Not a page of either file, nor a temporary.
    #expect(folder.contents() == [])
  }

  @Test("thumb -o removes the staged pages a killed run left, and keeps a live run's")
  func staleStagedPagesRemoved() async throws {
    let folder = TemporaryFolder()
    var buffer = [CChar](repeating: 0, count: 256)
    gethostname(&buffer, buffer.count - 1)
    let host = String(
      String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        .filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
    // A process that has ended, and this one (alive).
    let ended = Process()
    ended.executableURL = URL(fileURLWithPath: "/bin/true")
    try ended.run()
    ended.waitUntilExit()
    let stale = ".mixed-2.png.tmp-\(host)-\(ended.processIdentifier)-1"
    let live = ".mixed-3.png.tmp-\(host)-\(getpid())-1"
    for name in [stale, live] {
      FileManager.default.createFile(atPath: folder.file(name), contents: Data([1, 2, 3]))
    }
    let run = await imprint(["thumb", "-o", folder.path, documentFixtures + "hyperlink.pdf"])
    #expect(run.code == 0, "\(run.stderr)")
    #expect(folder.contents() == [live, "hyperlink.png"])
  }

  @Test("after kill -9 of the CLI, its busy workers end within seconds")
  func killedCLILeavesNoWorker() throws {
    let folder = TemporaryFolder()
    var files: [String] = []
    for index in 0..<2 {
      let file = folder.file("bomb\(index).pdf")
      try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: file)
      files.append(file)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.binary)
    process.arguments =
      [
        "thumb", "--cpu-limit", "120", "--timeout", "120", "-j", "2", "-o", folder.file("out"),
      ] + files
    process.standardError = FileHandle.nullDevice
    try process.run()
    let cli = process.processIdentifier
    var busy: [Int32] = []
    for _ in 0..<1000 where busy.count < 2 {
      busy = workers(marker: folder.path, parent: cli).filter { $0 != cli }
      usleep(10_000)
    }
    #expect(!busy.isEmpty, "no worker was seen")
    kill(cli, SIGKILL)
    process.waitUntilExit()
    var left = busy
    for _ in 0..<50 where !left.isEmpty {
      usleep(100_000)
      left = workers(marker: folder.path, parent: cli).filter { busy.contains($0) }
    }
    #expect(left.isEmpty, "workers \(left) outlived the killed CLI")
  }

  @Test("after a usage error or files refused before any work, no prestarted worker is left")
  func unusedWorkersReaped() throws {
    let folder = TemporaryFolder()
    let a = folder.file("a.pdf")
    try FileManager.default.copyItem(atPath: documentFixtures + "mixed.pdf", toPath: a)
    let fifo = folder.file("pipe.pdf")
    #expect(mkfifo(fifo, 0o600) == 0)
    for (arguments, expected) in [
      (["thumb", "-j", "4", a, folder.file("b.pdf")], Int32(2)),
      (
        [
          "thumb", "-j", "4", "-o", folder.file("out"), fifo, "/dev/zero", folder.file("no.pdf"), a,
        ], 1
      ),
      (["inspect", "-j", "4", fifo, "/dev/zero", folder.file("no.pdf"), a], 1),
      // quote reads its order's documents through workers too.
      (
        [
          "quote", repositoryRoot + "/examples/order-booster.json", "--prices",
          repositoryRoot + "/examples/prices-booster.json",
        ], 0
      ),
      (["quote", repositoryRoot + "/examples/order-booster.json", "--prices", a], 1),
    ] {
      let run = try runAsSubreaper([Self.binary] + arguments)
      #expect(run.status == expected, "\(arguments)")
      #expect(run.adopted == 0, "\(arguments): \(run.adopted) worker(s) outlived the CLI")
    }
  }

  @Test("a command stops the workers it started, never another caller's: that idle one serves on")
  func commandLeavesOtherSandboxes() async throws {
    let file = documentFixtures + "mixed.pdf"
    let pages = try #require(Int(try pdfInfo(file)["Pages"] ?? ""))
    // Memory limits no other test uses single out this test's workers among those of the tests
    // running beside it in this process: 1523 MB for the sandbox's, 1525 MB for the command's.
    var limits = SandboxLimits()
    limits.memoryMB = 1523
    let sandbox = DocumentSandbox(executable: Self.binary, limits: limits, workers: 1)
    #expect(try await sandbox.inspect(path: file, file: "mixed.pdf").pages == pages)
    let kept = Self.ownWorkers(memoryMB: 1523)
    #expect(sandbox.workersAlive == 1 && kept.count == 1, "\(kept)")
    // Another caller's command, in this process, reads files in workers of its own and ends.
    let run = await imprint([
      "inspect", "--json", "--memory-limit", "1525", "-j", "2", file,
      documentFixtures + "hyperlink.pdf",
    ])
    #expect(run.code == 0, "\(run.stderr)")
    // Its workers were stopped and reaped before it returned; the sandbox's idle one was not.
    #expect(Self.ownWorkers(memoryMB: 1525).isEmpty)
    #expect(sandbox.workersAlive == 1)
    #expect(Self.ownWorkers(memoryMB: 1523) == kept)
    // The same worker serves the next request.
    #expect(try await sandbox.inspect(path: file, file: "mixed.pdf").pages == pages)
    #expect(sandbox.mostWorkersAtOnce == 1 && sandbox.workersReplaced == 0)
    #expect(Self.ownWorkers(memoryMB: 1523) == kept)
    sandbox.stopIdleWorkers()
    #expect(sandbox.workersAlive == 0 && Self.ownWorkers(memoryMB: 1523).isEmpty)
  }

  /// The live (not zombie) document workers this process started with `--memory-mb memoryMB`.
  static func ownWorkers(memoryMB: Int) -> [Int32] {
    liveProcesses().compactMap { pid, arguments in
      let pairs = Array(zip(arguments, arguments.dropFirst()))
      return arguments.contains(DocumentWorker.argument)
        && pairs.contains { $0 == ("--memory-mb", "\(memoryMB)") }
        && pairs.contains { $0 == ("--parent", "\(getpid())") } ? pid : nil
    }.sorted()
  }

  @Test("after a normal exit no worker is left, and their CPU time is counted in the CLI's")
  func workersReapedAtExit() throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    let files = [
      documentFixtures + "mixed.pdf", documentFixtures + "hyperlink.pdf",
      documentFixtures + "objstreams.pdf", bomb,
    ]
    let arguments =
      [Self.binary, "thumb", "--cpu-limit", "2", "-j", "2", "-o", folder.file("out")] + files
    var cli: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    let spawned = posix_spawn(&cli, Self.binary, &actions, nil, argv, environ)
    for argument in argv { free(argument) }
    posix_spawn_file_actions_destroy(&actions)
    try #require(spawned == 0)
    var status: Int32 = 0
    var usage = rusage()
    while wait4(cli, &status, 0, &usage) < 0 && errno == EINTR {}
    #expect(status >> 8 & 0xFF == 1 && status & 0x7F == 0, "status \(status)")
    // Right after the exit: every worker was waited for before it.
    #expect(workers(marker: folder.path, parent: cli) == [])
    let good = try runAsSubreaper(
      [Self.binary, "thumb", "-j", "3", "-o", folder.file("good")] + files.dropLast())
    #expect(good.status == 0 && good.adopted == 0, "\(good)")
    // The CLI's usage as wait4 gives it (its own and its waited-for children's): the worker
    // that ran into the 2 s CPU limit is in it only if the CLI reaped it.
    let cpu =
      Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    #expect(cpu >= 2, "\(cpu) s")
  }
}
