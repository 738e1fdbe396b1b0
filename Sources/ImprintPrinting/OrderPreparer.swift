// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: print what was quoted: each file of an order as a print-ready PDF with its
// job ticket, the pages placed in the document sandbox's workers.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing

/// What `OrderPreparer` makes besides each file's print-ready PDF and ticket.
public struct PrepareOptions: Sendable, Equatable {
  /// Whether each `auto` colour file with both colour and monochrome sheets becomes two files,
  /// its colour run and its monochrome run (`ColorSplitPart`), so that the monochrome sheets
  /// can go to a cheaper printer.
  public var splitColor: Bool

  /// The side in pixels of the square box each sheet side's preview fits (its longer side),
  /// in `OrderPreparer.previewSizes`, or nil for no previews.
  public var previewSize: Int?

  /// Options: whole files unless `splitColor`; previews when `previewSize` is given.
  public init(splitColor: Bool = false, previewSize: Int? = nil) {
    self.splitColor = splitColor
    self.previewSize = previewSize
  }
}

/// One file of a prepared order (or one part of a file split by colour).
public struct PreparedFile: Codable, Sendable, Equatable {
  /// The print-ready PDF's path.
  public var document: String
  /// The job ticket's path (JSON, `JobTicket`).
  public var ticketPath: String
  /// The job ticket.
  public var ticket: JobTicket
  /// The previews' paths, one PNG a sheet side in order (`N-name.side-1.png`...), when asked
  /// for.
  public var previews: [String]?
  /// SHA-256 (hex) of the upload the file was made from, as read when it was prepared.
  public var upload: String
  /// The order line's identity in a print journal (`PrintJournal.lineKey`).
  ///
  /// The upload's digest, the line's print options and its occurrence among identical lines.
  /// A split file's parts share it.
  public var lineKey: String

  /// The part of the order's line the file prints: `whole`, `color` or `mono`.
  public var part: String { ticket.split?.part ?? "whole" }
}

/// A prepared order: the quote and the files made from it.
public struct PreparedOrder: Sendable, Equatable {
  /// The quote the files realise.
  public var quote: Quote
  /// The order's files in the order's order.
  public var files: [PreparedFile]
}

/// Prepares orders for print: quotes the order (`OrderQuoter`), then makes each file a
/// print-ready PDF realising its options (page range, n-up, paper, a blank back where a duplex
/// job's last sheet is one-sided) with a job ticket carrying its IPP attributes and quote line.
///
/// The pages are placed by libqpdf in the sandbox's workers (the files are untrusted), under
/// the same CPU, memory and time limits as quoting. Content is carried over losslessly: each
/// page is a form XObject of its own streams, fonts and images (`PageImposer`). A prepared
/// file holds exactly the quote's impressions (plus its blank back), checked before anything
/// is written. All files and tickets are written, or none.
public struct OrderPreparer: Sendable {
  /// The quoter, whose sandbox also places the pages.
  public let quoter: OrderQuoter
  /// The preview sizes accepted, in pixels.
  public static let previewSizes = DocumentSandbox.previewSizes
  /// The preview size when none is given, in pixels.
  public static let defaultPreviewSize = 400

  /// A preparer quoting and placing pages with `quoter` (its sandbox, `jobs` at a time).
  public init(quoter: OrderQuoter) {
    self.quoter = quoter
  }

  /// Quotes the order at `orderPath` with the price list at `pricesPath` and prepares each of
  /// its files into `folder` (created when missing).
  ///
  /// - Parameters:
  ///   - orderPath: the order (JSON).
  ///   - pricesPath: the store's price list (JSON).
  ///   - filesRoot: the folder the order's files are relative to and confined to, or nil for
  ///     the order's folder.
  ///   - folder: where the PDFs and tickets go (`N-name.pdf`, `N-name.ticket.json`, N the
  ///     file's place in the order; a split file's parts `N-name.color.pdf` and
  ///     `N-name.mono.pdf` with their tickets).
  ///   - options: what else to make (the colour split).
  /// - Returns: the quote and the files written.
  /// - Throws: what `OrderQuoter.quote` throws; `FileError` for the folder or a write;
  ///   `DocumentError` for a file that cannot be prepared (`.printNotAllowed`,
  ///   `.changedSinceQuote`, `.prepareFailed`, an image's errors, the sandbox's limits).
  public func prepare(
    order orderPath: String, prices pricesPath: String, filesRoot: String? = nil,
    output folder: String, options: PrepareOptions = PrepareOptions()
  ) async throws -> PreparedOrder {
    try Self.check(options)
    try FileIO.makeFolder(folder)
    let quoted = try await quoter.quote(
      order: orderPath, prices: pricesPath, filesRoot: filesRoot)
    return try await prepare(quoted, output: folder, options: options)
  }

