// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: runs a manifest's items in parallel, resumably, on one shard of the manifest.

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintPricing
import ImprintPrinting
import ImprintQR

/// How a batch runs.
public struct BatchOptions: Sendable {
  /// The output folder (shared storage when sharded).
  public var outputFolder: String
  /// Items at once (default: all cores).
  public var jobs = activeProcessorCount
  /// Stop starting items after the first failure.
  public var failFast = false
  /// This process's share of the manifest (default: all of it).
  public var shard = BatchShard.whole
  /// Whether the caller knows that no two of the manifest's items have one id.
  ///
  /// A service that read the manifest whole when it took it knows. A shard then passes over
  /// the other shards' records unread (`ManifestReader.skip`) rather than reading each for the
  /// duplicate-id check, which could never fail.
  public var uniqueIDs = false
  /// Where shipped templates are.
  public var templatesFolder: String?
  /// The folder every path in the manifest is confined to (`--inputs-root`), or nil: relative
  /// paths are then confined to the manifest's folder and absolute ones taken as written (see
  /// `ManifestReader.init(path:inputsRoot:)`).
  public var inputsRoot: String?
  /// The names of the input files a service's client uploaded; nil on the command line.
  ///
  /// The names are its parts', paths under `inputsRoot`. An item's file that does not exist
  /// under `inputsRoot` and is none of them gets a hint saying so, listing them.
  public var sentInputs: [String]?
  /// The placeholder photo for profiles without one.
  public var placeholder: (bytes: [UInt8], source: String)
  /// Where card items without a photo of their own find one: a photo cache, downloads (default:
  /// neither, only the placeholder).
  ///
  /// Downloads should be kept in a cache (the CLI requires one): otherwise every run that lays
  /// out a card (a rerun that skips it, `batch merge`) downloads its photo again. An item's
  /// fingerprint covers its cache entry, so a photo put into the cache makes it again.
  public var photos = PhotoOptions()
  /// The sandbox for uploads (thumb and quote items) and card photos; those items fail without
  /// one.
  public var sandbox: DocumentSandbox?
  /// Card rendering options.
  public var cardOptions = CardOptions()
  /// How cards are laid out for printing; nil for none (each card item writes its own PDF).
  ///
  /// An unsharded run draws the layout as items finish, in manifest order; sharded runs leave
  /// it to `imprint batch merge`.
  public var layout: BatchLayout?
  /// Whether card items also write their own PDF (`cards/ID.pdf`) when there is a layout.
  ///
  /// Without a layout they always do. Without these files a card's output is the layout's
  /// file, which every run draws again (resuming skips only items with files of their own).
  public var cardFiles = false
  /// How long a print item waits for its printer's jobs to end, in seconds, or nil not to wait
  /// (see `PrintTarget.waitSeconds`); a printer job that does not complete fails the print item.
  public var printWaitSeconds: Double?
  /// How print items reach their printers: the CUPS scheduler for queue names, and the
  /// credentials for printers that ask (`--password-file`); one for every print item.
  public var printAccess = PrintAccess()
  /// The error an item cut short by the run's cancellation ends with, given its id.
  ///
  /// Instead of the sandbox's `document.canceled` (its document's worker was killed): a
  /// service's own stop (the job's cancel code). Nil: that error as it is.
  public var canceledJob: (@Sendable (_ id: String) -> any Error)?

  /// Folders whose paths the results' messages show relative to them (`ErrorRecord.showing`).
  ///
  /// A service's job gives its inputs' and outputs' folders, so that its client reads the names
  /// it sent and the outputs' names, never the server's layout. None by default.
  public var relativeMessageFolders: [String] = []

  /// The manifest's name in messages; nil for its file name.
  ///
  /// A service gives the name its client sent it by (`ManifestReader.init`'s `displayName`).
  public var manifestName: String?

  /// Whether card items write `cards/ID.pdf`.
  public var writesCardFiles: Bool { cardFiles || layout == nil }

  /// The loader of card items' inputs, with this run's placeholder and photo options; photos
  /// are decoded by `sandbox` (without one, a card with a photo fails with
  /// `card.photoNotSandboxed`).
  public var cardLoader: CardInputLoader {
    CardInputLoader(placeholder: placeholder, photos: photos, decoder: sandbox)
  }

