// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the cards of one or several profiles made in one run (`imprint card`): one
// combined PDF or a file per card, no output replacing an input or another card's, each card's
// failure its own.

import Foundation
import ImprintCore
import ImprintGraphics

/// The cards of one or several profiles, made in one run: the workflow of `imprint card`, for the
/// CLI and any backend alike.
///
/// A run is made by `card(_:to:format:options:)` (one profile's file), `combinedPDF(_:to:options:)`
/// (every card in one PDF, a card printer's job) or `folder(_:in:format:options:)` (a file per
/// card, named after its profile), then carried out by `run(template:loader:)`.
public struct CardRun: Sendable {
  /// A card file's format.
  public enum Format: String, Sendable, CaseIterable {
    /// One page per requested side at trim + 2 × bleed, vector text, fonts embedded.
    case pdf
    /// One PNG per requested side at `CardOptions.dpi`: `NAME-front.png` and `NAME-back.png`
    /// when both sides are asked for, else the output name itself.
    case png
    /// One 1200 × 630 PNG, front and back side by side (`CardMaker.share`).
    case share

    /// The extension of a card file in this format.
    var fileExtension: String { self == .pdf ? "pdf" : "png" }
  }

  /// Where the cards go.
  enum Destination: Sendable {
    /// One card's file (or its sides).
    case file(String)
    /// Every card in one PDF.
    case combinedPDF(String)
    /// A file per card in this folder.
    case folder(String)
  }

  /// The cards to make, in order.
  public let requests: [CardRequest]
  /// The format of every card file.
  public let format: Format
  /// Sides, resolution, bleed, crop marks, fonts and language of every card.
  public var options: CardOptions
  /// Files no output may replace besides the requests' profiles, photos and follow counts and
  /// the template's images (the template file itself, files a caller read for the run).
  public var inputs: [String] = []
  /// Cards made at once (at least 1).
  public var jobs: Int = activeProcessorCount
  let destination: Destination

  private init(
    requests: [CardRequest], format: Format, options: CardOptions, destination: Destination
  ) {
    self.requests = requests
    self.format = format
    self.options = options
    self.destination = destination
  }

  /// A run that makes one card into `path`.
  ///
  /// - Parameters:
  ///   - request: the card's profile, photo and follow counts.
  ///   - path: the output file; with `.png` and both sides, the sides are `NAME-front.png` and
  ///     `NAME-back.png` beside it (`NAME` being `path` without its extension).
  ///   - format: the file's format.
  ///   - options: how the card is made.
  /// - Returns: the run, not yet carried out.
  public static func card(
    _ request: CardRequest, to path: String, format: Format, options: CardOptions
  ) -> CardRun {
    CardRun(requests: [request], format: format, options: options, destination: .file(path))
  }

  /// A run that draws every card into one PDF at `path`, in request order.
  ///
  /// A card printer's job: front, back, front, back, ...
  ///
  /// - Parameters:
  ///   - requests: the cards' profiles (and photos, follow counts).
  ///   - path: the PDF; its title is its file name.
  ///   - options: how the cards are made.
  /// - Returns: the run, not yet carried out.
  public static func combinedPDF(_ requests: [CardRequest], to path: String, options: CardOptions)
    -> CardRun
  {
    CardRun(requests: requests, format: .pdf, options: options, destination: .combinedPDF(path))
  }

  /// A run that writes each card into `folder` as `PROFILE.EXT`, `PROFILE` being its profile's
  /// file name without extension (`NAME-front.png` and `NAME-back.png` for both sides as PNG).
  ///
  /// - Parameters:
  ///   - requests: the cards' profiles (and photos, follow counts).
  ///   - folder: the output folder (made when missing).
  ///   - format: the format of every card file.
  ///   - options: how the cards are made.
  /// - Returns: the run, not yet carried out.
  public static func folder(
    _ requests: [CardRequest], in folder: String, format: Format, options: CardOptions
  ) -> CardRun {
    CardRun(requests: requests, format: format, options: options, destination: .folder(folder))
  }

  /// Makes one card in memory: the bytes `card(_:to:format:options:)` writes, for a server that
  /// answers with them (no file, no temporary folder).
  ///
  /// The same checks and the same drawing as a run's: `options.locale` checked first, then the
  /// card's inputs read by `loader` and the card drawn; the bytes are those the run writes for
  /// the same request and options.
  ///
  /// - Parameters:
  ///   - request: the card's profile, photo and follow counts (inline ones included).
  ///   - format: the file's format; a PNG is one side, so `options.faces` must hold one.
  ///   - options: how the card is made.
  ///   - template: the design.
  ///   - loader: reads and decodes the card's profile, photo and follow counts.
  /// - Returns: the file's bytes, with the photo's, the profile's and the layout's warnings.
  /// - Throws: `CardError.unknownLocale` or `.untranslatedLocale`; what `loader` throws (the
  ///   profile's, the photo's errors); `CardError.missingGlyphs` unless allowed;
  ///   `GraphicsError`.
  public static func render(
    _ request: CardRequest, format: Format, options: CardOptions, template: CardTemplate,
    loader: CardInputLoader
  ) async throws -> RenderedCard {
    precondition(
      format != .png || options.faces.count == 1, "a card PNG in memory is one side")
    if let locale = options.locale { _ = try CardLocale.resolve(locale, template: template) }
    let maker = CardFileMaker(
      template: template, options: options, format: format, loader: loader, inputs: [])
    let loaded = try await loader.load(request, template: template)
    var card = try maker.render(loaded.input)
    card.warnings = loaded.warnings + card.warnings
    return card
  }