  /// Prepares the files of an order already quoted (a backend that quoted, then took payment).
  ///
  /// - Parameters:
  ///   - quoted: the quote and its files, from `OrderQuoter`.
  ///   - folder: where the PDFs and tickets go (it must exist).
  ///   - options: what else to make (the colour split, previews).
  /// - Returns: the quote and the files written: one a file, or with `splitColor` two for a
  ///   file split by colour, its colour part first.
  /// - Throws: as `prepare(order:prices:filesRoot:output:options:)`, less the quoting.
  public func prepare(
    _ quoted: OrderQuote, output folder: String, options: PrepareOptions = PrepareOptions()
  ) async throws -> PreparedOrder {
    try Self.check(options)
    let sandbox = quoter.sandbox
    let previewSize = options.previewSize
    var plans:
      [(
        source: QuotedFile, layout: SheetLayout, ticket: JobTicket, output: String,
        upload: String, key: String
      )] = []
    var uploads: [String: String] = [:]
    var occurrences: [String: Int] = [:]
    for (index, source) in quoted.files.enumerated() {
      let line = quoted.quote.files[index]
      guard source.info.printAllowed else { throw DocumentError.printNotAllowed(file: source.file) }
      // The upload's digest, streamed: what the journal knows a line by (a file named twice is
      // read once here).
      let upload =
        try uploads[source.path]
        ?? SHA256.hex(ofFile: source.path, limit: FileIO.Limit.document)
      uploads[source.path] = upload
      let identity = PrintJournal.lineIdentity(
        upload: upload, line: line, pages: source.options.pages,
        extras: source.options.extras ?? [])
      let occurrence = occurrences[identity, default: 0]
      occurrences[identity] = occurrence + 1
      let key = PrintJournal.lineKey(identity: identity, occurrence: occurrence)
      guard let paper = PaperSize(rawValue: line.paper) else {
        preconditionFailure("paper '\(line.paper)' is offered by price lists but has no size")
      }
      let name = "\(index + 1)-\(Self.stem(of: source.file))"
      var parts: [(part: ColorSplitPart, pages: [Int], sheets: [Int])] = []
      if options.splitColor && line.colorMode == ColorMode.auto.rawValue {
        parts = ColorSplit.parts(
          of: try Pricing.impressions(source.options, facts: source.facts, file: source.file),
          duplex: line.duplex != Duplex.none.rawValue)
      }
      if parts.count > 1 {
        try share(line, among: &parts, of: source, prices: quoted.prices)
      }
      let runs: [(part: ColorSplitPart?, pages: String?)] =
        parts.count > 1
        ? parts.map { ($0.part, PageRange.text($0.pages)) } : [(nil, source.options.pages)]
      for run in runs {
        let document = name + (run.part.map { "." + $0.part } ?? "") + ".pdf"
        let ticket = JobTicket(
          line: line, extras: source.options.extras ?? [], document: document,
          media: paper.pwgMediaName, part: run.part)
        let layout = SheetLayout(
          pages: run.pages, expectedPages: source.info.pages, nUp: line.nUp, paper: paper,
          blankBack: ticket.blankBacks > 0)
        plans.append((source, layout, ticket, folder + "/" + document, upload, key))
      }
    }
    let frozen = plans
    let staged = try await inOrder(
      count: plans.count, jobs: quoter.jobs,
      discard: { (staged: Staged) in
        for file in [staged.document] + (staged.previews ?? []) { unlink(file.temporary) }
      },
      work: { index -> Staged in
        let plan = frozen[index]
        let prepared = try await sandbox.prepare(
          path: plan.source.path, file: plan.source.file, layout: plan.layout,
          output: plan.output)
        guard let previewSize else { return Staged(prepared.document, prepared.sheetSides, nil) }
        do {
          // The sides are drawn from the staged file, in a worker: their pages are uploads.
          let previews = try await sandbox.previews(
            of: prepared.document.temporary, pages: prepared.sheetSides, file: plan.source.file,
            size: previewSize,
            output: (plan.output as NSString).deletingPathExtension + ".side.png")
          return Staged(prepared.document, prepared.sheetSides, previews)
        } catch {
          unlink(prepared.document.temporary)
          throw error
        }
      })
    var pending = staged.flatMap { [$0.document] + ($0.previews ?? []) }
    do {
      var files: [PreparedFile] = []
      for (plan, result) in zip(plans, staged) {
        guard result.sheetSides == plan.ticket.sheetSides else {
          throw DocumentError.impressionsMismatch(
            file: plan.source.file, quoted: plan.ticket.sheetSides, prepared: result.sheetSides)
        }
        if let previews = result.previews, previews.count != result.sheetSides {
          throw DocumentError.badOutput(
            file: plan.source.file,
            detail: "\(previews.count) previews of \(result.sheetSides) sheet sides")
        }
        let ticketPath =
          folder + "/" + (plan.ticket.document as NSString).deletingPathExtension
          + ".ticket.json"
        let ticketBytes = Array(JSONOutput.pretty(plan.ticket).utf8)
        pending.append(
          try StagedThumbnail.write(to: ticketPath) { descriptor in
            try FileIO.writeAll(ticketBytes, to: descriptor, path: ticketPath)
          }.0)
        files.append(
          PreparedFile(
            document: plan.output, ticketPath: ticketPath, ticket: plan.ticket,
            previews: result.previews?.map(\.final), upload: plan.upload, lineKey: plan.key))
      }
      _ = try DocumentSandbox.commit(pending, protected: FileIdentities(plans.map(\.source.path)))
      return PreparedOrder(quote: quoted.quote, files: files)
    } catch {
      for file in pending { unlink(file.temporary) }
      throw error
    }
  }

