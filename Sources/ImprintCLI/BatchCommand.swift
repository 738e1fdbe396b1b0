// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint batch` and `imprint batch merge`.

import Foundation
import ImprintBatch
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintPrinting

enum BatchCommand {
  /// The options of `imprint batch` and `imprint batch merge`.
  enum Key {
    static let allowMissingGlyphs = OptionKey.flag(
      "allow-missing-glyphs", "Cards warn instead of failing when no font can draw a character.")
    static let layout = OptionKey.choice(
      "layout", "<layout>", ["card-printer"] + PaperSize.sheetStocks.map(\.rawValue),
      "card-printer, A4, Letter, A3 or SRA3 (cards on sheets).")
    static let cropMarks = OptionKey.flag(
      "crop-marks", "Crop marks on sheets, on the trim lines of the cards there.")
    static let duplex = OptionKey.choice(
      "duplex", "<flip>", ["long-edge", "short-edge"],
      "long-edge (default) or short-edge: where backs go on sheets.")
    static let cardFiles = OptionKey.flag(
      "card-files", "With a layout, also write each card's own PDF (cards/ID.pdf).")
    static let templates = OptionKey.directory(
      "templates", "<dir>", "Folder of shipped card designs.")
    static let locale = OptionKey.text(
      "locale", "<id>",
      "The cards' language (BCP 47, as 'imprint card --locale'); a line's own locale wins.")
    static let photoCache = OptionKey.directory(
      "photo-cache", "<dir>",
      "Folder of photos named <account>.jpg (.png, .heic, .webp, .tif, .gif), for cards without a photo."
    )
    static let fetchPhoto = OptionKey.flag(
      "fetch-photo",
      "Download the profile_image of a card without a photo, given or cached, into --photo-cache "
        + "(with the limits of 'imprint card --fetch-photo').")
    static let allowPrivateNetwork = CardCommand.Key.allowPrivateNetwork
    static let inputsRoot = OptionKey.directory(
      "inputs-root", "<dir>",
      "Confine every file the manifest names to DIR: relative paths are relative to DIR, "
        + "absolute ones must lie inside it (for manifests made from uploads).")
    static let quiet = OptionKey.flag("quiet", short: "q", "No progress and no summary.")
    static let mergeOutput = OptionKey.directory(
      "output", short: "o", "<dir>", "The shared output folder.")
    static let shards = OptionKey.integer(
      "shards", "<n>", in: 2...100_000,
      "The shard count to merge (when results of several are there).")
    static let output = OptionKey.directory("output", short: "o", "<dir>", "The output folder.")
    static let jobs = OptionKey.integer(
      "jobs", short: "j", "<n>", in: 1...256, "Items made at once (default: all cores).")
    static let failFast = OptionKey.flag(
      "fail-fast", "Stop starting items after the first failure.")
    static let shard = OptionKey.text(
      "shard", "<I/N>", "Run only shard I of N (from 0), or 'auto'.")
    static let wait = OptionKey.flag(
      "wait", "Print items wait for each printer job to end; one that does not complete fails.")
    static let waitTimeout = OptionKey.number(
      "wait-timeout", "<s>", in: PrintTarget.waitSecondsRange,
      "How long --wait waits for a print item's printer jobs, in seconds (default 300).")
    static let passwordFile = OptionKey.file(
      "password-file", "<file>",
      "Print items: the user:password line for printers that ask (mode 600).")
  }

  /// The card and layout options both `batch` and `batch merge` take.
  static let layoutOptions: [any OptionDeclaration] = [
    Key.allowMissingGlyphs, Key.layout, Key.cropMarks, Key.duplex, Key.cardFiles, Key.templates,
    Key.locale, Key.photoCache, Key.fetchPhoto, Key.allowPrivateNetwork, Key.inputsRoot,
    Key.quiet,
  ]