  /// Options writing to `outputFolder`.
  public init(outputFolder: String, placeholder: (bytes: [UInt8], source: String)) {
    self.outputFolder = outputFolder
    self.placeholder = placeholder
  }

  /// The results file of this shard.
  public var resultsFile: String {
    shard.count == 1
      ? outputFolder + "/results.jsonl"
      : outputFolder + "/results-\(shard.index)-of-\(shard.count).jsonl"
  }
}

/// One line of results.jsonl.
public struct ItemResult: Codable, Sendable, Equatable {
  /// The item's id (or `line-N` when the line had none).
  public var id: String
  /// The manifest line.
  public var line: Int
  /// The kind, when the line had a valid one.
  public var kind: ItemKind?
  /// `ok`, `skipped` (done by an earlier run, inputs unchanged) or `failed`.
  public var status: ItemStatus
  /// The files made, relative to the output folder.
  public var outputs: [String]
  /// Why it failed.
  public var error: ErrorRecord?
  /// Seconds it took.
  public var seconds: Double
  /// Copies (card items).
  public var copies: Int?
  /// The shipping address (card items).
  public var shipTo: ShipTo?
}

/// What a batch did.
public struct BatchSummary: Sendable, Equatable {
  /// Items of this shard.
  public var total = 0
  /// Made now.
  public var ok = 0
  /// Skipped: done before, inputs unchanged.
  public var skipped = 0
  /// Failed.
  public var failed = 0
  /// The layout drawn by this run (unsharded runs with a layout and at least one card).
  public var imposed: Imposed?
}

/// A finished item and, when the run lays cards out, its card ready to draw.
struct ItemOutcome: Sendable {
  var result: ItemResult
  var card: PreparedCard?
  /// The item's resume record, still to be written once its outputs are durable (when outputs
  /// are not flushed one by one: see `StateRecords`).
  var state: (path: String, record: BatchRunner.ItemState)?
}

/// Resume records waiting for their outputs to be on the disk.
///
/// A resume record says an item's outputs exist: a rerun skips the item. So it must never outlive
/// an output a power cut could still lose. When every output is flushed as it is written (the
/// default) the item writes its record itself, after its outputs. Inside
/// `AtomicFile.withDeferredFlush` outputs are not flushed one by one, so the records wait here
/// and go out at checkpoints: one `syncfs` of the output folder's file system (every output
/// written so far is then durable, or its write-back error is the run's), then the records (not
/// flushed themselves: a lost record only makes a rerun make the item again).
/// A checkpoint at the first record, then every second or 1024 items, bounds what a killed run
/// makes again to about a second of work.
final class StateRecords {
  /// The output folder, whose file system each checkpoint flushes.
  private let folder: String
  private var waiting: [(path: String, record: BatchRunner.ItemState)] = []
  private var lastCheckpoint: Date?
  /// Seconds between checkpoints (records wait at most this long, or for 1024 others).
  private let interval: TimeInterval

  init(folder: String, interval: TimeInterval = 1) {
    self.folder = folder
    self.interval = interval
  }

  /// Adds a record; makes a checkpoint when enough wait or enough time has passed.
  func add(_ state: (path: String, record: BatchRunner.ItemState)) throws(FileError) {
    waiting.append(state)
    if waiting.count >= 1024
      || lastCheckpoint.map({ Date().timeIntervalSince($0) >= interval }) ?? true
    {
      try checkpoint()
    }
  }

  /// Syncs the outputs written so far, then writes the records waiting for them.
  func checkpoint() throws(FileError) {
    lastCheckpoint = Date()
    guard !waiting.isEmpty else { return }
    try AtomicFile.flushFileSystem(of: folder)
    defer { waiting.removeAll(keepingCapacity: true) }
    for (path, record) in waiting {
      try FileIO.overwrite(Array(JSONOutput.line(record).utf8), to: path)
    }
  }
}