  /// A print-ready file staged by a worker: its sheet sides and, when asked for, its previews.
  private struct Staged: Sendable {
    var document: StagedThumbnail
    var sheetSides: Int
    var previews: [StagedThumbnail]?

    init(_ document: StagedThumbnail, _ sheetSides: Int, _ previews: [StagedThumbnail]?) {
      self.document = document
      self.sheetSides = sheetSides
      self.previews = previews
    }
  }

  /// Sets each part's share of the file's quote line (`Pricing.share`): the colour part (the
  /// first) carries the file's per-copy and per-job extras.
  ///
  /// - Throws: `PricingError`, as quoting the file would have.
  private func share(
    _ line: FileQuote, among parts: inout [(part: ColorSplitPart, pages: [Int], sheets: [Int])],
    of source: QuotedFile, prices: PriceList
  ) throws {
    for index in parts.indices {
      parts[index].part.share = try Pricing.share(
        ofSheets: Set(parts[index].sheets), fileFees: index == 0, file: source.file,
        options: source.options, facts: source.facts, prices: prices)
    }
    let shares = parts.compactMap(\.part.share)
    precondition(
      shares.map(\.subtotal.minor).reduce(0, +) == line.subtotal.minor
        && shares.map(\.impressionCharge.minor).reduce(0, +) == line.impressionCharge.minor
        && shares.map(\.paperCharge.minor).reduce(0, +) == line.paperCharge.minor,
      "the parts' shares of '\(line.file)' must add up to its quote line")
  }

  /// Refuses options that cannot be honoured, before anything is read or written.
  ///
  /// - Throws: `DocumentError.previewSize`.
  private static func check(_ options: PrepareOptions) throws(DocumentError) {
    if let size = options.previewSize, !previewSizes.contains(size) {
      throw .previewSize(size: size)
    }
  }

  /// A file's name without its folder and extension, kept to letters, digits, `-`, `_` and
  /// `.` (others become `_`): the order's names are input.
  static func stem(of file: String) -> String {
    let base = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
    let safe = String(
      base.prefix(80).map {
        $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_"
      })
    return safe.isEmpty || safe.hasPrefix(".") ? "file" + safe : safe
  }
}