  /// Makes the cards: each card's inputs read by `loader`, `jobs` cards at a time.
  ///
  /// `options.locale`, when set, is checked first: an unknown or untranslated locale fails the
  /// run before any card. A card that fails (its profile, photo or layout, or an output that
  /// would replace an input or a card written earlier in the run) is reported and the others are
  /// made; a failed card leaves no file (PNG sides are written all or none).
  ///
  /// - One card's file is written atomically.
  /// - A combined PDF is written as it grows (memory stays flat) and only when at least one card
  ///   went into it; a failed card is left out of it. A failure drawing into it or finishing it
  ///   fails the whole run and leaves no file.
  /// - A folder's files are written atomically and flushed together at the end (one checked
  ///   `syncfs`, `AtomicFile.withDeferredFlush`). Two profiles with one file name (from
  ///   different folders): the later fails with `file.outputCollision`.
  ///
  /// - Parameters:
  ///   - template: the design of every card.
  ///   - loader: reads and decodes each card's profile, photo and follow counts.
  /// - Returns: one item per request, in request order.
  /// - Throws: `CardError.unknownLocale` or `.untranslatedLocale`; for a combined PDF,
  ///   `FileError.outputIsInput` when it would replace an input and `FileError` or
  ///   `GraphicsError` when it cannot be written; for a folder, `FileError` when the folder
  ///   cannot be made or the final flush fails.
  public func run(template: CardTemplate, loader: CardInputLoader) async throws -> [CardRunItem] {
    if let locale = options.locale { _ = try CardLocale.resolve(locale, template: template) }
    let inputs =
      requests.flatMap { request in
        [
          request.inlineProfile == nil ? request.profile : nil,
          request.inlinePhoto == nil ? request.photo : nil, request.followCounts,
        ]
        .compactMap { $0 }
      } + template.assetPaths + self.inputs
    let maker = CardFileMaker(
      template: template, options: options, format: format, loader: loader, inputs: inputs)
    switch destination {
    case .file(let path):
      return await maker.make([(requests[0], path, nil)], jobs: jobs)
    case .combinedPDF(let path):
      return try await maker.combinedPDF(requests, to: path, jobs: jobs)
    case .folder(let folder):
      return try await AtomicFile.withDeferredFlush(syncing: folder) {
        try FileIO.makeFolder(folder)
        var claimed: [String: String] = [:]
        let cards = requests.map { request in
          let base = ((request.profile as NSString).lastPathComponent as NSString)
            .deletingPathExtension
          let output = "\(folder)/\(base).\(format.fileExtension)"
          var collision: FileError?
          if let first = claimed[output] {
            collision = .outputCollision(path: output, first: first, second: request.profile)
          } else {
            claimed[output] = request.profile
          }
          return (request, output, collision)
        }
        return await maker.make(cards, jobs: jobs)
      }
    }
  }
}

/// One card of a run and what became of it.
public struct CardRunItem: Sendable {
  /// The profile, as its request names it.
  public var profile: String
  /// The account, once its profile was read (nil when it could not be).
  public var account: String?
  /// Warnings about the card: its photo's, its profile's and its layout's.
  ///
  /// A failed card keeps its photo's when it was to be its own file; in a combined PDF it has
  /// none.
  public var warnings: [String]
  /// The files the card was written to (the combined PDF, its file, or its PNG sides), or why it
  /// failed (the error as thrown).
  public var result: Result<[String], any Error>

  /// `ok`, or `failed` with the error in `result`.
  public var status: ItemStatus {
    if case .success = result { .ok } else { .failed }
  }

  /// The files written for the card; empty when it failed.
  public var outputs: [String] {
    (try? result.get()) ?? []
  }
}

/// What every card of one run shares, and the making of one card.
private struct CardFileMaker: Sendable {
  let template: CardTemplate
  let options: CardOptions
  let format: CardRun.Format
  let loader: CardInputLoader
  /// Every file the run reads by name: no output may replace one.
  let inputs: [String]