/// Runs manifests.
public enum BatchRunner {
  /// Runs the items of `manifest` that belong to this shard; writes per-item outputs, a state file
  /// per finished item (for resuming) and the results file.
  ///
  /// Cancelling the calling task stops it from starting more items: the items under way end, and
  /// the results file lists the items that ended (the summary counts them).
  ///
  /// Run inside `AtomicFile.withDeferredFlush`, outputs are synced together at checkpoints
  /// instead of one by one; the state files and the results still only follow durable outputs
  /// (see `StateRecords`).
  ///
  /// - Parameters:
  ///   - manifest: the manifest's path.
  ///   - options: how to run.
  ///   - progress: called on the calling task after each item with the summary so far.
  /// - Returns: the summary.
  /// - Throws: `FileError` when the manifest cannot be read or the folder cannot be written.
  public static func run(
    manifest: String, options: BatchOptions, progress: (BatchSummary) -> Void = { _ in }
  ) async throws -> BatchSummary {
    for folder in ["", "/.state", "/cards", "/qr", "/thumbs", "/quotes", "/prints"] {
      do {
        try FileIO.makeFolder(options.outputFolder + folder)
      } catch {
        // Another shard starting on the same folder may have made it between the check and
        // the mkdir: then it is there now.
        try FileIO.makeFolder(options.outputFolder + folder)
      }
      // A run killed mid-write leaves only hidden temporaries (never a truncated output under
      // its final name); remove those of dead runs, never those of a run still going (another
      // shard on the same shared folder).
      AtomicFile.removeStaleTemporaries(in: options.outputFolder + folder)
    }
    // A shard's completion record goes when it starts and comes back when its results are
    // in place: `batch merge` refuses a shard that did not finish, or ran another manifest.
    let completion = options.shard.count > 1 ? ShardCompletion.path(options) : nil
    var manifestDigest = ""
    if let completion {
      unlink(completion)
      manifestDigest = try FileDigest.hex(manifest)
    }
    var reader = try ManifestReader(
      path: manifest, inputsRoot: options.inputsRoot, displayName: options.manifestName)
    let templates = TemplateCache(folder: options.templatesFolder)
    // Messages name the manifest as the reader's do: the client's name in a service.
    let manifestName = reader.display
    var seen = Set<String>()
    var ordinal = 0
    var summary = BatchSummary()
    // Results are written in manifest order as they complete: an item finishing early waits in
    // `pending` until the lines before it are written (at most 16 × jobs + 64 of them: see
    // `ready` below), so memory does not grow with the manifest.
    let output = try AtomicOutput(path: options.resultsFile)
    var writeError: FileError?
    var issued: [Int] = []
    var issuedStart = 0
    var pending: [Int: ItemOutcome] = [:]
    var stop = false
    // Cards go onto the layout here, in manifest order, as their results are written.
    let imposer =
      options.shard.count == 1 ? options.layout?.imposer(folder: options.outputFolder) : nil
    var imposeError: (any Error)?
    let states = StateRecords(folder: options.outputFolder)
    let next = { () -> Result<ManifestItem, ManifestLineError>? in
      // A cancelled run (a service's job canceled or past its limits) starts no new item; those
      // under way end, and their results are written as usual.
      while !stop, !Task.isCancelled {
        let mine = options.shard.owns(ordinal: ordinal)
        ordinal += 1
        if !mine && options.uniqueIDs {
          guard reader.skip() else { break }
          continue
        }
        guard let item = reader.next() else { break }
        switch item {
        case .success(let job):
          // Every shard checks ids, so a duplicate fails in whichever shard owns the line.
          if !seen.insert(job.id).inserted {
            if mine {
              issued.append(job.line)
              return .failure(
                ManifestLineError(
                  line: job.line, id: job.id,
                  message:
                    "manifest '\(manifestName)': item '\(job.id)' (line \(job.line)): "
                    + "the id is used by an earlier line",
                  code: "batch.duplicateId", hint: "give every item its own id"))
            }
            continue
          }
          if mine {
            issued.append(job.line)
            return .success(job)
          }
        case .failure(let error):
          if mine {
            issued.append(error.line)
            return item
          }
        }
      }
      return nil
    }
    await forEachConcurrently(
      inputs: next, jobs: options.jobs,
      // A slow item (a large upload) holds back the results after it, each with its card: no
      // new item starts while that many wait, so memory stays bounded.
      ready: { pending.count < 16 * options.jobs + 64 },
      work: { [imposing = imposer != nil] item -> ItemOutcome in
        switch item {
        case .success(let job):
          return await execute(job, options: options, templates: templates, impose: imposing)
        case .failure(let error):
          return ItemOutcome(
            result: ItemResult(
              id: error.id ?? "line-\(error.line)", line: error.line, kind: nil,
              status: .failed, outputs: [], error: ErrorRecord(error), seconds: 0))
        }
      },
      collect: { outcome in
        let result = outcome.result
        summary.total += 1
        switch result.status {
        case .ok: summary.ok += 1
        case .skipped: summary.skipped += 1
        case .failed:
          summary.failed += 1
          if options.failFast { stop = true }
        }
        if let state = outcome.state, writeError == nil {
          do throws(FileError) {
            try states.add(state)
          } catch {
            writeError = error
            stop = true
          }
        }
        pending[result.line] = outcome
        while issuedStart < issued.count,
          var ready = pending.removeValue(forKey: issued[issuedStart])
        {
          if let card = ready.card, let imposer, imposeError == nil {
            do {
              for copy in 1...max(1, ready.result.copies ?? 1) {
                try imposer.add(id: ready.result.id, copy: copy, card: card)
              }
            } catch let refused as ImposeError where refused.refusesOneCard {
              // A card the layout cannot take (another size) fails alone; the rest go on.
              if ready.result.status == .skipped { summary.skipped -= 1 } else { summary.ok -= 1 }
              summary.failed += 1
              ready.result.status = .failed
              ready.result.error = ErrorRecord(refused)
              if options.failFast { stop = true }
            } catch {
              imposeError = error
              stop = true
            }
          }
          if !options.relativeMessageFolders.isEmpty {
            ready.result.error = ready.result.error?.showing(
              pathsRelativeTo: options.relativeMessageFolders)
          }
          if writeError == nil {
            do throws(FileError) {
              try output.write(JSONOutput.line(ready.result) + "\n")
            } catch {
              // A full disk: no results file rather than a partial one; stop starting items.
              writeError = error
              stop = true
            }
          }
          issuedStart += 1
          if issuedStart > 4096 {
            issued.removeFirst(issuedStart)
            issuedStart = 0
          }
        }
        progress(summary)
      })
    if let failure = writeError ?? imposeError {
      output.discard()
      imposer?.discard()
      throw failure
    }
    // The layout before the results: a run whose sheets cannot be written leaves no results
    // saying its cards are on them.
    if let imposer {
      do {
        summary.imposed = try imposer.finish()
      } catch ImposeError.noCards {
        // No card item succeeded: no layout file.
      } catch {
        output.discard()
        throw error
      }
    }
    // Every output durable before the records that claim them: the resume records, then the
    // results (written with deferred flushing, a checkpoint syncs what the results list).
    do {
      try states.checkpoint()
    } catch {
      output.discard()
      throw error
    }
    try output.commit()
    if options.shard.count == 1 {
      // A sharded run's orders ship after `batch merge` (`ShardMerge.run`).
      try Fulfilment.write(
        try Fulfilment.shipped(inResults: options.resultsFile), folder: options.outputFolder,
        fonts: options.cardOptions.fonts)
    }
    if let completion {
      // The results durable before the record that says the shard finished.
      if !AtomicFile.flushEachFile { try AtomicFile.flushFileSystem(of: options.outputFolder) }
      try AtomicFile.write(
        Array(
          JSONOutput.line(
            ShardCompletion(
              shard: options.shard.index, shards: options.shard.count, manifest: manifestDigest)
          ).utf8), to: completion)
    }
    return summary
  }