  static let merge = CommandSpec(
    name: "merge",
    abstract: "Combine the shards' results and make the sheets, card-printer file and labels.",
    discussion: """
      Refuses (exit 1, no results written) unless every shard I/N ran this manifest to the end: \
      a shard missing or unfinished is batch.shardsMissing; results of another shard count or \
      another manifest, or not one per item in order, are batch.shardMismatch.
      """,
    arguments: [ArgumentSpec("manifest", "The manifest the shards ran.", kind: .file)],
    options: [Key.mergeOutput, Key.shards] + layoutOptions
  ) { arguments, console in
    guard let folder = arguments.value(Key.mergeOutput) else {
      throw UsageError(message: "missing -o <dir>")
    }
    let manifest = arguments.positionals[0]
    // The options first: a usage error leaves no merged results behind.
    let options = try BatchCommand.batchOptions(
      folder, jobs: activeProcessorCount, arguments, console)
    defer { options.sandbox?.stopIdleWorkers() }
    let outcome = try await ShardMerge.run(
      manifest: manifest, options: options, shards: try arguments.int(Key.shards))
    if let imposed = outcome.imposed, let layout = options.layout {
      // Cards the layout cannot take are errors of the merge (their shards made them).
      for problem in imposed.refused { console.report(problem) }
      if !arguments.flag(Key.quiet) { report(imposed, layout: layout, console: console) }
    }
    if !arguments.flag(Key.quiet) {
      console.stderr.write(
        "batch merge: \(outcome.merged.items) items from \(outcome.merged.shards) shards, "
          + "\(outcome.failed) failed\n")
    }
    return outcome.failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }
  static let spec = CommandSpec(
    name: "batch",
    abstract:
      "Run a manifest of card, QR, thumbnail, quote and print items: parallel, resumable, shardable.",
    discussion: """
      MANIFEST is JSON Lines (one item object a line) or CSV with a header (see docs/batch.md \
      for every key). Each item's outputs go to DIR (cards/, qr/, thumbs/, quotes/, prints/ID/); \
      DIR/results.jsonl \
      has one line per item with its status, outputs, error and time. With --layout the cards \
      go onto the layout's file, drawn again on every run (and to cards/ too with \
      --card-files). A rerun skips items whose outputs exist and whose inputs are unchanged. \
      --shard I/N runs item k when k mod N = I (--shard auto reads JOB_COMPLETION_INDEX/JOB_COMPLETION_COUNT or SLURM_ARRAY_TASK_ID/ \
      SLURM_ARRAY_TASK_COUNT); then 'imprint batch merge' combines the shards. \
      The files an item names are confined: a relative path is relative to the manifest's folder \
      and may not leave it ('..' or a link leading out fails that item with file.escapesFolder, \
      the other items go on); an absolute path is read as written, like a path on the command \
      line. When the manifest is made from uploads, pass --inputs-root DIR: then every path is \
      relative to DIR and confined to it, and an absolute path outside DIR is refused too. A \
      quote item's order files are confined to the order's folder, as in 'imprint quote'. A \
      print item prepares its order as 'imprint prepare' does and, when its line names a \
      printer, sends the files there; the files sent are recorded in DIR/.state, and no rerun \
      sends a file again. A printer is an IPP URI or a CUPS queue name, as with 'imprint \
      prepare --printer'; --password-file FILE gives every print item the user and password for \
      printers and schedulers that ask.
      """,
    arguments: [ArgumentSpec("manifest", "The manifest (.jsonl or .csv).", kind: .file)],
    options: [
      Key.output, Key.jobs, Key.failFast, Key.shard, Key.wait, Key.waitTimeout, Key.passwordFile,
    ] + layoutOptions,
    subcommands: [merge]
  ) { arguments, console in
    try await run(arguments, console)
  }

  /// The options both `batch` and `batch merge` need.
  static func batchOptions(
    _ folder: String, jobs: Int, _ arguments: ParsedArguments, _ console: Console
  ) throws -> BatchOptions {
    var options = BatchOptions(
      outputFolder: folder, placeholder: try DeploymentResources.placeholder())
    options.jobs = jobs
    options.templatesFolder = ResourceLocator.templatesDirectory(
      explicit: arguments.value(Key.templates))
    if let root = arguments.value(Key.inputsRoot) {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue
      else { throw FileError.folderNotFound(path: root, setting: "--inputs-root") }
      options.inputsRoot = root
    }
    options.photos = try photos(arguments)
    options.cardOptions.allowMissingGlyphs = arguments.flag(Key.allowMissingGlyphs)
    options.cardOptions.fonts = try DeploymentResources.fonts()
    if let locale = arguments.value(Key.locale) {
      // An identifier no locale data exists for fails the run; one a line's template does not
      // translate fails that line (card.untranslatedLocale).
      guard LocaleData.isKnown(locale) else { throw CardError.unknownLocale(identifier: locale) }
      options.cardOptions.locale = locale
    }
    options.layout = try layout(arguments)
    options.cardFiles = arguments.flag(Key.cardFiles)
    // Uploads and card photos (a merge lays cards out again, decoding their photos) are read
    // by the document workers.
    if let worker = try? DocumentCommands.workerExecutable(console) {
      options.sandbox = DocumentSandbox(executable: worker, workers: options.jobs)
    }
    return options
  }

