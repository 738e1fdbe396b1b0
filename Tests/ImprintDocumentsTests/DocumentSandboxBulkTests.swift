// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the bulk runs of `inspect` and `thumb` called as a backend calls them
// (`DocumentSandbox.inspect(files:)`, `.thumbnails(of:to:)`), checked with poppler and PNG bytes.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite("Bulk inspect and thumbnails through the sandbox", .liveHandlesChecked)
struct DocumentSandboxBulkTests {
  @Test("inspect: one item per file in the order given, the largest started first, bad ones alone")
  func inspectMany() async throws {
    let names = ["mixed.pdf", "cycle.pdf", "hyperlink.pdf", "objstreams.pdf", "html.pdf"]
    let folder = TemporaryFolder()
    let files = names.map { documents + $0 } + [folder.file("missing.pdf")]
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    let items = await sandbox.inspect(files: files)
    #expect(items.map(\.file) == files)
    #expect(items.map(\.status) == [.ok, .failed, .ok, .ok, .failed, .failed])
    #expect(
      items.map { Self.code($0.result) } == [
        nil, "pdf.pageTreeCycle", nil, nil, "document.unsupportedType", "file.notFound",
      ])
    for item in items {
      switch item.result {
      case .success(let info):
        // pdfinfo counts the pages on its own.
        #expect(try "\(info.pages)" == pdfInfo(item.file)["Pages"], "\(item.file)")
        #expect(info.file == item.file)
      case .failure(let error):
        let message = (error as? any ImprintError)?.message ?? "\(error)"
        #expect(message.contains(item.file), "\(message)")
      }
    }
    // Started largest first: the turns sort the files by their size (a missing one is empty).
    let sizes = files.map { file in
      ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0
    }
    #expect(Set(sizes).count == files.count, "the fixtures' sizes no longer tell an order")
    let started = items.sorted { $0.turn < $1.turn }.map(\.file)
    #expect(started == files.indices.sorted { sizes[$0] > sizes[$1] }.map { files[$0] })
    #expect(items.map(\.turn).sorted() == Array(files.indices))
    // Colours cost what the pages take to draw, which the size does not tell: the order given.
    let colored = await sandbox.inspect(files: files, colors: ColorRule(), jobs: 1)
    #expect(colored.map(\.turn) == Array(files.indices))
    #expect(colored.map(\.status) == items.map(\.status))
    #expect(try #require(colored[0].result.get().colors).map(\.color) == [false, true, false])
  }

  @Test("thumbnails into a folder: every page of each file fits the box; a bad file fails alone")
  func thumbnailsMany() async throws {
    let inputs = TemporaryFolder()
    // A PNG made by poppler, not by Imprint: page 2 of mixed.pdf (Letter landscape).
    _ = try runTool(
      "pdftoppm",
      [
        "-png", "-r", "20", "-f", "2", "-l", "2", "-singlefile",
        documents + "mixed.pdf", inputs.file("letter"),
      ])
    let photo = inputs.file("letter.png")
    let photoHeader = try #require(pngHeader(try Self.bytes(photo)))
    #expect(photoHeader.width > photoHeader.height)
    let files = [
      documents + "mixed.pdf", documents + "html.pdf", photo, documents + "hyperlink.pdf",
    ]
    let thumbs = TemporaryFolder()
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    let items = try await sandbox.thumbnails(
      of: files, to: .folder(thumbs.path), pages: "all", size: 96, format: .png)
    #expect(items.map(\.file) == files)
    #expect(items.map(\.status) == [.ok, .failed, .ok, .ok])
    #expect(Self.code(items[1].result) == "document.unsupportedType")
    var written: [String] = []
    for item in items {
      guard case .success(let outputs) = item.result else { continue }
      written += outputs
      // One thumbnail per page, each as landscape as poppler says its page is.
      let pages =
        item.file == photo
        ? [photoHeader.width > photoHeader.height] : try Self.landscapePages(item.file)
      #expect(outputs.count == pages.count, "\(item.file): \(outputs)")
      for (output, landscape) in zip(outputs, pages) {
        #expect(output.hasPrefix(thumbs.path + "/"))
        let header = try #require(pngHeader(try Self.bytes(output)), "\(output)")
        #expect(max(header.width, header.height) == 96, "\(output)")
        #expect((header.width > header.height) == landscape, "\(output)")
      }
    }
    // Nothing else: no page of the bad file, no temporary.
    #expect(thumbs.contents() == written.map { ($0 as NSString).lastPathComponent }.sorted())
    let sizes = files.map { file in
      ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0
    }
    #expect(
      items.sorted { $0.turn < $1.turn }.map(\.file)
        == files.indices.sorted { sizes[$0] > sizes[$1] }.map { files[$0] })
  }

  @Test("thumbnail names that meet fail both files; no thumbnail replaces an input")
  func collisions() async throws {
    let inputs = TemporaryFolder()
    let first = try Self.copy("mixed.pdf", to: inputs.file("x/a.pdf"))
    let second = try Self.copy("hyperlink.pdf", to: inputs.file("y/a.pdf"))
    let output = TemporaryFolder()
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    let items = try await sandbox.thumbnails(
      of: [first, second, documents + "hyperlink.pdf"], to: .folder(output.path), size: 64,
      format: .png)
    let shared = output.file("a.png")
    #expect(
      Self.fileError(items[0].result)
        == .outputCollision(path: shared, first: first, second: second))
    #expect(
      Self.fileError(items[1].result)
        == .outputCollision(path: shared, first: second, second: first))
    #expect(items.map(\.status) == [.failed, .failed, .ok])
    #expect(output.contents() == ["hyperlink.png"])
    // One file destination, two files: neither is written.
    let single = output.file("one.png")
    let both = try await sandbox.thumbnails(
      of: [first, second], to: .file(single), size: 64, format: .png)
    #expect(both.map { Self.code($0.result) } == ["file.outputCollision", "file.outputCollision"])
    #expect(!FileManager.default.fileExists(atPath: single))
    // A folder holding an input: the PNG would be its own thumbnail.
    let photo = output.file("hyperlink.png")
    let before = try Self.bytes(photo)
    let own = try await sandbox.thumbnails(
      of: [photo], to: .folder(output.path), size: 32, format: .png)
    #expect(Self.fileError(own[0].result) == .outputIsInput(path: photo))
    #expect(try Self.bytes(photo) == before)
    #expect(output.contents() == ["hyperlink.png"])
  }

  @Test("with workers to spare a big file's pages come back in page order; each file all or none")
  func allOrNonePerFile() async throws {
    let inputs = TemporaryFolder()
    let big = inputs.file("big.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 12, slow: 0), to: big)
    #expect(try pdfInfo(big)["Pages"] == "12")
    // Alone with 6 workers: 12 pages in 3 runs, back in page order.
    let sandbox = DocumentSandbox(executable: worker, workers: 6)
    let whole = TemporaryFolder()
    let alone = try await sandbox.thumbnails(
      of: [big], to: .folder(whole.path), pages: "all", size: 48, format: .png)
    let pages = try alone[0].result.get()
    #expect(pages == (1...12).map { whole.file("big-\($0).png") })
    for page in pages {
      let header = try #require(pngHeader(try Self.bytes(page)))
      #expect(header.height == 48 && header.width < header.height, "\(page)")
    }
    // Page 7's name is taken by a folder: none of big's pages is left, mixed's are written.
    let blocked = TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: blocked.file("big-7.png"), withIntermediateDirectories: false)
    let items = try await sandbox.thumbnails(
      of: [big, documents + "mixed.pdf"], to: .folder(blocked.path), pages: "all", size: 48,
      format: .png)
    #expect(Self.code(items[0].result) == "file.isDirectory")
    #expect(try items[1].result.get().count == 3)
    #expect(
      blocked.contents() == ["big-7.png", "mixed-1.png", "mixed-2.png", "mixed-3.png"],
      "\(leftovers(in: blocked.path))")
    #expect((try? FileManager.default.contentsOfDirectory(atPath: blocked.file("big-7.png"))) == [])
  }

  @Test("one file to one output with the freedesktop chunks: its URI and modification time")
  func freedesktop() async throws {
    let folder = TemporaryFolder()
    let input = try Self.copy("hyperlink.pdf", to: folder.file("my file.pdf"))
    let mtime = 981_173_106  // 2001-02-03 04:05:06 UTC
    try FileManager.default.setAttributes(
      [.modificationDate: Date(timeIntervalSince1970: Double(mtime))], ofItemAtPath: input)
    let output = folder.file("thumb")
    let sandbox = DocumentSandbox(executable: worker, workers: 1)
    let items = try await sandbox.thumbnails(
      of: [input], to: .file(output), size: 128, format: .png, freedesktop: true)
    #expect(try items[0].result.get() == [output])
    let bytes = try Self.bytes(output)
    let header = try #require(pngHeader(bytes))
    #expect(max(header.width, header.height) == 128)
    let text = Self.textChunks(bytes)
    #expect(text["Thumb::URI"] == "file://" + folder.path + "/my%20file.pdf")
    #expect(text["Thumb::MTime"] == "\(mtime)")
    // Without the flag, no chunk.
    let plain = try await sandbox.thumbnails(
      of: [input], to: .file(folder.file("plain.png")), size: 128, format: .png)
    #expect(Self.textChunks(try Self.bytes(try plain[0].result.get()[0])).isEmpty)
  }

  @Test("many requests at once share the sandbox's workers: none started beyond its count")
  func requestsBeyondWorkers() async throws {
    // A server's requests each read their files in the one sandbox: twelve files asked for at
    // once, two workers. Before, every request finding no idle worker started one, used it
    // once and stopped it (the pool keeps two): up to twelve at once.
    let sandbox = DocumentSandbox(executable: worker, workers: 2)
    let names = ["mixed.pdf", "hyperlink.pdf", "objstreams.pdf"]
    let pages = try await withThrowingTaskGroup(of: (String, Int).self) { group in
      for index in 0..<12 {
        let name = names[index % names.count]
        group.addTask {
          let info = try await sandbox.inspect(
            path: documents + name, file: name, colors: ColorRule())
          return (name, info.pages)
        }
      }
      var pages: [String: Set<Int>] = [:]
      for try await (name, count) in group { pages[name, default: []].insert(count) }
      return pages
    }
    for name in names {
      #expect(try pages[name] == [Int(try #require(pdfInfo(documents + name)["Pages"]))!])
    }
    // Two at most alive at once; the two are kept idle for the next requests (whatever the
    // tests running beside this one in the process do: a CLI run stops its own workers, never
    // this sandbox's), and none are after the idle ones are stopped.
    #expect(sandbox.mostWorkersAtOnce == 2)
    #expect(sandbox.workersAlive == 2)
    sandbox.stopIdleWorkers()
    #expect(sandbox.workersAlive == 0)
    #expect(sandbox.workersReplaced == 0)
    #expect(sandbox.workersCanceled == 0)
  }

  @Test("a canceled request kills its worker at once: document.canceled, the next one served")
  func cancelKillsWorker() async throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    // Limits far beyond the test: only the cancellation can end the worker.
    var limits = SandboxLimits()
    limits.cpuSeconds = 3600
    limits.wallSeconds = 3600
    let sandbox = DocumentSandbox(executable: worker, limits: limits, workers: 1)
    let drawing = Task {
      try await sandbox.thumbnails(
        path: bomb, file: "bomb.pdf", size: 64, format: .png, output: folder.file("bomb.png"))
    }
    // Cancelled once it has its worker (a wait for the worker, not a measure of time).
    let started = await Task.detached {
      waitFor(tries: 30_000) { sandbox.workersAlive == 1 }
    }.value
    try #require(started)
    // Another request waits for the one worker; cancelled, it leaves the queue at once, with
    // the bomb still drawing.
    let queued = Task {
      try await sandbox.inspect(path: documents + "mixed.pdf", file: "queued.pdf")
    }
    let waiting = await Task.detached { waitFor(tries: 30_000) { sandbox.permits.waiting == 1 } }
      .value
    try #require(waiting)
    queued.cancel()
    await #expect(throws: DocumentError.canceled(file: "queued.pdf")) { try await queued.value }
    #expect(sandbox.permits.waiting == 0)
    #expect(sandbox.workersAlive == 1 && sandbox.workersCanceled == 0)
    drawing.cancel()
    await #expect(throws: DocumentError.canceled(file: "bomb.pdf")) { try await drawing.value }
    #expect(sandbox.workersAlive == 0)
    #expect(sandbox.workersCanceled == 1)
    #expect(sandbox.workersReplaced == 0)
    // Nothing of the bomb's is left in the folder, and the next request gets a new worker.
    #expect(folder.contents() == ["bomb.pdf"])
    let info = try await sandbox.inspect(path: documents + "mixed.pdf", file: "mixed.pdf")
    #expect(info.pages == Int(try #require(pdfInfo(documents + "mixed.pdf")["Pages"])))
    #expect(sandbox.workersAlive == 1)
    // A request cancelled before it has a worker starts none.
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await sandbox.inspect(path: documents + "mixed.pdf", file: "mixed.pdf")
    }
    await #expect(throws: DocumentError.canceled(file: "mixed.pdf")) { try await early.value }
    #expect(sandbox.workersCanceled == 1)
    sandbox.stopIdleWorkers()
  }

  @Test("no files: no item, the folder made, nothing else")
  func noFiles() async throws {
    let folder = TemporaryFolder()
    let sandbox = DocumentSandbox(executable: worker, workers: 1)
    #expect(await sandbox.inspect(files: []).isEmpty)
    let items = try await sandbox.thumbnails(
      of: [], to: .folder(folder.file("new")), size: 64, format: .png)
    #expect(items.isEmpty)
    #expect(folder.contents() == ["new"])
  }

  /// The code of a failure, nil for a success.
  static func code<Value>(_ result: Result<Value, any Error>) -> String? {
    guard case .failure(let error) = result else { return nil }
    return (error as? any ImprintError)?.code ?? "not an ImprintError: \(error)"
  }

  /// The `FileError` of a failure.
  static func fileError<Value>(_ result: Result<Value, any Error>) -> FileError? {
    guard case .failure(let error) = result else { return nil }
    return error as? FileError
  }

  /// Copies the fixture `name` to `path`, making its folder.
  /// - Returns: `path`.
  static func copy(_ name: String, to path: String) throws -> String {
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: documents + name, toPath: path)
    return path
  }

  static func bytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// Whether each page of the PDF at `path` prints landscape, by pdfinfo (size and rotation).
  static func landscapePages(_ path: String) throws -> [Bool] {
    let lines = try runTool("pdfinfo", ["-f", "1", "-l", "1000", path]).stdout.split(
      separator: "\n")
    // `Page    N size: W x H pts (name)` and `Page    N rot:  R`.
    func values(_ field: String) -> [[Double]] {
      var found: [[Double]] = []
      for line in lines {
        let words = line.split(separator: " ").map(String.init)
        guard words.count > 3, words[0] == "Page", Int(words[1]) != nil, words[2] == field + ":"
        else { continue }
        found.append(words.dropFirst(3).compactMap { Double($0) })
      }
      return found
    }
    let sizes = values("size")
    let rotations = values("rot")
    return zip(sizes, rotations).map { size, rotation in
      (size[0] > size[1]) != (Int(rotation.first ?? 0) % 180 == 90)
    }
  }

  /// The tEXt chunks of a PNG, read from its bytes.
  static func textChunks(_ bytes: [UInt8]) -> [String: String] {
    var chunks: [String: String] = [:]
    var offset = 8
    while offset + 8 <= bytes.count {
      let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
      let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
      let data = bytes[(offset + 8)..<min(bytes.count, offset + 8 + length)]
      if type == "tEXt", let zero = data.firstIndex(of: 0) {
        chunks[String(decoding: data[..<zero], as: UTF8.self)] = String(
          decoding: data[(zero + 1)...], as: UTF8.self)
      }
      offset += 12 + length
    }
    return chunks
  }
}