  /// Runs one item, or skips it when an earlier run finished it with the same inputs.
  ///
  /// With `impose`, a card item's card is laid out (also when skipped) for the run's layout.
  static func execute(
    _ job: ManifestItem, options: BatchOptions, templates: TemplateCache, impose: Bool
  ) async -> ItemOutcome {
    let started = Date()
    var outcome = ItemOutcome(
      result: ItemResult(
        id: job.id, line: job.line, kind: job.kind, status: .ok, outputs: [], error: nil,
        seconds: 0, copies: job.card?.copies, shipTo: job.shipTo))
    let statePath = "\(options.outputFolder)/.state/\(job.id).json"
    do {
      if let card = job.card, !options.writesCardFiles {
        // The card exists only on the layout, which every run draws: nothing to skip.
        let card = try await prepare(id: job.id, card, options: options, templates: templates)
        outcome.card = impose ? card : nil
        outcome.result.outputs = options.layout.map { [$0.fileName] } ?? []
      } else {
        let inputs = try inputBytes(job)
        let fingerprint = digest(
          inputs, job, photos: options.photos, printWait: options.printWaitSeconds)
        if let state = readState(statePath), state.fingerprint == fingerprint,
          state.outputs.allSatisfy({
            FileManager.default.fileExists(atPath: options.outputFolder + "/" + $0)
          })
        {
          outcome.result.status = .skipped
          outcome.result.outputs = state.outputs
          if impose, let card = job.card {
            outcome.card = try await prepare(
              id: job.id, card, options: options, templates: templates)
          }
        } else {
          let made = try await make(job, options: options, templates: templates)
          outcome.result.outputs = made.outputs
          outcome.card = impose ? made.card : nil
          // After the outputs are in place (and durable: with deferred flushing the record
          // waits for a checkpoint, see `StateRecords`); a state cut short by a kill fails to
          // decode and the item is made again, so it needs no temporary file.
          // A photo the item downloaded into the cache is an input from now on: the record
          // names the entry as the item left it, so that the next run skips the item rather than
          // make it again from the cache.
          let downloads = options.photos.fetch && options.photos.cache != nil
          let state = ItemState(
            fingerprint: downloads
              ? digest(inputs, job, photos: options.photos, printWait: options.printWaitSeconds)
              : fingerprint,
            outputs: made.outputs)
          if AtomicFile.flushEachFile {
            try FileIO.overwrite(Array(JSONOutput.line(state).utf8), to: statePath)
          } else {
            outcome.state = (statePath, state)
          }
        }
      }
    } catch {
      outcome.result.status = .failed
      outcome.result.error = ErrorRecord(
        Task.isCancelled && isCancellation(error) ? options.canceledJob?(job.id) ?? error : error)
      if let hint = missingInputHint(error, options) { outcome.result.error?.hint = hint }
      outcome.card = nil
    }
    outcome.result.seconds = (Date().timeIntervalSince(started) * 1000).rounded() / 1000
    return outcome
  }