  static func run(_ arguments: ParsedArguments, _ console: Console) async throws -> Int32 {
    guard let folder = arguments.value(Key.output) else {
      throw UsageError(message: "missing -o <dir>")
    }
    let manifest = arguments.positionals[0]
    let waitTimeout = try arguments.double(Key.waitTimeout)
    // A timeout alone would be ignored: the batch's print jobs wait only with --wait (a line's
    // own `wait` has its own `waitTimeout`).
    if waitTimeout != nil && !arguments.flag(Key.wait) {
      throw PrepareCommand.usageError(.waitTimeoutWithoutWait)
    }
    var options = try batchOptions(
      folder, jobs: try arguments.int(Key.jobs) ?? activeProcessorCount, arguments, console)
    defer { options.sandbox?.stopIdleWorkers() }
    options.failFast = arguments.flag(Key.failFast)
    options.shard = try shard(arguments.value(Key.shard) ?? "0/1", environment: console.environment)
    options.printWaitSeconds =
      arguments.flag(Key.wait) ? waitTimeout ?? PrintTarget.defaultWaitSeconds : nil
    options.printAccess.credentials = try arguments.value(Key.passwordFile).map {
      try PrintCredentials(file: $0)
    }
    // Jobs of this shard, counted by a pass over the manifest's records (for the progress
    // display; a quoted line break does not start a job).
    let total = options.shard.items(of: ManifestReader.count(path: manifest))
    let quiet = arguments.flag(Key.quiet)
    let started = Date()
    var lastReport = started  // the first plain line after 2 s, when the rate means something
    let terminal = console.stderr.isTerminal
    // Thousands of small outputs: synced together, not one by one (the runner writes its
    // resume records and results only after the outputs they name are synced).
    let summary = try await AtomicFile.withDeferredFlush(syncing: folder) {
      try await BatchRunner.run(manifest: manifest, options: options) { summary in
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
            "batch: \(done)/\(total) done, \(String(format: "%.1f", rate)) items/s, ETA \(eta) s\n")
        }
      }
    }
    if terminal && !quiet { console.stderr.write("\n") }
    if let imposed = summary.imposed, let layout = options.layout, !quiet {
      report(imposed, layout: layout, console: console)
    }
    if !quiet {
      console.stderr.write(
        "batch: \(summary.ok) ok, \(summary.skipped) skipped, \(summary.failed) failed of \(summary.total) "
          + "in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; results in \(SafeText.escaped(options.resultsFile))\n"
      )
    }
    return summary.failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }

  /// One line on what the layout holds.
  static func report(_ imposed: Imposed, layout: BatchLayout, console: Console) {
    if let grid = imposed.grid {
      console.stderr.write(
        "batch: cards on \(imposed.sheets) sheet\(imposed.sheets == 1 ? "" : "s") in "
          + "\(layout.fileName), \(grid.columns) x \(grid.rows)"
          + "\(grid.rotated ? " rotated" : "") a side\n")
    } else {
      console.stderr.write("batch: \(imposed.pages) pages in \(layout.fileName)\n")
    }
  }

  /// Where card jobs without a photo find one.
  ///
  /// Downloads go into the cache, so that a rerun or `batch merge`, laying the card out again,
  /// uses the photo its PDF has instead of downloading it again (maybe changed since).
  static func photos(_ arguments: ParsedArguments) throws(UsageError) -> PhotoOptions {
    let cache = arguments.value(Key.photoCache)
    if arguments.flag(Key.fetchPhoto) && cache == nil {
      throw UsageError(
        message: "--fetch-photo in a batch needs --photo-cache <dir>, where the downloads are kept "
          + "for reruns and 'batch merge'")
    }
    return PhotoOptions(
      cache: cache.map { PhotoCache(folder: $0) }, fetch: arguments.flag(Key.fetchPhoto),
      allowPrivateNetwork: arguments.flag(Key.allowPrivateNetwork))
  }

  static func layout(_ arguments: ParsedArguments) throws(UsageError) -> BatchLayout? {
    switch try arguments.choice(Key.layout) {
    case nil: return nil
    case "card-printer": return .cardPrinter
    case let name?:
      let flip =
        try arguments.choice(Key.duplex).flatMap {
          DuplexFlip(rawValue: $0)
        } ?? .longEdge
      return .sheets(
        PaperSize(rawValue: name) ?? .a4, cropMarks: arguments.flag(Key.cropMarks), flip: flip)
    }
  }

  /// `I/N`, or `auto` from a Kubernetes Indexed Job or a Slurm array (`BatchShard`), a usage
  /// error when malformed.
  static func shard(_ text: String, environment: [String: String]) throws(UsageError)
    -> BatchShard
  {
    do {
      return try BatchShard(parsing: text, environment: environment)
    } catch .badShard(let spec) {
      throw UsageError(
        message:
          "option '--shard' expects I/N with 0 <= I < N, or auto; got '\(SafeText.escaped(spec))'")
    } catch {
      throw UsageError(
        message: "--shard auto needs JOB_COMPLETION_INDEX and JOB_COMPLETION_COUNT, or "
          + "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT")
    }
  }
}
