// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint batch` and `imprint batch merge`.

import Foundation
import ImprintBatch
import ImprintCards
import ImprintCore
import ImprintDocuments

enum BatchCommand {
  static let layoutOptions: [OptionSpec] = [
    .flag(
      "allow-missing-glyphs", "Cards warn instead of failing when no font can draw a character."),
    .value("layout", "<layout>", "card-printer, A4, Letter, A3 or SRA3 (cards on sheets)."),
    .flag("crop-marks", "Crop marks on sheets, on the trim lines of the cards there."),
    .value("duplex", "<flip>", "long-edge (default) or short-edge: where backs go on sheets."),
    .value("templates", "<dir>", "Folder of shipped card designs."),
    .flag("quiet", short: "q", "No progress and no summary."),
  ]

  static let merge = CommandSpec(
    name: "merge",
    abstract: "Combine the shards' results and make the sheets, card-printer file and labels.",
    arguments: [ArgumentSpec("manifest", "The manifest the shards ran.")],
    options: [.value("output", short: "o", "<dir>", "The shared output folder.")] + layoutOptions
  ) { arguments, console in
    guard let folder = arguments.value("output") else {
      throw UsageError(message: "missing -o <dir>")
    }
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
      $0.hasPrefix("results-") && $0.hasSuffix(".jsonl")
    }.sorted()
    guard !files.isEmpty else {
      throw FileError.notFound(path: folder + "/results-*-of-*.jsonl")
    }
    // Each shard's file is in manifest order: merge them line by line.
    let readers = try files.map { try ShardResults(path: folder + "/" + $0) }
    let output = folder + "/results.jsonl"
    var merged: [UInt8] = []
    var count = 0
    var failed = 0
    try AtomicFile.write(to: output) { temporary in
      FileManager.default.createFile(atPath: temporary, contents: nil)
      guard let handle = FileHandle(forWritingAtPath: temporary) else {
        throw FileError.unwritable(path: output, reason: "cannot create it")
      }
      defer { try? handle.close() }
      while let shard = readers.filter({ $0.head != nil }).min(by: {
        ($0.head?.line ?? 0) < ($1.head?.line ?? 0)
      }) {
        guard let current = shard.head else { break }
        merged = current.text + [UInt8(ascii: "\n")]
        handle.write(Data(merged))
        count += 1
        if String(decoding: current.text, as: UTF8.self).contains("\"status\":\"failed\"") {
          failed += 1
        }
        shard.advance()
      }
    }
    try await finish(
      resultsFile: output, manifest: arguments.positionals[0],
      options: try BatchCommand.batchOptions(folder, arguments, console), arguments: arguments,
      console: console)
    if !arguments.flag("quiet") {
      console.stderr.write(
        "batch merge: \(count) jobs from \(files.count) shards, \(failed) failed\n")
    }
    return failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }
  static let spec = CommandSpec(
    name: "batch",
    abstract:
      "Run a manifest of card, QR, thumbnail and quote jobs: parallel, resumable, shardable.",
    discussion: """
      MANIFEST is JSON Lines (one job object a line) or CSV with a header (see the README for \
      every key). Each job's outputs go to DIR (cards/, qr/, thumbs/, quotes/); DIR/results.jsonl \
      has one line per job with its status, outputs, error and time. A rerun skips jobs whose \
      outputs exist and whose inputs are unchanged. --shard I/N runs job k when k mod N = I \
      (--shard auto reads JOB_COMPLETION_INDEX/JOB_COMPLETION_COUNT or SLURM_ARRAY_TASK_ID/ \
      SLURM_ARRAY_TASK_COUNT); then 'imprint batch merge' combines the shards.
      """,
    arguments: [ArgumentSpec("manifest", "The manifest (.jsonl or .csv).")],
    options: [
      .value("output", short: "o", "<dir>", "The output folder."),
      .value("jobs", short: "j", "<n>", "Jobs at once (default: all cores)."),
      .flag("fail-fast", "Stop starting jobs after the first failure."),
      .value("shard", "<I/N>", "Run only shard I of N (from 0), or 'auto'."),
    ] + layoutOptions,
    subcommands: [merge]
  ) { arguments, console in
    try await run(arguments, console)
  }

  /// The options both `batch` and `batch merge` need.
  static func batchOptions(_ folder: String, _ arguments: ParsedArguments, _ console: Console)
    throws -> BatchOptions
  {
    let assets = ResourceLocator.assetsDirectory() ?? "assets"
    let placeholderPath = assets + "/placeholder-photo.png"
    var options = BatchOptions(
      outputFolder: folder, placeholder: (try FileIO.read(placeholderPath), placeholderPath))
    options.jobs = try arguments.int("jobs", in: 1...256) ?? activeProcessorCount
    options.templatesFolder = ResourceLocator.templatesDirectory(
      explicit: arguments.value("templates"))
    options.cardOptions.allowMissingGlyphs = arguments.flag("allow-missing-glyphs")
    return options
  }

  static func run(_ arguments: ParsedArguments, _ console: Console) async throws -> Int32 {
    guard let folder = arguments.value("output") else {
      throw UsageError(message: "missing -o <dir>")
    }
    let manifest = arguments.positionals[0]
    var options = try batchOptions(folder, arguments, console)
    options.failFast = arguments.flag("fail-fast")
    options.shard = try shard(arguments.value("shard") ?? "0/1", environment: console.environment)
    if let worker = try? DocumentCommands.workerExecutable(console) {
      options.sandbox = DocumentSandbox(executable: worker, workers: options.jobs)
    }
    _ = try layout(arguments)  // check the layout before running anything
    let total = countJobs(manifest, shard: options.shard)
    let quiet = arguments.flag("quiet")
    let started = Date()
    var lastReport = Date.distantPast
    let terminal = console.stderr.isTerminal
    let summary = try await BatchRunner.run(manifest: manifest, options: options) { summary in
      guard !quiet else { return }
      let now = Date()
      let done = summary.total
      guard terminal || now.timeIntervalSince(lastReport) >= 2 || done == total else { return }
      lastReport = now
      let rate = Double(done) / max(now.timeIntervalSince(started), 0.001)
      let eta = total > done ? Int(Double(total - done) / max(rate, 0.001)) : 0
      if terminal {
        let width = 30
        let filled = total > 0 ? min(width, done * width / total) : 0
        console.stderr.write(
          "\r[\(String(repeating: "=", count: filled))\(String(repeating: " ", count: width - filled))] "
            + "\(done)/\(total) \(String(format: "%.1f", rate))/s ETA \(eta)s ")
      } else {
        console.stderr.write(
          "batch: \(done)/\(total) done, \(String(format: "%.1f", rate)) jobs/s, ETA \(eta) s\n")
      }
    }
    if terminal && !quiet { console.stderr.write("\n") }
    if options.shard.count == 1 {
      try await finish(
        resultsFile: options.resultsFile, manifest: manifest, options: options,
        arguments: arguments, console: console)
    }
    if !quiet {
      console.stderr.write(
        "batch: \(summary.ok) ok, \(summary.skipped) skipped, \(summary.failed) failed of \(summary.total) "
          + "in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; results in \(options.resultsFile)\n"
      )
    }
    return summary.failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }

  /// Sheets or the card-printer file, the packing list and the labels, from the results.
  ///
  /// The manifest is read again, in order, and each finished card job placed `copies` times.
  static func finish(
    resultsFile: String, manifest: String, options: BatchOptions, arguments: ParsedArguments,
    console: Console
  ) async throws {
    // Streamed: only the ids of finished cards and the shipped orders are kept.
    var done = Set<String>()
    var shipped: [JobResult] = []
    var lines = try LineReader(path: resultsFile)
    while let line = lines.next() {
      guard let result = try? JSONDecoder().decode(JobResult.self, from: Data(line)),
        result.status != "failed"
      else { continue }
      if result.kind == .card { done.insert(result.id) }
      if result.shipTo != nil { shipped.append(result) }
    }
    let folder = options.outputFolder
    if !done.isEmpty, let layout = try layout(arguments) {
      var reader = try ManifestReader(path: manifest)
      var queue: [PlacedCard] = []
      var placedIDs = Set<String>()
      let next = { () -> PlacedCard? in
        while queue.isEmpty, let item = reader.next() {
          guard case .success(let job) = item, job.kind == .card, done.contains(job.id),
            placedIDs.insert(job.id).inserted
          else { continue }
          queue = (1...job.copies).map { PlacedCard(id: job.id, copy: $0, job: job) }
        }
        return queue.isEmpty ? nil : queue.removeFirst()
      }
      let prepare = BatchRunner.preparer(options: options)
      if layout == "card-printer" {
        try await Imposition.cardPrinterFile(
          next: next, prepare: prepare, to: folder + "/card-printer.pdf")
      } else if let stock = SheetStock(rawValue: layout) {
        let flip =
          try arguments.choice("duplex", ["long-edge", "short-edge"]).flatMap {
            DuplexFlip(rawValue: $0)
          } ?? .longEdge
        let (grid, sheets) = try await Imposition.sheets(
          next: next, prepare: prepare, stock: stock, cropMarks: arguments.flag("crop-marks"),
          flip: flip, to: folder + "/sheets-\(stock.rawValue).pdf",
          mapPath: folder + "/sheet-map.csv")
        if !arguments.flag("quiet") {
          console.stderr.write(
            "batch: cards on \(sheets) \(stock.rawValue) sheet\(sheets == 1 ? "" : "s"), "
              + "\(grid.columns) x \(grid.rows)\(grid.rotated ? " rotated" : "") a side\n")
        }
      }
    }
    if !shipped.isEmpty {
      try Fulfilment.packingList(shipped, to: folder + "/packing-list.csv")
      try Fulfilment.labels(shipped, to: folder + "/labels.pdf")
    }
  }

  static func layout(_ arguments: ParsedArguments) throws(UsageError) -> String? {
    try arguments.choice("layout", ["card-printer"] + SheetStock.allCases.map(\.rawValue))
  }

  /// `I/N`, or `auto` from a Kubernetes Indexed Job or a Slurm array.
  static func shard(_ text: String, environment: [String: String]) throws -> (
    index: Int, count: Int
  ) {
    var spec = text
    if text == "auto" {
      if let index = environment["JOB_COMPLETION_INDEX"],
        let count = environment["JOB_COMPLETION_COUNT"]
      {
        spec = "\(index)/\(count)"
      } else if let id = environment["SLURM_ARRAY_TASK_ID"],
        let count = environment["SLURM_ARRAY_TASK_COUNT"]
      {
        let first = Int(environment["SLURM_ARRAY_TASK_MIN"] ?? "0") ?? 0
        spec = "\((Int(id) ?? -1) - first)/\(count)"
      } else {
        throw UsageError(
          message: "--shard auto needs JOB_COMPLETION_INDEX and JOB_COMPLETION_COUNT, or "
            + "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT")
      }
    }
    let parts = spec.split(separator: "/")
    guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
      (0..<count).contains(index)
    else {
      throw UsageError(
        message: "option '--shard' expects I/N with 0 <= I < N, or auto; got '\(spec)'")
    }
    return (index, count)
  }

  /// Jobs of this shard, counted by a fast pass over the manifest (for the progress display).
  static func countJobs(_ manifest: String, shard: (index: Int, count: Int)) -> Int {
    guard var reader = try? LineReader(path: manifest) else { return 0 }
    var lines = 0
    let csv = manifest.lowercased().hasSuffix(".csv")
    while let line = reader.next() {
      guard let first = line.first(where: { $0 != UInt8(ascii: " ") }) else { continue }
      if !csv && first == UInt8(ascii: "#") { continue }
      lines += 1
    }
    if csv { lines = max(0, lines - 1) }
    return lines / shard.count + (lines % shard.count > shard.index ? 1 : 0)
  }
}

/// One shard's results file, read a line at a time for the merge.
private final class ShardResults {
  private var reader: LineReader
  /// The current line: its manifest line number and its text.
  private(set) var head: (line: Int, text: [UInt8])?

  init(path: String) throws {
    reader = try LineReader(path: path)
    advance()
  }

  func advance() {
    head = nil
    while let text = reader.next() {
      if let result = try? JSONDecoder().decode(JobResult.self, from: Data(text)) {
        head = (result.line, text)
        return
      }
    }
  }
}