  /// The hint for a file an item names that does not exist because no part of its name was
  /// uploaded (`BatchOptions.sentInputs`): the parts sent when they are few, else their count.
  static func missingInputHint(_ error: any Error, _ options: BatchOptions) -> String? {
    guard let sent = options.sentInputs, let root = options.inputsRoot,
      case .notFound(let path)? = error as? FileError
    else { return nil }
    let roots = [root, URL(fileURLWithPath: root).resolvingSymlinksInPath().path]
    guard
      let name = roots.lazy.compactMap({
        path.hasPrefix($0 + "/") ? String(path.dropFirst($0.count + 1)) : nil
      }).first, !sent.contains(name)
    else { return nil }
    let given =
      sent.isEmpty
      ? "none was, besides the manifest"
      : sent.count <= 8
        ? "the parts besides the manifest are " + sent.map { "'\($0)'" }.joined(separator: ", ")
        : "\(Formatting.count(sent.count, "part")) were sent besides the manifest"
    return "no part named '\(name)' was uploaded (\(given)); send the file as a part of that "
      + "name, or correct the path in the manifest"
  }

  /// Whether `error`, or an error it wraps, is the sandbox's `document.canceled`.
  static func isCancellation(_ error: any Error) -> Bool {
    var next: (any Error)? = error
    while let error = next as? any ImprintError {
      if error.code == "document.canceled" { return true }
      next = error.underlying
    }
    return next is CancellationError
  }

  struct ItemState: Codable, Sendable {
    var fingerprint: String
    var outputs: [String]
  }

  static func readState(_ path: String) -> ItemState? {
    guard let bytes = try? FileIO.read(path, limit: FileIO.Limit.structured) else { return nil }
    return try? JSONDecoder().decode(ItemState.self, from: Data(bytes))
  }

  /// SHA-256 of the item's line, every file it reads (each streamed: memory holds a chunk,
  /// whatever the size of an upload), a quote's order files included, and for a card item with
  /// photo options its photo's sources (`photoInputs`).
  ///
  /// - Throws: `FileError` for a file that is missing or not a regular file (a FIFO or a
  ///   device is that item's error, never read), or an order file that leads outside its folder.
  static func fingerprint(_ job: ManifestItem, photos: PhotoOptions = PhotoOptions())
    throws(FileError) -> String
  {
    digest(try inputBytes(job), job, photos: photos)
  }