  /// Makes each card into its own output, `jobs` at a time; a card with a collision fails with
  /// it.
  func make(_ cards: [(CardRequest, String, FileError?)], jobs: Int) async -> [CardRunItem] {
    var items: [Int: CardRunItem] = [:]
    var iterator = cards.enumerated().makeIterator()
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: jobs,
      work: { (index, card) in
        (index, await make(card.0, to: card.1, collision: card.2))
      },
      collect: { items[$0.0] = $0.1 })
    return (0..<cards.count).compactMap { items[$0] }
  }

  /// Makes one card into `output` (or its PNG sides).
  private func make(_ request: CardRequest, to output: String, collision: FileError?) async
    -> CardRunItem
  {
    var account: String?
    var warnings: [String] = []
    let result: Result<[String], any Error>
    do {
      if let collision { throw collision }
      let loaded = try await loader.load(request, template: template)
      account = loaded.input.profile.account
      warnings = loaded.warnings
      let written = try write(loaded, to: output)
      warnings += written.warnings
      result = .success(written.paths)
    } catch {
      result = .failure(error)
    }
    return CardRunItem(
      profile: request.profile, account: account, warnings: warnings, result: result)
  }

  /// Renders the card of `loaded` and writes it to `output` (or its PNG sides, all or none).
  private func write(_ loaded: LoadedCardInput, to output: String) throws -> (
    paths: [String], warnings: [String]
  ) {
    let input = loaded.input
    let inputs = inputs + [loaded.photo.file].compactMap { $0 }
    var rendered: [(path: String, card: RenderedCard)]
    if format == .png, options.faces.count != 1 {
      let base = (output as NSString).deletingPathExtension
      rendered = try options.faces.map { face in
        ("\(base)-\(face.rawValue).png", try CardMaker.png(input, face: face, options: options))
      }
    } else {
      rendered = [(output, try render(input))]
    }
    // Written only when every side rendered, so a failure leaves no file; a side that cannot
    // be written (a full disk) takes the sides written before it away again.
    var written: [String] = []
    do {
      for (path, card) in rendered {
        try ConfinedPath.checkNotInput(path, inputs: inputs)
        try AtomicFile.write(card.bytes, to: path)
        written.append(path)
      }
    } catch {
      for path in written { unlink(path) }
      throw error
    }
    return (written, rendered.first?.card.warnings ?? [])
  }

  /// Renders the one file of a card: its PDF, its share image, or its PNG of one side.
  func render(_ input: CardInput) throws -> RenderedCard {
    switch format {
    case .pdf: return try CardMaker.pdf(input, options: options)
    case .share: return try CardMaker.share(input, options: options)
    case .png:
      precondition(options.faces.count == 1, "one PNG file is one side")
      return try CardMaker.png(input, face: options.faces[0], options: options)
    }
  }

  /// Lays out the cards in parallel and draws them in request order into one PDF written as it
  /// grows; a card that fails is reported and left out.
  func combinedPDF(_ requests: [CardRequest], to output: String, jobs: Int) async throws
    -> [CardRunItem]
  {
    try ConfinedPath.checkNotInput(output, inputs: inputs)
    let temporary = try AtomicFile.temporaryPath(for: output)
    var writer = try CardPDFWriter(
      template: template, options: options, title: (output as NSString).lastPathComponent,
      path: temporary)
    var items: [CardRunItem] = []
    var pending: [Int: Prepared] = [:]
    var drawError: (any Error)?
    var iterator = requests.enumerated().makeIterator()
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: jobs,
      work: { (index, request) in (index, await prepare(request)) },
      collect: { (index, prepared) in
        pending[index] = prepared
        while let next = pending.removeValue(forKey: items.count) {
          // After a failed draw no card is drawn any more: the run fails.
          if case .success(let card) = next.card, drawError == nil {
            do {
              try writer.add(card)
            } catch {
              drawError = error
            }
          }
          items.append(
            CardRunItem(
              profile: requests[items.count].profile, account: next.account,
              warnings: next.warnings, result: next.card.map { _ in [output] }))
        }
      })
    /// A write error names the file asked for, not its temporary.
    func failed(_ error: any Error) -> any Error {
      AtomicFile.discard(temporary)
      if case .unwritable(let path, let reason)? = error as? FileError, path == temporary {
        return FileError.unwritable(path: output, reason: reason)
      }
      return error
    }
    if let drawError { throw failed(drawError) }
    if items.allSatisfy({ $0.status == .failed }) {
      AtomicFile.discard(temporary)
    } else {
      do {
        _ = try writer.finish()
      } catch {
        throw failed(error)
      }
      try AtomicFile.commit(temporary, to: output)
    }
    return items
  }

  /// A card of a combined PDF laid out, or why it could not be.
  private struct Prepared: Sendable {
    var account: String?
    /// The photo's and the layout's warnings; none when the card failed.
    var warnings: [String] = []
    var card: Result<PreparedCard, any Error>
  }

  /// Loads and lays out one card of a combined PDF.
  private func prepare(_ request: CardRequest) async -> Prepared {
    var account: String?
    do {
      let loaded = try await loader.load(request, template: template)
      account = loaded.input.profile.account
      let card = try CardMaker.prepare(loaded.input, options: options)
      return Prepared(
        account: account, warnings: loaded.warnings + card.warnings, card: .success(card))
    } catch {
      return Prepared(account: account, card: .failure(error))
    }
  }
}