  /// The fingerprint of an item whose line and files are `inputs` (`inputBytes`); a print item
  /// that waits for its printer jobs because the batch does (`--wait`, not its own `wait`) is
  /// marked too, so that a rerun with `--wait` follows the printer jobs a run without it sent.
  static func digest(
    _ inputs: [UInt8], _ job: ManifestItem, photos: PhotoOptions, printWait: Double? = nil
  ) -> String {
    let waits: Bool
    if case .print(let print) = job.work {
      waits = print.printer != nil && print.wait == nil && printWait != nil
    } else {
      waits = false
    }
    return FileDigest.hex(
      SHA256.hash(inputs + photoInputs(job, photos: photos) + Array((waits ? "\nwait" : "").utf8)))
  }

  /// How long a print item waits for its printer jobs, in seconds, or nil when it does not: its
  /// own `wait` and `waitTimeout`, else the batch's `--wait` and `--wait-timeout`.
  static func waitSeconds(_ print: PrintItem, _ options: BatchOptions) -> Double? {
    guard print.wait ?? (options.printWaitSeconds != nil) else { return nil }
    return print.waitTimeout ?? options.printWaitSeconds ?? PrintTarget.defaultWaitSeconds
  }

  /// What a card item's photo depends on besides its line and files.
  ///
  /// With a photo cache or downloads and no photo file of its own: those options and the
  /// account's cache entry (its path and digest). Empty otherwise, so fingerprints without
  /// photo options are unchanged.
  static func photoInputs(_ job: ManifestItem, photos: PhotoOptions) -> [UInt8] {
    guard let card = job.card, card.photo == nil, !photos.isDefault else { return [] }
    var bytes = Array("\nphotos \(photos.cache?.folder ?? "-") fetch \(photos.fetch)\n".utf8)
    // A profile that cannot be read or parsed fails the item when it is made.
    guard let cache = photos.cache,
      let profile = try? card.profileBytes(),
      let account = try? Profile.parse(profile, source: card.profile.path ?? job.id).account,
      let (path, problem) = cache.locate(account)
    else { return bytes }
    bytes += Array(path.utf8)
    // An entry that is not a usable file is a miss for the loader: its state is marked.
    bytes += problem == nil ? (try? FileDigest.of(path)) ?? Array("unusable".utf8) : []
    return bytes
  }

  /// An item's manifest line and every file it reads, each with its path and digest.
  ///
  /// - Throws: as `fingerprint`.
  static func inputBytes(_ job: ManifestItem) throws(FileError) -> [UInt8] {
    var bytes = Array(job.source.utf8)
    var paths = job.work.files
    // A quote or print depends on the files its order names: a changed upload is quoted (and
    // prepared) again. (An order that cannot be read fails when the item is made.)
    let (orderPath, filesRoot): (String?, String?) =
      switch job.work {
      case .quote(let order): (order.order, nil)
      case .print(let print): (print.order.order, print.filesRoot)
      case .card, .qr, .thumb: (nil, nil)
      }
    if let orderPath,
      let order = try? Order.parse(
        try FileIO.read(orderPath, limit: FileIO.Limit.structured), source: orderPath)
    {
      // Confined as the quoter confines them (see `OrderQuoter`).
      paths += try order.filePaths(
        root: filesRoot ?? Order.filesRoot(ofOrderAt: orderPath),
        explicitRoot: filesRoot != nil)
    }
    for path in paths {
      bytes += Array(path.utf8)
      bytes += try FileDigest.of(path)
    }
    return bytes
  }

  /// The decoded inputs of a card item (`CardInputLoader.load`, as `imprint card` reads them).
  static func cardInput(
    id: String, _ card: CardItem, options: BatchOptions, templates: TemplateCache
  ) async throws -> LoadedCardInput {
    let (path, inline): (String, [UInt8]?) =
      switch card.profile {
      case .file(let path): (path, nil)
      case .inline(let bytes): ("item '\(id)'", bytes)
      }
    return try await options.cardLoader.load(
      CardRequest(
        profile: path, inlineProfile: inline, photo: card.photo,
        followCounts: card.followCounts),
      template: try templates.get(card.template ?? "classic"))
  }

  /// Lays a card item's card out (what its PDF and the layout draw).
  static func prepare(
    id: String, _ card: CardItem, options: BatchOptions, templates: TemplateCache
  ) async throws -> PreparedCard {
    try CardMaker.prepare(
      try await cardInput(id: id, card, options: options, templates: templates).input,
      options: cardOptions(card, options))
  }

  /// The batch's card options with the item's own locale, when it names one.
  static func cardOptions(_ card: CardItem, _ options: BatchOptions) -> CardOptions {
    var cardOptions = options.cardOptions
    if let locale = card.locale { cardOptions.locale = locale }
    return cardOptions
  }

  /// Lays card items out again, for imposition after a sharded run (the same drawing as their
  /// PDFs).
  public static func preparer(options: BatchOptions)
    -> @Sendable (_ id: String, _ card: CardItem) async throws -> PreparedCard
  {
    let templates = TemplateCache(folder: options.templatesFolder)
    return { id, card in try await prepare(id: id, card, options: options, templates: templates) }
  }

  /// Makes an item's outputs (atomically); returns their paths relative to the output folder and,
  /// for a card item, the card.
  static func make(_ job: ManifestItem, options: BatchOptions, templates: TemplateCache)
    async throws
    -> (outputs: [String], card: PreparedCard?)
  {
    let folder = options.outputFolder
    switch job.work {
    case .card(let item):
      let loaded = try await cardInput(id: job.id, item, options: options, templates: templates)
      let cardOptions = cardOptions(item, options)
      let card = try CardMaker.prepare(loaded.input, options: cardOptions)
      let relative = "cards/\(job.id).pdf"
      try AtomicFile.write(
        try CardMaker.pdf(card, of: loaded.input, options: cardOptions).bytes,
        to: folder + "/" + relative)
      return ([relative], card)
    case .qr(let item):
      // The library path `imprint qr` takes (`QRSettings.make`), with the default style.
      var style = QRStyle()
      style.fonts = options.cardOptions.fonts
      let format = item.format
      let (_, rendering) = try QRSettings(kind: item.payloadType, style: style).make(
        item.payload, format: format, source: "item '\(job.id)' payload")
      let relative = "qr/\(job.id).\(format == .text ? "txt" : format.rawValue)"
      try AtomicFile.write(rendering.bytes, to: folder + "/" + relative)
      return ([relative], nil)
    case .thumb(let item):
      guard let sandbox = options.sandbox else { throw BatchError.noSandbox(id: job.id) }
      let file = item.file
      let format = item.format
      let relative = "thumbs/\(job.id).\(format == .png ? "png" : "jpg")"
      try await sandbox.thumbnails(
        path: file, file: file, size: ThumbnailOptions().size, format: format,
        output: folder + "/" + relative)
      return ([relative], nil)
    case .quote(let item):
      guard let sandbox = options.sandbox else { throw BatchError.noSandbox(id: job.id) }
      // The one quoter `imprint quote` uses (the store check included); one file at a time,
      // since the batch runs its items in parallel.
      let quote = try await OrderQuoter(sandbox: sandbox, jobs: 1).quote(
        order: item.order, prices: item.prices
      ).quote
      let relative = "quotes/\(job.id).json"
      try AtomicFile.write(Array(JSONOutput.pretty(quote).utf8), to: folder + "/" + relative)
      return ([relative], nil)
    case .print(let item):
      guard let sandbox = options.sandbox else { throw BatchError.noSandbox(id: job.id) }
      // What `imprint prepare` does (`OrderPrinter`), into the item's own folder; the files sent
      // are recorded beside the resume records, so that no run sends one twice (a rerun after a
      // failure sends only what was not sent).
      let relativeFolder = "prints/\(job.id)"
      let printed = try await OrderPrinter(
        preparer: OrderPreparer(quoter: OrderQuoter(sandbox: sandbox, jobs: 1))
      ).run(
        order: item.order.order, prices: item.order.prices, filesRoot: item.filesRoot,
        output: folder + "/" + relativeFolder, options: item.options,
        target: item.printer.map {
          var target = PrintTarget(
            printer: $0, monoPrinter: item.monoPrinter,
            journal: "\(folder)/.state/\(job.id).print.json")
          target.waitSeconds = waitSeconds(item, options)
          target.access = options.printAccess
          return target
        })
      let report = relativeFolder + "/report.json"
      try AtomicFile.write(Array(JSONOutput.pretty(printed).utf8), to: folder + "/" + report)
      // The report says how each printer job ended; one that did not complete fails the print item
      // (a rerun asks again about the printer jobs not recorded as ended, and sends nothing again).
      if let failure = printed.failure { throw failure }
      let prefix = folder + "/"
      let made = printed.files.flatMap { [$0.document, $0.ticketPath] + ($0.previews ?? []) }.map {
        $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0
      }
      return (made + [report], nil)
    }
  }
}

/// Errors of the batch itself (per-item errors are the capability's own).
public enum BatchError: ImprintError, Equatable {
  /// A thumb, quote or print item without a document sandbox.
  case noSandbox(id: String)
  /// A `--shard` value that is not I/N with 0 <= I < N (after `auto` is resolved).
  case badShard(String)
  /// A shard of `auto` where neither a Kubernetes Indexed Item's nor a Slurm array's variables
  /// are set.
  case noShardEnvironment
  /// `batch merge`: shards without results, or that did not finish, or items without a result.
  case shardsMissing(folder: String, detail: String)
  /// `batch merge`: results of another shard count or manifest, or not the manifest's items.
  case shardMismatch(folder: String, detail: String)
  /// `batch merge`: a shard's result line that cannot be read (that item fails).
  case resultUnreadable(file: String, line: Int, reason: String, cause: FileError? = nil)

  public var code: String {
    switch self {
    case .noSandbox: "batch.noSandbox"
    case .badShard: "batch.badShard"
    case .noShardEnvironment: "batch.noShardEnvironment"
    case .shardsMissing: "batch.shardsMissing"
    case .shardMismatch: "batch.shardMismatch"
    case .resultUnreadable: "batch.resultUnreadable"
    }
  }

  /// 422, as the service has always answered them.
  public var status: Int {
    switch self {
    case .noSandbox, .badShard, .noShardEnvironment, .shardsMissing, .shardMismatch,
      .resultUnreadable:
      422
    }
  }

  public var message: String {
    switch self {
    case .noSandbox(let id): "item '\(id)' reads an upload, but no document worker is available"
    case .badShard(let text): "shard '\(SafeText.escaped(text))' is not I/N with 0 <= I < N"
    case .noShardEnvironment:
      "shard 'auto' needs JOB_COMPLETION_INDEX and JOB_COMPLETION_COUNT, or SLURM_ARRAY_TASK_ID "
        + "and SLURM_ARRAY_TASK_COUNT"
    case .shardsMissing(let folder, let detail), .shardMismatch(let folder, let detail):
      "cannot merge the shards in '\(folder)': \(detail)"
    case .resultUnreadable(let file, let line, let reason, _):
      "'\(file)' line \(line) cannot be read as an item's result (\(reason))"
    }
  }

  public var hint: String? {
    switch self {
    case .shardsMissing:
      "run each missing shard to the end (imprint batch MANIFEST -o DIR --shard I/N), then merge"
    case .shardMismatch:
      "run the stale shards again with this manifest, or remove the results of the other run "
        + "(or name the shard count with --shards N)"
    case .resultUnreadable: "run that item's shard again"
    default: nil
    }
  }

  /// The file error behind a result line that cannot be read (a line over the limit).
  public var underlying: (any Error)? {
    if case .resultUnreadable(_, _, _, let cause?) = self { cause } else { nil }
  }
}

extension ManifestLineError {
  /// The status of the reader's error this one restates (422 for `batch.badLine`), from its
  /// code.
  public var status: Int { ErrorStatus.of(code: code) }
}

/// Templates loaded once per run, shared by every item.
///
/// The first item that names a template loads it while the others that name it wait, asleep
/// (`Memo.valueComputedOnce`: a thread waiting on a `Mutex` spins in the kernel while its owner
/// runs). Bounded: a manifest naming thousands of templates empties the table and loads again.
final class TemplateCache: Sendable {
  private let folder: String?
  private let loaded = Memo<String, Result<CardTemplate, CardError>>(limit: 1024)

  init(folder: String?) { self.folder = folder }

  func get(_ name: String) throws(CardError) -> CardTemplate {
    try loaded.valueComputedOnce(name) { name in
      do throws(CardError) {
        return .success(try CardTemplate.load(name, folder: folder))
      } catch {
        return .failure(error)
      }
    }.get()
  }
}
